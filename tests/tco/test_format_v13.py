"""Format 1.3 in the engine: the busiest hours, prefill, the mix and its joint sizing, tail NPV.

The version 1.2 engine the properties compare with is the project's own, as it stood at
:data:`ENGINE_1_2_COMMIT` (the last commit before format 1.3 reached the engine), archived from git
as the version 1.1 test does (:mod:`tests.tco.test_v11_figures`).
"""

from __future__ import annotations

import copy
import importlib
import math
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from costapp.tco import montecarlo as mc
from costapp.tco import sizing
from costapp.tco.core import Futures, plan_cost
from costapp.tco.engine import break_even_scale, simulate
from costapp.tco.errors import ScenarioError
from costapp.tco.load import LoadOnPaths, WorkloadLoad

from .helpers import archived_engine, by_name, document, gpu_figures, plan_of, run, scenario
from .test_properties import PROPERTY_SETTINGS, positive, scenarios
from .test_v11_figures import flat

ENGINE_1_2_COMMIT = "8137016fad4631b431c516497346bd1b770c3786"
PACKAGE = "tco_engine_1_2"
HOURS = 730.0


def errors(doc: dict[str, Any], gpus: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    with pytest.raises(ScenarioError) as caught:
        simulate(doc, gpu_figures() if gpus is None else gpus)
    return [(e.field or "", e.message) for e in caught.value.errors]


def fields(doc: dict[str, Any], gpus: dict[str, Any] | None = None) -> list[str]:
    return [field for field, _ in errors(doc, gpus)]


def chat(**extra: Any) -> dict[str, Any]:
    """A 70B chat workload on H100: 2 000 tokens/s, twice the average for 6 hours a day."""
    return {
        "type": "inference",
        "name": "chat",
        "gpu": "h100-sxm",
        "params_billion": 70,
        "tokens_per_second": 2000,
        "peak_to_average": 2,
        "peak_hours_per_day": 6,
        **extra,
    }


COMMITTED = {
    "type": "cloud",
    "name": "committed",
    "billing": "committed",
    "usd_per_gpu_hour": 2.0,
    "committed_gpus": 8,
    "on_demand_usd_per_gpu_hour": 3.0,
}
ON_DEMAND = {"type": "cloud", "name": "on-demand", "usd_per_gpu_hour": 3.0}
OWNED = {
    "type": "on_prem",
    "name": "owned",
    "servers": 1,
    "capex_usd_per_server": 250000,
    "server_kw": 10,
    "staff_usd_per_month": 1000,
}


def mix(*layers: Any, rest: str | None = "on-demand", **extra: Any) -> dict[str, Any]:
    option: dict[str, Any] = {"type": "mix", "name": "mix", "layers": list(layers), **extra}
    if rest is not None:
        option["rest"] = rest
    return option


# --- bad documents are rejected whole, each problem at its field -----------------------------


def test_a_mix_naming_itself_an_api_option_or_no_option_is_rejected_at_the_layer():
    api = {"type": "api", "name": "tokens", "usd_per_million_tokens": 1}
    doc = document(
        [chat()], [COMMITTED, ON_DEMAND, api, mix("mix", "tokens", "nothing", rest=None)]
    )
    assert fields(doc) == ["options[3].layers[0]", "options[3].layers[1]", "options[3].layers[2]"]


def test_rest_must_be_an_elastic_on_demand_or_spot_cloud_option():
    fixed = {**ON_DEMAND, "name": "fixed", "scaling": "fixed"}
    doc = document([chat()], [COMMITTED, fixed, mix("committed", rest="fixed")])
    [(field, message)] = errors(doc)
    assert field == "options[2].rest" and "elastic" in message
    doc = document([chat()], [COMMITTED, ON_DEMAND, mix("committed", rest="committed")])
    assert fields(doc) == ["options[2].rest"]


def test_members_on_different_gpus_are_errors_at_each_entry_that_differs():
    a100 = {**ON_DEMAND, "gpu": "a100-sxm-80gb"}
    doc = document([chat()], [COMMITTED, {**OWNED, "gpu": "l40s"}, a100, mix("committed", "owned")])
    assert fields(doc) == ["options[3].layers[1]", "options[3].rest"]
    given_gpu = document([chat()], [COMMITTED, ON_DEMAND, mix("committed", gpu="a100-sxm-80gb")])
    assert fields(given_gpu) == ["options[2].gpu"]


def test_a_layer_named_twice_a_bad_size_or_too_many_layers_are_errors():
    twice = document([chat()], [COMMITTED, ON_DEMAND, mix("committed", "committed")])
    assert fields(twice) == ["options[2].layers[1]"]
    size = document([chat()], [COMMITTED, ON_DEMAND, mix({"option": "committed", "size": -1})])
    assert fields(size) == ["options[2].layers[0].size"]
    big = document(
        [chat()], [COMMITTED, ON_DEMAND, mix({"option": "committed", "size": 10_000_001})]
    )
    assert fields(big) == ["options[2].layers[0].size"]
    four = document(
        [chat()],
        [COMMITTED, ON_DEMAND, OWNED, {**OWNED, "name": "o2"}, {**OWNED, "name": "o3"}]
        + [mix("committed", "owned", "o2", "o3")],
    )
    assert fields(four) == ["options[5].layers"]
    empty = document([chat()], [COMMITTED, ON_DEMAND, mix()])
    assert fields(empty) == ["options[2].layers"]


def test_a_mix_sizing_entry_must_match_its_layers_and_stay_within_1000_combinations():
    options = [COMMITTED, ON_DEMAND, OWNED, mix("owned", "committed")]
    one = [{"min": 0, "max": 4}]
    wrong = document([chat()], options, sizing=[{"option": "mix", "layers": one}])
    assert fields(wrong) == ["sizing[0].layers"]
    many = [{"min": 0, "max": 40}, {"min": 0, "max": 40}]  # 41 × 41 = 1 681
    too_many = document([chat()], options, sizing=[{"option": "mix", "layers": many}])
    assert fields(too_many) == ["sizing[0].layers"]
    backwards = [{"min": 4, "max": 0}, {"min": 0, "max": 8}]
    assert fields(document([chat()], options, sizing=[{"option": "mix", "layers": backwards}])) == [
        "sizing[0].layers[0].max"
    ]
    flat_range = document(
        [chat()], options, sizing=[{"option": "mix", "min": 0, "max": 4, "layers": many[:1] * 2}]
    )
    assert "sizing[0].min" in fields(flat_range)
    not_a_mix = document(
        [chat()], options, sizing=[{"option": "owned", "layers": [{"min": 0, "max": 1}]}]
    )
    assert fields(not_a_mix) == ["sizing[0].layers", "sizing[0].min", "sizing[0].max"]


def test_tail_npv_needs_a_simulation():
    doc = document(
        [chat()],
        [COMMITTED, ON_DEMAND],
        sizing=[{"option": "committed", "min": 0, "max": 8, "objective": "tail_npv"}],
    )
    assert fields(doc) == ["sizing[0].objective"]


def test_bounds_of_format_1_3_are_errors_at_their_fields():
    hours = document([chat()], [ON_DEMAND], hours_per_month=0.5)
    assert fields(hours) == ["hours_per_month"]
    peak = document([chat(peak_to_average=3, peak_hours_per_day=9)], [ON_DEMAND])
    [(field, message)] = errors(peak)
    assert field == "workloads[0].peak_hours_per_day" and "24" in message
    assert fields(document([chat(peak_hours_per_day=25)], [ON_DEMAND])) == [
        "workloads[0].peak_hours_per_day"
    ]
    tail = document([chat()], [ON_DEMAND], simulation={"paths": 10, "tail_fraction": 1.5})
    assert fields(tail) == ["simulation.tail_fraction"]
    low = document(
        [chat()],
        [ON_DEMAND],
        simulation={"paths": 10, "demand_multiplier": {"dist": "uniform", "low": 2, "high": 1}},
    )
    assert fields(low) == ["simulation.demand_multiplier.high"]
    flops = {"type": "training", "name": "t", "runs_per_year": 1}
    flops.update(params_billion=1e6, tokens_billion=1e6)
    assert fields(document([flops], [ON_DEMAND])) == ["workloads[0].tokens_billion"]


def test_prefill_without_a_size_or_compute_figure_is_required():
    no_size = chat(input_tokens_per_output_token=3, tokens_per_second_per_gpu=500)
    no_size.pop("params_billion")
    [(field, message)] = errors(document([no_size], [ON_DEMAND]))
    assert field == "workloads[0].prefill_tokens_per_second_per_gpu"
    assert "params_billion" in message


def test_steady_or_prefill_work_on_a_gpu_without_half_precision_figures_is_an_error_at_gpu():
    gpus = copy.deepcopy(gpu_figures())
    gpus["no-half"] = {**gpus["h100-sxm"], "bf16_dense_tflops": None, "fp16_dense_tflops": None}
    steady = {"type": "steady", "name": "s", "gpu": "h100-sxm", "gpus": 4}
    doc = document([steady], [{**ON_DEMAND, "gpu": "no-half"}])
    assert fields(doc, gpus) == ["options[0].gpu"]
    prefill = chat(input_tokens_per_output_token=3, tokens_per_second_per_gpu=500)
    doc = document([prefill], [{**ON_DEMAND, "gpu": "no-half"}])
    assert fields(doc, gpus) == ["options[0].gpu"]
    # without prompts the chat converts by bandwidth alone, which the GPU has
    simulate(document([chat()], [{**ON_DEMAND, "gpu": "no-half"}]), gpus)


# --- the busiest hours ------------------------------------------------------------------------


def test_a_fleet_below_the_peak_buys_the_busiest_hours_and_a_fleet_below_the_model_runs_none():
    # 2 000 tokens/s of a 70B on H100: decode 2000 / estimate GPUs on average, twice for 6 h
    doc = document([chat(min_replicas=0)], [{**COMMITTED, "committed_gpus": 4}, ON_DEMAND])
    result = by_name(run(doc))
    plan = plan_of(doc)
    rate = plan.inputs["workloads"][0]["tokens_per_second_per_gpu"]
    average = 2000 / rate  # GPUs busy on average
    busiest = 6 * HOURS / 24
    off_peak = (average * HOURS - 2 * average * busiest) / (HOURS - busiest)
    over = busiest * max(0.0, 2 * average - 4) + (HOURS - busiest) * max(0.0, off_peak - 4)
    months = 36
    committed = result["committed"]
    assert committed["total_usd"] == pytest.approx(
        months * (4 * HOURS * 2.0 + over * 3.0), rel=1e-9
    )
    # version 1.2 would have billed only the month's hours beyond 4 × 730: none here
    assert average * HOURS < 4 * HOURS
    # a fleet of 2 H100s cannot hold the 70B model (fit 3): its whole work goes beyond it
    small = document([chat(min_replicas=0)], [{**COMMITTED, "committed_gpus": 2}, ON_DEMAND])
    small_committed = by_name(run(small))["committed"]
    assert small_committed["total_usd"] == pytest.approx(
        months * (2 * HOURS * 2.0 + average * HOURS * 3.0), rel=1e-9
    )
    assert small_committed["average_utilization"] == 0.0


def test_a_training_run_wider_than_the_fleet_does_not_run_on_it():
    training = {
        "type": "training",
        "name": "pre-train",
        "gpu": "h100-sxm",
        "runs_per_year": 2,
        "flops_per_run": 6 * 13e9 * 2e12,
        "cluster_gpus": 512,
    }
    servers = {**OWNED, "servers": 8, "burst_usd_per_gpu_hour": 4.0, "staff_usd_per_month": 0}
    result = by_name(run(document([training], [servers, ON_DEMAND], horizon_months=12)))
    owned = result["owned"]
    busy = owned["busy_gpu_hours"]
    assert owned["breakdown_usd"]["burst"] == pytest.approx(busy * 4.0, rel=1e-9)
    assert owned["average_utilization"] == 0.0
    wide = {**servers, "servers": 64}
    owned = by_name(run(document([training], [wide, ON_DEMAND], horizon_months=12)))["owned"]
    assert owned["breakdown_usd"]["burst"] == 0.0
    assert owned["average_utilization"] == pytest.approx(busy / (512 * HOURS * 12), rel=1e-9)


def test_prompts_take_gpu_time_estimated_at_half_the_peak_compute():
    plain = run(document([chat(min_replicas=0)], [ON_DEMAND]))
    prompts = run(document([chat(min_replicas=0, input_tokens_per_output_token=3)], [ON_DEMAND]))
    workload = prompts["inputs"]["workloads"][0]
    bf16 = gpu_figures()["h100-sxm"]["bf16_dense_tflops"]
    assert workload["prefill_tokens_per_second_per_gpu"] == pytest.approx(
        0.5 * bf16 * 1e12 / (2 * 70e9), rel=1e-12
    )
    decode = 2000 / workload["tokens_per_second_per_gpu"]
    prefill = 2000 * 3 / workload["prefill_tokens_per_second_per_gpu"]
    busy = prompts["options"][0]["busy_gpu_hours"]
    assert busy == pytest.approx((decode + prefill) * HOURS * 36, rel=1e-9)
    assert plain["options"][0]["busy_gpu_hours"] == pytest.approx(decode * HOURS * 36, rel=1e-9)
    assert any("prefill_tokens_per_second_per_gpu was estimated" in w for w in prompts["warnings"])


def test_prefill_converts_with_the_compute_ratio_and_decode_with_the_bandwidth_ratio():
    workload = chat(
        min_replicas=0,
        input_tokens_per_output_token=2,
        tokens_per_second_per_gpu=400,
        prefill_tokens_per_second_per_gpu=4000,
    )
    result = run(document([workload], [{**ON_DEMAND, "gpu": "a100-sxm-80gb"}]))
    gpus = gpu_figures()
    bandwidth = (
        gpus["h100-sxm"]["memory_bandwidth_tb_s"] / gpus["a100-sxm-80gb"]["memory_bandwidth_tb_s"]
    )
    compute = gpus["h100-sxm"]["bf16_dense_tflops"] / gpus["a100-sxm-80gb"]["bf16_dense_tflops"]
    decode, prefill = 2000 / 400, 2000 * 2 / 4000
    assert result["options"][0]["busy_gpu_hours"] == pytest.approx(
        (decode * bandwidth + prefill * compute) * HOURS * 36, rel=1e-9
    )


# --- over(C) -----------------------------------------------------------------------------------


@st.composite
def loads(draw: st.DrawFn) -> list[WorkloadLoad]:
    months = 4
    active = np.array([False] + [True] * months)
    made: list[WorkloadLoad] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["steady", "training", "inference"]))
        work = np.array([0.0] + [draw(positive(0, 50_000)) for _ in range(months)])
        if kind == "steady":
            made.append(WorkloadLoad(kind, work, 0.0, active))
        elif kind == "training":
            made.append(WorkloadLoad(kind, work, float(draw(st.integers(0, 64))), active))
        else:
            ratio = draw(positive(1, 4))
            made.append(
                WorkloadLoad(
                    kind,
                    work,
                    float(draw(st.integers(0, 8))),
                    active,
                    peak_to_average=ratio,
                    peak_hours=draw(positive(0.5, 24 / ratio)) * HOURS / 24,
                    resident=float(draw(st.integers(0, 3)) * draw(st.integers(1, 8))),
                )
            )
    return made


