"""Runs on real Redis and real Celery worker processes (PostgreSQL; run with GPU_TCO_SERVICES=1)."""

import json
import os
import re
import signal
import time
from datetime import timedelta

import pytest
from django.test import override_settings

from costapp.celery import app
from costapp.models import RunBlock, SimulationRun
from costapp.runs import pipeline, requeue
from costapp.scenarios import services
from tests.conftest import tasks_run_in_process

from ..runs_helpers import analyst, post_json, scenario_document

RECEIVED = re.compile(r"Task costapp\.\w+\[([0-9a-f-]+)\] received")

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def alice(client, postgres_database, redis_url):
    user = analyst("alice")
    client.force_login(user)
    return user


def start_run(client, document, body=None):
    created = post_json(client, "/api/v1/scenarios/", {"name": "fleet", "document": document})
    assert created.status_code == 201, created.content
    response = post_json(client, f"/api/v1/scenarios/{created.json()['id']}/runs/", body or {})
    assert response.status_code == 202, response.content
    # queued when answered, unless a worker was quicker than the answer
    assert response.json()["status"] in ("queued", "running", "succeeded")
    return created.json(), response


def run_killed_mid_way(client, document, worker) -> tuple[int, float]:
    """Start a run of ``document`` (a task a block) on ``worker`` alone, SIGKILL the worker's
    process group once 5 % has landed while it holds a block's message it has not acknowledged
    (so the kill loses one: on a busy machine a worker may be between two messages); the run's
    id and the moment of the kill (monotonic)."""
    import redis
    from django.conf import settings

    broker = redis.Redis.from_url(settings.REDIS_URL)
    with override_settings(RUN_BLOCKS_PER_TASK=1):
        _scenario, response = start_run(client, document)
    run_id = response.json()["id"]
    deadline = time.monotonic() + 120
    while SimulationRun.objects.get(pk=run_id).progress < 5 or not broker.hlen("unacked"):
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.005)
    os.killpg(worker["process"].pid, signal.SIGKILL)
    killed = time.monotonic()
    worker["process"].wait(timeout=20)
    return run_id, killed


def watch(run_id: int, timeout_s: float = 180):
    """Poll the row until the run ends; the (status, progress) pairs seen, in order."""
    seen = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = SimulationRun.objects.only("status", "progress").get(pk=run_id)
        if not seen or seen[-1] != (run.status, run.progress):
            seen.append((run.status, run.progress))
        if run.status in ("succeeded", "failed", "cancelled"):
            return seen
        time.sleep(0.01)
    raise AssertionError(f"run {run_id} did not end in {timeout_s} s: {seen}")


@override_settings(RUN_BLOCKS_PER_TASK=1)
def test_a_run_goes_queued_running_succeeded_with_rising_progress(
    client, alice, catalog, celery_worker_process
):
    assert app.conf.task_always_eager is False
    document = scenario_document(paths=20_000, seed=7)  # twenty block tasks
    _scenario, response = start_run(client, document)
    seen = watch(response.json()["id"])
    statuses = [status for status, _ in seen]
    assert statuses[-1] == "succeeded", seen
    assert "running" in statuses
    progress = [p for _, p in seen]
    assert progress == sorted(progress) and progress[-1] == 100
    assert any(0 < p < 100 for p in progress), seen
    body = client.get(response["Location"]).json()
    expected = services.scenario_simulate(document=document)
    assert json.dumps(body["result"]) == json.dumps(expected)
    assert RunBlock.objects.count() == 0
    log = celery_worker_process["log"].read_text()
    assert log.count("Task costapp.run_block[") >= 20


def test_100k_paths_over_two_worker_processes_equal_one(client, alice, catalog, celery_workers):
    document = scenario_document(paths=100_000, seed=5)
    first_worker = celery_workers(concurrency=1)
    scenario, response = start_run(client, document)
    assert watch(response.json()["id"])[-1] == ("succeeded", 100)
    second_worker = celery_workers(concurrency=1)
    again = post_json(client, f"/api/v1/scenarios/{scenario['id']}/runs/", {})
    assert again.status_code == 202
    assert watch(again.json()["id"])[-1] == ("succeeded", 100)
    one = client.get(response["Location"]).json()["result"]
    two = client.get(again["Location"]).json()["result"]
    assert json.dumps(one) == json.dumps(two)
    assert json.dumps(one) == json.dumps(services.scenario_simulate(document=document))
    second_log = second_worker["log"].read_text()
    assert "Task costapp.run_block[" in second_log, second_log[-2000:]
    assert "Task costapp.run_block[" in first_worker["log"].read_text()


