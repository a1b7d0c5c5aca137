"""The scheduled refresh with real services: two refreshes of one source at once (threads on
PostgreSQL, the database lease with and without Redis configured), and a feed served on 127.0.0.1
fetched by the task that a real beat process sends to a real worker process."""

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection

from hardware.models import RefreshRun
from hardware.refresh.scheduled import feed_source_refresh
from hardware.selectors import current_prices

from .feed_server import CountingFeedServer

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
ORACLE = Path(__file__).resolve().parents[1] / "feed_samples" / "opencost_oracle_prices_usd.json"
H100 = ("BM.GPU.H100.8", "global", "on_demand")


def oracle_with(gpu_hour: dict[str, float]) -> bytes:
    document = json.loads(ORACLE.read_text())
    for item in document["items"]:
        if item["partNumber"] in gpu_hour:
            item["currencyCodeLocalizations"][0]["prices"][0]["value"] = gpu_hour[
                item["partNumber"]
            ]
    return json.dumps(document).encode()


def h100_now() -> Decimal | None:
    price = (
        current_prices()
        .filter(offer__provider__slug="oracle", offer__instance_type=H100[0])
        .first()
    )
    return None if price is None else price.usd_per_hour


def two_at_once(source: str) -> list[dict]:
    """Run two refreshes of ``source`` in two threads started together; their outcomes."""
    outcomes: list[dict] = []
    start = threading.Barrier(2)

    def one() -> None:
        try:
            start.wait()
            outcomes.append(feed_source_refresh(source=source).as_dict())
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return outcomes


@pytest.mark.parametrize("with_redis", [True, False])
def test_two_refreshes_of_one_source_at_once_one_runs_the_other_is_skipped(
    with_redis, catalog, postgres_database, redis_url, settings
):
    settings.REDIS_URL = redis_url if with_redis else ""
    with CountingFeedServer() as server:
        server.feeds["/oracle.json"] = oracle_with({"B98415": 11})
        server.delay_s = 1.5  # the first keeps the lock while the second asks for it
        settings.PRICE_SOURCES = {"oracle": {"url": server.url("/oracle.json")}}
        outcomes = two_at_once("oracle")
    assert sorted(o["status"] for o in outcomes) == ["applied", "skipped"], outcomes
    skipped = next(o for o in outcomes if o["status"] == "skipped")
    assert skipped["run_id"] is None and "already running" in skipped["detail"]
    assert server.full == {"/oracle.json": 1}
    assert RefreshRun.objects.filter(source="oracle").count() == 1
    assert h100_now() == Decimal("88")
    # the lock was given back: the next refresh runs (and finds the feed unchanged)
    with CountingFeedServer() as again:
        again.feeds["/oracle.json"] = oracle_with({"B98415": 11})
        settings.PRICE_SOURCES = {"oracle": {"url": again.url("/oracle.json")}}
        assert feed_source_refresh(source="oracle").status == "unchanged"


def start_process(args: list[str], env: dict, log_path: Path) -> subprocess.Popen:
    log = open(log_path, "w")  # noqa: SIM115 (the process owns it until it ends)
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "costapp", *args],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def feed_server():
    with CountingFeedServer() as server:
        yield server


@pytest.fixture
def beat_and_worker(feed_server, redis_url, postgres_database, tmp_path):
    """A real beat process sending ``hardware.refresh_source`` for oracle every 2 s to a queue of
    its own, and a real worker process on that queue, both on the test database and Redis."""
    from costapp.celery import app

    db = postgres_database
    database_url = (
        f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )
    queue = f"refresh-tests-{uuid.uuid4().hex[:8]}"
    nodename = f"refresh-{uuid.uuid4().hex[:8]}@localhost"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "PRICE_SOURCE_ORACLE_URL": feed_server.url("/oracle.json"),
        "PRICE_SOURCE_ORACLE_INTERVAL_SECONDS": "2",
        "PRICE_SOURCE_AZURE_URL": "",
        "PRICE_SOURCE_GCP_URL": "",
        "PRICE_REFRESH_QUEUE": queue,
        "PRICE_FETCH_RETRIES": "0",
    }
    worker = start_process(
        ["worker", "-Q", queue, "--pool", "solo", "-n", nodename, "--loglevel", "INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        env,
        tmp_path / "worker.log",
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not app.control.ping(destination=[nodename], timeout=1.0):
        if worker.poll() is not None or time.monotonic() > deadline:
            stop(worker)
            pytest.fail("the worker did not start:\n" + (tmp_path / "worker.log").read_text())
    beat = start_process(
        ["beat", "--loglevel", "INFO", "--schedule", str(tmp_path / "beat-schedule")],
        env,
        tmp_path / "beat.log",
    )
    yield {"beat": beat, "worker": worker, "logs": tmp_path}
    stop(beat)
    stop(worker)


def wait_for(condition, *, timeout_s: float, what: str, logs: Path):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.5)
    pytest.fail(
        f"{what} within {timeout_s} s\nbeat:\n{(logs / 'beat.log').read_text()[-2000:]}\n"
        f"worker:\n{(logs / 'worker.log').read_text()[-3000:]}"
    )


def test_beat_and_worker_apply_a_changed_feed_then_do_not_download_it_again(
    catalog, postgres_database, feed_server, beat_and_worker
):
    feed_server.feeds["/oracle.json"] = oracle_with({"B98415": 11})  # 10 -> 11 per GPU-hour
    logs = beat_and_worker["logs"]
    applied = wait_for(
        lambda: RefreshRun.objects.filter(source="oracle", status="applied").first(),
        timeout_s=90, what="no applied oracle run", logs=logs,
    )  # fmt: skip
    assert applied.etag and applied.feed_url == feed_server.url("/oracle.json")
    assert applied.prices_added == 10
    assert h100_now() == Decimal("88")
    unchanged = wait_for(
        lambda: RefreshRun.objects.filter(
            source="oracle", not_modified=True, pk__gt=applied.pk
        ).first(),
        timeout_s=60, what="no second, not-modified oracle run", logs=logs,
    )  # fmt: skip
    assert unchanged.status == "unchanged" and unchanged.bytes_read == 0
    assert feed_server.full == {"/oracle.json": 1}
    assert feed_server.not_modified["/oracle.json"] >= 1
    assert h100_now() == Decimal("88")
