"""A worker SIGKILLed inside a run's merge: the merge is taken over and the run succeeds within
120 s of the kill, equal to ``simulate``, its page saying its merge was taken over and when, and
nothing is left running. The merge is caught under way by the tests' pause point
(``costapp.runs.merging.merge_pause_point``: the worker started with ``RUN_MERGE_PAUSE_FILE``
pauses its first merge, claim held, and writes its process id). Real Redis, PostgreSQL and
Celery worker processes (run with GPU_TCO_SERVICES=1)."""

import json
import os
import re
import signal
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from costapp.models import RunBlock, SimulationRun
from costapp.runs import merging
from costapp.scenarios import services

from ..runs_helpers import scenario_document
from .test_workers import alice, start_run  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def paused_merge(pause: Path, run_id: int, timeout_s: float = 120) -> int:
    """Wait until a worker's merge of ``run_id`` is paused at the pause point; its process id."""
    paused = Path(f"{pause}.paused")
    deadline = time.monotonic() + timeout_s
    while not paused.exists():
        run = SimulationRun.objects.only("status", "error").get(pk=run_id)
        assert run.status == "running" or run.status == "queued", (run.status, run.error)
        assert time.monotonic() < deadline, "no merge reached the pause point"
        time.sleep(0.05)
    return int(paused.read_text())


def merge_under_way(run_id: int) -> SimulationRun:
    run = SimulationRun.objects.get(pk=run_id)
    assert run.status == "running" and run.progress == 99 and run.merge_owner
    assert RunBlock.objects.filter(run_id=run_id).count() == len(run.units)
    return run


def until_ended(run_id: int, killed: float, within_s: float = 120) -> tuple[SimulationRun, float]:
    while True:
        run = SimulationRun.objects.get(pk=run_id)
        if run.status not in SimulationRun.ACTIVE:
            return run, time.monotonic() - killed
        assert time.monotonic() - killed < within_s, f"not finished {within_s} s after the kill"
        time.sleep(0.2)


def assert_taken_over_and_equal(client, run: SimulationRun, killed_at, document) -> None:
    assert run.status == "succeeded", run.error
    assert run.resumed_at_merge and run.resumed >= killed_at and run.attempts == 2
    assert json.dumps(run.result) == json.dumps(services.scenario_simulate(document=document))
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-resumed"' in page and "Its worker was lost during the merge" in page
    assert timezone.localtime(run.resumed).strftime("%H:%M:%S") in page
    assert not SimulationRun.objects.filter(status__in=SimulationRun.ACTIVE).exists()
    assert RunBlock.objects.count() == 0


def test_a_worker_killed_mid_merge_is_taken_over_by_beat_within_120_s(
    client,
    alice,  # noqa: F811 (the fixture imported above)
    catalog,
    celery_workers,
    tmp_path,
):
    pause = tmp_path / "merge-pause"
    pause.touch()
    doomed = celery_workers(
        concurrency=2,
        own_process_group=True,
        env={"RUN_MERGE_PAUSE_FILE": str(pause), "RUN_MERGE_PAUSE_S": "300"},
    )
    document = scenario_document(paths=20_000, seed=13)
    run_id = start_run(client, document)[1].json()["id"]
    paused_merge(pause, run_id)
    held = merge_under_way(run_id)
    time.sleep(merging.MERGE_HEARTBEAT_S + 1)  # paused, the merge still beats
    beating = merge_under_way(run_id)
    assert beating.heartbeat > held.heartbeat and beating.merge_owner == held.merge_owner

    os.killpg(doomed["process"].pid, signal.SIGKILL)  # the whole worker: nothing comes back
    killed, killed_at = time.monotonic(), timezone.now()
    doomed["process"].wait(timeout=20)
    rescuer = celery_workers(concurrency=2, beat=True)  # nothing else is done by hand
    run, took = until_ended(run_id, killed)
    assert_taken_over_and_equal(client, run, killed_at, document)
    log = rescuer["log"].read_text()
    assert f"run {run_id} shows no sign of life in its merge: requeued" in log, log[-3000:]
    assert log.count(f"run {run_id} succeeded") == 1, log[-3000:]
    print(f"the merge taken over and the run finished {took:.0f} s after the kill")


def test_a_pool_process_killed_mid_merge_is_taken_over_at_once(
    client,
    alice,  # noqa: F811
    catalog,
    celery_workers,
    tmp_path,
):
    pause = tmp_path / "merge-pause"
    pause.touch()
    worker = celery_workers(
        concurrency=2, env={"RUN_MERGE_PAUSE_FILE": str(pause), "RUN_MERGE_PAUSE_S": "300"}
    )
    document = scenario_document(paths=20_000, seed=17)
    run_id = start_run(client, document)[1].json()["id"]
    pid = paused_merge(pause, run_id)
    owner = merge_under_way(run_id).merge_owner
    assert pid != worker["process"].pid  # the pool process merging, not the worker itself

    os.kill(pid, signal.SIGKILL)
    killed, killed_at = time.monotonic(), timezone.now()
    # no beat here: the task's message comes back at once and takes its own claim over
    run, took = until_ended(run_id, killed, within_s=merging.MERGE_STALE_S)
    assert_taken_over_and_equal(client, run, killed_at, document)
    log = worker["log"].read_text()
    received = re.findall(rf"Task costapp\.run_block\[{owner}\] received", log)
    assert len(received) == 2, log[-3000:]
    assert f"run {run_id}: merge taken over (attempt 2): its message came back" in log
    assert log.count(f"run {run_id} succeeded") == 1, log[-3000:]
    print(f"the merge taken over and the run finished {took:.1f} s after the kill")


def test_a_merge_beats_from_a_thread_while_it_holds_the_claim(
    alice,  # noqa: F811
    catalog,
):
    from costapp.models import Scenario

    scenario = Scenario.objects.create(owner=alice, name="s", document=scenario_document())
    long_ago = timezone.now() - timedelta(minutes=5)
    held = SimulationRun.objects.create(scenario=scenario, status="running", heartbeat=long_ago)
    other = SimulationRun.objects.create(scenario=scenario, status="running", heartbeat=long_ago)
    assert merging.merge_claim(held.pk, "me") and merging.merge_claim(other.pk, "someone")
    SimulationRun.objects.update(heartbeat=long_ago)
    with merging.merge_heartbeat(held.pk, "me", beat_s=0.05):
        time.sleep(0.5)
        beating = [t for t in threading.enumerate() if t.name == f"merge-heartbeat-{held.pk}"]
        assert len(beating) == 1
        with merging.merge_heartbeat(other.pk, "not the holder", beat_s=0.05):
            time.sleep(0.3)
    held.refresh_from_db()
    other.refresh_from_db()
    assert held.heartbeat > long_ago and other.heartbeat == long_ago
    assert not [t for t in threading.enumerate() if t.name.startswith("merge-heartbeat-")]
    stopped = held.heartbeat
    time.sleep(0.3)
    held.refresh_from_db()
    assert held.heartbeat == stopped
