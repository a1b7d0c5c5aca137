"""Every SkyPilot cloud a scheduled source of its own (``skypilot-<cloud>``): two clouds fetched
from a local HTTP server through the same pipeline and lock as every source."""

import re
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from hardware.models import RefreshRun
from hardware.refresh.beat import price_source_settings, refresh_beat_schedule
from hardware.refresh.lease import lease_name, refresh_lease
from hardware.refresh.pipeline import RefreshLocked, price_refresh
from hardware.selectors import current_prices
from hardware.sources.registry import HTTP_SOURCES, PRICE_SOURCES, SKYPILOT_CLOUDS
from hardware.tasks import refresh_source

from .feed_server import CountingFeedServer

ROOT = Path(__file__).resolve().parents[3]
SKYPILOT = ROOT / "hardware" / "data" / "prices" / "skypilot-v8"
UNKNOWN = (
    "n9-Zorblax,Zorblax-9000,1,28,120.0,"
    "\"{'Gpus': [{'Name': 'Zorblax-9000', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 81920}}]}\","
    "2.5,CANADA-1,\n"
)
D = Decimal


def current_of(provider: str) -> dict[tuple[str, str, str], Decimal]:
    return {
        (p.offer.instance_type, p.region.code, p.billing): p.usd_per_hour
        for p in current_prices().filter(offer__provider__slug=provider)
    }


def with_prices(text: str, factor: Decimal, *, only: str = "") -> bytes:
    """The CSV with every ``Price`` (or the rows of instance ``only``'s) times ``factor``."""
    lines = text.splitlines(keepends=True)
    header = lines[0].strip().split(",")
    at = header.index("Price")
    out = [lines[0]]
    for line in lines[1:]:
        cells = re.split(r",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", line.rstrip("\n"))
        if cells[at] and cells[1] and (not only or cells[0] == only):
            cells[at] = str((D(cells[at]) * factor).normalize())
        out.append(",".join(cells) + "\n")
    return "".join(out).encode()


@pytest.fixture
def skypilot_served(settings):
    settings.REDIS_URL = ""  # the database lock
    settings.PRICE_FETCH_RETRIES = 0
    with CountingFeedServer() as server:
        lambda_csv = (SKYPILOT / "lambda.csv").read_text()
        server.feeds["/lambda/vms.csv"] = with_prices(lambda_csv, D("1.1"), only="gpu_1x_h100_pcie")
        hyperstack = (SKYPILOT / "hyperstack.csv").read_text()
        server.feeds["/hyperstack/vms.csv"] = (
            with_prices(hyperstack, D("1.2"), only="n3-A100x1") + UNKNOWN.encode()
        )
        settings.PRICE_SOURCES = {
            "skypilot-lambda": {"url": server.url("/lambda/vms.csv")},
            "skypilot-hyperstack": {"url": server.url("/hyperstack/vms.csv")},
        }
        yield server


def test_two_skypilot_clouds_apply_skip_unchanged_hold_a_drop_and_record_unmapped_names(
    catalog, skypilot_served
):
    lambda_before = current_of("lambda")
    h100 = ("gpu_1x_h100_pcie", "us-east-1", "on_demand")
    a100 = ("n3-A100x1", "CANADA-1", "on_demand")
    assert a100 in current_of("hyperstack") and h100 in lambda_before

    # 1. new prices applied, each cloud its own source and run
    first = refresh_source.apply(args=("skypilot-lambda",)).get()
    assert first["status"] == "applied", first
    assert current_of("lambda")[h100] == (lambda_before[h100] * D("1.1")).normalize()
    hyper = refresh_source.apply(args=("skypilot-hyperstack",)).get()
    assert hyper["status"] == "applied", hyper
    assert current_of("hyperstack")[a100] == D("1.62")
    run = RefreshRun.objects.get(pk=hyper["run_id"])
    assert (run.source, run.provider) == ("skypilot-hyperstack", "hyperstack")
    assert run.feed_url == skypilot_served.url("/hyperstack/vms.csv") and run.etag

    # 2. the names it could not map are on the run, with their count
    assert run.rejected_by_reason.get("unknown GPU name") == 1
    assert any("Zorblax-9000" in r["detail"] for r in run.rejections)
    zorblax = run.coverage.names.get(name="Zorblax-9000")
    assert (zorblax.kind, zorblax.reason, zorblax.rows, zorblax.example_line) == (
        "gpu",
        "unknown GPU name",
        1,
        27,
    )
    assert "n9-Zorblax" in zorblax.example and run.coverage.source == "skypilot-hyperstack"

    # 3. an unchanged file is not downloaded on its second fetch (304)
    second = refresh_source.apply(args=("skypilot-lambda",)).get()
    assert second["status"] == "unchanged" and second["not_modified"], second
    assert skypilot_served.full["/lambda/vms.csv"] == 1
    assert skypilot_served.not_modified == {"/lambda/vms.csv": 1}

    # 4. a file whose prices drop 90 % is held, and changes no price
    applied = current_of("lambda")
    lambda_csv = (SKYPILOT / "lambda.csv").read_text()
    skypilot_served.feeds["/lambda/vms.csv"] = with_prices(lambda_csv, D("0.1"))
    dropped = refresh_source.apply(args=("skypilot-lambda",)).get()
    assert dropped["status"] == "held", dropped
    held = RefreshRun.objects.get(pk=dropped["run_id"])
    assert any("factor" in reason for reason in held.held_reasons), held.held_reasons
    assert current_of("lambda") == applied
    assert skypilot_served.full["/lambda/vms.csv"] == 2


