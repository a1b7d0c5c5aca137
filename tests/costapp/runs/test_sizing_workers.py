"""Sizing runs on real Redis and real Celery worker processes (PostgreSQL; run with
GPU_TCO_SERVICES=1): the sweeps' blocks spread over two workers give the in-process result (and
NPV bands) bit for bit, and sweep blocks delivered twice add nothing."""

import json
import re
import time

import pytest
from django.test import override_settings

from costapp.models import RunBlock, SimulationRun
from costapp.runs.tasks import run_block_task
from costapp.scenarios import services
from costapp.tco import montecarlo, sizing
from costapp.tco.core import plan_build

from ..runs_helpers import analyst, post_json
from .test_sizing import sizing_document
from .test_workers import watch

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

STORED = re.compile(r"run (\d+) sizing unit (\d+): stored")


@pytest.fixture
def alice(client, postgres_database, redis_url):
    user = analyst("alice")
    client.force_login(user)
    return user


def test_a_sizing_run_over_two_worker_processes_equals_the_in_process_result(
    client, alice, catalog, celery_workers
):
    first = celery_workers(concurrency=1)
    second = celery_workers(concurrency=1)
    document = sizing_document(paths=10_000, seed=21)
    created = post_json(client, "/api/v1/scenarios/", {"name": "fleet", "document": document})
    assert created.status_code == 201, created.content
    with override_settings(RUN_BLOCKS_PER_TASK=1):
        started = post_json(client, f"/api/v1/scenarios/{created.json()['id']}/runs/", {})
    assert started.status_code == 202, started.content
    run_id = started.json()["id"]
    seen = watch(run_id)
    assert seen[-1] == ("succeeded", 100), seen
    assert any(0 < p < 100 for _, p in seen), seen
    run = SimulationRun.objects.get(pk=run_id)
    assert [kind for kind, _u, _b in run.units].count("sizing") == 10
    body = client.get(started["Location"]).json()
    expected = services.scenario_simulate(document=document)
    assert json.dumps(body["result"]) == json.dumps(expected)
    assert len(body["result"]["sizing"]) == 3 and "mean_npv_usd" in body["result"]["sizing"][0]
    # the NPV bands kept beside the run: those of one process, the result's P90 bit for bit
    plan = plan_build(run.inputs, run.gpus)
    blocks = sizing.sweep_blocks_compute(plan, range(montecarlo.block_count(10_000)))
    assert json.dumps(run.sizing_bands) == json.dumps(sizing.sweeps_bands(plan, [blocks]))
    assert [band["p90_npv_usd"] for band in run.sizing_bands] == [
        sweep["p90_npv_usd"] for sweep in body["result"]["sizing"]
    ]
    # both workers priced sweep blocks
    for worker in (first, second):
        log = worker["log"].read_text()
        assert STORED.search(log), log[-2000:]
    stored = {
        int(unit)
        for worker in (first, second)
        for rid, unit in STORED.findall(worker["log"].read_text())
        if int(rid) == run_id
    }
    assert sorted(stored) == list(range(10))
    assert RunBlock.objects.count() == 0


def test_sweep_blocks_delivered_twice_to_two_workers_add_nothing(
    client, alice, catalog, celery_workers
):
    workers = [celery_workers(concurrency=1), celery_workers(concurrency=1)]
    document = sizing_document(paths=6_000, seed=4)
    created = post_json(client, "/api/v1/scenarios/", {"name": "fleet", "document": document})
    with override_settings(RUN_BLOCKS_PER_TASK=1):
        started = post_json(client, f"/api/v1/scenarios/{created.json()['id']}/runs/", {})
    assert watch(started.json()["id"])[-1] == ("succeeded", 100)
    done = SimulationRun.objects.get(pk=started.json()["id"])
    names = ("scenario", "seed", "paths", "document_sha256", "inputs", "gpus", "units")
    names += ("normalize_warnings", "catalog_warnings")
    again = SimulationRun.objects.create(
        **{name: getattr(done, name) for name in names}, status="running"
    )
    # every block task sent twice in a row, the sweep blocks first: the two workers often
    # compute the same unit at once, and one of the two results is dropped
    units = sorted(again.units, key=lambda u: u[0] != "sizing")
    for kind, unit, _blocks in units:
        for _ in range(2):
            run_block_task.apply_async(args=(again.pk, kind, unit))
    seen = watch(again.pk)
    assert seen[-1] == ("succeeded", 100), seen
    progress = [p for _, p in seen]
    assert progress == sorted(progress)
    again.refresh_from_db()
    assert json.dumps(again.result) == json.dumps(done.result)
    assert json.dumps(again.result) == json.dumps(services.scenario_simulate(document=document))
    logs = "".join(worker["log"].read_text() for worker in workers)
    assert logs.count(f"run {again.pk} succeeded") == 1, logs[-3000:]
    stored = {int(unit) for rid, unit in STORED.findall(logs) if int(rid) == again.pk}
    assert sorted(stored) == list(range(6)), stored
    # every copy was delivered (the first run's 12 block tasks, then 2 × 12)
    deadline = time.monotonic() + 60
    while sum(w["log"].read_text().count("Task costapp.run_block[") for w in workers) < 36:
        assert time.monotonic() < deadline, logs[-3000:]
        time.sleep(0.2)
    time.sleep(1)
    again.refresh_from_db()
    assert json.dumps(again.result) == json.dumps(done.result)
    assert RunBlock.objects.count() == 0
