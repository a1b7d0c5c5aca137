"""Sizing sweeps in the run pipeline, in this process: the sweeps' blocks of paths fan out as
block tasks beside the Monte Carlo ones, progress counts them, a redelivered one adds nothing,
and the merge gives the result ``manage.py simulate --json`` gives, bit for bit."""

import json

import pytest
from django.test import override_settings

from costapp.models import RunBlock, SimulationRun
from costapp.runs import blocks as run_blocks
from costapp.runs import pipeline
from costapp.scenarios import services

from ..factories import ScenarioFactory
from ..runs_helpers import analyst, post_json, scenario_document, stored_run

UNCERTAIN = {
    "demand_multiplier": {"dist": "triangular", "low": 0.6, "mode": 1.0, "high": 1.5},
    "cloud_price_change_per_year": {"dist": "normal", "mean": -0.12, "sd": 0.08},
    "usd_per_kwh_multiplier": {"dist": "uniform", "low": 0.8, "high": 1.4},
}


def sizing_document(paths: int | None = 3_500, seed: int = 11) -> dict:
    """``size-the-fleet`` (three sweeps, 73 candidates), with a simulation when ``paths``."""
    if paths is None:
        return scenario_document("size-the-fleet")
    return scenario_document("size-the-fleet", paths=paths, seed=seed, **UNCERTAIN)


@pytest.fixture
def owner(db):
    return analyst("sam")


def run_of(owner, document) -> SimulationRun:
    scenario = ScenarioFactory(owner=owner, name="sizing", document=document)
    run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    return run


@pytest.fixture
def sizing_run(owner, catalog, tasks_in_process):
    """The sizing run (computed once per test process, then copied: ``stored_run``)."""
    run = stored_run(ScenarioFactory(owner=owner, name="sizing", document=sizing_document()))
    kinds = [kind for kind, _unit, _blocks in run.units]
    assert kinds == ["deterministic"] + ["montecarlo"] * 4 + ["sizing"] * 4
    return run


def a_copy(run: SimulationRun, **fields) -> SimulationRun:
    """A new run with the same frozen inputs, not yet started."""
    names = ("scenario", "seed", "paths", "document_sha256", "inputs", "gpus", "units")
    names += ("normalize_warnings", "catalog_warnings")
    return SimulationRun.objects.create(**{name: getattr(run, name) for name in names}, **fields)


def test_a_sizing_run_equals_simulate_bit_for_bit(sizing_run):
    document = sizing_document()
    expected = services.scenario_simulate(document=document)
    assert json.dumps(sizing_run.result) == json.dumps(expected)
    sweeps = sizing_run.result["sizing"]
    assert [len(s["candidates"]) for s in sweeps] == [31, 31, 11]
    for sweep in sweeps:
        n = len(sweep["candidates"])
        assert len(sweep["mean_npv_usd"]) == len(sweep["p90_npv_usd"]) == n
        assert len(sweep["shortfall_probability"]) == n
    # the paths matter: the mean over the futures is not the NPV on the document's values
    assert sweeps[0]["mean_npv_usd"] != sweeps[0]["npv_usd"]
    assert RunBlock.objects.count() == 0


def test_any_grouping_of_the_sweep_blocks_gives_the_same_result(sizing_run, owner):
    with override_settings(RUN_BLOCKS_PER_TASK=50):  # 50 × 20 // 73 = 13 blocks a sizing task
        grouped = run_of(owner, sizing_document())
    sizing_units = [blocks for kind, _u, blocks in grouped.units if kind == "sizing"]
    assert sizing_units == [[0, 1, 2, 3]]
    assert json.dumps(grouped.result) == json.dumps(sizing_run.result)


