"""Properties of the engine on generated scenarios (hypothesis)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from costapp.tco.core import Futures, plan_cost
from costapp.tco.engine import break_even_scale
from costapp.tco.results import demand_scale_cap
from tests.examples import examples

from .helpers import by_name, plan_of, run

GPUS = ["h100-sxm", "a100-sxm-80gb", "l40s", "mi300x"]
PROPERTY_SETTINGS = settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def positive(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


@st.composite
def workloads(draw: st.DrawFn, horizon: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["steady", "training", "inference"]))
    start = draw(st.integers(1, horizon))
    workload: dict[str, Any] = {
        "type": kind,
        "name": f"w{draw(st.integers(0, 10**6))}",
        "gpu": draw(st.sampled_from(GPUS)),
        "start_month": start,
        "end_month": draw(st.integers(start, horizon + 3)),
        "monthly_growth": draw(positive(-0.05, 0.1)),
    }
    if kind == "steady":
        workload.update(gpus=draw(positive(0.5, 40)), utilization=draw(positive(0.05, 1)))
    elif kind == "training":
        workload.update(
            runs_per_year=draw(positive(0.5, 12)),
            flops_per_run=draw(positive(1e20, 5e22)),
            mfu=draw(positive(0.2, 0.6)),
            cluster_gpus=draw(st.none() | st.integers(1, 64)),
        )
    else:
        workload.update(
            tokens_per_second=draw(positive(10, 20000)),
            tokens_per_second_per_gpu=draw(positive(200, 5000)),
            peak_to_average=draw(positive(1, 3)),
            params_billion=draw(st.none() | positive(1, 200)),
        )
    return workload


@st.composite
def options(draw: st.DrawFn, horizon: int, index: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["on_demand", "spot", "committed", "dedicated", "on_prem"]))
    option: dict[str, Any] = {"name": f"option {index}", "gpu": draw(st.sampled_from(GPUS))}
    if kind in ("on_demand", "spot", "committed"):
        option.update(
            type="cloud",
            billing=kind,
            usd_per_gpu_hour=draw(positive(0.1, 10)),
            price_change_per_year=draw(positive(-0.3, 0.3)),
            support_fraction=draw(positive(0, 0.1)),
            egress_usd_per_gb=draw(positive(0, 0.1)),
            throughput_factor=draw(positive(0.7, 1.2)),
        )
        if kind == "committed":
            option.update(
                committed_gpus=draw(st.none() | st.integers(0, 60)),
                term_months=draw(st.integers(1, horizon)),
                upfront_usd=draw(positive(0, 1e4)),
                on_demand_usd_per_gpu_hour=draw(positive(0.1, 12)),
            )
        else:
            option["scaling"] = draw(st.sampled_from(["elastic", "fixed"]))
        if kind == "spot":
            option["interruption_overhead"] = draw(positive(0, 0.5))
    elif kind == "dedicated":
        option.update(
            type="dedicated",
            gpus_per_server=draw(st.sampled_from([4, 8])),
            servers=draw(st.none() | st.integers(1, 6)),
            usd_per_server_month=draw(positive(500, 30000)),
            setup_usd=draw(positive(0, 1e4)),
            included_egress_tb=draw(positive(0, 50)),
            overage_usd_per_tb=draw(positive(0, 5)),
            burst_usd_per_gpu_hour=draw(st.none() | positive(0.5, 10)),
        )
    else:
        option.update(
            type="on_prem",
            servers=draw(st.none() | st.integers(1, 6)),
            capex_usd_per_server=draw(positive(1e4, 4e5)),
            server_kw=draw(positive(1, 12)),
            lead_time_months=draw(st.integers(0, horizon - 1)),
            bridge_usd_per_gpu_hour=draw(st.none() | positive(0.5, 10)),
            burst_usd_per_gpu_hour=draw(st.none() | positive(0.5, 10)),
            usd_per_kwh=draw(positive(0, 0.3)),
            colo_usd_per_kw_month=draw(positive(0, 200)),
            support_fraction_per_year=draw(positive(0, 0.15)),
            staff_usd_per_month=draw(positive(0, 2e4)),
            residual_fraction=draw(positive(0, 1)),
            egress_usd_per_tb=draw(positive(0, 5)),
            financing=draw(
                st.none()
                | st.fixed_dictionaries(
                    {"apr": positive(0, 0.2), "term_months": st.integers(1, 60)}
                )
            ),
        )
    return option


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    horizon = draw(st.integers(2, 36))
    n_options = draw(st.integers(1, 4))
    doc = {
        "name": "generated",
        "horizon_months": horizon,
        "hours_per_month": draw(st.sampled_from([720, 730])),
        "discount_rate": draw(positive(0, 0.15)),
        "egress_tb_per_month": draw(positive(0, 200)),
        "workloads": draw(st.lists(workloads(horizon), min_size=1, max_size=3)),
        "options": [draw(options(horizon, i)) for i in range(n_options)],
    }
    doc["baseline"] = doc["options"][draw(st.integers(0, n_options - 1))]["name"]
    return doc


PRICES = {
    "cloud": [
        "usd_per_gpu_hour",
        "on_demand_usd_per_gpu_hour",
        "upfront_usd",
        "egress_usd_per_gb",
        "price_change_per_year",
        "support_fraction",
    ],
    "dedicated": [
        "usd_per_server_month",
        "setup_usd",
        "overage_usd_per_tb",
        "burst_usd_per_gpu_hour",
    ],
    "on_prem": [
        "capex_usd_per_server",
        "bridge_usd_per_gpu_hour",
        "burst_usd_per_gpu_hour",
        "usd_per_kwh",
        "colo_usd_per_kw_month",
        "staff_usd_per_month",
        "egress_usd_per_tb",
    ],
}


@PROPERTY_SETTINGS
@given(scenarios(), positive(0.01, 5))
def test_on_demand_cost_is_linear_in_demand(doc, scale):
    # resident replicas (version 1.2) are held whatever the demand: linear only without them
    doc = {**doc, "egress_tb_per_month": 0}
    for workload in doc["workloads"]:
        if workload["type"] == "inference":
            workload["min_replicas"] = 0
    for option in doc["options"]:
        if option["type"] == "cloud" and option["billing"] != "committed":
            option["scaling"] = "elastic"
    plan = plan_of(doc)
    costs = plan_cost(plan, Futures(demand_multiplier=np.array([1.0, scale])), 2)
    for o, option in enumerate(plan.options):
        if option.billing in ("on_demand", "spot"):
            np.testing.assert_allclose(
                costs.total_usd[o, 1], scale * costs.total_usd[o, 0], rtol=1e-12
            )
    # and through the document: every workload's demand doubled
    doubled = copy.deepcopy(doc)
    for w in doubled["workloads"]:
        key = {"steady": "gpus", "training": "runs_per_year", "inference": "tokens_per_second"}
        w[key[w["type"]]] *= 2
    before, after = by_name(run(doc)), by_name(run(doubled))
    for option in doc["options"]:
        if option["type"] == "cloud" and option["billing"] != "committed":
            name = option["name"]
            np.testing.assert_allclose(
                after[name]["total_usd"], 2 * before[name]["total_usd"], rtol=1e-12
            )


@PROPERTY_SETTINGS
@given(scenarios(), st.data())
def test_raising_any_price_never_lowers_a_total(doc, data):
    candidates = [
        (i, key)
        for i, option in enumerate(doc["options"])
        for key in PRICES[option["type"]]
        if option.get(key) is not None
    ]
    assume(candidates)
    index, key = data.draw(st.sampled_from(candidates))
    raised = copy.deepcopy(doc)
    step = data.draw(positive(0.001, 2))
    value = raised["options"][index][key]
    bounded = key in ("support_fraction", "price_change_per_year")
    raised["options"][index][key] = min(value + step, 0.99) if bounded else value + step
    before, after = run(doc), run(raised)
    for old, new in zip(before["options"], after["options"], strict=True):
        assert new["total_usd"] >= old["total_usd"] - 1e-9 * abs(old["total_usd"])


@PROPERTY_SETTINGS
@given(scenarios())
def test_inputs_fed_back_give_the_same_result(doc):
    first = run(doc)
    second = run(first["inputs"])
    assert second["inputs"] == first["inputs"]
    for key in ("name", "cheapest", "baseline", "gpus", "engine_version"):
        assert second[key] == first[key]
    for a, b in zip(first["options"], second["options"], strict=True):
        assert {k: v for k, v in a.items() if k != "warnings"} == {
            k: v for k, v in b.items() if k != "warnings"
        }


@PROPERTY_SETTINGS
@given(scenarios())
def test_the_baseline_break_even_month_is_zero_and_its_savings_zero(doc):
    result = run(doc)
    baseline = by_name(result)[result["baseline"]]
    assert baseline["break_even_month"] == 0
    assert baseline["break_even_utilization"] is None
    assert baseline["savings_vs_baseline_pct"] in (0.0, None)


@PROPERTY_SETTINGS
@given(scenarios())
def test_an_option_with_shortfall_is_never_cheapest(doc):
    result = run(doc)
    options = result["options"]
    feasible = [o for o in options if o["shortfall_gpu_hours"] == 0]
    assert all(o["feasible"] is (o["shortfall_gpu_hours"] == 0) for o in options)
    if not feasible:
        assert result["cheapest"] is None
        return
    cheapest = by_name(result)[result["cheapest"]]
    assert cheapest["feasible"] is True and cheapest["shortfall_gpu_hours"] == 0
    assert cheapest["npv_usd"] == min(o["npv_usd"] for o in feasible)
    assert cheapest is next(o for o in feasible if o["npv_usd"] == cheapest["npv_usd"])


@PROPERTY_SETTINGS
@given(scenarios(), st.lists(positive(0, 2), min_size=1, max_size=4), st.data())
def test_paths_at_once_equal_paths_one_by_one(doc, multipliers, data):
    n = len(multipliers)
    futures = Futures(
        demand_multiplier=np.array(multipliers),
        cloud_price_change_per_year=np.array(
            data.draw(st.lists(positive(-0.5, 0.5), min_size=n, max_size=n))
        ),
        usd_per_kwh_multiplier=np.array(
            data.draw(st.lists(positive(0, 2), min_size=n, max_size=n))
        ),
        interruption_overhead=np.array(data.draw(st.lists(positive(0, 1), min_size=n, max_size=n))),
    )
    plan = plan_of(doc)
    together = plan_cost(plan, futures, n, categories=True)
    for p in range(n):
        one = Futures(
            *(
                np.array([getattr(futures, f)[p]])
                for f in (
                    "demand_multiplier",
                    "cloud_price_change_per_year",
                    "usd_per_kwh_multiplier",
                    "interruption_overhead",
                )
            )
        )
        alone = plan_cost(plan, one, 1, categories=True)
        np.testing.assert_allclose(
            alone.monthly_usd[:, 0], together.monthly_usd[:, p], rtol=1e-12, atol=1e-9
        )
        np.testing.assert_allclose(
            alone.breakdown_usd[:, :, 0], together.breakdown_usd[:, :, p], rtol=1e-12, atol=1e-9
        )
        # to the last bits only: numpy's vectorised power and exp may round a batch's elements
        # and a single element's differently
        np.testing.assert_allclose(
            alone.shortfall_gpu_hours[:, 0],
            together.shortfall_gpu_hours[:, p],
            rtol=1e-12,
            atol=1e-9,
        )


@PROPERTY_SETTINGS
@given(scenarios())
def test_at_the_break_even_scale_the_option_and_the_baseline_cost_the_same(doc):
    plan = plan_of(doc)
    base = plan.baseline_index
    for index, option in enumerate(plan.options):
        scale = break_even_scale(plan, index)
        if scale is None:
            continue
        s_cap = demand_scale_cap(
            option.busy_gpu_hours, option.capacity_gpu_hours_per_month, option.in_service
        )
        assert 0 < scale <= s_cap * (1 + 1e-12)
        pair = dataclasses.replace(plan, options=(option, plan.options[base]))
        totals = plan_cost(pair, Futures(demand_multiplier=np.array([scale])), 1).total_usd[:, 0]
        assert totals[0] == pytest.approx(totals[1], rel=1e-7)