def test_a_skypilot_file_cut_short_is_held_and_changes_no_price(catalog, skypilot_served):
    before = current_of("hyperstack")
    whole = skypilot_served.feeds["/hyperstack/vms.csv"]
    skypilot_served.feeds["/hyperstack/vms.csv"] = whole[: whole.rindex(b"\n") - 40]
    outcome = refresh_source.apply(args=("skypilot-hyperstack",)).get()
    assert outcome["status"] == "held", outcome
    held = RefreshRun.objects.get(pk=outcome["run_id"])
    assert any("does not end with a line break" in r for r in held.held_reasons)
    assert current_of("hyperstack") == before


def test_a_feed_that_is_not_a_skypilot_table_fails_and_changes_no_price(catalog, skypilot_served):
    before = current_of("lambda")
    skypilot_served.feeds["/lambda/vms.csv"] = b'{"not": "a csv"}\n'
    outcome = refresh_source.apply(args=("skypilot-lambda",)).get()
    assert outcome["status"] == "failed" and "missing column" in outcome["detail"], outcome
    assert current_of("lambda") == before


def test_every_skypilot_cloud_is_a_source_off_until_its_url_is_set():
    names = {f"skypilot-{cloud}" for cloud in SKYPILOT_CLOUDS}
    assert names <= set(HTTP_SOURCES) and len(names) == 13
    for name in names:
        source = PRICE_SOURCES[name]
        assert source.provider_fixed and source.csv_feed
        assert source.url_setting == "PRICE_SOURCE_" + name.upper().replace("-", "_") + "_URL"
        assert source.public_url.endswith(f"/catalogs/v8/{source.provider}/vms.csv")

    class Empty:
        def str(self, var, default=""):
            return default

        def int(self, var, default=None):
            return default

    assert refresh_beat_schedule(price_source_settings(Empty())) == {}


def test_docker_compose_and_env_example_name_each_cloud_s_public_catalog():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    environment = compose["x-app"]["environment"]
    example = (ROOT / ".env.example").read_text()
    for cloud in SKYPILOT_CLOUDS:
        source = PRICE_SOURCES[f"skypilot-{cloud}"]
        setting = source.url_setting
        assert environment[setting] == f"${{{setting}-{source.public_url}}}"
        assert f"\n{setting}={source.public_url}\n" in example


def test_a_hand_refresh_of_a_cloud_and_its_schedule_take_one_lock(catalog, skypilot_served):
    assert lease_name(source="skypilot", provider="lambda") == "skypilot-lambda"
    assert lease_name(source="skypilot-lambda", provider="lambda") == "skypilot-lambda"
    assert lease_name(source="skypilot", provider="my-cloud") == "skypilot"  # no schedule
    before = current_of("lambda")
    # the hand refresh holds the lock: the scheduled refresh of that cloud is skipped
    with refresh_lease(source=lease_name(source="skypilot", provider="lambda")):
        skipped = refresh_source.apply(args=("skypilot-lambda",)).get()
        assert skipped["status"] == "skipped" and skipped["run_id"] is None, skipped
        # another cloud's schedule is not held up
        other = refresh_source.apply(args=("skypilot-hyperstack",)).get()
        assert other["status"] == "applied", other
    assert skypilot_served.full.get("/lambda/vms.csv") is None and current_of("lambda") == before
    # the schedule holds it: the hand refresh of the same cloud's file is refused
    with refresh_lease(source="skypilot-lambda"), pytest.raises(RefreshLocked):
        price_refresh(source="skypilot", paths=[SKYPILOT / "lambda.csv"], provider="lambda")
    assert not RefreshRun.objects.filter(source="skypilot").exists()