@PROPERTY_SETTINGS
@given(loads(), st.lists(positive(0, 200), min_size=2, max_size=6), positive(0.2, 3))
def test_over_never_rises_as_capacity_grows_and_over_0_is_the_supply(made, capacities, scale):
    on_paths = LoadOnPaths(made, np.array([1.0, scale]), HOURS)
    supply = on_paths.supply()
    np.testing.assert_allclose(on_paths.over(0.0), supply, rtol=1e-12, atol=1e-6)
    previous = None
    for capacity in sorted(capacities):
        over = on_paths.over(capacity)
        assert np.all(over >= -1e-6)
        if previous is not None:
            assert np.all(over <= previous + 1e-9 * np.maximum(1.0, previous))
        previous = over


@PROPERTY_SETTINGS
@given(loads(), positive(0, 200))
def test_flat_loads_within_their_units_give_the_1_2_rule(made, capacity):
    flat_loads = [
        WorkloadLoad(load.kind, load.work, 0.0, load.active, 1.0, load.peak_hours, load.resident)
        for load in made
    ]
    on_paths = LoadOnPaths(flat_loads, None, HOURS)
    supply = on_paths.supply()
    np.testing.assert_allclose(
        on_paths.over(capacity),
        np.maximum(supply - capacity * HOURS, 0.0),
        rtol=1e-9,
        atol=1e-6,
    )


