"""The budget watch on the production shape (run with GPU_TCO_SERVICES=1): PostgreSQL, Redis and
real Celery workers. A price refresh from a local feed, applied in this process, moves the price
a watched plan rests on: its commit sends the repricing task to the workers, which price the plan
again, settle the event when the new run succeeds and mail it (the file backend, into a folder of
the test's own). One event with the old and new totals, one e-mail; a second refresh that moves
only a price the plan does not rest on reaches the workers and adds neither."""

import re
import time
from decimal import Decimal

import pytest

from costapp.models import SimulationRun, WatchEvent
from costapp.runs import pipeline
from costapp.watch.services import watch_create
from hardware.management.commands.load_catalog import SKYPILOT_DIR
from hardware.refresh.pipeline import price_refresh

from ..runs_helpers import analyst
from .test_budget_watch import plan_on_an_offer

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

REPRICED = re.compile(r"Task costapp\.watch_reprice\[[^\]]+\] succeeded in [0-9.e-]+s: (\d+)")


def lambda_feed(tmp_path, prices: dict[str, str]):
    """Lambda's SkyPilot file with the 8x H100 instance priced per region as ``prices`` says."""
    lines = (SKYPILOT_DIR / "lambda.csv").read_text(encoding="utf-8").splitlines()
    body = []
    for line in lines[1:]:
        for region, price in prices.items():
            if line.startswith("gpu_8x_h100_sxm5,") and f",23.92,{region}," in line:
                line = line.replace(",23.92,", f",{price},", 1)
        body.append(line)
    path = tmp_path / f"lambda-{len(list(tmp_path.glob('lambda-*')))}.csv"
    path.write_text("\n".join([lines[0], *body]) + "\n", encoding="utf-8")
    return path


def wait_for(what, timeout_s: float, message: str):
    deadline = time.monotonic() + timeout_s
    while True:
        found = what()
        if found:
            return found
        assert time.monotonic() < deadline, message
        time.sleep(0.2)


def test_a_refresh_on_the_workers_prices_a_watched_plan_once_and_mails_it_once(
    catalog, celery_workers, tmp_path
):
    mail = tmp_path / "mail"
    mail.mkdir()
    worker = celery_workers(
        concurrency=2,
        env={
            "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
            "EMAIL_FILE_PATH": str(mail),
        },
    )
    owner = analyst("lead")
    owner.email = "lead@example.com"
    owner.save()
    saved, option = plan_on_an_offer(owner)
    first = pipeline.run_create(scenario=saved)
    wait_for(
        lambda: SimulationRun.objects.get(pk=first.pk).status == "succeeded",
        120,
        "the watched plan's first run did not succeed on the workers",
    )
    watch = watch_create(owner=owner, scenario=saved, option=option, budget_usd="1000000")
    old_total = next(o["total_usd"] for o in watch.run.result["options"] if o["name"] == option)

    refreshed = price_refresh(
        source="skypilot",
        paths=[lambda_feed(tmp_path, {"europe-central-1": "26.00"})],
        provider="lambda",
    )
    assert refreshed.status == "applied"
    event = wait_for(
        lambda: WatchEvent.objects.exclude(status="pricing").first(),
        180,
        "no watch event was settled on the workers:\n" + worker["log"].read_text()[-3000:],
    )
    assert event.status == "priced", event.message
    assert event.trigger == "refresh" and event.refresh_run_id == refreshed.pk
    assert event.old_run_id == first.pk and event.new_run_id not in (None, first.pk)
    assert event.old_total_usd == Decimal(str(old_total)).quantize(Decimal("0.01"))
    new_run = SimulationRun.objects.get(pk=event.new_run_id)
    new_total = next(o["total_usd"] for o in new_run.result["options"] if o["name"] == option)
    assert event.new_total_usd == Decimal(str(new_total)).quantize(Decimal("0.01"))
    assert event.new_total_usd > event.old_total_usd  # $26.00 an hour instead of $23.92
    (message,) = wait_for(lambda: list(mail.iterdir()), 30, "no e-mail was written")
    text = message.read_text(encoding="utf-8")
    assert "To: lead@example.com" in text
    assert f"{event.new_total_usd:,.0f}" in text and f"{event.old_total_usd:,.0f}" in text
    assert f"/runs/compare/?a={first.pk}&b={new_run.pk}" in text

    again = price_refresh(
        source="skypilot",
        paths=[lambda_feed(tmp_path, {"europe-central-1": "26.00", "asia-south-1": "25.00"})],
        provider="lambda",
    )
    assert again.status == "applied"  # a price moved, but not one the plan rests on
    repriced = wait_for(
        lambda: len(REPRICED.findall(worker["log"].read_text())) >= 2 or None,
        120,
        "the second refresh's repricing never ran on the workers",
    )
    assert repriced
    assert REPRICED.findall(worker["log"].read_text()) == ["1", "0"]
    time.sleep(2)  # anything it might have set going
    assert WatchEvent.objects.count() == 1
    assert len(list(mail.iterdir())) == 1
