"""The P10–P90 band of each sizing candidate's NPV, stored beside a run (``sizing_bands``), never in
its result: equal to the percentiles of the per-path NPVs of plain runs of the document with that
size written in, its P90 the result's ``p90_npv_usd`` bit for bit, the same whatever the grouping
of the blocks, and absent without paths."""

import copy
import json

import numpy as np
import pytest
from django.test import override_settings

from costapp.tco import montecarlo
from costapp.tco.core import plan_build
from costapp.tco.validation import normalize

from .test_sizing import UNCERTAIN, owner, run_of, sizing_document  # noqa: F401

SMALL_SWEEPS = [
    {"option": "Commit some, rest on-demand", "min": 32, "max": 160, "step": 16},
    {"option": "Buy some, burst the rest", "min": 6, "max": 14, "step": 4, "objective": "p90_npv"},
]


def small_document(paths: int = 2_300) -> dict:
    document = sizing_document(paths=paths, seed=5)
    document["sizing"] = SMALL_SWEEPS
    return document


def plain_npvs(run, option: str, field: str, size: int) -> np.ndarray:
    """Per-path NPVs of ``option`` in a plain Monte Carlo run of the run's inputs with ``field``
    set to ``size`` (no sweep involved)."""
    inputs = copy.deepcopy(run.inputs)
    del inputs["sizing"]
    index = next(i for i, o in enumerate(inputs["options"]) if o["name"] == option)
    inputs["options"][index][field] = size
    plan = plan_build(normalize(inputs, run.gpus).document, run.gpus)
    paths = inputs["simulation"]["paths"]
    blocks = montecarlo.blocks_compute(
        plan, plan.inputs["simulation"], range(montecarlo.block_count(paths))
    )
    return blocks.npv_usd[index]


@pytest.fixture
def small_run(owner, catalog, tasks_in_process):  # noqa: F811
    with override_settings(RUN_BLOCKS_PER_TASK=1):
        run = run_of(owner, small_document())
    assert [kind for kind, _u, _b in run.units].count("sizing") == 3
    return run


def test_the_band_is_p10_and_p90_of_the_plain_runs_per_path_npvs(small_run):
    bands = small_run.sizing_bands
    assert [b["option"] for b in bands] == [s["option"] for s in SMALL_SWEEPS]
    for band, sweep in zip(bands, small_run.result["sizing"], strict=True):
        assert band["candidates"] == sweep["candidates"]
        assert band["field"] == sweep["field"]
        for i, size in enumerate(sweep["candidates"]):
            npv = plain_npvs(small_run, sweep["option"], sweep["field"], size)
            assert len(npv) == 2_300
            assert band["p10_npv_usd"][i] == np.percentile(npv, 10)
            assert band["p90_npv_usd"][i] == np.percentile(npv, 90)
            assert band["p10_npv_usd"][i] < sweep["mean_npv_usd"][i] < band["p90_npv_usd"][i]
        # the P90 of the band is the result's, bit for bit
        assert band["p90_npv_usd"] == sweep["p90_npv_usd"]


def test_the_band_is_not_in_the_result_and_the_result_is_unchanged(small_run):
    from costapp.scenarios import services

    expected = services.scenario_simulate(document=small_document())
    assert json.dumps(small_run.result) == json.dumps(expected)
    assert "p10_npv_usd" not in json.dumps(small_run.result["sizing"])


def test_any_grouping_of_the_blocks_gives_the_same_bands(small_run, owner):  # noqa: F811
    with override_settings(RUN_BLOCKS_PER_TASK=50):
        grouped = run_of(owner, small_document())
    assert [kind for kind, _u, _b in grouped.units].count("sizing") == 1
    assert json.dumps(grouped.sizing_bands) == json.dumps(small_run.sizing_bands)


def test_a_run_without_paths_has_no_band(owner, catalog, tasks_in_process):  # noqa: F811
    document = small_document()
    del document["simulation"]
    del document["sizing"][1]["objective"]
    run = run_of(owner, document)
    assert run.result["sizing"][0]["best"] is not None
    assert run.sizing_bands is None