# --- the mix -----------------------------------------------------------------------------------


@st.composite
def committed_and_its_mix(draw: st.DrawFn) -> dict[str, Any]:
    """A generated document with a committed option and the mix of it alone with an on-demand
    rest at its own on-demand rate (the same trend, support, egress, throughput and failures)."""
    doc = draw(scenarios())
    horizon = doc["horizon_months"]
    support = draw(st.sampled_from([0.0, 0.05]))
    egress = 0.0 if support else draw(positive(0, 0.1))
    trend = draw(positive(-0.3, 0.3))
    throughput = draw(positive(0.7, 1.2))
    mtbf = draw(st.none() | positive(20_000, 80_000))
    common = {
        "gpu": "h100-sxm",
        "price_change_per_year": trend,
        "support_fraction": support,
        "throughput_factor": throughput,
    }
    committed = {
        "type": "cloud",
        "name": "committed",
        "billing": "committed",
        "usd_per_gpu_hour": draw(positive(0.5, 4)),
        "committed_gpus": draw(st.integers(0, 60)),
        "term_months": draw(st.integers(1, horizon)),
        "upfront_usd": draw(positive(0, 1e4)),
        "on_demand_usd_per_gpu_hour": draw(positive(1, 8)),
        "egress_usd_per_gb": egress,
        **common,
    }
    rest = {
        "type": "cloud",
        "name": "rest",
        "usd_per_gpu_hour": committed["on_demand_usd_per_gpu_hour"],
        **common,
    }
    the_mix = {
        "type": "mix",
        "name": "mix",
        "layers": ["committed"],
        "rest": "rest",
        "throughput_factor": throughput,
        "egress_usd_per_gb": egress,
    }
    if mtbf is not None:
        for option in (committed, rest, the_mix):
            option["gpu_mtbf_hours"] = mtbf
    for workload in doc["workloads"]:
        if workload["type"] == "training":
            workload.update(checkpoint_hours=0.05, restart_hours=0.3)
    if committed["committed_gpus"] == 0:  # a layer of size 0 is not held: no upfront either
        committed["upfront_usd"] = 0.0
    doc["options"] = [committed, rest, the_mix]
    doc["baseline"] = "committed"
    return doc


