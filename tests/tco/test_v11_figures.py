"""Versions 1.2 and 1.3 change no version 1.1 figure once resident replicas and failures are off
and every load is flat.

For every shipped document and for generated ones, with ``"min_replicas": 0`` on every inference
workload, no ``gpu_mtbf_hours``, and (version 1.3, :func:`flat`) inference at ``peak_to_average``
1 without prompts or a model size, training without a cluster or a model size and no mix, every
field of the version 1.1 result is bit for bit what the version 1.1 engine gives. The version 1.1 engine is the project's own, as it stood at
:data:`ENGINE_1_1_COMMIT` (the last commit before format 1.2 reached the engine): ``git archive``
writes its ``costapp/tco`` into a temporary folder, imported as a package of its own beside this
one, so the reference is the code that shipped, not a copy kept in the tree or figures kept from
its output. A clone without that commit fails here rather than skip.
"""

from __future__ import annotations

import copy
import importlib
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costapp.tco.engine import simulate
from costapp.tco.errors import ScenarioError

from .helpers import archived_engine, gpu_figures, scenario, scenario_names
from .test_properties import PROPERTY_SETTINGS, scenarios

ENGINE_1_1_COMMIT = "80776e70d7b9b48749e77cf8496e4b3f29152382"
PACKAGE = "tco_engine_1_1"
NEW_WORKLOAD_FIELDS = (
    "min_replicas",
    "peak_hours_per_day",
    "prefill_tokens_per_second_per_gpu",
    "input_tokens_per_output_token",
    "checkpoint_hours",
    "restart_hours",
)
NEW_OPTION_FIELDS = ("gpu_mtbf_hours",)
NEW_OPTION_FIGURES = ("all_in_usd_per_million_tokens", "goodput", "tail_npv_usd")


@pytest.fixture(scope="module")
def engine_1_1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder = tmp_path_factory.mktemp("engine-1.1")
    return archived_engine(folder, ENGINE_1_1_COMMIT, PACKAGE, "1.1.0")


def flat(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with every load flat and no unit above a fleet (version 1.3 gives version
    1.1's figures only there): inference at peak_to_average 1, training without a cluster or a
    model size (its fit), no mix."""
    doc = copy.deepcopy(doc)
    for workload in doc["workloads"]:
        if workload.get("type") == "inference":
            workload["peak_to_average"] = 1
            workload.pop("input_tokens_per_output_token", None)
            params = workload.pop("params_billion", None)
            if params is not None and "tokens_per_second_per_gpu" not in workload:
                from costapp.tco.demand import estimate_tokens_per_second_per_gpu

                figures = gpu_figures()[workload.get("gpu", "h100-sxm")]
                workload["tokens_per_second_per_gpu"] = estimate_tokens_per_second_per_gpu(
                    params, figures
                )
        if workload.get("type") == "training":
            workload.pop("cluster_gpus", None)
            if "flops_per_run" not in workload and "params_billion" in workload:
                from costapp.tco.demand import training_flops_per_run

                workload["flops_per_run"] = training_flops_per_run(
                    workload["params_billion"], workload.pop("tokens_billion")
                )
            workload.pop("params_billion", None)
    mixes = [o["name"] for o in doc["options"] if o.get("type") == "mix"]
    doc["options"] = [o for o in doc["options"] if o.get("type") != "mix"]
    doc.pop("sizing", None) if any(
        s.get("option") in mixes for s in doc.get("sizing") or []
    ) else None
    return doc


def as_1_1(doc: dict[str, Any]) -> dict[str, Any]:
    """The document version 1.1 accepts: no 1.2 or 1.3 field, no api or mix option, every load
    flat (:func:`flat`)."""
    old = flat(doc)
    for workload in old["workloads"]:
        for name in NEW_WORKLOAD_FIELDS:
            workload.pop(name, None)
    old["options"] = [o for o in old["options"] if o.get("type") != "api"]
    for option in old["options"]:
        for name in NEW_OPTION_FIELDS:
            option.pop(name, None)
    if old.get("baseline") not in [o["name"] for o in old["options"]]:
        old.pop("baseline", None)
    return old


def as_1_2(doc: dict[str, Any]) -> dict[str, Any]:
    """The same document in version 1.2 with resident replicas and failures off (the checkpoint
    and restart times stay: without gpu_mtbf_hours they change nothing)."""
    new = as_1_1(doc)
    for workload, given_workload in zip(new["workloads"], flat(doc)["workloads"], strict=True):
        for name in ("checkpoint_hours", "restart_hours"):
            if name in given_workload:
                workload[name] = given_workload[name]
        if workload["type"] == "inference":
            workload["min_replicas"] = 0
    return new


def assert_1_1_figures(engine: ModuleType, doc: dict[str, Any]) -> None:
    old_errors = importlib.import_module(f"{PACKAGE}.errors")
    try:
        old = engine.simulate(as_1_1(doc), gpu_figures())
    except old_errors.ScenarioError as rejected:
        # rejected by 1.1: 1.2 rejects it too (its commitment check now names committed_gpus)
        with pytest.raises(ScenarioError) as caught:
            simulate(as_1_2(doc), gpu_figures())
        assert len(caught.value.errors) == len(rejected.errors)
        return
    new = simulate(as_1_2(doc), gpu_figures())
    assert [o["name"] for o in new["options"]] == [o["name"] for o in old["options"]]
    for got, want in zip(new["options"], old["options"], strict=True):
        assert set(got) - set(want) - {"tail_npv_usd"} == set(NEW_OPTION_FIGURES) - {"tail_npv_usd"}
        for key, value in want.items():
            assert got[key] == value, (want["name"], key)
    if new.get("simulation"):
        new["simulation"].pop("tail_fraction")  # version 1.3
    for key in ("name", "cheapest", "baseline", "gpus", "warnings", "simulation", "sizing"):
        assert new.get(key) == old.get(key), key
    inputs = copy.deepcopy(new["inputs"])
    for workload in inputs["workloads"]:
        for name in NEW_WORKLOAD_FIELDS:
            workload.pop(name, None)
    for option in inputs["options"]:
        for name in NEW_OPTION_FIELDS:
            option.pop(name, None)
    assert inputs == old["inputs"]


@pytest.mark.parametrize("name", scenario_names())
def test_every_shipped_document_gives_its_version_1_1_figures_bit_for_bit(engine_1_1, name):
    assert_1_1_figures(engine_1_1, scenario(name))


@PROPERTY_SETTINGS
@given(doc=scenarios(), checkpoint=st.floats(0, 2), restart=st.floats(0, 5))
def test_generated_documents_give_their_version_1_1_figures_bit_for_bit(
    engine_1_1, doc, checkpoint, restart
):
    for workload in doc["workloads"]:
        if workload["type"] == "training":
            workload.update(checkpoint_hours=checkpoint, restart_hours=restart)
    assert_1_1_figures(engine_1_1, doc)
