"""The contract's settled corners (docs: scenario-format.md, version 1.1) pinned by value, and
no valid-looking input that ends in anything but a finite result or a ``ScenarioError``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costapp.tco import ScenarioError
from costapp.tco import results as rs
from tests.examples import examples

from .edge_documents import (
    EXTREME_NUMBERS,
    all_finite,
    hostile_documents,
    numeric_paths,
    replaced,
    rich_document,
)
from .helpers import by_name, document, run, steady

# --- a fixed on-demand or spot fleet rents work beyond its size at its own rate ----------------


def test_a_fixed_fleet_rents_the_work_beyond_its_size_on_every_path_at_its_own_rate():
    doc = document(
        [steady(8)],
        [{"type": "cloud", "name": "fleet", "usd_per_gpu_hour": 2.0, "scaling": "fixed"}],
        horizon_months=12,
        simulation={
            "paths": 10,
            "seed": 3,
            "demand_multiplier": {"dist": "triangular", "low": 1.5, "mode": 1.5, "high": 1.5},
        },
    )
    fleet = by_name(run(doc))["fleet"]
    assert fleet["total_usd"] == pytest.approx(8 * 730 * 2.0 * 12, rel=1e-12)  # 140 160
    # 1.5 × the work: the 8-GPU fleet is billed, and the other half of it is rented besides
    for name in ("p10_usd", "p50_usd", "p90_usd"):
        assert fleet[name] == pytest.approx(1.5 * 8 * 730 * 2.0 * 12, rel=1e-12)  # 210 240
    assert fleet["feasible"] and fleet["shortfall_gpu_hours"] == 0


def test_the_break_even_scaling_rents_a_fixed_baseline_fleet_beyond_its_size():
    # fleet: 2 × max(5 840, 2 920 s) a month; dedicated: 2 × 8 760 a month; equal at s = 3,
    # where the 16 dedicated GPUs are 3 × 2 920 / 11 680 = 75 % busy. A fleet that did not rent
    # beyond its 8 GPUs would never cost as much, and there would be no break-even.
    doc = document(
        [steady(8, 0.5)],
        [
            {"type": "cloud", "name": "fleet", "usd_per_gpu_hour": 2.0, "scaling": "fixed"},
            {"type": "dedicated", "name": "servers", "servers": 2, "usd_per_server_month": 8760},
        ],
        horizon_months=12,
    )
    servers = by_name(run(doc))["servers"]
    assert servers["average_utilization"] == pytest.approx(0.25, rel=1e-12)
    assert servers["break_even_utilization"] == pytest.approx(0.75, rel=1e-9)


# --- break_even_month: a gap within 1e-9 × max(1, |baseline cumulative[H]|) counts as 0 --------


def test_a_final_gap_of_float_noise_pays_back_in_the_last_month_not_never():
    baseline = 1000.0 * np.arange(13)  # cumulative[H] = 12 000: noise below 1.2e-5 USD
    gap = np.array([120, 110, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 3.6e-12])
    assert rs.break_even_month(baseline + gap, baseline) == pytest.approx(12.0, abs=1e-9)
    gap[-1] = 2e-5  # beyond the noise: the option never pays back
    assert rs.break_even_month(baseline + gap, baseline) is None


def test_a_gap_of_noise_everywhere_pays_back_at_once():
    baseline = 1e6 * np.arange(13)
    assert rs.break_even_month(baseline + 1e-4, baseline) == 0.0
    assert rs.break_even_month(baseline + 2e-2, baseline) is None


# --- break_even_utilization: null on an interval of equal totals from 0, or a meeting at 0 ------


def dedicated(name: str, **fields: Any) -> dict[str, Any]:
    return {"type": "dedicated", "name": name, "usd_per_server_month": 14000, **fields}


def test_options_costing_the_same_at_every_scale_have_no_break_even_utilization():
    # the totals are equal on the whole interval [0, s_cap]: there is no smallest s (the engine
    # used to report its first grid point, a utilization of 0.000244)
    result = run(document([steady(8, 0.6)], [dedicated("a"), dedicated("b")]))
    assert by_name(result)["b"]["break_even_utilization"] is None


def test_totals_that_meet_only_as_the_scale_goes_to_zero_have_no_break_even_utilization():
    # power at 0.1 USD/kWh against busy hours at 2 USD: both cost nothing at s = 0, and the
    # gap grows in proportion to s after it
    own = {
        "type": "on_prem",
        "name": "power only",
        "capex_usd_per_server": 0,
        "server_kw": 10,
        "idle_power_fraction": 0,
        "pue": 1,
    }
    cloud = {"type": "cloud", "name": "cloud", "usd_per_gpu_hour": 2.0}
    result = by_name(run(document([steady(8, 0.6)], [cloud, own])))
    assert result["power only"]["total_usd"] < result["cloud"]["total_usd"]
    assert result["power only"]["break_even_utilization"] is None


# --- shortfall counts only beyond 1e-9 × max(1, capacity) GPU-hours a month ---------------------


@pytest.mark.parametrize(("excess", "short"), [(5e-10, False), (2e-9, True)])
def test_shortfall_counts_only_beyond_float_noise_of_the_capacity(excess, short):
    doc = document(
        [steady(8 * (1 + excess))], [dedicated("one server", servers=1)], horizon_months=12
    )
    option = run(doc)["options"][0]
    assert option["feasible"] is not short
    if short:
        assert option["shortfall_gpu_hours"] == pytest.approx(8 * excess * 730 * 12, rel=1e-6)
    else:
        assert option["shortfall_gpu_hours"] == 0.0


# --- start_month and end_month are at least 1 --------------------------------------------------


@pytest.mark.parametrize("field", ["start_month", "end_month"])
def test_month_zero_is_not_a_month_of_work(field):
    with pytest.raises(ScenarioError) as caught:
        run(document([steady(8, **{field: 0})], [dedicated("d")]))
    assert [str(error) for error in caught.value.errors] == [f"workloads[0].{field}: must be ≥ 1"]


# --- values that overflow are rejected naming the field, or give finite figures ----------------


def outcome(doc: dict[str, Any]) -> dict[str, Any] | list[tuple[str | None, str]]:
    """The result (checked finite) or the problems; any other exception fails the test."""
    try:
        result = run(doc)
    except ScenarioError as error:
        assert error.errors
        for problem in error.errors:
            assert str(problem).isprintable(), str(problem)
        return [(problem.field, problem.message) for problem in error.errors]
    assert all_finite(result)
    return result


def one_option(option: dict[str, Any], **top: Any) -> dict[str, Any]:
    return document([steady(8)], [option], **top)


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        # version 1.2: values beyond the bounds are rejected at their field before any cost
        (document([steady(1e308)], [dedicated("d")]), "workloads[0].gpus"),
        (document([steady(1e305)], [dedicated("d")]), "workloads[0].gpus"),
        (
            one_option({"type": "cloud", "name": "c", "usd_per_gpu_hour": 1e308}),
            "options[0].usd_per_gpu_hour",
        ),
        (
            one_option(
                {"type": "cloud", "name": "c", "usd_per_gpu_hour": 2, "throughput_factor": 5e-324}
            ),
            "options[0]",
        ),
        (
            document(
                [steady(8, monthly_growth=1000)],
                [{"type": "cloud", "name": "c", "usd_per_gpu_hour": 2}],
                horizon_months=120,
            ),
            "workloads[0]",
        ),
        (
            one_option(
                {
                    "type": "on_prem",
                    "name": "buy",
                    "capex_usd_per_server": 250000,
                    "server_kw": 10,
                    "financing": {"apr": 1e308, "term_months": 36},
                }
            ),
            "options[0].financing.apr",
        ),
        (
            document(
                [
                    {
                        "type": "inference",
                        "name": "i",
                        "tokens_per_second": 100,
                        "params_billion": 5e-324,
                    }
                ],
                [dedicated("d")],
            ),
            "workloads[0].params_billion",
        ),
        (
            document(
                [
                    {
                        "type": "training",
                        "name": "t",
                        "runs_per_year": 1,
                        "params_billion": 1e12,
                        "tokens_billion": 1e12,
                    }
                ],
                [dedicated("d")],
            ),
            "workloads[0].tokens_billion",  # version 1.3: a derived count is an error there
        ),
    ],
    ids=["gpus", "gpus-cost", "rate", "throughput", "growth", "apr", "tiny-params", "huge-flops"],
)
def test_a_value_that_overflows_the_result_is_rejected_naming_its_field(doc, field):
    problems = outcome(doc)
    assert isinstance(problems, list), "expected a ScenarioError"
    assert [path for path, _ in problems] == [field]


@pytest.mark.parametrize(
    "doc",
    [
        one_option({"type": "cloud", "name": "c", "usd_per_gpu_hour": 2}, hours_per_month=5e-324),
        one_option(dedicated("d"), hours_per_month=5e-324),
        one_option(
            {"type": "cloud", "name": "c", "usd_per_gpu_hour": 2},
            simulation={
                "paths": 50,
                "demand_multiplier": {"dist": "uniform", "low": -1e308, "high": 1e308},
                "cloud_price_change_per_year": {"dist": "normal", "mean": 0, "sd": 1e308},
            },
        ),
        one_option(
            {"type": "cloud", "name": "c", "usd_per_gpu_hour": 5e-324},
            discount_rate=1e308,
        ),
    ],
    ids=["denormal-hours-cloud", "denormal-hours-dedicated", "spread", "tiny-rate"],
)
def test_extreme_values_give_finite_figures_or_a_problem_never_a_crash(doc):
    outcome(doc)


@pytest.mark.parametrize(("label", "doc"), hostile_documents(), ids=lambda value: "")
def test_no_hostile_document_crashes_the_engine_or_gives_a_non_finite_figure(label, doc):
    outcome(doc)


RICH = rich_document()
RICH_NUMBERS = numeric_paths(RICH)
edge_numbers = st.one_of(
    st.sampled_from(EXTREME_NUMBERS),
    st.floats(min_value=0, allow_nan=False, allow_infinity=False),
    st.floats(min_value=0, max_value=1e-300, allow_subnormal=True),
    st.integers(min_value=0, max_value=10**320),
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(st.sampled_from(RICH_NUMBERS), edge_numbers), max_size=4))
def test_numbers_at_the_edges_give_a_finite_result_or_a_scenario_error(changes):
    doc = RICH
    for path, value in changes:
        doc = replaced(doc, path, value)
    got = outcome(doc)
    if isinstance(got, dict):
        assert not math.isnan(got["options"][0]["total_usd"])


def test_a_distribution_beyond_the_bounds_is_rejected_at_its_high():
    # version 1.2: every number is at most 1e12, so a width beyond any float can no longer occur
    doc = one_option(
        {"type": "cloud", "name": "c", "usd_per_gpu_hour": 2},
        simulation={
            "paths": 10,
            "demand_multiplier": {"dist": "uniform", "low": -1e308, "high": 1e308},
        },
    )
    assert outcome(doc) == [  # version 1.3: a parameter lies between −1e12 and 1e12
        ("simulation.demand_multiplier.low", "must be ≥ -1e+12"),
        ("simulation.demand_multiplier.high", "must be ≤ 1e+12"),
    ]


def test_control_characters_in_keys_and_values_are_escaped_in_each_one_line_problem():
    doc = document(
        [steady(8, gpu="h100\nworkloads[0].gpus: must be > 0")],
        [{"type": "cloud", "name": "c", "usd_per_gpu_hour": 2, "colour\r\n": 1}],
    )
    assert outcome(doc) == [
        ("workloads[0].gpu", 'unknown GPU "h100\\x0aworkloads[0].gpus: must be > 0"'),
        ("options[0].colour\\x0d\\x0a", "unknown field"),
    ]