@PROPERTY_SETTINGS
@given(committed_and_its_mix())
def test_a_mix_of_one_commitment_and_its_on_demand_rest_costs_what_the_commitment_costs(doc):
    try:
        result = by_name(run(doc))
    except ScenarioError:
        assume(False)
    alone, together = result["committed"], result["mix"]
    tolerance = 1e-9 * max(1.0, abs(alone["total_usd"]))
    assert together["total_usd"] == pytest.approx(alone["total_usd"], abs=tolerance)
    assert together["npv_usd"] == pytest.approx(alone["npv_usd"], abs=tolerance)
    np.testing.assert_allclose(together["monthly_usd"], alone["monthly_usd"], rtol=1e-9, atol=1e-6)
    assert together["shortfall_gpu_hours"] == alone["shortfall_gpu_hours"] == 0.0
    assert together["goodput"] == alone["goodput"]


@PROPERTY_SETTINGS
@given(committed_and_its_mix(), st.integers(0, 40), st.integers(0, 4))
def test_a_mixs_layers_serve_exactly_the_supply_with_rest(doc, committed_gpus, servers):
    owned = {**OWNED, "gpu": "h100-sxm", "servers": servers, "lead_time_months": 1}
    doc["options"].insert(0, owned)
    doc["options"][-1]["layers"] = [{"option": "owned", "size": servers}, "committed"]
    doc["options"][1]["committed_gpus"] = committed_gpus
    try:
        plan = plan_of(doc)
        result = by_name(run(doc))
    except ScenarioError:
        assume(False)
    supply = float(plan.options[plan.option_names.index("mix")].supply.months.sum())
    layers = result["mix"]["layers"]
    served = sum(layer["served_gpu_hours"] for layer in layers)
    assert [layer["role"] for layer in layers] == ["layer", "layer", "rest"]
    assert served == pytest.approx(supply, rel=1e-9, abs=1e-6 * max(1.0, supply))
    assert all(layer["served_gpu_hours"] >= -1e-6 for layer in layers)
    parts = sum(layer["total_usd"] for layer in layers)
    egress = result["mix"]["breakdown_usd"]["egress"]
    assert parts == pytest.approx(result["mix"]["total_usd"] - egress, rel=1e-9, abs=1e-6)


