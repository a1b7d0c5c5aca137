"""Faults of the real services (run with GPU_TCO_SERVICES=1): a Redis of the test's own stopped
under the app, PostgreSQL unreachable (for the requests; for a worker, behind a proxy cut for a
few seconds), every worker of the run queue stopped."""

import contextlib
import shutil
import socket
import subprocess
import threading
import time
import uuid

import pytest
import redis
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient

from accounts import guessing, throttling
from accounts.roles import ANALYST
from costapp import health
from costapp.models import Scenario
from costapp.runs import pipeline
from tests.conftest import start_celery_worker, stop_celery_worker
from tests.factories import UserFactory

from .runs.test_pages import finished, pat  # noqa: F401 (fixtures)
from .runs_helpers import scenario_document

pytestmark = pytest.mark.services


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OwnRedis:
    """A throwaway redis-server of the test's own (no file written) on a port of its own,
    which it can be stopped and started again on."""

    def __init__(self) -> None:
        self.server = shutil.which("redis-server")
        if self.server is None:
            pytest.fail("this test needs redis-server (apt-get install redis-server)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                str(self.server),
                *("--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no"),
            ],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    self.process.kill()
                    pytest.fail("the throwaway redis-server did not answer within 10 s")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def own_redis():
    """A throwaway redis-server of this test's own: ``(url, stop)``."""
    server = OwnRedis()
    server.start()
    yield server.url, server.stop
    server.stop()
    throttling.FALLBACK.cache.clear()
    guessing.FALLBACK.cache.clear()


