"""The generic rules of scenario validation (docs: scenario-format.md, "Validation").

Unknown fields and fields of another type, value types, whole numbers and ranges, egress tiers
and distributions: each rule has a test naming the exact path and message, and property tests push
values to both sides of every range.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costapp.tco import CatalogRefs, schema
from tests.examples import examples

from .documents import (
    cloud,
    dedicated,
    doc,
    ok,
    on_prem,
    problems,
    with_option,
    with_workload,
)

# --- unknown fields and fields of another type ------------------------------------------------


@pytest.mark.parametrize(
    ("document", "path"),
    [
        (doc(horizon=36), "horizon"),
        (with_workload(gpu_count=8), "workloads[0].gpu_count"),
        (cloud(usd_per_gpu_hr=2), "options[0].usd_per_gpu_hr"),
        (
            cloud(egress_tiers=[{"up_to_tb": None, "usd_per_gb": 0.05, "usd_per_tb": 50}]),
            "options[0].egress_tiers[0].usd_per_tb",
        ),
        (on_prem(financing={"apr": 0.05, "term_months": 36, "fee": 1}), "options[0].financing.fee"),
        (
            with_option(
                type="cloud", offer={"provider": "p", "instance": "i", "region": "r", "zone": "a"}
            ),
            "options[0].offer.zone",
        ),
        (doc(simulation={"paths": 10, "runs": 3}), "simulation.runs"),
        (
            doc(simulation={"demand_multiplier": {"dist": "uniform", "low": 1, "high": 2, "x": 1}}),
            "simulation.demand_multiplier.x",
        ),
    ],
    ids=[
        "top",
        "workload",
        "option",
        "egress tier",
        "financing",
        "offer",
        "simulation",
        "distribution",
    ],
)
def test_an_unknown_field_is_an_error_at_every_level(document, path):
    assert (path, "unknown field") in problems(document)


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        (
            cloud(committed_gpus=8),
            "options[0].committed_gpus",
            "does not apply to on_demand billing",
        ),
        (cloud(term_months=12), "options[0].term_months", "does not apply to on_demand billing"),
        (
            cloud(billing="spot", upfront_usd=1),
            "options[0].upfront_usd",
            "does not apply to spot billing",
        ),
        (
            cloud(billing="committed", on_demand_usd_per_gpu_hour=3, interruption_overhead=0.1),
            "options[0].interruption_overhead",
            "does not apply to committed billing",
        ),
        (
            cloud(interruption_overhead=0.1),
            "options[0].interruption_overhead",
            "does not apply to on_demand billing",
        ),
        (
            cloud(billing="committed", scaling="fixed"),
            "options[0].scaling",
            "does not apply to committed billing",
        ),
        (cloud(servers=2), "options[0].servers", "does not apply to a cloud option"),
        (dedicated(billing="spot"), "options[0].billing", "does not apply to a dedicated option"),
        (dedicated(server_kw=3), "options[0].server_kw", "does not apply to a dedicated option"),
        (
            dedicated(egress_usd_per_gb=0.1),
            "options[0].egress_usd_per_gb",
            "does not apply to a dedicated option",
        ),
        (on_prem(scaling="fixed"), "options[0].scaling", "does not apply to an on_prem option"),
        (on_prem(setup_usd=10), "options[0].setup_usd", "does not apply to an on_prem option"),
        (with_workload(mfu=0.5), "workloads[0].mfu", "does not apply to a steady workload"),
        (
            doc(workloads=[{"type": "training", "name": "t", "runs_per_year": 1, "gpus": 8}]),
            "workloads[0].gpus",
            "does not apply to a training workload",
        ),
        (
            doc(
                simulation={
                    "demand_multiplier": {
                        "dist": "triangular",
                        "low": 1,
                        "mode": 1,
                        "high": 1,
                        "sd": 1,
                    }
                }
            ),
            "simulation.demand_multiplier.sd",
            "does not apply to a triangular distribution",
        ),
    ],
)
def test_a_field_of_another_type_or_billing_is_an_error(document, path, message):
    assert (path, message) in problems(document)


# --- types ------------------------------------------------------------------------------------


def test_a_whole_number_written_with_a_decimal_point_is_accepted_and_becomes_an_int():
    result = ok(doc(horizon_months=36.0, simulation={"paths": 10.0, "seed": 7.0})).document
    assert result["horizon_months"] == 36 and type(result["horizon_months"]) is int
    assert type(result["simulation"]["paths"]) is int


def test_other_numbers_become_floats_and_whole_number_fields_become_ints():
    result = ok(on_prem(gpus_per_server=8.0, servers=4, financing={"apr": 0, "term_months": 24}))
    option = result.document["options"][0]
    assert type(option["capex_usd_per_server"]) is float
    assert type(option["gpus_per_server"]) is int and type(option["servers"]) is int
    assert option["financing"] == {"apr": 0.0, "term_months": 24}
    assert type(option["financing"]["apr"]) is float
    assert type(result.document["hours_per_month"]) is float


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        (doc(hours_per_month=True), "hours_per_month", "must be a number"),
        (with_workload(gpus=False), "workloads[0].gpus", "must be a number"),
        (doc(horizon_months=True), "horizon_months", "must be a whole number"),
        (dedicated(servers=True), "options[0].servers", "must be a whole number"),
        (doc(horizon_months="36"), "horizon_months", "must be a whole number"),
        (cloud(throughput_factor="0.9"), "options[0].throughput_factor", "must be a number"),
        (doc(horizon_months=36.5), "horizon_months", "must be a whole number"),
        (doc(name=3), "name", "must be a non-empty string"),
        (doc(name=" "), "name", "must be a non-empty string"),
        (with_workload(gpu=["h100-sxm"]), "workloads[0].gpu", "must be a non-empty string"),
        (doc(workloads={"type": "steady"}), "workloads", "must be a list"),
        (doc(options=["cloud"]), "options[0]", "must be an object"),
        (on_prem(financing=[0.05, 36]), "options[0].financing", "must be an object"),
        (cloud(egress_tiers={"up_to_tb": None}), "options[0].egress_tiers", "must be a list"),
        (doc(simulation=100), "simulation", "must be an object"),
        (
            with_workload(type="batch"),
            "workloads[0].type",
            "must be one of steady, training, inference",
        ),
        (
            with_option(type="lease"),
            "options[0].type",
            "must be one of cloud, dedicated, on_prem, api, mix",
        ),
        (
            cloud(billing="reserved"),
            "options[0].billing",
            "must be one of on_demand, committed, spot",
        ),
        (cloud(scaling="auto"), "options[0].scaling", "must be one of elastic, fixed"),
    ],
)
def test_a_value_of_the_wrong_type_is_an_error(document, path, message):
    assert (path, message) in problems(document)


def test_a_boolean_is_not_a_number_even_though_python_says_it_is_an_int():
    assert problems(doc(discount_rate=True)) == [("discount_rate", "must be a number")]
    assert problems(doc(horizon_months=False)) == [("horizon_months", "must be a whole number")]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_given_as_python_floats_are_errors(value):
    assert problems(cloud(price_change_per_year=value)) == [
        ("options[0].price_change_per_year", "must be a finite number")
    ]
    assert problems(doc(horizon_months=value)) == [("horizon_months", "must be a finite number")]


def test_null_means_the_same_as_an_absent_field():
    given = ok(doc(horizon_months=None, baseline=None, simulation=None)).document
    assert given == ok(doc()).document
    option = ok(cloud(support_fraction=None, billing=None)).document["options"][0]
    assert option["support_fraction"] == 0.0 and option["billing"] == "on_demand"


# --- whole numbers and ranges -----------------------------------------------------------------


WHOLE_NUMBER_CASES = [
    (lambda v: doc(horizon_months=v), "horizon_months"),
    (lambda v: with_workload(start_month=v), "workloads[0].start_month"),
    (lambda v: with_workload(end_month=v), "workloads[0].end_month"),
    (lambda v: on_prem(lead_time_months=v), "options[0].lead_time_months"),
    (lambda v: cloud(billing="committed", term_months=v), "options[0].term_months"),
    (lambda v: dedicated(servers=v), "options[0].servers"),
    (lambda v: on_prem(gpus_per_server=v), "options[0].gpus_per_server"),
    (lambda v: cloud(billing="committed", committed_gpus=v), "options[0].committed_gpus"),
    (
        lambda v: doc(
            workloads=[
                {
                    "type": "training",
                    "name": "t",
                    "runs_per_year": 1,
                    "flops_per_run": 1e21,
                    "cluster_gpus": v,
                }
            ]
        ),
        "workloads[0].cluster_gpus",
    ),
    (lambda v: doc(simulation={"paths": v}), "simulation.paths"),
    (lambda v: doc(simulation={"seed": v}), "simulation.seed"),
    (
        lambda v: on_prem(financing={"apr": 0.1, "term_months": v}),
        "options[0].financing.term_months",
    ),
    (lambda v: dedicated(quote=v), "options[0].quote"),
]


@pytest.mark.parametrize(
    ("build", "path"), WHOLE_NUMBER_CASES, ids=[p for _, p in WHOLE_NUMBER_CASES]
)
def test_a_whole_number_field_rejects_a_fraction(build, path):
    assert problems(build(2.5)) == [(path, "must be a whole number")]


RANGE_CASES = [
    # > 0
    (lambda v: doc(hours_per_month=v), "hours_per_month", 0.5, "must be ≥ 1"),  # version 1.3
    (
        lambda v: doc(
            workloads=[
                {
                    "type": "training",
                    "name": "t",
                    "runs_per_year": 1,
                    "flops_per_run": 1e21,
                    "mfu": v,
                }
            ]
        ),
        "workloads[0].mfu",
        0,
        "must be > 0",
    ),
    (
        lambda v: doc(
            workloads=[
                {
                    "type": "inference",
                    "name": "i",
                    "tokens_per_second": 1,
                    "tokens_per_second_per_gpu": v,
                }
            ]
        ),
        "workloads[0].tokens_per_second_per_gpu",
        0,
        "must be > 0",
    ),
    (lambda v: cloud(throughput_factor=v), "options[0].throughput_factor", 0, "must be > 0"),
    (
        lambda v: on_prem(financing={"apr": 0.1, "term_months": v}),
        "options[0].financing.term_months",
        0,
        "must be > 0",
    ),
    # at most 1
    (lambda v: with_workload(utilization=v), "workloads[0].utilization", 1.01, "must be ≤ 1"),
    (
        lambda v: doc(
            workloads=[
                {
                    "type": "training",
                    "name": "t",
                    "runs_per_year": 1,
                    "flops_per_run": 1e21,
                    "mfu": v,
                }
            ]
        ),
        "workloads[0].mfu",
        1.5,
        "must be ≤ 1",
    ),
    (lambda v: cloud(support_fraction=v), "options[0].support_fraction", 1.2, "must be ≤ 1"),
    (
        lambda v: on_prem(idle_power_fraction=v),
        "options[0].idle_power_fraction",
        1.2,
        "must be ≤ 1",
    ),
    (lambda v: on_prem(residual_fraction=v), "options[0].residual_fraction", 2, "must be ≤ 1"),
    # ≥ 1
    (lambda v: on_prem(pue=v), "options[0].pue", 0.99, "must be ≥ 1"),
    (
        lambda v: doc(
            workloads=[
                {
                    "type": "inference",
                    "name": "i",
                    "tokens_per_second": 1,
                    "tokens_per_second_per_gpu": 5,
                    "peak_to_average": v,
                }
            ]
        ),
        "workloads[0].peak_to_average",
        0.5,
        "must be ≥ 1",
    ),
    (lambda v: dedicated(gpus_per_server=v), "options[0].gpus_per_server", 0, "must be ≥ 1"),
    (lambda v: doc(horizon_months=v), "horizon_months", 0, "must be ≥ 1"),
    (lambda v: doc(horizon_months=v), "horizon_months", 121, "must be ≤ 120"),
    # > −1
    (lambda v: with_workload(monthly_growth=v), "workloads[0].monthly_growth", -1, "must be > -1"),
    (
        lambda v: cloud(price_change_per_year=v),
        "options[0].price_change_per_year",
        -1.5,
        "must be > -1",
    ),
    # every other number ≥ 0
    (lambda v: doc(discount_rate=v), "discount_rate", -0.01, "must be ≥ 0"),
    (lambda v: doc(egress_tb_per_month=v), "egress_tb_per_month", -1, "must be ≥ 0"),
    (lambda v: with_workload(gpus=v), "workloads[0].gpus", -1, "must be ≥ 0"),
    (lambda v: with_workload(start_month=v), "workloads[0].start_month", 0, "must be ≥ 1"),
    (lambda v: with_workload(end_month=v), "workloads[0].end_month", 0, "must be ≥ 1"),
    (lambda v: cloud(usd_per_gpu_hour=v), "options[0].usd_per_gpu_hour", -0.5, "must be ≥ 0"),
    (lambda v: cloud(egress_usd_per_gb=v), "options[0].egress_usd_per_gb", -0.5, "must be ≥ 0"),
    (
        lambda v: cloud(billing="spot", interruption_overhead=v),
        "options[0].interruption_overhead",
        -0.1,
        "must be ≥ 0",
    ),
    (
        lambda v: cloud(billing="committed", upfront_usd=v),
        "options[0].upfront_usd",
        -1,
        "must be ≥ 0",
    ),
    (
        lambda v: cloud(billing="committed", term_months=v),
        "options[0].term_months",
        0,
        "must be ≥ 1",
    ),
    (lambda v: dedicated(servers=v), "options[0].servers", -1, "must be ≥ 0"),
    (lambda v: dedicated(setup_usd=v), "options[0].setup_usd", -1, "must be ≥ 0"),
    (lambda v: on_prem(usd_per_kwh=v), "options[0].usd_per_kwh", -0.1, "must be ≥ 0"),
    (
        lambda v: on_prem(financing={"apr": v, "term_months": 36}),
        "options[0].financing.apr",
        -0.1,
        "must be ≥ 0",
    ),
    (
        lambda v: cloud(
            egress_tiers=[{"up_to_tb": v, "usd_per_gb": 0}, {"up_to_tb": None, "usd_per_gb": 0.1}]
        ),
        "options[0].egress_tiers[0].up_to_tb",
        -1,
        "must be ≥ 0",
    ),
    (lambda v: doc(simulation={"paths": v}), "simulation.paths", 100_001, "must be ≤ 100000"),
    (lambda v: doc(simulation={"seed": v}), "simulation.seed", -1, "must be ≥ 0"),
    (
        lambda v: doc(simulation={"demand_multiplier": {"dist": "normal", "mean": 1, "sd": v}}),
        "simulation.demand_multiplier.sd",
        -0.1,
        "must be ≥ 0",
    ),
]


@pytest.mark.parametrize(
    ("build", "path", "value", "message"),
    RANGE_CASES,
    ids=[f"{path}={value}" for _, path, value, _ in RANGE_CASES],
)
def test_a_number_out_of_its_range_is_an_error_at_its_path(build, path, value, message):
    assert problems(build(value)) == [(path, message)]


def test_the_boundaries_of_the_ranges_are_accepted():
    ok(doc(horizon_months=1, discount_rate=0, egress_tb_per_month=0))
    ok(doc(horizon_months=120, simulation={"paths": 100_000, "seed": 0}))
    ok(with_workload(utilization=1, monthly_growth=-0.99, start_month=1))
    ok(on_prem(pue=1, idle_power_fraction=0, residual_fraction=1))
    ok(cloud(price_change_per_year=-0.99, support_fraction=1, throughput_factor=0.01))


def test_distribution_parameters_may_be_negative():
    simulation = {"cloud_price_change_per_year": {"dist": "normal", "mean": -0.12, "sd": 0.08}}
    result = ok(doc(simulation=simulation)).document["simulation"]
    assert result["cloud_price_change_per_year"] == {"dist": "normal", "mean": -0.12, "sd": 0.08}


# --- egress -----------------------------------------------------------------------------------


TIERS = [{"up_to_tb": 10, "usd_per_gb": 0.09}, {"up_to_tb": None, "usd_per_gb": 0.05}]


@pytest.mark.parametrize(
    "fields",
    [
        {"egress_usd_per_gb": 0.09, "egress_tiers": TIERS},
        {"egress_usd_per_gb": 0.09, "egress_provider": "aws"},
        {"egress_tiers": TIERS, "egress_provider": "aws"},
    ],
    ids=["flat and tiers", "flat and provider", "tiers and provider"],
)
def test_an_option_gives_at_most_one_egress_field(fields):
    catalog = CatalogRefs(egress_providers={"aws": TIERS})
    assert problems(cloud(**fields), catalog) == [
        ("options[0]", "gives more than one of egress_usd_per_gb, egress_tiers and egress_provider")
    ]


def test_tier_bounds_must_increase_strictly():
    tiers = [
        {"up_to_tb": 10, "usd_per_gb": 0.09},
        {"up_to_tb": 10, "usd_per_gb": 0.08},
        {"up_to_tb": None, "usd_per_gb": 0.05},
    ]
    assert problems(cloud(egress_tiers=tiers)) == [
        ("options[0].egress_tiers[1].up_to_tb", "must be greater than the previous tier's (10)")
    ]


def test_only_the_last_tier_is_open_ended():
    tiers = [{"up_to_tb": None, "usd_per_gb": 0.09}, {"up_to_tb": None, "usd_per_gb": 0.05}]
    assert problems(cloud(egress_tiers=tiers)) == [
        ("options[0].egress_tiers[0].up_to_tb", "must be a number: only the last tier is null")
    ]


def test_the_last_tier_must_be_open_ended():
    tiers = [{"up_to_tb": 10, "usd_per_gb": 0.09}, {"up_to_tb": 50, "usd_per_gb": 0.05}]
    assert problems(cloud(egress_tiers=tiers)) == [
        ("options[0].egress_tiers[1].up_to_tb", "must be null: the last tier has no bound")
    ]


def test_tiers_must_not_be_empty():
    assert problems(cloud(egress_tiers=[])) == [
        ("options[0].egress_tiers", "must have at least one tier")
    ]


def test_no_egress_field_leaves_both_egress_prices_null():
    option = ok(cloud()).document["options"][0]
    assert option["egress_usd_per_gb"] is None and option["egress_tiers"] is None


def test_tiers_are_normalised_to_floats_with_the_last_bound_null():
    option = ok(cloud(egress_tiers=TIERS)).document["options"][0]
    assert option["egress_tiers"] == [
        {"up_to_tb": 10.0, "usd_per_gb": 0.09},
        {"up_to_tb": None, "usd_per_gb": 0.05},
    ]
    assert option["egress_usd_per_gb"] is None


# --- distributions ----------------------------------------------------------------------------


def dist(**fields: Any) -> dict[str, Any]:
    return doc(simulation={"paths": 100, "demand_multiplier": fields})


@pytest.mark.parametrize(
    ("fields", "path", "message"),
    [
        (
            {"dist": "beta", "low": 1, "high": 2},
            "simulation.demand_multiplier.dist",
            "must be one of triangular, normal, uniform",
        ),
        (
            {"dist": "triangular", "low": 1, "mode": 0.5, "high": 2},
            "simulation.demand_multiplier.mode",
            "must be between low and high",
        ),
        (
            {"dist": "triangular", "low": 1, "mode": 2.5, "high": 2},
            "simulation.demand_multiplier.mode",
            "must be between low and high",
        ),
        (
            {"dist": "triangular", "low": 3, "mode": 2.5, "high": 2},
            "simulation.demand_multiplier.high",
            "must be ≥ low (3)",
        ),
        (
            {"dist": "uniform", "low": 2, "high": 1},
            "simulation.demand_multiplier.high",
            "must be ≥ low (2)",
        ),
        (
            {"dist": "normal", "mean": 1, "sd": -0.5},
            "simulation.demand_multiplier.sd",
            "must be ≥ 0",
        ),
        (
            {"dist": "normal", "mean": math.nan, "sd": 0.5},
            "simulation.demand_multiplier.mean",
            "must be a finite number",
        ),
        (
            {"dist": "normal", "mean": "1", "sd": 0.5},
            "simulation.demand_multiplier.mean",
            "must be a number",
        ),
        (
            {"dist": "uniform", "low": 1, "high": 2, "mode": 1.5},
            "simulation.demand_multiplier.mode",
            "does not apply to a uniform distribution",
        ),
    ],
)
def test_a_distribution_is_checked_field_by_field(fields, path, message):
    assert problems(dist(**fields)) == [(path, message)]


def test_a_distribution_with_zero_spread_is_accepted():
    result = ok(dist(dist="triangular", low=1, mode=1, high=1)).document["simulation"]
    assert result == {
        "paths": 100,
        "seed": 0,
        "tail_fraction": 0.1,
        "demand_multiplier": {"dist": "triangular", "low": 1.0, "mode": 1.0, "high": 1.0},
    }


def test_simulation_defaults_and_absence():
    assert ok(doc()).document["simulation"] is None
    assert ok(doc(simulation={})).document["simulation"] == {
        "paths": 0,
        "seed": 0,
        "tail_fraction": 0.1,
    }


def test_simulation_distributions_are_written_in_a_fixed_order():
    simulation = {
        "interruption_overhead": {"dist": "uniform", "low": 0, "high": 0.3},
        "seed": 5,
        "demand_multiplier": {"dist": "normal", "mean": 1, "sd": 0.1},
        "paths": 10,
    }
    result = ok(doc(simulation=simulation)).document["simulation"]
    assert list(result) == [
        "paths",
        "seed",
        "tail_fraction",
        "demand_multiplier",
        "interruption_overhead",
    ]


# --- property tests ---------------------------------------------------------------------------


finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    horizon=st.integers(1, 120),
    hours=st.floats(1, 1000),  # version 1.3: hours_per_month ≥ 1
    utilization=st.floats(0, 1),
    growth=st.floats(-0.999, 1),
    price=st.floats(0, 1e4),
    pue=st.floats(1, 3),
    fraction=st.floats(0, 1),
    servers=st.integers(0, 1000),
    paths=st.integers(0, 100_000),
)
def test_any_values_within_their_ranges_are_accepted(
    horizon, hours, utilization, growth, price, pue, fraction, servers, paths
):
    document = doc(
        horizon_months=horizon,
        hours_per_month=hours,
        workloads=[
            {
                "type": "steady",
                "name": "w",
                "gpus": 4,
                "utilization": utilization,
                "monthly_growth": growth,
            }
        ],
        options=[
            {"type": "cloud", "name": "c", "usd_per_gpu_hour": price, "support_fraction": fraction},
            {
                "type": "on_prem",
                "name": "p",
                "capex_usd_per_server": price,
                "server_kw": 5,
                "pue": pue,
                "servers": servers,
                "residual_fraction": fraction,
            },
        ],
        simulation={"paths": paths},
    )
    result = ok(document).document
    assert ok(copy.deepcopy(result)).document == result


@settings(max_examples=examples(60), deadline=None)
@given(
    case=st.sampled_from(RANGE_CASES),
    excess=st.floats(0.001, 1e6),
)
def test_any_value_beyond_a_range_is_an_error_at_its_path(case, excess):
    build, path, value, message = case
    # push the failing example further out, away from the bound it breaks
    if "≤" in message:
        bad = value + excess
    elif ">" in message or "≥" in message:
        bad = value - excess
    else:  # pragma: no cover
        raise AssertionError(message)
    if isinstance(value, int) and path.split(".")[-1] in WHOLE_FIELDS:
        bad = math.floor(bad) if "≥" in message or ">" in message else math.ceil(bad)
    assert [field for field, _ in problems(build(bad))] == [path]


WHOLE_FIELDS = {
    name
    for table in (
        schema.TOP_LEVEL_FIELDS,
        schema.WORKLOAD_COMMON_FIELDS,
        *schema.WORKLOAD_TYPE_FIELDS.values(),
        *schema.OPTION_TYPE_FIELDS.values(),
        *schema.BILLING_FIELDS.values(),
        schema.SIMULATION_FIELDS,
        schema.FINANCING_FIELDS,
    )
    for name, spec in table.items()
    if spec.kind == "whole"
}


@settings(max_examples=examples(40), deadline=None)
@given(value=st.one_of(st.booleans(), st.text(max_size=5), st.lists(st.integers(), max_size=2)))
def test_anything_but_a_number_in_a_number_field_is_an_error(value):
    assert problems(cloud(usd_per_gpu_hour=value)) == [
        ("options[0].usd_per_gpu_hour", "must be a number")
    ]


@settings(max_examples=examples(40), deadline=None)
@given(value=finite.filter(lambda x: not float(x).is_integer()))
def test_any_fraction_in_a_whole_number_field_is_an_error(value):
    assert problems(dedicated(gpus_per_server=value)) == [
        ("options[0].gpus_per_server", "must be a whole number")
    ]


# --- edges ------------------------------------------------------------------------------------


def test_a_whole_number_too_large_for_any_float_is_an_error_not_a_crash():
    assert problems(dedicated(servers=10**400)) == [
        ("options[0].servers", "must be a finite number")
    ]
    assert problems(cloud(usd_per_gpu_hour=10**400)) == [
        ("options[0].usd_per_gpu_hour", "must be a finite number")
    ]


def test_an_unknown_workload_type_reports_only_truly_unknown_fields():
    workload = {"type": "batch", "name": "w", "gpus": 3, "mfu": 0.5, "colour": "red"}
    assert problems(doc(workloads=[workload])) == [
        ("workloads[0].type", "must be one of steady, training, inference"),
        ("workloads[0].colour", "unknown field"),
    ]


def test_an_unknown_billing_reports_only_truly_unknown_fields():
    option = {
        "type": "cloud",
        "name": "o",
        "billing": "reserved",
        "usd_per_gpu_hour": 1,
        "term_months": 12,
        "servers": 2,
    }
    assert problems(doc(options=[option])) == [
        ("options[0].billing", "must be one of on_demand, committed, spot"),
        ("options[0].servers", "does not apply to a cloud option"),
    ]