def test_a_run_finishes_on_a_worker_consuming_only_the_run_queue(
    client, alice, catalog, celery_workers
):
    """No worker consumes the default queue here: a message left there would stall the run."""
    worker = celery_workers(concurrency=2, env={"RUN_QUEUE": "runs-only"}, queue="runs-only")
    document = scenario_document(paths=20_000, seed=3)
    with override_settings(RUN_QUEUE="runs-only", RUN_BLOCKS_PER_TASK=5):
        _scenario, response = start_run(client, document)
        run_id = response.json()["id"]
        assert watch(run_id, timeout_s=90)[-1] == ("succeeded", 100)
    body = client.get(response["Location"]).json()
    assert json.dumps(body["result"]) == json.dumps(services.scenario_simulate(document=document))
    log = worker["log"].read_text()
    assert len(re.findall(r"Task costapp\.run_block\[\S+\] received", log)) == 5, log[-3000:]
    assert ".> runs-only" in log and ".> celery" not in log, log[:3000]


def test_a_worker_killed_with_its_process_group_mid_run_is_picked_up_and_finishes_once(
    client, alice, catalog, celery_workers
):
    short = {"CELERY_VISIBILITY_TIMEOUT_S": "15"}  # hard time limit 10 s, soft 7 s
    doomed = celery_workers(concurrency=2, env=short, own_process_group=True)
    document = scenario_document(paths=40_000, seed=9)
    run_id, _killed = run_killed_mid_way(client, document, doomed)
    killed_at = SimulationRun.objects.get(pk=run_id)
    assert killed_at.status == "running" and killed_at.progress < 100, killed_at.progress
    # a new worker: the broker hands the dead worker's messages out again after the visibility
    # timeout, and the periodic check (run here at once, as beat would after RUN_STALE_AFTER_S)
    # re-publishes the work not yet stored
    rescuer = celery_workers(concurrency=2, env=short)
    # the rescuer may be saving one of the blocks still queued at this instant, its row locked:
    # the check leaves a locked row for its next look (never waits on it), so it looks again,
    # well within the visibility timeout, until it has requeued the run (once: attempts == 2)
    deadline = time.monotonic() + 10
    while (requeued := requeue.runs_requeue_stale(stale_after=timedelta(0))) != [run_id]:
        assert requeued == [] and time.monotonic() < deadline, requeued
        time.sleep(0.1)
    seen = watch(run_id)
    assert seen[-1] == ("succeeded", 100), seen
    finished = SimulationRun.objects.get(pk=run_id)
    assert finished.attempts == 2
    # the messages the dead worker held come back after the visibility timeout (the same task
    # ids, received again by the new worker), and change nothing
    held = set(RECEIVED.findall(doomed["log"].read_text()))
    deadline = time.monotonic() + 60
    while not held & set(RECEIVED.findall(rescuer["log"].read_text())):
        assert time.monotonic() < deadline, (held, rescuer["log"].read_text()[-3000:])
        time.sleep(0.5)
    time.sleep(2)
    after = SimulationRun.objects.get(pk=run_id)
    assert (after.finished, after.status) == (finished.finished, "succeeded")
    assert json.dumps(after.result) == json.dumps(services.scenario_simulate(document=document))
    assert RunBlock.objects.count() == 0
    log = rescuer["log"].read_text()
    assert log.count(f"run {run_id} succeeded") == 1, log[-3000:]


def test_a_cancelled_run_stops_on_the_workers(client, alice, catalog, celery_workers):
    celery_workers(concurrency=1)
    with override_settings(RUN_BLOCKS_PER_TASK=1):
        _scenario, response = start_run(client, scenario_document(paths=60_000, seed=1))
    run_id = response.json()["id"]
    cancelled = client.post(f"/api/v1/runs/{run_id}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    time.sleep(3)
    run = SimulationRun.objects.get(pk=run_id)
    assert run.status == "cancelled" and run.result is None
    assert RunBlock.objects.filter(run_id=run_id).count() == 0


def test_block_results_travel_through_redis_and_lost_ones_are_computed_again(
    alice, catalog, caplog
):
    import redis
    from django.conf import settings

    from costapp.models import Scenario

    # this process runs the tasks; the blocks' results still go through Redis
    with tasks_run_in_process(results_in_redis=True):
        scenario = Scenario.objects.create(
            owner=alice, name="s", document=scenario_document(paths=3_000, seed=6)
        )
        finished = pipeline.run_create(scenario=scenario)
        assert finished.status == "succeeded", finished.error
        run = SimulationRun.objects.create(
            scenario=scenario,
            status="running",
            document_sha256=finished.document_sha256,
            inputs=finished.inputs,
            gpus=finished.gpus,
            units=finished.units,
        )
        pipeline.run_block_execute(run_id=run.id, kind="deterministic", unit=0)
        pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=0)
        pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=1)
        client = redis.Redis.from_url(settings.REDIS_URL)
        key = f"costapp:run:{run.id}:montecarlo:0"
        assert len(client.get(key)) > 100_000
        assert bytes(RunBlock.objects.get(run=run, kind="montecarlo", unit=0).payload) == b""
        client.delete(key)  # as if Redis restarted without it
        with caplog.at_level("WARNING", logger="costapp.runs.pipeline"):
            pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=2)
        assert "1 block results lost before the merge" in caplog.text
        run.refresh_from_db()
        assert run.status == "succeeded"
        assert json.dumps(run.result) == json.dumps(finished.result)
        assert client.keys(f"costapp:run:{run.id}:*") == []