@PROPERTY_SETTINGS
@given(committed_and_its_mix(), st.integers(0, 40), st.integers(1, 20))
def test_raising_a_layers_size_never_raises_the_mixs_shortfall(doc, size, more):
    del doc["options"][-1]["rest"]
    sizes = []
    for committed_gpus in (size, size + more):
        doc["options"][-1]["layers"] = [{"option": "committed", "size": committed_gpus}]
        try:
            sizes.append(by_name(run(doc))["mix"]["shortfall_gpu_hours"])
        except ScenarioError:
            assume(False)
    assert sizes[1] <= sizes[0] + 1e-9 * max(1.0, sizes[0])


def test_the_mix_example_prices_each_layer_as_the_contract_says():
    result = run(scenario("own-commit-rent-mix"))
    the_mix = result["options"][3]
    assert the_mix["type"] == "mix" and the_mix["break_even_utilization"] is None
    assert the_mix["provisioned_gpus"] == 16 + 8
    inputs = result["inputs"]["options"][3]
    assert [layer["size"] for layer in inputs["layers"]] == [2, 8]  # every entry with its size
    committed = the_mix["layers"][1]
    # 8 committed GPUs × 730 h × $2.59 for 60 months (two terms at the same rate)
    assert committed["total_usd"] == pytest.approx(8 * HOURS * 2.59 * 60, rel=1e-12)
    fed_back = run(result["inputs"])
    assert fed_back["options"][3]["total_usd"] == the_mix["total_usd"]