def test_a_redelivered_sweep_block_adds_nothing_and_progress_counts_sweep_blocks(sizing_run):
    run = a_copy(sizing_run, status="running")
    pipeline.run_block_execute(run_id=run.id, kind="sizing", unit=1)
    run.refresh_from_db()
    first = (run.progress, list(RunBlock.objects.values_list("kind", "unit")))
    assert first == (11, [("sizing", 1)])  # 1 of 9 units
    pipeline.run_block_execute(run_id=run.id, kind="sizing", unit=1)
    run.refresh_from_db()
    assert (run.progress, list(RunBlock.objects.values_list("kind", "unit"))) == first
    for kind, unit in [("montecarlo", 2), ("sizing", 3), ("montecarlo", 0), ("sizing", 0)]:
        pipeline.run_block_execute(run_id=run.id, kind=kind, unit=unit)
    run.refresh_from_db()
    assert (run.status, run.progress) == ("running", 55)  # 5 of 9
    for kind, unit in [("montecarlo", 3), ("deterministic", 0), ("sizing", 2), ("montecarlo", 1)]:
        pipeline.run_block_execute(run_id=run.id, kind=kind, unit=unit)
    run.refresh_from_db()
    assert (run.status, run.progress) == ("succeeded", 100)
    assert json.dumps(run.result) == json.dumps(sizing_run.result)
    finished = run.finished
    pipeline.run_block_execute(run_id=run.id, kind="sizing", unit=1)  # late redelivery
    run.refresh_from_db()
    assert (run.status, run.finished) == ("succeeded", finished)
    assert RunBlock.objects.count() == 0


def test_a_restarted_sizing_run_publishes_only_its_missing_blocks(sizing_run, caplog):
    run = a_copy(sizing_run, status="running", attempts=1)
    for kind, unit in [("sizing", 0), ("sizing", 2), ("montecarlo", 1)]:
        pipeline.run_block_execute(run_id=run.id, kind=kind, unit=unit)
    with caplog.at_level("INFO", logger="costapp.runs.pipeline"):
        pipeline.run_execute(run_id=run.id)
    assert f"run {run.id}: attempt 2, 6 of 9 block tasks to publish" in caplog.text
    run.refresh_from_db()
    assert run.status == "succeeded"
    assert json.dumps(run.result) == json.dumps(sizing_run.result)


def test_sweeps_without_a_simulation_are_priced_by_the_merge(owner, catalog, tasks_in_process):
    document = sizing_document(paths=None)
    run = run_of(owner, document)
    assert run.units == []
    assert json.dumps(run.result) == json.dumps(services.scenario_simulate(document=document))
    assert [s["best"] for s in run.result["sizing"]] == [
        s["best"] for s in services.scenario_simulate(document=document)["sizing"]
    ]
    assert "mean_npv_usd" not in run.result["sizing"][0]


@override_settings(RUN_BLOCKS_PER_TASK=10)
def test_sweep_blocks_are_split_by_their_candidates_and_every_block_is_in_one_task():
    sweep = {"option": "x", "min": 0, "max": 9, "step": 1, "objective": "mean_npv"}
    big = {**sweep, "max": 99}  # 100 candidates
    for sweeps, per_task in (([sweep], 20), ([sweep] * 3, 6), ([sweep] * 7, 2), ([big] * 3, 1)):
        inputs = {"simulation": {"paths": 25_500, "seed": 0}, "sizing": sweeps}
        units = [
            blocks for kind, _u, blocks in run_blocks.run_units(inputs=inputs) if kind == "sizing"
        ]
        assert [b for blocks in units for b in blocks] == list(range(26))
        assert {len(blocks) for blocks in units[:-1]} == {per_task}
    assert run_blocks.run_units(inputs={"sizing": [sweep]}) == []
    assert not [
        u for u in run_blocks.run_units(inputs={"simulation": {"paths": 5}}) if u[0] == "sizing"
    ]


def test_the_runs_api_and_simulate_api_carry_sizing(client, owner, catalog, tasks_in_process):
    client.force_login(owner)
    document = sizing_document(paths=200, seed=3)
    expected = services.scenario_simulate(document=document)
    assert [s["option"] for s in expected["sizing"]] == [
        "Commit some, rest on-demand",
        "Buy some, burst the rest",
        "Buy some, burst the rest",
    ]
    at_once = post_json(client, "/api/v1/simulate/", document)
    assert at_once.status_code == 200, at_once.content
    assert json.dumps(at_once.json()) == json.dumps(expected)
    created = post_json(client, "/api/v1/scenarios/", {"name": "fleet", "document": document})
    assert created.status_code == 201, created.content
    started = post_json(client, f"/api/v1/scenarios/{created.json()['id']}/runs/", {})
    assert started.status_code == 202, started.content
    body = client.get(started["Location"]).json()
    assert body["status"] == "succeeded"
    assert json.dumps(body["result"]) == json.dumps(expected)
    assert "p90_npv_usd" in body["result"]["sizing"][0]