def token_for(username: str) -> str:
    response = APIClient().post(
        "/api/v1/auth/tokens/", {"username": username, "password": f"pw-{username}"}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()["key"]


def assert_503_error_format(response, words: str) -> None:
    assert response.status_code == 503, response.content
    assert response["Content-Type"].startswith("application/json")
    assert int(response["Retry-After"]) > 0
    (error,) = response.json()["errors"]
    assert error["field"] is None and words in error["message"]


@pytest.mark.django_db
def test_with_redis_stopped_reads_answer_and_starting_a_run_is_503(
    own_redis,
    finished,  # noqa: F811
    postgres_database,
    client,
):
    url, stop = own_redis
    caches = {
        "default": {
            "BACKEND": "costapp.cache.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "gputco-cache",
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
    owner = finished.scenario.owner
    client.force_login(owner)
    with override_settings(REDIS_URL=url, CACHES=caches, API_PAGE_CACHE_SECONDS=300):
        key = token_for(owner.username)
        api = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
        assert api.get("/api/v1/prices/current/?page_size=5").status_code == 200
        assert redis.Redis.from_url(url).dbsize() > 0  # the app was really using this Redis
        stop()

        assert api.get("/api/v1/gpus/").status_code == 200
        prices = api.get("/api/v1/prices/current/?page_size=5")
        assert prices.status_code == 200 and prices.json()["count"] > 0
        assert api.get(f"/api/v1/runs/{finished.pk}/").json()["status"] == "succeeded"
        assert token_for(owner.username)  # signing in needs no Redis
        assert client.get(f"/runs/{finished.pk}/").status_code == 200
        assert client.get("/prices/").status_code == 200

        started = api.post(f"/api/v1/scenarios/{finished.scenario.pk}/runs/", {}, format="json")
        assert_503_error_format(started, "Redis")
        assert finished.scenario.runs.count() == 1

        health._workers_seen.clear()
        report = client.get("/healthz")
        assert report.status_code == 503
        assert report.json()["broker"]["status"] == "down"
        assert report.json()["database"]["status"] == "ok"


@pytest.fixture
def refusing_broker(own_redis):
    """The app's broker is a Redis of the test's own that answers (``PING``, so the broker check
    passes) and refuses every write (``NOREPLICAS``: it waits for a replica it never has), so
    every message published to it is refused."""
    from costapp.celery import app

    url, _stop = own_redis
    redis.Redis.from_url(url).config_set("min-replicas-to-write", 1)
    before = app.conf.broker_url, app.conf.task_always_eager
    app.conf.broker_url, app.conf.task_always_eager = url, False
    app._pool = app.amqp._producer_pool = None  # the pools of the broker it had
    try:
        with override_settings(REDIS_URL=url):
            yield url
    finally:
        app.pool.force_close_all()
        app._pool = app.amqp._producer_pool = None
        app.conf.broker_url, app.conf.task_always_eager = before


@pytest.mark.django_db
def test_a_run_whose_broker_refuses_its_tasks_ends_failed_with_the_error_and_answers_503(
    refusing_broker, catalog
):
    user = UserFactory(roles=[ANALYST])
    scenario = Scenario.objects.create(owner=user, name="s", document=scenario_document())
    api = APIClient()
    api.force_authenticate(user)
    response = api.post(f"/api/v1/scenarios/{scenario.pk}/runs/", {}, format="json")
    assert_503_error_format(response, "did not take the run")
    (run,) = scenario.runs.all()
    assert run.status == "failed" and run.finished is not None
    assert "refused the run's tasks" in run.error and "NOREPLICAS" in run.error
    shown = api.get(f"/api/v1/runs/{run.pk}/").json()
    assert shown["status"] == "failed" and "NOREPLICAS" in shown["error"]


@pytest.mark.django_db
def test_a_question_whose_broker_refuses_its_tasks_leaves_no_scenario_run_or_question(
    refusing_broker, catalog, client
):
    from costapp.ask.presets import EXAMPLE_QUESTION
    from costapp.models import Question, SimulationRun

    user = UserFactory(roles=[ANALYST])
    client.force_login(user)
    response = client.post("/ask/", EXAMPLE_QUESTION)
    assert response.status_code == 200
    assert "did not take the run" in response.content.decode()
    assert not Scenario.objects.filter(owner=user).exists()
    assert not SimulationRun.objects.exists() and not Question.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_with_postgresql_unreachable_the_api_and_pages_answer_503(client):
    user = UserFactory(username="pg-gone", roles=[ANALYST])
    key = token_for(user.username)
    Scenario.objects.create(owner=user, name="s", document=scenario_document())
    client.force_login(user)
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict["HOST"], connection.settings_dict["PORT"] = "127.0.0.1", free_port()
    try:
        started = time.monotonic()
        api = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
        assert_503_error_format(api.get("/api/v1/gpus/"), "the database")
        assert_503_error_format(api.get("/api/v1/scenarios/"), "the database")
        page = client.get("/scenarios/")
        assert page.status_code == 503 and int(page["Retry-After"]) > 0
        assert "the database (PostgreSQL)" in page.content.decode()
        for path in ("/", "/prices/", "/gpus/", "/runs/1/", "/ask/", "/tokens/"):
            # a signed-in user is told the database is down, never sent to sign in
            assert client.get(path).status_code == 503, path
        report = client.get("/healthz")
        assert report.status_code == 503
        assert report.json()["database"]["status"] == "down"
        assert time.monotonic() - started < 20
    finally:
        connection.close()
        connection.settings_dict.update(saved)
    assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/v1/gpus/").status_code == 200


@pytest.mark.django_db
def test_healthz_says_when_no_worker_consumes_the_run_queue(client, celery_workers):
    queue = f"faults-{uuid.uuid4().hex[:8]}"
    with override_settings(RUN_QUEUE=queue):
        health._workers_seen.clear()
        none = client.get("/healthz")
        assert none.status_code == 503
        assert none.json()["workers"] == {
            "status": "down",
            "queue": queue,
            "workers": 0,
            "error": "no worker consumes the run queue",
        }
        assert none.json()["database"]["status"] == none.json()["broker"]["status"] == "ok"

        worker = celery_workers(concurrency=1, queue=queue)
        health._workers_seen.clear()
        one = client.get("/healthz")
        assert one.status_code == 200, one.content
        assert one.json()["workers"] == {"status": "ok", "queue": queue, "workers": 1}

        stop_celery_worker(worker)
        # the answer is kept WORKERS_CACHE_S from when it was asked (stopping a worker on a busy
        # machine may take longer than that): read as just asked, it still says ok
        key = next(iter(health._workers_seen))
        health._workers_seen[key] = (time.monotonic(), health._workers_seen[key][1])
        assert client.get("/healthz").status_code == 200
        health._workers_seen.clear()
        stopped = client.get("/healthz")
        assert stopped.status_code == 503
        assert stopped.json()["workers"]["workers"] == 0


class Proxy:
    """A TCP proxy in front of PostgreSQL that can be cut (every connection closed, new ones
    refused) and opened again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.pairs: list[socket.socket] = []
        self.listener: socket.socket | None = None
        self.lock = threading.Lock()

    def open(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        with self.lock:
            listener, self.listener = self.listener, None
            if listener is not None:  # shut down first: that wakes the thread blocked in accept
                with contextlib.suppress(OSError):
                    listener.shutdown(socket.SHUT_RDWR)
                listener.close()
            for sock in self.pairs:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self.pairs.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.pairs += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)


@pytest.mark.django_db(transaction=True)
def test_a_database_outage_under_a_worker_delays_its_run_and_never_fails_it(
    postgres_database, redis_url, catalog, tmp_path
):
    queue = f"faults-{uuid.uuid4().hex[:8]}"
    proxy = Proxy(
        (postgres_database["HOST"] or "127.0.0.1", int(postgres_database["PORT"] or 5432))
    )
    proxy.open()
    worker = start_celery_worker(
        redis_url=redis_url,
        database={**postgres_database, "HOST": "127.0.0.1", "PORT": proxy.port},
        log_path=tmp_path / "worker.log",
        concurrency=1,
        queue=queue,
        env={"RUN_QUEUE": queue, "RUN_BLOCKS_PER_TASK": "1"},
    )
    try:
        user = UserFactory(roles=[ANALYST])
        scenario = Scenario.objects.create(
            owner=user, name="s", document=scenario_document(paths=3_000, seed=3)
        )
        proxy.cut()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", proxy.port), timeout=2).close()
        with override_settings(RUN_QUEUE=queue, RUN_BLOCKS_PER_TASK=1):
            run = pipeline.run_create(scenario=scenario)
        time.sleep(4)  # the worker meets the outage: its tasks wait and try again
        run.refresh_from_db()
        assert run.status in ("queued", "running") and not run.error
        proxy.open()
        deadline = time.monotonic() + 40
        while run.status not in ("succeeded", "failed") and time.monotonic() < deadline:
            time.sleep(0.2)
            run.refresh_from_db()
        log = worker["log"].read_text()
        assert run.status == "succeeded", (run.status, run.error, log[-3000:])
        assert "retry" in log.lower(), log[-3000:]
    finally:
        stop_celery_worker(worker)
        proxy.cut()
