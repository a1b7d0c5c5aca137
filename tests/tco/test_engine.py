"""The result document: its fields and order, payback, break-even utilization, Monte Carlo fields."""

import dataclasses
import json

import numpy as np
import pytest

from costapp.tco.core import Futures, plan_cost
from costapp.tco.engine import ENGINE_VERSION, break_even_scale, break_even_utilization, simulate
from costapp.tco.errors import ScenarioError

from .helpers import by_name, document, gpu_figures, plan_of, run, scenario, steady

TOP_LEVEL = [
    "name",
    "cheapest",
    "baseline",
    "options",
    "inputs",
    "gpus",
    "warnings",
    "engine_version",
    "sources",
]
PER_OPTION = [
    "name",
    "type",
    "gpu",
    "monthly_usd",
    "cumulative_usd",
    "breakdown_usd",
    "total_usd",
    "npv_usd",
    "busy_gpu_hours",
    "provisioned_gpus",
    "average_utilization",
    "usd_per_busy_gpu_hour",
    "shortfall_gpu_hours",
    "feasible",
    "savings_vs_baseline_pct",
    "break_even_month",
    "break_even_utilization",
    "all_in_usd_per_million_tokens",
    "goodput",
    "warnings",
]
MONTE_CARLO = [
    "p10_usd",
    "p50_usd",
    "p90_usd",
    "cumulative_p10_usd",
    "cumulative_p50_usd",
    "cumulative_p90_usd",
    "probability_cheapest",
    "mean_npv_usd",
    "p90_npv_usd",
    "tail_npv_usd",
]


def test_the_result_document_has_every_field_in_contract_order_as_plain_json():
    result = simulate(scenario("llm-train-and-serve"), gpu_figures())
    assert list(result) == TOP_LEVEL
    assert result["engine_version"] == ENGINE_VERSION
    for option in result["options"]:
        assert list(option) == PER_OPTION
        assert len(option["monthly_usd"]) == 37 and len(option["cumulative_usd"]) == 37
        assert option["cumulative_usd"][-1] == pytest.approx(option["total_usd"])
        assert sum(option["breakdown_usd"].values()) == pytest.approx(option["total_usd"])
        assert type(option["provisioned_gpus"]) is int
    assert json.loads(json.dumps(result, allow_nan=False)) == result
    assert result["inputs"]["options"][3]["servers"] == 27
    assert set(result["gpus"]) == {"h100-sxm"}


def test_an_invalid_document_is_refused_whole():
    with pytest.raises(ScenarioError):
        simulate({"name": "x", "workloads": [], "options": []}, gpu_figures())


def test_break_even_utilization_is_where_the_totals_meet():
    plan = plan_of(scenario("h100-fleet-buy-vs-rent"))
    result = by_name(simulate(scenario("h100-fleet-buy-vs-rent"), gpu_figures()))
    for index in (1, 3, 4):
        option = plan.options[index]
        utilization = result[option.name]["break_even_utilization"]
        months = np.count_nonzero(option.in_service)
        busy = option.busy_gpu_hours[option.in_service].sum()
        s = utilization * option.capacity_gpu_hours_per_month * months / busy
        assert s == pytest.approx(break_even_scale(plan, index), rel=1e-12)
        pair = dataclasses.replace(plan, options=(option, plan.options[plan.baseline_index]))
        totals = plan_cost(pair, Futures(demand_multiplier=np.array([s])), 1).total_usd[:, 0]
        assert totals[0] == pytest.approx(totals[1], rel=1e-8)


def test_break_even_utilization_is_null_for_the_baseline_rented_options_and_without_a_root():
    result = by_name(
        run(
            document(
                [steady(8, 0.5)],
                [
                    {"type": "cloud", "name": "od", "usd_per_gpu_hour": 2.0},
                    {"type": "cloud", "name": "spot", "billing": "spot", "usd_per_gpu_hour": 1.0},
                    {"type": "dedicated", "name": "dear", "usd_per_server_month": 1e7},
                    {
                        "type": "dedicated",
                        "name": "fair",
                        "usd_per_server_month": 8 * 730 * 2.0 * 0.5,
                    },
                ],
                horizon_months=3,
            )
        )
    )
    assert result["od"]["break_even_utilization"] is None
    assert result["spot"]["break_even_utilization"] is None
    assert result["dear"]["break_even_utilization"] is None
    assert result["fair"]["break_even_utilization"] == pytest.approx(0.5, rel=1e-9)


def test_break_even_utilization_against_a_committed_baseline():
    plan = plan_of(
        document(
            [steady(8, 0.5)],
            [
                {
                    "type": "cloud",
                    "name": "c",
                    "billing": "committed",
                    "usd_per_gpu_hour": 1.0,
                    "on_demand_usd_per_gpu_hour": 2.0,
                },
                {"type": "dedicated", "name": "d", "usd_per_server_month": 8 * 730 * 1.5},
            ],
            horizon_months=2,
        )
    )
    # committed costs 8 GPUs × 730 h × 1 USD whatever the load up to 8 GPUs: never equal
    assert break_even_utilization(plan, 1) is None
    assert break_even_utilization(plan, 0) is None


def test_an_infeasible_option_carries_a_warning_and_is_never_cheapest():
    result = run(
        document(
            [steady(16)],
            [
                {"type": "cloud", "name": "od", "usd_per_gpu_hour": 10.0},
                {"type": "dedicated", "name": "small", "servers": 1, "usd_per_server_month": 1.0},
            ],
            horizon_months=2,
        )
    )
    small = by_name(result)["small"]
    assert small["feasible"] is False and small["shortfall_gpu_hours"] == 2 * 8 * 730
    assert small["npv_usd"] < by_name(result)["od"]["npv_usd"]
    assert result["cheapest"] == "od"
    assert any(text.startswith("small:") for text in result["warnings"])


def test_no_feasible_option_means_no_cheapest():
    result = run(
        document(
            [steady(16)],
            [
                {"type": "dedicated", "name": "small", "servers": 1, "usd_per_server_month": 1.0},
            ],
            horizon_months=2,
        )
    )
    assert result["cheapest"] is None


def test_savings_are_null_when_the_baseline_costs_nothing():
    result = run(
        document(
            [steady(1)],
            [
                {"type": "cloud", "name": "free", "usd_per_gpu_hour": 0.0},
                {"type": "cloud", "name": "paid", "usd_per_gpu_hour": 1.0},
            ],
            horizon_months=2,
        )
    )
    assert by_name(result)["paid"]["savings_vs_baseline_pct"] is None
    assert by_name(result)["paid"]["break_even_month"] is None


def test_a_speed_ratio_fallback_is_a_warning():
    result = simulate(scenario("cross-gpu-70b"), gpu_figures())
    assert any(
        "fp8" in text and "bf16" in text
        for text in by_name(result)["A100 80GB on-demand"]["warnings"]
    )
    assert any(text.startswith("A100 80GB on-demand:") for text in result["warnings"])


def test_a_simulation_adds_its_figures_to_every_option_and_echoes_its_settings():
    doc = scenario("uncertain-h100-fleet")
    doc["simulation"]["paths"] = 300
    result = simulate(doc, gpu_figures())
    assert result["simulation"]["paths"] == 300
    assert list(result)[:-1] == TOP_LEVEL and list(result)[-1] == "simulation"
    for option in result["options"]:
        assert list(option) == PER_OPTION + MONTE_CARLO
    deterministic = simulate(scenario("h100-fleet-buy-vs-rent"), gpu_figures())
    assert "simulation" not in deterministic
