"""Azure, GCP and Oracle feeds through the refresh pipeline: refresh_prices, Oracle's egress tiers
under the same checks as prices, a held run's diff approved or discarded, and the scheduled
refresh fetching from a local HTTP server (eager tasks, database lock)."""

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from hardware.models import EgressTier, RefreshLock, RefreshRun
from hardware.refresh.lease import refresh_lease
from hardware.refresh.pipeline import (
    price_refresh,
    refresh_run_approve,
    refresh_run_diff,
    refresh_run_discard,
)
from hardware.refresh.scheduled import feed_source_refresh
from hardware.selectors import current_prices
from hardware.tasks import refresh_source

from .feed_server import CountingFeedServer

SAMPLES = Path(__file__).resolve().parents[1] / "feed_samples"
ORACLE = SAMPLES / "opencost_oracle_prices_usd.json"
GCP = SAMPLES / "opencost_cloudbilling_skus_page.json"
AZURE_SPOT = SAMPLES / "retail_prices_eastus_standard_d2s_v3_spot_filter.json"
D = Decimal


def refresh(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("refresh_prices", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code), out.getvalue()
    return 0, out.getvalue()


def current_of(provider: str) -> dict[tuple[str, str, str], Decimal]:
    return {
        (p.offer.instance_type, p.region.code, p.billing): p.usd_per_hour
        for p in current_prices().filter(offer__provider__slug=provider)
    }


def tiers_of(provider: str) -> list[tuple]:
    return list(
        EgressTier.objects.filter(provider__slug=provider).values_list("up_to_tb", "usd_per_gb")
    )


def oracle_with(*, gpu_hour: dict[str, float] | None = None, egress: float | None = None) -> bytes:
    """The Oracle sample with some parts' prices changed (GPU-hour prices, the paid egress tier)."""
    document = json.loads(ORACLE.read_text())
    for item in document["items"]:
        prices = item["currencyCodeLocalizations"][0]["prices"]
        if gpu_hour and item["partNumber"] in gpu_hour:
            prices[0]["value"] = gpu_hour[item["partNumber"]]
        if egress is not None and item["partNumber"] == "B88327":
            prices[-1]["value"] = egress
    return json.dumps(document).encode()


def test_refresh_prices_reads_oracle_gcp_and_azure_files_at_their_exact_prices(catalog):
    status, out = refresh("oracle", "--file", str(ORACLE))
    assert status == 0 and "refresh oracle oracle: applied" in out, out
    oracle = current_of("oracle")
    assert oracle[("BM.GPU.H100.8", "global", "on_demand")] == D("80")
    assert oracle[("VM.GPU.A10.2", "global", "on_demand")] == D("4")
    assert len(oracle) == 10
    status, out = refresh("gcp", "--file", str(GCP))
    assert status == 0, out
    assert current_of("gcp")[("a2-highgpu-8g", "us-east1", "on_demand")] == D("29.387080")
    status, out = refresh("azure", "--file", str(AZURE_SPOT))
    assert status == 0 and "6 read, 0 accepted" in out, out
    again, out = refresh("oracle", "--file", str(ORACLE))
    assert again == 0 and "unchanged" in out and "10 unchanged" in out


def test_refresh_prices_refuses_another_provider_for_a_feed_source(catalog):
    with pytest.raises(CommandError, match="--provider: oracle feeds are oracle's, not 'aws'"):
        refresh("oracle", "--file", str(ORACLE), "--provider", "aws")
    assert not RefreshRun.objects.exists()


def test_oracle_egress_change_is_applied_with_the_prices(catalog, tmp_path):
    assert tiers_of("oracle") == [(D("10.24"), D("0")), (None, D("0.0085"))]
    feed = tmp_path / "oracle.json"
    feed.write_bytes(oracle_with(egress=0.01))
    run = price_refresh(source="oracle", paths=[feed], provider="oracle")
    assert run.status == "applied"
    assert run.egress_changes == [
        {"kind": "changed", "up_to_tb": None, "old_usd_per_gb": "0.0085000000",
         "new_usd_per_gb": "0.01"}
    ]  # fmt: skip
    assert tiers_of("oracle") == [(D("10.24"), D("0")), (None, D("0.01"))]


def test_hand_edited_oracle_egress_tier_holds_the_refresh_until_approved(catalog, tmp_path):
    tier = EgressTier.objects.get(provider__slug="oracle", up_to_tb=None)
    tier.usd_per_gb = D("0.009")
    tier.save()  # no feed's change reason: edited by hand
    run = price_refresh(source="oracle", paths=[ORACLE], provider="oracle")
    assert run.status == "held"
    assert any("egress tier(s) edited by hand" in r for r in run.held_reasons)
    (conflict,) = [c for c in run.conflicts if "egress_tier_id" in c]
    assert (conflict["old_usd_per_gb"], conflict["new_usd_per_gb"]) == ("0.0090000000", "0.0085")
    assert tiers_of("oracle")[-1] == (None, D("0.009"))
    assert current_of("oracle") == {}  # nothing of the held feed applied
    refresh_run_approve(run_id=run.pk)
    assert tiers_of("oracle")[-1] == (None, D("0.0085"))
    assert len(current_of("oracle")) == 10


def test_held_run_approved_changes_exactly_what_its_diff_showed(catalog, tmp_path):
    price_refresh(source="oracle", paths=[ORACLE], provider="oracle")
    before = current_of("oracle")
    feed = tmp_path / "oracle.json"
    feed.write_bytes(oracle_with(gpu_hour={"B98415": 50, "B95909": 2.5}))  # H100 x5: held
    run = price_refresh(source="oracle", paths=[feed], provider="oracle")
    assert run.status == "held"
    diff = refresh_run_diff(run=run)
    shown = {
        (c["instance_type"], c["region"], c["billing"]): (D(c["old_usd_per_hour"]), D(c["new_usd_per_hour"]))
        for c in diff["prices"]
    }  # fmt: skip
    assert shown == {
        ("BM.GPU.H100.8", "global", "on_demand"): (D("80"), D("400")),
        ("VM.GPU.A10.1", "global", "on_demand"): (D("2"), D("2.5")),
        ("VM.GPU.A10.2", "global", "on_demand"): (D("4"), D("5")),
        ("BM.GPU.A10.4", "global", "on_demand"): (D("8"), D("10")),
    }
    assert current_of("oracle") == before
    refresh_run_approve(run_id=run.pk)
    after = current_of("oracle")
    moved = {key: (before[key], after[key]) for key in before if before[key] != after[key]}
    assert moved == shown
    assert set(after) == set(before)


def test_held_run_discarded_changes_nothing(catalog, tmp_path):
    price_refresh(source="oracle", paths=[ORACLE], provider="oracle")
    before, tiers = current_of("oracle"), tiers_of("oracle")
    feed = tmp_path / "oracle.json"
    feed.write_bytes(oracle_with(gpu_hour={"B98415": 50}, egress=0.5))
    run = price_refresh(source="oracle", paths=[feed], provider="oracle")
    assert run.status == "held"
    assert refresh_run_discard(run_id=run.pk).status == "discarded"
    assert current_of("oracle") == before and tiers_of("oracle") == tiers
    assert refresh_run_diff(run=RefreshRun.objects.get(pk=run.pk)) == {
        "prices": [],
        "egress_tiers": [],
    }


@pytest.fixture
def oracle_served(settings):
    settings.REDIS_URL = ""  # the database lock
    with CountingFeedServer() as server:
        server.feeds["/oracle.json"] = oracle_with(gpu_hour={"B98415": 11})
        settings.PRICE_SOURCES = {"oracle": {"url": server.url("/oracle.json")}}
        yield server


def test_scheduled_refresh_applies_then_does_not_download_an_unchanged_feed(catalog, oracle_served):
    first = refresh_source.apply(args=("oracle",)).get()
    assert first["status"] == "applied" and not first["not_modified"]
    assert current_of("oracle")[("BM.GPU.H100.8", "global", "on_demand")] == D("88")
    run = RefreshRun.objects.get(pk=first["run_id"])
    assert run.etag and run.feed_url == oracle_served.url("/oracle.json")
    assert run.feed_name == run.feed_url and run.bytes_read == len(
        oracle_served.feeds["/oracle.json"]
    )
    h100 = current_prices().get(offer__instance_type="BM.GPU.H100.8")
    assert h100.source_name == run.feed_url and h100.source_sha256 == run.feed_sha256
    second = refresh_source.apply(args=("oracle",)).get()
    assert second["status"] == "unchanged" and second["not_modified"]
    assert oracle_served.full == {"/oracle.json": 1}
    assert oracle_served.not_modified == {"/oracle.json": 1}
    assert RefreshRun.objects.get(pk=second["run_id"]).not_modified


def test_scheduled_refresh_of_a_failing_url_fails_its_run_and_changes_nothing(catalog, settings):
    settings.REDIS_URL = ""
    settings.PRICE_FETCH_RETRIES = 0
    with CountingFeedServer() as server:
        settings.PRICE_SOURCES = {"oracle": {"url": server.url("/missing.json")}}
        outcome = feed_source_refresh(source="oracle")
    assert outcome.status == "failed" and "HTTP 404" in outcome.detail
    assert current_of("oracle") == {}


def test_scheduled_refresh_finding_the_source_locked_is_skipped(catalog, oracle_served):
    with refresh_lease(source="oracle"):
        outcome = feed_source_refresh(source="oracle")
        assert (outcome.status, outcome.run_id) == ("skipped", None)
        assert "already running" in outcome.detail
    assert oracle_served.full == {}
    assert RefreshLock.objects.get(source="oracle").locked_until is None
    assert feed_source_refresh(source="oracle").status == "applied"
