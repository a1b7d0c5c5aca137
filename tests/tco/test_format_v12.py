"""Scenario format 1.2: resident replicas, goodput under failures, the ``api`` option, the new
result figures, the bounds, the references to token prices and sourced assumptions, and the
Monte Carlo and sizing guarantees on documents that use them. Figures are computed here from the
contract's formulas (docs/scenario-format.md), never taken from the engine's output."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest

from costapp.tco import montecarlo as mc
from costapp.tco.core import Futures, plan_cost
from costapp.tco.engine import break_even_scale, simulate
from costapp.tco.errors import ScenarioError
from costapp.tco.references import CatalogRefs
from costapp.tco.validation import normalize

from .documents_v12 import (
    BAD_FIELDS,
    all_bad_fields,
    bad,
    failing_goodput,
    served_and_trained,
    simulated,
)
from .helpers import by_name, document, gpu_figures, plan_of, run, steady

H100_MEMORY_GB = 80.0
HOURS = 730.0


def errors(doc: Any, catalog: CatalogRefs | None = None) -> list[tuple[str | None, str]]:
    with pytest.raises(ScenarioError) as caught:
        simulate(doc, gpu_figures(), catalog)
    return [(e.field, e.message) for e in caught.value.errors]


def chat(**fields: Any) -> dict[str, Any]:
    """A lightly used 70B model on H100s: 100 tokens/s at 1 000 tokens/s per GPU."""
    return {
        "type": "inference",
        "name": "chat",
        "gpu": "h100-sxm",
        "params_billion": 70,
        "tokens_per_second": 100,
        "tokens_per_second_per_gpu": 1000,
        **fields,
    }


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "path"), [c[1:] for c in BAD_FIELDS], ids=[c[0] for c in BAD_FIELDS]
)
def test_each_bad_new_field_is_rejected_whole_at_its_path(change, path):
    assert [field for field, _ in errors(bad(change))] == [path]


def test_every_bad_new_field_at_once_is_reported_each_at_its_path():
    doc, paths = all_bad_fields()
    assert sorted(field for field, _ in errors(doc)) == sorted(paths)


def test_2_to_the_63_gpus_is_rejected_with_its_path_and_bound():
    doc = document([steady(2**63)], [{"type": "cloud", "name": "c", "usd_per_gpu_hour": 2}])
    assert errors(doc) == [("workloads[0].gpus", "must be ≤ 1e+07")]


def test_goodput_below_a_tenth_is_an_error_at_the_workload_naming_option_and_month():
    [(field, message)] = errors(failing_goodput())
    assert field == "workloads[1]"
    assert message.startswith("goodput below 0.1 on option dedicated in month 1: ")


def test_goodput_below_a_tenth_is_reported_once_per_workload_and_option():
    doc = failing_goodput()
    for option in doc["options"][:4]:
        option["gpu_mtbf_hours"] = 200
    problems = errors(doc)
    assert [field for field, _ in problems] == ["workloads[1]"] * 4
    assert [message.split(":")[0] for _, message in problems] == [
        f"goodput below 0.1 on option {name} in month 1"
        for name in ("on-demand", "committed", "dedicated", "buy")
    ]


def test_a_derived_flops_per_run_beyond_1e30_is_an_error_at_tokens_billion():
    training = {"type": "training", "name": "t", "runs_per_year": 1}
    training.update(params_billion=1e6, tokens_billion=1e6)  # 6e30 FLOP
    doc = document([training], [{"type": "cloud", "name": "c", "usd_per_gpu_hour": 2}])
    [(field, _)] = errors(doc)
    assert field == "workloads[0].tokens_billion"  # version 1.3


def test_resident_replicas_beyond_the_commitment_without_an_on_demand_rate_is_an_error():
    option = {
        "type": "cloud",
        "name": "c",
        "billing": "committed",
        "usd_per_gpu_hour": 2,
        "committed_gpus": 2,
    }
    # fit(H100) = ceil(2 × 70e9 × 1.2 / 80e9) = 3 GPUs held, the work alone needs 1
    [(field, message)] = errors(document([chat(min_replicas=1)], [option]))
    assert field == "options[0].committed_gpus"
    assert "commitment of 2 GPUs" in message
    # version 1.3: the model's 3 GPUs do not fit in 2 at all, replicas or not
    [(field, _)] = errors(document([chat(min_replicas=0)], [option]))
    assert field == "options[0].committed_gpus"
    simulate(document([chat(min_replicas=0)], [{**option, "committed_gpus": 3}]), gpu_figures())


# --- catalog references (version 1.2) ---------------------------------------------------------


API = {"type": "api", "name": "tokens", "token_price": {"provider": "together", "model": "llama"}}
TOKEN_PRICES = CatalogRefs(
    token_prices={
        ("together", "llama"): {"usd_per_million_tokens": 0.88, "usd_per_million_input_tokens": 0.2}
    },
    assumptions={
        "dgx-h100-capex": {"field": "capex_usd_per_server", "value": 270000.0},
        "llama3-mtbf": {"field": "gpu_mtbf_hours", "value": 50677.0},
    },
)


def test_a_token_price_reference_supplies_both_prices_and_explicit_fields_win():
    doc = document([chat()], [dict(API)])
    option = normalize(doc, gpu_figures(), TOKEN_PRICES).document["options"][0]
    assert option["usd_per_million_tokens"] == 0.88
    assert option["usd_per_million_input_tokens"] == 0.2
    doc = document([chat()], [{**API, "usd_per_million_input_tokens": 0.1}])
    option = normalize(doc, gpu_figures(), TOKEN_PRICES).document["options"][0]
    assert option["usd_per_million_input_tokens"] == 0.1


def test_a_token_price_not_in_the_catalog_is_an_error_at_its_path():
    doc = document([chat()], [{**API, "token_price": {"provider": "x", "model": "y"}}])
    assert errors(doc, TOKEN_PRICES) == [
        ("options[0].token_price", "no such token price in the catalog: x y")
    ]
    assert [field for field, _ in errors(document([chat()], [dict(API)]))] == [
        "options[0].token_price"
    ]


def test_an_assumption_is_resolved_into_its_number_and_an_unknown_or_misplaced_key_is_an_error():
    buy = {
        "type": "on_prem",
        "name": "buy",
        "capex_usd_per_server": {"assumption": "dgx-h100-capex"},
        "server_kw": 10.2,
        "gpu_mtbf_hours": {"assumption": "llama3-mtbf"},
    }
    doc = document([steady(8)], [buy])
    option = normalize(doc, gpu_figures(), TOKEN_PRICES).document["options"][0]
    assert option["capex_usd_per_server"] == 270000.0 and option["gpu_mtbf_hours"] == 50677.0
    wrong = document([steady(8)], [{**buy, "server_kw": {"assumption": "dgx-h100-capex"}}])
    [(field, message)] = errors(wrong, TOKEN_PRICES)
    assert field == "options[0].server_kw" and "capex_usd_per_server" in message
    unknown = document([steady(8)], [{**buy, "gpu_mtbf_hours": {"assumption": "nope"}}])
    assert errors(unknown, TOKEN_PRICES) == [
        ("options[0].gpu_mtbf_hours", 'no such assumption in the catalog: "nope"')
    ]


# --- resident replicas ---------------------------------------------------------------------


def test_an_elastic_option_bills_the_resident_replicas_where_they_are_more_than_the_work():
    rate = 3.0
    doc = document(
        [chat()], [{"type": "cloud", "name": "od", "usd_per_gpu_hour": rate}], horizon_months=12
    )
    option = by_name(run(doc))["od"]
    fit = math.ceil(2 * 70e9 * 1.2 / (H100_MEMORY_GB * 1e9))
    busy = 100 / 1000 * HOURS  # 73 GPU-hours a month
    supply = max(busy, 1 * max(1, fit) * HOURS)
    assert fit == 3
    assert option["total_usd"] == pytest.approx(12 * supply * rate, rel=1e-12)
    assert option["busy_gpu_hours"] == pytest.approx(12 * busy, rel=1e-12)
    assert option["average_utilization"] == pytest.approx(busy / supply, rel=1e-12)
    assert option["provisioned_gpus"] == 3
    two = by_name(run(document([chat(min_replicas=2)], doc["options"], horizon_months=12)))["od"]
    assert two["total_usd"] == pytest.approx(12 * 2 * 3 * HOURS * rate, rel=1e-12)
    assert two["provisioned_gpus"] == 6


def test_min_replicas_zero_gives_the_version_1_1_figure():
    options = [{"type": "cloud", "name": "od", "usd_per_gpu_hour": 3.0}]
    option = by_name(run(document([chat(min_replicas=0)], options, horizon_months=12)))["od"]
    assert option["total_usd"] == pytest.approx(12 * 73 * 3.0, rel=1e-12)
    assert option["average_utilization"] == 1.0


def test_resident_hours_beyond_a_fleet_are_burst_or_shortfall_in_supply_hours():
    servers = {
        "type": "dedicated",
        "name": "one small server",
        "gpus_per_server": 2,
        "servers": 1,
        "usd_per_server_month": 1000,
    }
    doc = document([chat()], [servers], horizon_months=6)
    option = by_name(run(doc))["one small server"]
    # version 1.3: the model needs 3 GPUs, more than the fleet's 2, so it does not run there at
    # all: its whole supply (3 resident GPUs every hour) is beyond the fleet
    assert option["shortfall_gpu_hours"] == pytest.approx(6 * 3 * HOURS, rel=1e-12)
    assert option["feasible"] is False
    burst = document([chat()], [{**servers, "burst_usd_per_gpu_hour": 5.0}], horizon_months=6)
    option = by_name(run(burst))["one small server"]
    assert option["breakdown_usd"]["burst"] == pytest.approx(6 * 3 * HOURS * 5.0, rel=1e-12)
    assert option["average_utilization"] == 0.0  # the fleet does none of the work
    # a fleet that holds the model serves its replicas; utilization counts the work only: 73
    # GPU-hours of 4 × 730 a month
    fits = document([chat()], [{**servers, "servers": 2}], horizon_months=6)
    option = by_name(run(fits))["one small server"]
    assert option["shortfall_gpu_hours"] == 0.0
    assert option["average_utilization"] == pytest.approx(73 / (4 * HOURS), rel=1e-12)


# --- goodput -------------------------------------------------------------------------------


def young_goodput(mtbf: float, gpus: float, checkpoint: float, restart: float) -> float:
    failure = mtbf / gpus
    interval = math.sqrt(2 * checkpoint * failure)
    writes = checkpoint / interval if checkpoint > 0 else 0.0
    return 1 - writes - (restart + interval / 2) / failure


def test_goodput_stretches_the_training_work_by_youngs_interval():
    training = {
        "type": "training",
        "name": "t",
        "runs_per_year": 12,
        "flops_per_run": 1e21,
        "cluster_gpus": 64,
        "checkpoint_hours": 0.1,
        "restart_hours": 0.5,
    }
    options = [{"type": "cloud", "name": "od", "usd_per_gpu_hour": 2.0, "gpu_mtbf_hours": 20000}]
    doc = document([training], options, horizon_months=3)
    option = by_name(run(doc))["od"]
    g = young_goodput(20000, 64, 0.1, 0.5)
    work = 1e21 / (989.4e12 * 0.4 * 3600)  # GPU-hours a run on an H100 (bf16)
    assert option["goodput"] == pytest.approx(g, rel=1e-12)
    assert option["busy_gpu_hours"] == pytest.approx(3 * work / g, rel=1e-12)
    assert option["total_usd"] == pytest.approx(3 * work / g * 2.0, rel=1e-12)
    without = by_name(run(document([training], [{**options[0], "gpu_mtbf_hours": None}])))["od"]
    assert without["goodput"] == 1.0


def test_goodput_counts_failures_on_at_least_the_gpus_that_hold_the_model():
    # 70B training needs ceil(16 × 70e9 / (0.9 × 80e9)) = 16 H100s, more than cluster_gpus
    training = {
        "type": "training",
        "name": "t",
        "runs_per_year": 12,
        "flops_per_run": 1e20,
        "params_billion": 70,
        "cluster_gpus": 2,
        "restart_hours": 1.0,
    }
    options = [{"type": "cloud", "name": "od", "usd_per_gpu_hour": 2.0, "gpu_mtbf_hours": 8000}]
    option = by_name(run(document([training], options, horizon_months=2)))["od"]
    assert option["goodput"] == pytest.approx(1 - 1.0 / (8000 / 16), rel=1e-12)


def test_goodput_is_null_without_training_work_and_for_api_options():
    options = [
        {"type": "cloud", "name": "od", "usd_per_gpu_hour": 2.0, "gpu_mtbf_hours": 8000},
        {"type": "api", "name": "tokens", "usd_per_million_tokens": 1.0},
    ]
    result = by_name(run(document([chat()], options)))
    assert result["od"]["goodput"] is None and result["tokens"]["goodput"] is None


# --- the api option --------------------------------------------------------------------------


def test_an_api_option_bills_generated_input_and_training_tokens_at_their_trended_prices():
    training = {
        "type": "training",
        "name": "tune",
        "runs_per_year": 12,
        "params_billion": 8,
        "tokens_billion": 2,
        "end_month": 2,
    }
    api = {
        "type": "api",
        "name": "tokens",
        "usd_per_million_tokens": 0.9,
        "usd_per_million_input_tokens": 0.3,
        "usd_per_million_training_tokens": 4.0,
        "price_change_per_year": -0.2,
        "support_fraction": 0.1,
    }
    doc = document([chat(input_tokens_per_output_token=2), training], [api], horizon_months=13)
    option = by_name(run(doc))["tokens"]
    tokens = 100 * 3600 * HOURS  # generated tokens a month
    monthly = []
    for m in range(1, 14):
        k = 0.8 ** ((m - 1) / 12)
        usd = (tokens * 0.9 + 2 * tokens * 0.3) / 1e6
        if m <= 2:
            usd += 2 * 1e3 * 12 / 12 * 4.0
        monthly.append(usd * k * 1.1)
    np.testing.assert_allclose(option["monthly_usd"], [0.0, *monthly], rtol=1e-12)
    assert option["gpu"] is None and option["busy_gpu_hours"] == 0.0
    assert option["provisioned_gpus"] == 0 and option["average_utilization"] == 1.0
    assert option["usd_per_busy_gpu_hour"] is None and option["break_even_utilization"] is None
    assert option["feasible"] is True
    assert option["all_in_usd_per_million_tokens"] == pytest.approx(
        sum(monthly) / (13 * tokens / 1e6), rel=1e-12
    )


def test_work_an_api_option_cannot_buy_is_shortfall_on_its_own_gpu():
    options = [{"type": "api", "name": "tokens", "usd_per_million_tokens": 1.0}]
    result = run(document([chat(), steady(2, utilization=0.5)], options, horizon_months=4))
    option = by_name(result)["tokens"]
    assert option["shortfall_gpu_hours"] == pytest.approx(4 * 2 * 0.5 * HOURS, rel=1e-12)
    assert option["feasible"] is False and result["cheapest"] is None
    assert "gpu" not in result["inputs"]["options"][0]
    assert list(result["gpus"]) == ["h100-sxm"]


def test_all_in_per_million_tokens_is_null_for_every_option_without_tokens():
    options = [
        {"type": "cloud", "name": "od", "usd_per_gpu_hour": 2.0},
        {"type": "api", "name": "tokens", "usd_per_million_tokens": 1.0},
    ]
    result = run(document([steady(2)], options))
    assert [o["all_in_usd_per_million_tokens"] for o in result["options"]] == [None, None]


def test_every_result_has_an_empty_sources_list_without_a_catalog():
    assert run(served_and_trained())["sources"] == []


# --- the inference estimate's fallbacks ----------------------------------------------------


def test_the_estimate_uses_the_bandwidth_term_alone_without_any_compute_figure():
    from costapp.tco.demand import estimate_tokens_per_second_per_gpu

    figures = {"memory_bandwidth_tb_s": 2.0, "bf16_dense_tflops": None, "fp16_dense_tflops": None}
    assert estimate_tokens_per_second_per_gpu(70, figures) == pytest.approx(32 * 2e12 / 140e9)


# --- break-even, Monte Carlo and sizing on 1.2 documents -----------------------------------


def test_break_even_keeps_resident_replicas_and_goodput_while_scaling_busy():
    doc = served_and_trained()
    doc["baseline"] = "on-demand"
    # version 1.3: a 16-GPU fine-tune cannot run on the 8 committed GPUs at all; on 8 GPUs it can
    doc["workloads"][1]["cluster_gpus"] = 8
    plan = plan_of(doc)
    index = plan.option_names.index("committed")
    scale = break_even_scale(plan, index)
    assert scale is not None
    costs = plan_cost(plan, Futures(demand_multiplier=np.array([scale])), 1)
    baseline = plan.option_names.index("on-demand")
    assert costs.total_usd[index, 0] == pytest.approx(costs.total_usd[baseline, 0], rel=1e-8)
    # resident hours do not scale: at s → 0 the on-demand option still pays for one replica
    empty = plan_cost(plan, Futures(demand_multiplier=np.array([0.0])), 1)
    assert empty.total_usd[baseline, 0] == pytest.approx(24 * 3 * HOURS * 3.0, rel=1e-12)


def summaries_equal(a: mc.Summary, b: mc.Summary) -> bool:
    return all(
        np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True)
        for name in a.__dataclass_fields__
        if isinstance(getattr(a, name), np.ndarray)
    )


@pytest.mark.parametrize("grouping", [[[0, 1, 2]], [[2], [0], [1]], [[1, 0], [2]]])
def test_monte_carlo_blocks_merge_to_one_run_with_resident_goodput_and_api(grouping):
    doc = simulated()
    plan = plan_of(doc)
    sim = plan.inputs["simulation"]
    one = mc.blocks_compute(plan, sim, range(3))
    merged = mc.blocks_merge([mc.blocks_compute(plan, sim, group) for group in grouping])
    assert summaries_equal(merged, mc.blocks_merge([one]))
    assert mc.summary_fields(plan, merged) == mc.run(plan, sim)
    assert run(doc) == run(copy.deepcopy(doc))  # the same seed, the same result


def test_the_api_price_change_is_drawn_per_path_and_moves_only_api_options():
    plan = plan_of(simulated(paths=1000))
    spread = mc.summary_fields(
        plan, mc.blocks_merge([mc.blocks_compute(plan, plan.inputs["simulation"], [0])])
    )
    assert spread["tokens"]["p10_usd"] < spread["tokens"]["p90_usd"]
    fixed = simulated(paths=1000)
    fixed["simulation"] = {
        "paths": 1000,
        "seed": 3,
        "api_price_change_per_year": {"dist": "uniform", "low": -0.5, "high": 0.5},
    }
    result = by_name(run(fixed))
    assert result["tokens"]["p10_usd"] < result["tokens"]["p90_usd"]
    assert result["on-demand"]["p10_usd"] == result["on-demand"]["p90_usd"]


def test_zero_spread_reproduces_the_deterministic_figures_with_resident_goodput_and_api():
    doc = served_and_trained(
        simulation={
            "paths": 50,
            "demand_multiplier": {"dist": "normal", "mean": 1.0, "sd": 0.0},
            "api_price_change_per_year": {"dist": "uniform", "low": -0.2, "high": -0.2},
        }
    )
    for option in run(doc)["options"]:
        assert option["p50_usd"] == pytest.approx(option["total_usd"], rel=1e-9), option["name"]
        assert option["mean_npv_usd"] == pytest.approx(option["npv_usd"], rel=1e-9)


def test_a_sweep_candidate_equals_a_plain_run_at_that_size_with_resident_goodput_and_api():
    sizing = [
        {"option": "committed", "min": 0, "max": 24, "step": 4},
        {"option": "dedicated", "min": 0, "max": 4},
        {"option": "buy", "min": 0, "max": 4},
    ]
    doc = simulated(paths=1500)
    doc["sizing"] = sizing
    result = run(doc)
    fields = {"committed": "committed_gpus", "dedicated": "servers", "buy": "servers"}
    for entry in result["sizing"]:
        for i, size in enumerate(entry["candidates"]):
            sized = copy.deepcopy(doc)
            sized["sizing"] = None
            for option in sized["options"]:
                if option["name"] == entry["option"]:
                    option[fields[entry["option"]]] = size
            plain = by_name(run(sized))[entry["option"]]
            for key in ("npv_usd", "total_usd", "mean_npv_usd", "p90_npv_usd", "feasible"):
                assert entry[key][i] == plain[key], (entry["option"], size, key)
