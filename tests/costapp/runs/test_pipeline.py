"""The run pipeline step by step, in this process: a message delivered twice never doubles or
corrupts a run, and the periodic check requeues only runs with no sign of life."""

import json
import logging
from datetime import timedelta

import pytest
from celery.signals import before_task_publish
from django.test import override_settings
from django.utils import timezone

from costapp.celery import app
from costapp.models import RunBlock, SimulationRun
from costapp.runs import blocks as run_blocks
from costapp.runs import pipeline, requeue, store
from costapp.scenarios import catalog as scenario_catalog
from costapp.scenarios import services
from costapp.tco import block_results_from_payload

from ..factories import ScenarioFactory
from ..runs_helpers import analyst, scenario_document, stored_run


@pytest.fixture
def finished_run(db, catalog, tasks_in_process):
    """A succeeded 3 500-path run (a deterministic unit and four Monte Carlo units) of a new
    scenario of pat's: computed once per test process, copied into each later test
    (``stored_run``)."""
    scenario = ScenarioFactory(
        owner=analyst("pat"), document=scenario_document(paths=3_500, seed=2)
    )
    run = stored_run(scenario)
    assert [kind for kind, _unit, _blocks in run.units] == ["deterministic"] + ["montecarlo"] * 4
    return run


def a_copy(run: SimulationRun, **fields) -> SimulationRun:
    """A new run with the same frozen inputs, not yet started."""
    values = {
        name: getattr(run, name)
        for name in (
            "scenario",
            "seed",
            "paths",
            "document_sha256",
            "inputs",
            "gpus",
            "normalize_warnings",
            "catalog_warnings",
            "units",
        )
    }
    return SimulationRun.objects.create(**{**values, **fields})


def test_a_block_delivered_twice_is_stored_once(finished_run):
    run = a_copy(finished_run, status="running")
    pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=1)
    run.refresh_from_db()
    first = (run.progress, list(RunBlock.objects.values_list("unit", flat=True)))
    pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=1)
    run.refresh_from_db()
    assert (run.progress, list(RunBlock.objects.values_list("unit", flat=True))) == first
    assert first == (20, [1])  # 1 of 5 units


def test_the_last_block_merges_and_a_second_merge_changes_nothing(finished_run):
    run = a_copy(finished_run, status="running")
    units = [("montecarlo", 3), ("montecarlo", 0), ("deterministic", 0), ("montecarlo", 2)]
    for kind, unit in units + [("montecarlo", 1)]:  # any order; the last one to land merges
        pipeline.run_block_execute(run_id=run.id, kind=kind, unit=unit)
    run.refresh_from_db()
    assert run.status == "succeeded" and run.progress == 100
    assert json.dumps(run.result) == json.dumps(finished_run.result)
    finished = run.finished
    run.merge_started = None
    run.save()
    pipeline.run_merge(run_id=run.id)
    pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=0)
    pipeline.run_execute(run_id=run.id)
    run.refresh_from_db()
    assert (run.status, run.finished, run.attempts) == ("succeeded", finished, 0)
    assert json.dumps(run.result) == json.dumps(finished_run.result)
    assert RunBlock.objects.count() == 0


def test_a_restarted_run_publishes_only_the_missing_blocks(finished_run, caplog):
    run = a_copy(finished_run, status="running", attempts=1)
    pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=0)
    pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=2)
    with caplog.at_level(logging.INFO, logger="costapp.runs.pipeline"):
        pipeline.run_execute(run_id=run.id)
    assert f"run {run.id}: attempt 2, 3 of 5 block tasks to publish" in caplog.text
    run.refresh_from_db()
    assert run.status == "succeeded" and run.attempts == 2
    assert json.dumps(run.result) == json.dumps(finished_run.result)


def test_the_periodic_check_requeues_only_runs_without_a_sign_of_life(finished_run):
    long_ago = timezone.now() - timedelta(hours=1)
    lost = a_copy(finished_run)  # queued, its message lost
    SimulationRun.objects.filter(pk=lost.pk).update(created=long_ago)
    stalled = a_copy(finished_run, status="running", heartbeat=long_ago, attempts=1)
    alive = a_copy(finished_run, status="running", heartbeat=timezone.now(), attempts=1)
    requeued = requeue.runs_requeue_stale(stale_after=timedelta(minutes=15))
    assert sorted(requeued) == sorted([lost.id, stalled.id])
    for run, attempts in ((lost, 1), (stalled, 2)):
        run.refresh_from_db()
        assert (run.status, run.attempts) == ("succeeded", attempts)
        assert json.dumps(run.result) == json.dumps(finished_run.result)
    alive.refresh_from_db()
    assert alive.status == "running" and alive.attempts == 1
    assert not SimulationRun.objects.filter(status="failed").exists()


