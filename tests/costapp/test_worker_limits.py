"""No worker waits on another without limit: a worker's PostgreSQL session gives up a lock it
cannot take within ``WORKER_LOCK_TIMEOUT_S`` (a service fault its task tries again), a transaction
a frozen worker left open is ended after ``WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S``, beat's requeue
never waits on a locked run, and ``/healthz`` names the runs that made no progress."""

import time
from datetime import timedelta

import pytest
import redis
from django.db import connection, connections, transaction
from django.test import override_settings
from django.utils import timezone

from costapp import celery as worker_app
from costapp.faults import SERVICE_ERRORS, lock_not_taken
from costapp.models import RunBlock, SimulationRun
from costapp.runs import requeue, store, tasks

from .factories import ScenarioFactory


@pytest.fixture
def as_worker():
    """This process's new database sessions as a worker's."""
    worker_app.WORKER["process"] = True
    yield
    worker_app.WORKER["process"] = False


@pytest.fixture
def worker_session(as_worker, settings):
    """A second database session opened as a worker's, its limits set by the test's
    ``worker_limits`` mark (lock, idle in transaction [s])."""
    sessions = []

    def open_session(lock_s: float, idle_s: float):
        settings.WORKER_LOCK_TIMEOUT_S, settings.WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S = (
            lock_s,
            idle_s,
        )
        session = connections.create_connection("default")
        session.ensure_connection()
        sessions.append(session)
        return session

    yield open_session
    for session in sessions:
        session.close()


def running_run(seen_s_ago: float = 0) -> SimulationRun:
    seen = timezone.now() - timedelta(seconds=seen_s_ago)
    run = SimulationRun.objects.create(
        scenario=ScenarioFactory(), status=SimulationRun.Status.RUNNING, seed=1, paths=1000
    )
    SimulationRun.objects.filter(pk=run.pk).update(heartbeat=seen, created=seen)
    return run


def show(session, name: str) -> str:
    with session.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        return cursor.fetchone()[0]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_worker_session_gives_up_a_held_lock_in_time_as_a_service_fault(
    postgres_database, worker_session
):
    worker_session = worker_session(1.5, 3)
    assert show(worker_session, "lock_timeout") == "1500ms"
    assert show(worker_session, "idle_in_transaction_session_timeout") == "3s"
    assert show(connection, "lock_timeout") == "0"  # a web process's session: no limit set
    run = running_run()
    with transaction.atomic():  # the row held, as a frozen worker holds it
        SimulationRun.objects.select_for_update().get(pk=run.pk)
        started = time.monotonic()
        with pytest.raises(SERVICE_ERRORS) as raised, worker_session.cursor() as cursor:
            cursor.execute(
                "SELECT id FROM costapp_simulationrun WHERE id = %s FOR UPDATE", [run.pk]
            )
        waited = time.monotonic() - started
    assert "lock timeout" in str(raised.value)
    assert 1.4 < waited < 5, waited
    # its task tries again within a second or two, not after a backoff grown to a minute
    assert lock_not_taken(raised.value)
    retries = []

    class Task:
        def retry(self, exc, countdown, max_retries):
            retries.append((exc, countdown, max_retries))
            return RuntimeError("tried again")

    def step():
        raise raised.value

    with pytest.raises(RuntimeError, match="tried again"):
        tasks._locks_retried(Task(), step)
    ((exc, countdown, most),) = retries
    assert exc is raised.value and most == tasks.LOCK_RETRY_MAX
    assert tasks.LOCK_RETRY_S[0] <= countdown <= tasks.LOCK_RETRY_S[1]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_transaction_a_frozen_worker_left_open_is_ended_and_its_lock_released(
    postgres_database, worker_session
):
    worker_session = worker_session(1, 2)
    run = running_run()
    worker_session.set_autocommit(False)
    with worker_session.cursor() as cursor:
        cursor.execute("SELECT id FROM costapp_simulationrun WHERE id = %s FOR UPDATE", [run.pk])
    started = time.monotonic()  # beat's requeue passes the locked run by, never waits on it
    assert requeue.runs_requeue_stale(stale_after=timedelta(seconds=-1)) == []
    assert time.monotonic() - started < 1
    time.sleep(3)  # the worker frozen with the row locked, past the limit
    # the lock released by the server: the run requeued, the row taken at once
    assert requeue.runs_requeue_stale(stale_after=timedelta(seconds=-1)) == [run.pk]
    with transaction.atomic():
        started = time.monotonic()
        SimulationRun.objects.select_for_update(nowait=True).get(pk=run.pk)
        assert time.monotonic() - started < 1
    # the frozen worker, back, meets a fault its task tries again (with its usual backoff)
    with pytest.raises(SERVICE_ERRORS) as ended, worker_session.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert not lock_not_taken(ended.value)


@pytest.mark.services
@pytest.mark.django_db
def test_a_unit_kept_but_never_recorded_is_published_again(redis_url, monkeypatch):
    published = []
    monkeypatch.setattr(store, "publish", lambda *args: published.append(args))
    frozen, busy = running_run(seen_s_ago=40), running_run(seen_s_ago=2)
    units = [["montecarlo", 0, [0]], ["montecarlo", 1, [1]], ["montecarlo", 2, [2]]]
    SimulationRun.objects.filter(pk__in=[frozen.pk, busy.pk]).update(units=units)
    RunBlock.objects.create(run=frozen, kind="montecarlo", unit=2, payload=b"")
    client = redis.Redis.from_url(redis_url)
    for run in (frozen, busy):
        for unit, kept_s_ago in ((0, 30), (1, 5), (2, 30)):
            key = f"costapp:run:{run.pk}:montecarlo:{unit}"
            client.set(key, b"x", ex=store.BLOCK_PAYLOAD_TTL_S - kept_s_ago)
    try:
        # unit 0 kept 30 s ago, never recorded; unit 1 kept 5 s ago (its task waits for the
        # row); unit 2 recorded; the busy run landed a unit 2 s ago
        assert requeue.units_requeue_unrecorded() == [frozen.pk]
        assert published == [(store.RUN_BLOCK_TASK, frozen.pk, "montecarlo", 0)]
        assert client.ttl(f"costapp:run:{frozen.pk}:montecarlo:0") > store.BLOCK_PAYLOAD_TTL_S - 5
        assert requeue.units_requeue_unrecorded() == []  # not again at the next look
        assert len(published) == 1
    finally:
        client.delete(
            *[f"costapp:run:{r.pk}:montecarlo:{u}" for r in (frozen, busy) for u in range(3)]
        )


@pytest.mark.django_db
@override_settings(RUN_STALL_REPORT_S=60, REDIS_URL="")
def test_healthz_names_the_runs_without_progress_beyond_the_limit(client):
    fresh, quiet = running_run(seen_s_ago=5), running_run(seen_s_ago=200)
    report = client.get("/healthz")
    assert report.status_code == 200  # the services answer: a stall is reported, not a 503
    runs = report.json()["runs"]
    assert runs["status"] == "stalled" and runs["runs"] == [quiet.pk], runs
    assert runs["stalled"] == 1 and runs["limit_s"] == 60 and 195 <= runs["longest_s"] <= 260
    assert fresh.pk not in runs["runs"]
    SimulationRun.objects.filter(pk=quiet.pk).update(heartbeat=timezone.now())
    assert client.get("/healthz").json()["runs"] == {"status": "ok", "stalled": 0, "limit_s": 60}
