"""A worker frozen (SIGSTOP) while it holds a block's transaction delays only what it holds: the
other runs finish, the frozen run resumes and succeeds within 120 s of the stop, equal to
``simulate``, and ``/healthz`` names it while it makes no progress. The block is caught holding
its run's row by the tests' pause point (``costapp.runs.merging.block_pause_point``). Real
PostgreSQL, Redis and two Celery worker processes (run with GPU_TCO_SERVICES=1), with the
product's default limits: PostgreSQL ends the frozen session after
``WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S`` (60 s), the other tasks give a lock up after
``WORKER_LOCK_TIMEOUT_S`` (5 s) and try again within two seconds, and beat's look every
``RUN_STALE_CHECK_S`` (15 s) publishes again the unit the frozen worker kept but never recorded
(``costapp.runs.requeue.units_requeue_unrecorded``), so the run finishes soon after the row is
free. Only ``/healthz``'s report limit is shortened here (in this process), so that the stall is
reported while it lasts."""

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from costapp import health
from costapp.models import SimulationRun
from costapp.scenarios import services

from ..runs_helpers import scenario_document
from .test_workers import alice, start_run  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

DEFAULTS = {
    "WORKER_LOCK_TIMEOUT_S": 5.0,
    "WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S": 60.0,
    "RUN_STALE_AFTER_S": 60,
    "RUN_STALE_CHECK_S": 15,
}
"""The workers' limits, as the product sets them by default."""


def paused_block(pause: Path, timeout_s: float = 120) -> int:
    paused = Path(f"{pause}.paused")
    deadline = time.monotonic() + timeout_s
    while not paused.exists():
        assert time.monotonic() < deadline, "no block reached the pause point"
        time.sleep(0.05)
    return int(paused.read_text())


def test_a_frozen_worker_delays_only_the_run_it_holds(
    client,
    alice,  # noqa: F811 (the fixture imported above)
    catalog,
    celery_workers,
    tmp_path,
):
    for name, value in DEFAULTS.items():  # the workers inherit this environment
        assert name not in os.environ and getattr(settings, name) == value, name
    pause = tmp_path / "block-pause"
    pause.touch()
    first = celery_workers(
        concurrency=2, env={"RUN_BLOCK_PAUSE_FILE": str(pause), "RUN_BLOCK_PAUSE_S": "600"}
    )
    documents = {
        name: scenario_document(paths=paths, seed=seed)
        for name, paths, seed in (("held", 6_000, 21), ("a", 3_000, 22), ("b", 3_000, 23))
    }
    held_id = start_run(client, documents["held"])[1].json()["id"]
    pid = paused_block(pause)
    os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        second = celery_workers(concurrency=2, beat=True)
        others = {name: start_run(client, documents[name])[1].json()["id"] for name in "ab"}
        stall_seen = None
        with override_settings(RUN_STALL_REPORT_S=10):
            while True:
                runs = SimulationRun.objects.filter(pk__in=[held_id, *others.values()])
                status = dict(runs.values_list("pk", "status"))
                if all(s not in SimulationRun.ACTIVE for s in status.values()):
                    break
                took = time.monotonic() - stopped
                assert took < 120, (f"not all finished {took:.0f} s after the stop", status)
                if stall_seen is None and status[held_id] in SimulationRun.ACTIVE:
                    health._workers_seen.clear()
                    report = client.get("/healthz").json()
                    if report["runs"]["status"] == "stalled":
                        assert held_id in report["runs"]["runs"], report
                        assert report["workers"]["status"] == "ok", report
                        stall_seen = took
                time.sleep(0.5)
        finished = time.monotonic() - stopped
    finally:
        os.kill(pid, signal.SIGCONT)
    assert stall_seen is not None, "/healthz never reported the stalled run"
    for name, run_id in {"held": held_id, **others}.items():
        run = SimulationRun.objects.get(pk=run_id)
        assert run.status == "succeeded", (name, run.status, run.error)
        expected = services.scenario_simulate(document=documents[name])
        assert json.dumps(run.result) == json.dumps(expected), name
    logs = first["log"].read_text() + second["log"].read_text()
    assert re.search(rf"run {held_id} \w+ unit \d+: kept, never recorded: published again", logs)
    print(
        f"stall reported after {stall_seen:.0f} s; all runs finished {finished:.0f} s after the stop"
    )