def test_a_cancelled_run_drops_blocks_that_land_later(finished_run):
    run = a_copy(finished_run, status="running")
    pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=0)
    assert pipeline.run_cancel(run=run)
    pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=1)
    pipeline.run_merge(run_id=run.id)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.result is None
    assert RunBlock.objects.count() == 0
    assert not pipeline.run_cancel(run=run)


def test_a_rerun_after_the_document_changed_freezes_it_anew(finished_run):
    scenario = finished_run.scenario
    services.scenario_update(scenario=scenario, document=scenario_document(paths=1_000, seed=8))
    run = pipeline.run_create(scenario=scenario)
    assert run.inputs_copied_from is None and (run.seed, run.paths) == (8, 1_000)
    expected = services.scenario_simulate(document=scenario_document(paths=1_000, seed=8))
    assert json.dumps(run.result) == json.dumps(expected)


def test_beat_requeues_runs_and_tasks_end_before_the_visibility_timeout():
    from django.conf import settings

    app.loader.import_default_modules()  # what a worker or beat does at start
    entry = settings.CELERY_BEAT_SCHEDULE["runs-requeue-stale"]
    assert entry["task"] in app.tasks
    visibility = app.conf.broker_transport_options["visibility_timeout"]
    assert app.conf.task_soft_time_limit < app.conf.task_time_limit < visibility
    assert app.conf.worker_prefetch_multiplier == 1 and app.conf.task_acks_late
    for name in ("costapp.run_execute", "costapp.run_block", "costapp.run_merge"):
        assert app.tasks[name].acks_late, name


@override_settings(RUN_BLOCKS_PER_TASK=10)
def test_the_blocks_keeping_months_go_in_tasks_of_their_own_and_every_block_is_in_one():
    units = run_blocks.run_units(inputs={"simulation": {"paths": 100_000, "seed": 0}})
    assert units[0] == ["deterministic", 0, [0]]
    montecarlo = [(unit, blocks) for kind, unit, blocks in units if kind == "montecarlo"]
    assert [blocks for _unit, blocks in montecarlo] == [
        list(range(start, start + 10)) for start in range(0, 100, 10)
    ]
    assert [unit for unit, _blocks in montecarlo] == list(range(10))
    with override_settings(RUN_BLOCKS_PER_TASK=4):
        units = run_blocks.run_units(inputs={"simulation": {"paths": 20_500, "seed": 0}})
    assert [blocks for kind, _u, blocks in units if kind == "montecarlo"][:4] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9],  # the last block keeping months
        [10, 11, 12, 13],
    ]
    assert run_blocks.run_units(inputs={"name": "no simulation"}) == []


def test_block_tasks_send_counts_and_the_percentiles_of_the_months_when_they_hold_them(db, catalog):
    from costapp.tco import montecarlo
    from costapp.tco.core import plan_build

    gpus, _source = scenario_catalog.engine_gpu_figures()
    document = scenario_document(paths=12_500, seed=3)
    inputs = pipeline.normalize(
        document, gpus, scenario_catalog.scenario_catalog_refs(document)
    ).document
    plan = plan_build(inputs, gpus)
    months = plan.horizon_months + 1
    together = block_results_from_payload(
        run_blocks._montecarlo_compute(plan, inputs, list(range(10)))
    )
    assert together.cumulative_usd.shape == (5, months, 0)
    assert together.cumulative_percentiles_usd.shape == (3, 5, months)
    assert together.feasible.shape == (5, 0) and together.cheapest_counts.sum() <= 10_000
    apart = [
        block_results_from_payload(run_blocks._montecarlo_compute(plan, inputs, blocks))
        for blocks in ([0, 1, 2, 3, 4], [5, 6, 7, 8, 9])
    ]
    assert [part.cumulative_usd.shape for part in apart] == [(5, months, 5000)] * 2
    assert all(part.cumulative_percentiles_usd is None for part in apart)
    rest = block_results_from_payload(run_blocks._montecarlo_compute(plan, inputs, [12, 10, 11]))
    expected = montecarlo.run(plan, inputs["simulation"])
    for grouping in ([together, rest], [rest, *apart]):
        assert montecarlo.summary_fields(plan, montecarlo.blocks_merge(grouping)) == expected


