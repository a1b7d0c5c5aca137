"""The AWS bulk offer file by URL, a scheduled source like every other: fetched from a local HTTP
server with If-Modified-Since, written to a temporary file, then parsed, staged, checked and
applied or held under the source's lock."""

import re
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from bench.aws_offer_file import OfferFile, write_offer_file
from hardware.models import InstancePrice, RefreshRun
from hardware.refresh.beat import price_source_settings, refresh_beat_schedule
from hardware.refresh.lease import refresh_lease
from hardware.refresh.pipeline import refresh_run_approve
from hardware.selectors import current_prices
from hardware.sources.registry import AWS_OFFER_FILE_URL, HTTP_SOURCES, PRICE_SOURCES
from hardware.tasks import refresh_source

from .feed_server import CountingFeedServer

ROOT = Path(__file__).resolve().parents[3]
STAMP = "Sun, 01 Nov 2026 00:00:00 GMT"
USD = re.compile(rb'"USD": "(\d+\.\d+)"')
D = Decimal


def current_of(provider: str) -> dict[tuple[str, str, str], Decimal]:
    return {
        (p.offer.instance_type, p.region.code, p.billing): p.usd_per_hour
        for p in current_prices().filter(offer__provider__slug=provider)
    }


def scaled(offer: OfferFile, factor: Decimal) -> bytes:
    """The offer file with every price in it times ``factor`` (10 decimals, as AWS writes)."""
    return USD.sub(
        lambda m: b'"USD": "' + f"{D(m.group(1).decode()) * factor:.10f}".encode() + b'"',
        offer.path.read_bytes(),
    )


@pytest.fixture
def aws_served(settings, tmp_path, monkeypatch):
    settings.REDIS_URL = ""  # the database lock
    settings.PRICE_FETCH_RETRIES = 0
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    offer = write_offer_file(tmp_path / "index.json", target_bytes=600_000, seed=11)
    with CountingFeedServer() as server:
        server.feeds["/AmazonEC2/current/index.json"] = offer.path.read_bytes()
        server.last_modified["/AmazonEC2/current/index.json"] = STAMP
        settings.PRICE_SOURCES = {"aws": {"url": server.url("/AmazonEC2/current/index.json")}}
        yield server, offer, spool


def test_the_aws_offer_file_by_url_applies_skips_unchanged_and_holds_a_drop(catalog, aws_served):
    server, offer, spool = aws_served
    path = "/AmazonEC2/current/index.json"
    spot_before = {k: v for k, v in current_of("aws").items() if k[2] == "spot"}

    # 1. fetched and parsed from its temporary file; the synthetic prices are far from
    # SkyPilot's, so the first feed is held until someone approves it
    first = refresh_source.apply(args=("aws",)).get()
    assert first["status"] in ("applied", "held"), first
    run = RefreshRun.objects.get(pk=first["run_id"])
    assert (run.source, run.provider, run.last_modified) == ("aws", "aws", STAMP)
    assert run.feed_url == server.url(path) and run.bytes_read == offer.bytes_written
    assert run.feed_stated_on.isoformat() == "2026-11-01"
    assert list(spool.iterdir()) == []  # the temporary file is gone with the run
    if run.status == "held":
        run = refresh_run_approve(run_id=run.pk)
    now = current_of("aws")
    assert offer.expected and all(now[key] == usd for key, usd in offer.expected.items())
    assert {k: v for k, v in now.items() if k[2] == "spot"} == spot_before
    source_url = InstancePrice.objects.filter(source_sha256=run.feed_sha256).first()
    assert source_url is not None and source_url.source_name == server.url(path)

    # 2. a new file 5 % dearer is applied on the schedule, with no one's approval
    server.feeds[path] = scaled(offer, D("1.05"))
    server.last_modified[path] = "Tue, 01 Dec 2026 00:00:00 GMT"
    dearer = refresh_source.apply(args=("aws",)).get()
    assert dearer["status"] == "applied", dearer
    now = current_of("aws")
    for key, usd in offer.expected.items():
        assert now[key] == D(f"{usd * D('1.05'):.10f}"), key

    # 3. unchanged: If-Modified-Since answered 304, nothing downloaded
    again = refresh_source.apply(args=("aws",)).get()
    assert again["status"] == "unchanged" and again["not_modified"], again
    assert server.not_modified == {path: 1} and server.full[path] == 2
    assert list(spool.iterdir()) == []

    # 4. a file whose prices drop 90 % is held and changes no price
    applied = current_of("aws")
    server.feeds[path] = scaled(offer, D("0.1"))
    server.last_modified[path] = "Fri, 04 Dec 2026 00:00:00 GMT"
    dropped = refresh_source.apply(args=("aws",)).get()
    assert dropped["status"] == "held", dropped
    held = RefreshRun.objects.get(pk=dropped["run_id"])
    assert any("factor" in reason for reason in held.held_reasons), held.held_reasons
    assert current_of("aws") == applied


def test_the_aws_offer_file_waits_for_the_lock_and_a_cut_file_changes_no_price(catalog, aws_served):
    server, offer, spool = aws_served
    before = current_of("aws")
    with refresh_lease(source="aws"):
        skipped = refresh_source.apply(args=("aws",)).get()
    assert skipped["status"] == "skipped" and skipped["run_id"] is None, skipped
    assert server.full == {}  # nothing fetched while another refresh held the lock

    server.feeds["/AmazonEC2/current/index.json"] = offer.path.read_bytes()[:300_000]
    cut = refresh_source.apply(args=("aws",)).get()
    assert cut["status"] == "failed" and "not a whole JSON offer file" in cut["detail"], cut
    assert current_of("aws") == before and list(spool.iterdir()) == []


def test_the_aws_offer_file_is_off_unless_its_url_is_set_and_compose_names_the_public_file():
    source = HTTP_SOURCES["aws"]
    assert source is PRICE_SOURCES["aws"] and source.spooled and source.regional
    assert source.url_setting == "PRICE_SOURCE_AWS_URL" and source.public_url == AWS_OFFER_FILE_URL

    class Empty:
        def str(self, var, default=""):
            return default

        def int(self, var, default=None):
            return default

    assert "refresh-aws" not in refresh_beat_schedule(price_source_settings(Empty()))
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    environment = compose["x-app"]["environment"]
    assert environment["PRICE_SOURCE_AWS_URL"] == f"${{PRICE_SOURCE_AWS_URL-{AWS_OFFER_FILE_URL}}}"
    assert f"\nPRICE_SOURCE_AWS_URL={AWS_OFFER_FILE_URL}\n" in (ROOT / ".env.example").read_text()
