"""Fetching feeds over HTTP from a real local server the tests start on 127.0.0.1."""

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import pytest

from hardware.refresh.pipeline import RefreshError, _parse
from hardware.sources.azure import parse_azure_retail_prices
from hardware.sources.common import SourceError
from hardware.sources.fetch import FetchError, FetchPolicy, Validators, feed_fetch
from hardware.sources.instances import read_instances
from hardware.sources.registry import HTTP_SOURCES

SAMPLES = Path(__file__).resolve().parents[1] / "feed_samples"
FAST = FetchPolicy(timeout_s=2, retries=3, backoff_s=0.01, max_backoff_s=0.05)


@dataclass
class Route:
    """What the server answers on one path."""

    body: bytes = b"{}"
    etag: str = ""
    last_modified: str = ""
    failures: list[int] = field(default_factory=list)  # statuses to answer first, in order
    delay_s: float = 0.0
    retry_after: str = ""
    content_type: str = "application/json"


class FeedServer:
    """A real HTTP server in a thread; records each request's path and headers."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                server.requests.append((self.path, dict(self.headers)))
                route = server.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                if route.failures:
                    status = route.failures.pop(0)
                    self.send_response(status)
                    if route.retry_after:
                        self.send_header("Retry-After", route.retry_after)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if route.delay_s:
                    time.sleep(route.delay_s)
                matches_etag = route.etag and self.headers.get("If-None-Match") == route.etag
                matches_date = (
                    route.last_modified
                    and not self.headers.get("If-None-Match")
                    and self.headers.get("If-Modified-Since") == route.last_modified
                )
                if matches_etag or matches_date:
                    self.send_response(304)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                if route.etag:
                    self.send_header("ETag", route.etag)
                if route.last_modified:
                    self.send_header("Last-Modified", route.last_modified)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(route.body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]


@pytest.fixture
def feed_server() -> Iterator[FeedServer]:
    server = FeedServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_feed_is_downloaded_with_its_validators(feed_server):
    feed_server.routes["/feed.json"] = Route(
        body=b'{"items": []}', etag='"v1"', last_modified="Mon, 30 Nov 2026 10:00:00 GMT"
    )
    result = feed_fetch(url=f"{feed_server.url}/feed.json", policy=FAST)
    assert not result.not_modified
    assert result.pages == (b'{"items": []}',)
    assert result.validators == Validators('"v1"', "Mon, 30 Nov 2026 10:00:00 GMT")
    assert result.requests == 1 and len(result.sha256) == 64
    assert "If-None-Match" not in feed_server.requests[0][1]


def test_unchanged_feed_is_not_downloaded_again(feed_server):
    body = (SAMPLES / "opencost_cloudbilling_skus_page.json").read_bytes()
    feed_server.routes["/skus"] = Route(body=body, etag='"abc"')
    first = feed_fetch(url=f"{feed_server.url}/skus", policy=FAST)
    again = feed_fetch(url=f"{feed_server.url}/skus", validators=first.validators, policy=FAST)
    assert again.not_modified and again.pages == () and again.size_bytes == 0
    assert again.validators == first.validators
    assert feed_server.requests[1][1]["If-None-Match"] == '"abc"'
    # changed on the server: downloaded, with the new validators
    feed_server.routes["/skus"] = Route(body=body + b" ", etag='"abd"')
    changed = feed_fetch(url=f"{feed_server.url}/skus", validators=first.validators, policy=FAST)
    assert not changed.not_modified and changed.validators.etag == '"abd"'
    assert changed.pages == (body + b" ",)


def test_last_modified_alone_makes_the_request_conditional(feed_server):
    stamp = "Sun, 29 Nov 2026 08:00:00 GMT"
    feed_server.routes["/list.json"] = Route(body=b'{"items": []}', last_modified=stamp)
    first = feed_fetch(url=f"{feed_server.url}/list.json", policy=FAST)
    assert first.validators == Validators("", stamp)
    again = feed_fetch(url=f"{feed_server.url}/list.json", validators=first.validators, policy=FAST)
    assert again.not_modified
    assert feed_server.requests[1][1]["If-Modified-Since"] == stamp


def test_server_errors_are_retried_with_growing_backoff(feed_server):
    feed_server.routes["/flaky"] = Route(body=b"{}", failures=[503, 502, 500])
    waits: list[float] = []
    result = feed_fetch(url=f"{feed_server.url}/flaky", policy=FAST, sleep=waits.append)
    assert result.pages == (b"{}",) and result.requests == 4
    assert waits == [0.01, 0.02, 0.04]
    assert feed_server.paths() == ["/flaky"] * 4


def test_retry_after_is_followed_within_the_bound(feed_server):
    feed_server.routes["/busy"] = Route(body=b"{}", failures=[429], retry_after="1")
    waits: list[float] = []
    feed_fetch(url=f"{feed_server.url}/busy", policy=FAST, sleep=waits.append)
    assert waits == [0.05]  # asked for 1 s, bounded by max_backoff_s


def test_a_server_that_keeps_failing_gives_an_error_naming_the_url(feed_server):
    feed_server.routes["/down"] = Route(failures=[503] * 10)
    url = f"{feed_server.url}/down"
    with pytest.raises(FetchError, match=rf"^{url}: HTTP 503 after 4 attempts$"):
        feed_fetch(url=url, policy=FAST)
    assert len(feed_server.requests) == 4


def test_not_found_is_not_retried(feed_server):
    url = f"{feed_server.url}/missing"
    with pytest.raises(FetchError, match=rf"^{url}: HTTP 404$"):
        feed_fetch(url=url, policy=FAST)
    assert len(feed_server.requests) == 1


def test_a_slow_server_times_out_and_is_retried(feed_server):
    feed_server.routes["/slow"] = Route(body=b"{}", delay_s=1.0)
    policy = FetchPolicy(timeout_s=0.2, retries=1, backoff_s=0.01)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"/slow: timed out \(ReadTimeout\) after 2 attempts"):
        feed_fetch(url=f"{feed_server.url}/slow", policy=policy)
    assert time.monotonic() - started < 1.8  # not the 2 s the server would have taken
    assert len(feed_server.requests) == 2


def test_nothing_listening_is_a_connection_error_after_the_retries():
    with pytest.raises(FetchError, match=r"127.0.0.1:9/feed: ConnectError: .* after 2 attempts"):
        feed_fetch(url="http://127.0.0.1:9/feed", policy=FetchPolicy(retries=1, backoff_s=0.01))


def test_a_feed_larger_than_the_limit_is_refused(feed_server):
    feed_server.routes["/big"] = Route(body=b"x" * 5000)
    with pytest.raises(FetchError, match="larger than 1000 bytes"):
        feed_fetch(url=f"{feed_server.url}/big", policy=FetchPolicy(max_bytes=1000))


def azure_pages(server: FeedServer) -> None:
    """The two Azure samples served as pages 1 and 2 of one query, linked by NextPageLink."""
    first = json.loads(
        (SAMPLES / "retail_prices_eastus_standard_d2s_v3_spot_filter.json").read_text()
    )
    second = json.loads((SAMPLES / "retail_prices_eastus_standard_d2s_v3_preview.json").read_text())
    for page in (first, second):
        for item in page["Items"]:
            item["armSkuName"] = "Standard_NC24ads_A100_v4"
    first["NextPageLink"] = f"{server.url}/api/retail/prices?$skip=100"
    server.routes["/api/retail/prices"] = Route(body=json.dumps(first).encode(), etag='"p1"')
    server.routes["/api/retail/prices?$skip=100"] = Route(body=json.dumps(second).encode())


def test_azure_pages_are_followed_to_the_end_and_parse_as_one_feed(feed_server):
    azure_pages(feed_server)
    result = feed_fetch(url=f"{feed_server.url}/api/retail/prices", paging="azure", policy=FAST)
    assert len(result.pages) == 2 and result.requests == 2
    assert feed_server.paths() == ["/api/retail/prices", "/api/retail/prices?$skip=100"]
    rows, report = parse_azure_retail_prices(
        result.pages, instances=read_instances(provider="azure")
    )
    assert report.rows_read == 15
    assert {(r.billing, r.usd_per_hour) for r in rows} >= {
        ("spot", Decimal("0.018816")),
        ("on_demand", Decimal("0.096")),
    }
    # unchanged first page: nothing downloaded, later pages not asked for
    again = feed_fetch(
        url=f"{feed_server.url}/api/retail/prices",
        paging="azure",
        validators=result.validators,
        policy=FAST,
    )
    assert again.not_modified and len(feed_server.requests) == 3


def test_a_page_link_that_loops_back_is_an_error(feed_server):
    page = {"Items": [], "NextPageLink": f"{feed_server.url}/loop"}
    feed_server.routes["/loop"] = Route(body=json.dumps(page).encode())
    with pytest.raises(FetchError, match="repeats an earlier page"):
        feed_fetch(url=f"{feed_server.url}/loop", paging="azure", policy=FAST)


def test_gcp_pages_are_asked_for_with_the_next_page_token(feed_server):
    feed_server.routes["/v1/skus?key=k"] = Route(
        body=json.dumps({"skus": [], "nextPageToken": "T2"}).encode()
    )
    feed_server.routes["/v1/skus?key=k&pageToken=T2"] = Route(body=b'{"skus": []}')
    result = feed_fetch(url=f"{feed_server.url}/v1/skus?key=k", paging="gcp", policy=FAST)
    assert len(result.pages) == 2
    assert feed_server.paths() == ["/v1/skus?key=k", "/v1/skus?key=k&pageToken=T2"]


def test_a_source_without_a_url_is_off():
    with pytest.raises(FetchError, match="no URL: the source is off"):
        feed_fetch(url="")


def test_an_api_key_in_the_url_is_never_shown(feed_server):
    url = f"{feed_server.url}/v1/services/6F81-5844-456A/skus?key=SECRET123&currencyCode=USD"
    with pytest.raises(FetchError) as raised:
        feed_fetch(url=url, policy=FAST)
    assert "SECRET123" not in str(raised.value)
    assert "key=%2A%2A%2A" in str(raised.value) or "key=***" in str(raised.value)
    feed_server.routes["/v1/services/6F81-5844-456A/skus?key=SECRET123&currencyCode=USD"] = Route(
        body=b'{"skus": []}'
    )
    result = feed_fetch(url=url, paging="gcp", policy=FAST)
    assert "SECRET123" not in result.url and "currencyCode=USD" in result.url


# The pages are parsed as the scheduled refresh parses them (hardware.refresh.pipeline, by the source's
# registry entry), against the catalog's GPU table.
@pytest.mark.django_db
def test_a_fetched_oracle_list_parses_by_source_name(feed_server, catalog):
    body = (SAMPLES / "opencost_oracle_prices_usd.json").read_bytes()
    feed_server.routes["/products/?currencyCode=USD"] = Route(body=body, etag='"o1"')
    fetched = feed_fetch(
        url=f"{feed_server.url}/products/?currencyCode=USD", paging=HTTP_SOURCES["oracle"].paging
    )
    rows, report, tiers = _parse(source="oracle", pages=fetched.pages, provider="oracle")
    assert {(r.instance_type, r.usd_per_hour) for r in rows} >= {("BM.GPU.H100.8", Decimal("80"))}
    assert [(t.up_to_tb, t.usd_per_gb) for t in tiers] == [
        (Decimal("10.24"), Decimal("0")),
        (None, Decimal("0.0085")),
    ]
    assert report.sha256 == fetched.sha256
    with pytest.raises(SourceError, match="one price list document expected, 2 given"):
        _parse(source="oracle", pages=[body, body], provider="oracle")


@pytest.mark.django_db
def test_a_fetched_gcp_listing_parses_by_source_name(feed_server, catalog):
    body = (SAMPLES / "opencost_cloudbilling_skus_page.json").read_bytes()
    token = json.loads(body)["nextPageToken"]  # the sample is page 1: page 2 is asked for
    feed_server.routes["/skus"] = Route(body=body)
    feed_server.routes["/skus?" + urlencode({"pageToken": token})] = Route(body=b'{"skus": []}')
    fetched = feed_fetch(url=f"{feed_server.url}/skus", paging=HTTP_SOURCES["gcp"].paging)
    assert len(fetched.pages) == 2
    rows, report, tiers = _parse(
        source="gcp", pages=fetched.pages, provider="gcp", file_name="gcp 2026-11-30"
    )
    one = {(r.instance_type, r.region): r.usd_per_hour for r in rows}
    assert one[("a2-highgpu-1g", "us-central1")] == Decimal("3.673385")
    assert tiers == [] and report.file_name == "gcp 2026-11-30"


@pytest.mark.django_db
def test_an_unknown_source_a_file_format_given_pages_or_no_pages_is_refused(catalog):
    with pytest.raises(RefreshError, match="unknown source 'nope'"):
        _parse(source="nope", pages=[b"{}"], provider="aws")
    with pytest.raises(RefreshError, match="aws-pricing-api feeds are read from files"):
        _parse(source="aws-pricing-api", pages=[b"{}"], provider="aws")
    with pytest.raises(SourceError, match="azure: no pages to parse"):
        _parse(source="azure", pages=[], provider="azure")


def test_a_feed_written_to_a_file_is_not_kept_in_memory_and_a_failed_one_leaves_no_file(
    feed_server, tmp_path
):
    body = b'{"products": {}}\n' * 1000
    feed_server.routes["/index.json"] = Route(
        body=body, last_modified="Sun, 01 Nov 2026 00:00:00 GMT", failures=[503]
    )
    into = tmp_path / "feed"
    fetched = feed_fetch(url=f"{feed_server.url}/index.json", policy=FAST, into=into)
    assert fetched.pages == () and fetched.path == into and into.read_bytes() == body
    assert fetched.size_bytes == len(body) and fetched.requests == 2  # the 503 tried again
    assert fetched.sha256 == hashlib.sha256(body).hexdigest()
    again = feed_fetch(
        url=f"{feed_server.url}/index.json",
        validators=fetched.validators,
        policy=FAST,
        into=tmp_path / "again",
    )
    assert again.not_modified and again.path is None and not (tmp_path / "again").exists()
    small = FetchPolicy(timeout_s=FAST.timeout_s, retries=0, max_file_bytes=len(body) - 1)
    with pytest.raises(FetchError, match=f"larger than {len(body) - 1} bytes"):
        feed_fetch(url=f"{feed_server.url}/index.json", policy=small, into=tmp_path / "big")
    assert not (tmp_path / "big").exists()
    with pytest.raises(ValueError, match="one page"):
        feed_fetch(url=f"{feed_server.url}/index.json", paging="gcp", into=tmp_path / "x")