def test_a_new_run_publishes_its_units_at_once_and_the_first_to_start_marks_it_running(
    finished_run, monkeypatch
):
    published = []
    monkeypatch.setattr(store, "publish", lambda name, *args: published.append((name, args)))
    run = pipeline.run_create(scenario=finished_run.scenario)
    assert run.status == "queued" and run.started is None and run.attempts == 0
    assert published == [
        ("costapp.run_block", (run.id, kind, unit)) for kind, unit, _blocks in run.units
    ]
    pipeline.run_block_execute(run_id=run.id, kind="montecarlo", unit=2)
    run.refresh_from_db()
    started = run.started
    assert (run.status, run.attempts, run.progress) == ("running", 1, 20)
    assert started is not None and run.heartbeat >= started
    for kind, unit, _blocks in run.units:  # the others find it running: one attempt, one start
        pipeline.run_block_execute(run_id=run.id, kind=kind, unit=unit)
    run.refresh_from_db()
    assert (run.status, run.attempts, run.started) == ("succeeded", 1, started)
    assert json.dumps(run.result) == json.dumps(finished_run.result)


def test_a_cancelled_queued_run_is_not_started_by_its_units(finished_run):
    run = a_copy(finished_run)
    assert pipeline.run_cancel(run=run)
    pipeline.run_block_execute(run_id=run.id, kind="deterministic", unit=0)
    run.refresh_from_db()
    assert (run.status, run.attempts, run.started) == ("cancelled", 0, None)
    assert RunBlock.objects.count() == 0


def test_a_process_plans_a_run_once_for_all_its_units_and_never_reuses_another_runs_plan(
    finished_run, monkeypatch
):
    plans = []
    real_plan_build = pipeline.plan_build

    def counted(inputs, gpus):
        plans.append(inputs["simulation"]["seed"])
        return real_plan_build(inputs, gpus)

    monkeypatch.setattr(pipeline, "plan_build", counted)
    pipeline._RUN_WORK.clear()
    run = a_copy(finished_run, status="running")
    for kind, unit, _blocks in run.units[:-1]:
        pipeline.run_block_execute(run_id=run.id, kind=kind, unit=unit)
    assert plans == [2]  # four units, one plan
    # a run that takes the same id later (a database whose ids start again) gets its own plan
    run_id = run.id
    run.delete()
    other_inputs = pipeline._with_simulation(finished_run.inputs, seed=9, paths=None)
    other = a_copy(finished_run, id=run_id, status="running", inputs=other_inputs)
    for kind, unit, _blocks in other.units:
        pipeline.run_block_execute(run_id=other.id, kind=kind, unit=unit)
    other.refresh_from_db()
    assert other.status == "succeeded", other.error
    assert plans[:2] == [2, 9]
    expected = services.scenario_simulate(document=scenario_document(paths=3_500, seed=9))
    assert json.dumps(other.result["options"]) == json.dumps(expected["options"])


def test_every_message_of_a_run_goes_to_the_run_queue_when_one_is_set(finished_run):
    """The messages are published (to the in-memory broker, no worker) and their routing read."""
    routed: list[tuple[str, str]] = []

    def record(sender, routing_key, **_):
        routed.append((sender, routing_key))

    before_task_publish.connect(record)
    app.conf.task_always_eager = False
    try:
        pipeline.run_create(scenario=finished_run.scenario)
        with override_settings(RUN_QUEUE="runs-elsewhere"):
            queued = pipeline.run_create(scenario=finished_run.scenario)
            # the run task of both queued runs, as beat's requeue publishes it, and the block
            # tasks a run task publishes
            requeue.runs_requeue_stale(stale_after=timedelta(0))
            pipeline.run_execute(run_id=queued.id)
    finally:
        app.conf.task_always_eager = True
        before_task_publish.disconnect(record)
        with app.connection_for_write() as connection:
            for queue in ("celery", "runs-elsewhere"):
                connection.default_channel.queue_purge(queue)
    blocks = len(finished_run.units)
    assert routed[:blocks] == [("costapp.run_block", "celery")] * blocks
    elsewhere = [("costapp.run_block", "runs-elsewhere")] * blocks
    assert routed[blocks:] == [
        *elsewhere,
        ("costapp.run_execute", "runs-elsewhere"),
        ("costapp.run_execute", "runs-elsewhere"),
        *elsewhere,
    ]