def test_a_layer_of_size_0_costs_nothing_and_serves_nothing():
    doc = document(
        [chat()],
        [COMMITTED, ON_DEMAND, OWNED, mix({"option": "owned", "size": 0}, "committed")],
    )
    result = by_name(run(doc))
    owned_layer = result["mix"]["layers"][0]
    assert owned_layer == {
        "name": "owned",
        "role": "layer",
        "provisioned_gpus": 0,
        "served_gpu_hours": 0.0,
        "total_usd": 0.0,
    }
    assert result["mix"]["breakdown_usd"]["staff"] == 0.0


# --- tail NPV and the joint sizing ------------------------------------------------------------


def test_tail_npv_is_the_mean_of_the_worst_paths_npvs():
    doc = scenario("uncertain-h100-fleet")
    doc["simulation"] = {**doc["simulation"], "paths": 1500, "tail_fraction": 0.25}
    plan = plan_of(doc)
    results = mc.blocks_compute(plan, plan.inputs["simulation"], range(2))
    result = run(doc)
    k = math.ceil(0.25 * 1500)
    for o, option in enumerate(result["options"]):
        worst = sorted(results.npv_usd[o].tolist(), reverse=True)[:k]
        total = 0.0
        for value in worst:
            total += value
        assert option["tail_npv_usd"] == total / k
        assert option["tail_npv_usd"] >= option["mean_npv_usd"]


