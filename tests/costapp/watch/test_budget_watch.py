"""The budget watch: a plan resting on a catalog offer, watched; a price refresh from a local
feed that moves that offer's price prices the plan again (one event with the old and new totals,
one e-mail), and a second refresh that moves nothing adds none."""

from decimal import Decimal

import pytest
from django.core import mail

from costapp.models import BudgetWatch, Question, WatchEvent
from costapp.runs import pipeline
from costapp.watch.services import WatchError, watch_create, watches_reprice
from hardware.data_files import SKYPILOT_DIR
from hardware.refresh.pipeline import price_refresh
from tests.tco.helpers import scenario

from ..factories import ScenarioFactory
from ..runs_helpers import analyst, post_json

pytestmark = pytest.mark.django_db

OFFER = {"provider": "lambda", "instance": "gpu_8x_h100_sxm5", "region": "europe-central-1"}


def lambda_feed(tmp_path, price: str):
    lines = (SKYPILOT_DIR / "lambda.csv").read_text(encoding="utf-8").splitlines()
    body = [line.replace(",23.92,", f",{price},", 1) for line in lines[1:]]
    path = tmp_path / f"lambda-{price}.csv"
    path.write_text("\n".join([lines[0], *body]) + "\n", encoding="utf-8")
    return path


def plan_on_an_offer(owner):
    """A saved plan whose first option rests on Lambda's 8x H100 offer: ``(scenario, option)``,
    that option's name."""
    document = scenario("serve-70b-host-or-api")
    option = document["options"][0]
    option.pop("usd_per_gpu_hour")
    option["offer"] = OFFER
    return ScenarioFactory(owner=owner, name="Serve 70B", document=document), option["name"]


@pytest.fixture
def watched(catalog, tasks_in_process):
    owner = analyst("lead")
    owner.email = "lead@example.com"
    owner.save()
    saved, option = plan_on_an_offer(owner)
    run = pipeline.run_create(scenario=saved)
    assert run.status == "succeeded", run.error
    watch = watch_create(
        owner=owner,
        scenario=saved,
        option=option,
        budget_usd="1,000,000",
        per_year_usd=["300000", "300000", "300000"],
    )
    return watch


def test_a_refresh_moving_a_price_the_plan_rests_on_adds_one_event_and_one_mail(
    watched, tmp_path, client
):
    old_run = watched.run
    old_total = next(
        o["total_usd"] for o in old_run.result["options"] if o["name"] == watched.option
    )
    refreshed = price_refresh(
        source="skypilot", paths=[lambda_feed(tmp_path, "26.00")], provider="lambda"
    )
    assert refreshed.status == "applied"
    (event,) = WatchEvent.objects.all()
    assert event.status == "priced", event.message
    assert event.trigger == "refresh" and event.refresh_run_id == refreshed.pk
    assert event.old_run_id == old_run.pk and event.new_run_id != old_run.pk
    assert event.old_total_usd == Decimal(str(old_total)).quantize(Decimal("0.01"))
    new_total = next(
        o["total_usd"] for o in event.new_run.result["options"] if o["name"] == watched.option
    )
    assert event.new_total_usd == Decimal(str(new_total)).quantize(Decimal("0.01"))
    assert event.new_total_usd > event.old_total_usd  # $26.00 an hour instead of $23.92
    assert event.new_run.inputs["options"][0]["usd_per_gpu_hour"] == 26.0 / 8
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["lead@example.com"]
    assert f"{event.new_total_usd:,.0f}" in mail.outbox[0].body
    assert f"/runs/compare/?a={old_run.pk}&b={event.new_run_id}" in mail.outbox[0].body
    watched.refresh_from_db()
    assert watched.run_id == event.new_run_id

    again = price_refresh(
        source="skypilot", paths=[lambda_feed(tmp_path, "26.00")], provider="lambda"
    )
    assert again.status == "unchanged"
    other = price_refresh(
        source="skypilot",
        paths=[lambda_feed(tmp_path, "26.00").rename(tmp_path / "renamed.csv")],
        provider="lambda",
    )
    assert other.status in ("unchanged", "applied")
    assert WatchEvent.objects.count() == 1 and len(mail.outbox) == 1
    assert watches_reprice(trigger="schedule") == []  # beat's pass: nothing moved since

    client.force_login(watched.owner)
    page = client.get("/watch/")
    assert page.status_code == 200
    assert f"/runs/compare/?a={old_run.pk}&amp;b={event.new_run_id}".encode() in page.content
    events = client.get("/api/v1/watch-events/").json()
    assert [e["id"] for e in events] == [event.pk]
    assert events[0]["new_total_usd"] == f"{event.new_total_usd}"


def test_a_plan_the_catalog_can_no_longer_price_says_so(watched, tmp_path):
    feed = lambda_feed(tmp_path, "23.92")
    lines = feed.read_text(encoding="utf-8").splitlines()
    feed.write_text(
        "\n".join(
            line
            for line in lines
            if "europe-central-1" not in line or "gpu_8x_h100_sxm5" not in line
        )
        + "\n",
        encoding="utf-8",
    )
    refreshed = price_refresh(source="skypilot", paths=[feed], provider="lambda")
    assert refreshed.status == "applied", refreshed.held_reasons
    (event,) = WatchEvent.objects.all()
    assert event.status == "failed"
    assert "could not be priced" in event.message or "failed" in event.message
    assert len(mail.outbox) == 1


def test_a_watch_names_the_field_it_cannot_take(catalog, client, tasks_in_process):
    owner = analyst("lead2")
    saved = ScenarioFactory(owner=owner, name="no run", document=scenario("size-the-fleet"))
    with pytest.raises(WatchError) as error:
        watch_create(owner=owner, scenario=saved, option="x", budget_usd="1")
    assert error.value.field == "scenario"
    pipeline.run_create(scenario=saved)
    client.force_login(owner)
    for body, field in (
        ({"scenario": saved.pk, "option": "nope", "budget_usd": "1"}, "option"),
        (
            {"scenario": saved.pk, "option": "GPU cloud on-demand", "budget_usd": "a lot"},
            "budget_usd",
        ),
        ({"scenario": 999999, "option": "GPU cloud on-demand", "budget_usd": "1"}, "scenario"),
        ({"question": 999999, "option": "GPU cloud on-demand", "budget_usd": "1"}, "question"),
    ):
        response = post_json(client, "/api/v1/watches/", body)
        assert response.status_code == 400
        assert [e["field"] for e in response.json()["errors"]] == [field]
    made = post_json(
        client,
        "/api/v1/watches/",
        {"scenario": saved.pk, "option": "GPU cloud on-demand", "budget_usd": "2000000"},
    )
    assert made.status_code == 201, made.content
    assert BudgetWatch.objects.get().budget_usd == Decimal("2000000.00")
    asked = Question.objects.create(owner=owner, scenario=saved, answers={})
    by_question = post_json(
        client,
        "/api/v1/watches/",
        {"question": asked.pk, "option": "GPU cloud on-demand", "budget_usd": "1500000"},
    )
    assert by_question.status_code == 201, by_question.content
    assert by_question.json()["scenario"] == saved.pk
    other = analyst("someone-else")
    client.force_login(other)
    refused = post_json(
        client, "/api/v1/watches/", {"question": asked.pk, "option": "x", "budget_usd": "1"}
    )
    assert [e["field"] for e in refused.json()["errors"]] == ["question"]
