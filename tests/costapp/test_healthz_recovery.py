"""``/healthz`` follows the broker both ways (run with GPU_TCO_SERVICES=1): with a Redis of the
test's own as the broker and a real worker consuming the run queue on it, the report says ok;
with that Redis stopped it says the broker is down at once; started again on the same port, it
says ok again as soon as the worker, reconnected, answers on it: never kept down by what it saw
before, and never ok on what the worker said before the broker went down."""

import time
import uuid

import pytest
from django.test import override_settings

from costapp import health
from tests.conftest import start_celery_worker, stop_celery_worker

from .test_faults_services import OwnRedis

pytestmark = pytest.mark.services

RECOVERY_LIMIT_S = 20.0
"""How soon after the broker answers again ``/healthz`` must say ok [s]: the worker reconnects
first (Celery tries again every few seconds), then one question of the report's finds it."""


@pytest.fixture
def own_broker():
    """The app's broker and ``REDIS_URL`` are a Redis of the test's own."""
    from costapp.celery import app

    server = OwnRedis()
    server.start()
    before = app.conf.broker_url
    app.conf.broker_url = server.url
    app._pool = app.amqp._producer_pool = None  # the pools of the broker it had
    try:
        with override_settings(REDIS_URL=server.url):
            yield server
    finally:
        server.stop()
        app.pool.force_close_all()
        app._pool = app.amqp._producer_pool = None
        app.conf.broker_url = before


def healthz(client) -> tuple[int, dict]:
    response = client.get("/healthz")
    return response.status_code, response.json()


@pytest.mark.django_db
def test_healthz_recovers_as_soon_as_the_broker_answers_again(
    client, own_broker, postgres_database, tmp_path
):
    queue = f"healthz-{uuid.uuid4().hex[:8]}"
    worker = start_celery_worker(
        redis_url=own_broker.url,
        database=postgres_database,
        log_path=tmp_path / "worker.log",
        concurrency=1,
        queue=queue,
        env={"RUN_QUEUE": queue},
    )
    try:
        with override_settings(RUN_QUEUE=queue):
            health._workers_seen.clear()
            status, report = healthz(client)
            assert status == 200, report
            assert report["workers"] == {"status": "ok", "queue": queue, "workers": 1}

            own_broker.stop()
            stopped = time.monotonic()
            status, report = healthz(client)
            assert status == 503, report
            assert report["broker"]["status"] == "down"
            assert report["workers"]["status"] == "down"
            assert time.monotonic() - stopped < 10
            time.sleep(3)  # long enough for the worker to notice and start trying again
            assert healthz(client)[0] == 503

            own_broker.start()
            answering = time.monotonic()
            while True:
                status, report = healthz(client)
                if status == 200:
                    break
                took = time.monotonic() - answering
                assert took < RECOVERY_LIMIT_S, (
                    f"still {status} {took:.0f} s after the broker answered: {report}\n"
                    + worker["log"].read_text()[-2000:]
                )
                time.sleep(0.25)
            recovered = time.monotonic() - answering
            assert report["workers"] == {"status": "ok", "queue": queue, "workers": 1}
            assert report["broker"]["status"] == "ok"
            log = worker["log"].read_text()
            assert "Connected to redis" in log[log.index("Connection to broker lost") :]
            print(f"/healthz ok {recovered:.1f} s after the broker answered again")
    finally:
        stop_celery_worker(worker)