def joint_sizing_document(paths: int = 2000) -> dict[str, Any]:
    doc = scenario("own-commit-rent-mix")
    doc["simulation"] = {
        "paths": paths,
        "seed": 3,
        "demand_multiplier": {"dist": "triangular", "low": 0.7, "mode": 1, "high": 1.5},
    }
    doc["sizing"] = [
        {
            "option": doc["options"][3]["name"],
            "layers": [{"min": 0, "max": 3}, {"min": 0, "max": 16, "step": 8}],
            "objective": "tail_npv",
        }
    ]
    return doc


def test_a_joint_sizing_split_into_blocks_gives_the_same_entry_bit_for_bit():
    doc = joint_sizing_document()
    plan = plan_of(doc)
    whole = sizing.sweeps_merge(plan, [sizing.sweep_blocks_compute(plan, [0, 1])])
    parts = sizing.sweeps_merge(
        plan, [sizing.sweep_blocks_compute(plan, [1]), sizing.sweep_blocks_compute(plan, [0])]
    )
    assert whole == parts
    [entry] = whole
    assert entry["field"] == "layers" and entry["objective"] == "tail_npv"
    assert entry["candidates"][:3] == [[0, 0], [0, 8], [0, 16]] and len(entry["candidates"]) == 12
    assert entry["best"] in entry["candidates"]
    assert (
        entry["best_objective_usd"]
        == entry["tail_npv_usd"][entry["candidates"].index(entry["best"])]
    )


def test_a_candidate_at_the_mixs_own_sizes_gives_the_mixs_own_figures():
    doc = joint_sizing_document(paths=1000)
    result = run(doc)
    the_mix = result["options"][3]
    [entry] = result["sizing"]
    own = entry["candidates"].index([2, 8])
    assert entry["npv_usd"][own] == the_mix["npv_usd"]
    assert entry["total_usd"][own] == the_mix["total_usd"]
    assert entry["mean_npv_usd"][own] == the_mix["mean_npv_usd"]
    assert entry["p90_npv_usd"][own] == the_mix["p90_npv_usd"]
    assert entry["tail_npv_usd"][own] == the_mix["tail_npv_usd"]


def test_a_mix_is_priced_on_every_path_with_the_others():
    doc = joint_sizing_document(paths=1000)
    del doc["sizing"]
    result = run(doc)
    assert sum(o["probability_cheapest"] for o in result["options"]) == pytest.approx(1.0)
    plan = plan_of(doc)
    costs = plan_cost(plan, Futures(demand_multiplier=np.array([1.0])), 1)
    assert costs.total_usd[3, 0] == pytest.approx(result["options"][3]["total_usd"], rel=1e-12)


# --- version 1.2 documents keep their figures where 1.3 changes nothing -----------------------


@pytest.fixture(scope="module")
def engine_1_2(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder = tmp_path_factory.mktemp("engine-1.2")
    return archived_engine(folder, ENGINE_1_2_COMMIT, PACKAGE, "1.2.0")


NEW_WORKLOAD_FIELDS = ("peak_hours_per_day", "prefill_tokens_per_second_per_gpu")


@PROPERTY_SETTINGS
@given(
    scenarios(),
    st.integers(0, 3),
    st.none() | positive(20_000, 80_000),
    st.integers(0, 1200),
)
def test_flat_loads_within_every_fleet_give_the_1_2_figures_bit_for_bit(
    engine_1_2, doc, replicas, mtbf, paths
):
    doc = flat(doc)
    for workload in doc["workloads"]:
        if workload["type"] == "inference":
            workload["min_replicas"] = replicas
        if workload["type"] == "training":
            workload.update(checkpoint_hours=0.05, restart_hours=0.4)
    for option in doc["options"]:
        if mtbf is not None:
            option["gpu_mtbf_hours"] = mtbf
        if replicas:
            # idle replicas beyond a fleet are a case 1.3 corrects (done(C) counts only the
            # work's share of what the fleet serves): fleets sized by default hold the replicas
            option.pop("committed_gpus", None)
            option.pop("servers", None)
    doc["options"].append({"type": "api", "name": "tokens", "usd_per_million_tokens": 0.5})
    if paths and not replicas:  # (more work on a path would bring idle replicas beyond a fleet)
        doc["simulation"] = {
            "paths": paths,
            "demand_multiplier": {"dist": "uniform", "low": 0.5, "high": 1.5},
        }
    old_errors = importlib.import_module(f"{PACKAGE}.errors")
    try:
        old = engine_1_2.simulate(copy.deepcopy(doc), gpu_figures())
    except old_errors.ScenarioError as rejected:
        with pytest.raises(ScenarioError) as caught:
            simulate(doc, gpu_figures())
        assert [e.field for e in caught.value.errors] == [e.field for e in rejected.errors]
        return
    new = simulate(doc, gpu_figures())
    for got, want in zip(new["options"], old["options"], strict=True):
        assert set(got) - set(want) <= {"tail_npv_usd"}
        for key, value in want.items():
            assert got[key] == value, (want["name"], key)
    assert new["engine_version"] == "1.3.0"
    for key in ("name", "cheapest", "baseline", "gpus", "warnings"):
        assert new[key] == old[key], key
    inputs = copy.deepcopy(new["inputs"])
    for workload in inputs["workloads"]:
        for name in NEW_WORKLOAD_FIELDS:
            workload.pop(name, None)
    if inputs.get("simulation"):
        inputs["simulation"].pop("tail_fraction")
    assert inputs == old["inputs"]


def test_npvs_within_a_billionth_tie_and_the_first_in_order_is_cheapest():
    from costapp.tco.results import cheapest_index

    assert cheapest_index([1e6 + 1e-4, 1e6, 5e5], [True, True, False]) == 0
    assert cheapest_index([1e6 + 1e-2, 1e6], [True, True]) == 1
    assert cheapest_index([3.0, 2.0], [False, False]) is None


def test_other_options_break_even_against_a_mix_baseline():
    doc = scenario("own-commit-rent-mix")
    doc["baseline"] = doc["options"][3]["name"]
    del doc["sizing"]
    result = run(doc)
    assert result["baseline"] == doc["options"][3]["name"]
    the_mix, committed = result["options"][3], result["options"][1]
    assert the_mix["break_even_utilization"] is None and the_mix["break_even_month"] == 0.0
    assert committed["savings_vs_baseline_pct"] == pytest.approx(
        100 * (1 - committed["total_usd"] / the_mix["total_usd"]), rel=1e-12
    )
    plan = plan_of(doc)
    scale = break_even_scale(plan, 1)
    if scale is not None:  # where the commitment meets the mix, their totals agree
        costs = plan_cost(plan, Futures(demand_multiplier=np.array([scale])), 1)
        assert costs.total_usd[1, 0] == pytest.approx(costs.total_usd[3, 0], rel=1e-8)
