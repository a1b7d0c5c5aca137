"""Validation and normalisation of scenario documents (docs: scenario-format.md, "Validation").

Plain functions: no database. Every rule of the contract's Validation section has a test naming
the exact path and message; the shipped scenarios normalise and normalisation is idempotent.
"""

from __future__ import annotations

import copy
import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costapp.tco import schema
from costapp.tco.errors import ScenarioError
from costapp.tco.validation import (
    CatalogRefs,
    Normalized,
    estimate_tokens_per_second_per_gpu,
    normalize,
)
from hardware.gpu_table import engine_figures, read_gpu_table

SCENARIOS = sorted((Path(__file__).resolve().parent / "scenarios").glob("*.json"))


@cache
def gpu_table() -> dict[str, dict[str, float | None]]:
    return {row.slug: engine_figures(row) for row in read_gpu_table()}


GPUS = gpu_table()


def doc(**top: Any) -> dict[str, Any]:
    """A small valid scenario; keyword arguments replace its top-level fields."""
    document: dict[str, Any] = {
        "name": "test",
        "workloads": [{"type": "steady", "name": "fleet", "gpus": 8}],
        "options": [{"type": "cloud", "name": "rent", "usd_per_gpu_hour": 2.0}],
    }
    document.update(top)
    return document


def with_workload(**fields: Any) -> dict[str, Any]:
    return doc(workloads=[{"type": "steady", "name": "fleet", "gpus": 8, **fields}])


def with_option(**fields: Any) -> dict[str, Any]:
    return doc(options=[{"name": "opt", **fields}])


def on_prem(**fields: Any) -> dict[str, Any]:
    return with_option(
        **{"type": "on_prem", "capex_usd_per_server": 300000, "server_kw": 10, **fields}
    )


def dedicated(**fields: Any) -> dict[str, Any]:
    return with_option(**{"type": "dedicated", "usd_per_server_month": 14500, **fields})


def cloud(**fields: Any) -> dict[str, Any]:
    return with_option(**{"type": "cloud", "usd_per_gpu_hour": 2.0, **fields})


def problems(document: Any, catalog: CatalogRefs | None = None) -> list[tuple[str | None, str]]:
    """Every (path, message) a document is rejected with."""
    with pytest.raises(ScenarioError) as caught:
        normalize(document, GPUS, catalog)
    return [(error.field, error.message) for error in caught.value.errors]


def ok(document: Any, catalog: CatalogRefs | None = None) -> Normalized:
    return normalize(document, GPUS, catalog)


# --- the shipped scenarios --------------------------------------------------------------------


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_shipped_scenario_normalises_without_error(path):
    result = ok(json.loads(path.read_text()))
    assert result.document["name"]
    assert all(isinstance(w, str) for w in result.warnings)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_normalising_a_normalised_document_gives_the_same_document(path):
    first = ok(json.loads(path.read_text())).document
    second = ok(copy.deepcopy(first)).document
    assert second == first
    assert json.dumps(second) == json.dumps(first)  # the same key order too


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_a_normalised_document_survives_a_trip_through_json(path):
    first = ok(json.loads(path.read_text())).document
    assert ok(json.loads(json.dumps(first))).document == first


def test_normalize_leaves_the_given_document_untouched():
    document = json.loads(SCENARIOS[0].read_text())
    before = copy.deepcopy(document)
    ok(document)
    assert document == before


# --- all problems at once ---------------------------------------------------------------------


def test_every_problem_is_reported_at_once_in_document_order():
    document = {
        "name": "many problems",
        "horizon_months": 36.5,
        "hours_per_month": True,
        "workloads": [{"type": "steady", "name": "w", "gpus": -1, "colour": "red"}],
        "options": [
            {"type": "cloud", "name": "a", "usd_per_gpu_hour": float("nan")},
            {"type": "on_prem", "name": "a", "server_kw": 3, "pue": 0.9},
        ],
        "baseline": "nobody",
    }
    assert problems(document) == [
        ("horizon_months", "must be a whole number"),
        ("hours_per_month", "must be a number"),
        ("workloads[0].colour", "unknown field"),
        ("workloads[0].gpus", "must be ≥ 0"),
        ("options[0].usd_per_gpu_hour", "must be a finite number"),
        ("options[1].pue", "must be ≥ 1"),
        ("options[1].capex_usd_per_server", "is required"),
        ("options[1].name", "repeats the name of options[0]"),
        ("baseline", 'names no option: "nobody"'),
    ]


def test_the_error_text_has_one_path_and_message_line_per_problem():
    with pytest.raises(ScenarioError) as caught:
        normalize(doc(horizon_months=0, discount_rate=-1), GPUS)
    assert str(caught.value).splitlines() == [
        "horizon_months: must be ≥ 1",
        "discount_rate: must be ≥ 0",
    ]


def test_a_document_that_is_not_an_object_is_a_whole_document_error():
    assert problems([1, 2]) == [(None, "the scenario must be a JSON object")]


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
        (with_option(type="lease"), "options[0].type", "must be one of cloud, dedicated, on_prem"),
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


# --- required fields --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ({"workloads": doc()["workloads"], "options": doc()["options"]}, "name"),
        ({"name": "x", "options": doc()["options"]}, "workloads"),
        ({"name": "x", "workloads": doc()["workloads"]}, "options"),
        (doc(workloads=[{"name": "w", "gpus": 1}]), "workloads[0].type"),
        (doc(workloads=[{"type": "steady", "gpus": 1}]), "workloads[0].name"),
        (doc(workloads=[{"type": "steady", "name": "w"}]), "workloads[0].gpus"),
        (
            doc(workloads=[{"type": "training", "name": "w", "flops_per_run": 1e21}]),
            "workloads[0].runs_per_year",
        ),
        (
            doc(workloads=[{"type": "inference", "name": "w", "tokens_per_second_per_gpu": 1}]),
            "workloads[0].tokens_per_second",
        ),
        (doc(options=[{"name": "o", "usd_per_gpu_hour": 1}]), "options[0].type"),
        (doc(options=[{"type": "cloud", "usd_per_gpu_hour": 1}]), "options[0].name"),
        (with_option(type="cloud"), "options[0].usd_per_gpu_hour"),
        (with_option(type="dedicated"), "options[0].usd_per_server_month"),
        (with_option(type="on_prem", server_kw=3), "options[0].capex_usd_per_server"),
        (with_option(type="on_prem", capex_usd_per_server=3), "options[0].server_kw"),
        (on_prem(financing={"term_months": 36}), "options[0].financing.apr"),
        (on_prem(financing={"apr": 0.05}), "options[0].financing.term_months"),
        (cloud(egress_tiers=[{"up_to_tb": None}]), "options[0].egress_tiers[0].usd_per_gb"),
        (
            doc(simulation={"demand_multiplier": {"low": 1, "high": 2}}),
            "simulation.demand_multiplier.dist",
        ),
        (
            doc(simulation={"demand_multiplier": {"dist": "normal", "mean": 1}}),
            "simulation.demand_multiplier.sd",
        ),
    ],
)
def test_a_missing_required_field_is_an_error_at_its_path(document, path):
    assert (path, "is required") in problems(document)


def test_workloads_and_options_must_not_be_empty():
    assert problems(doc(workloads=[], options=[])) == [
        ("workloads", "must have at least one workload"),
        ("options", "must have at least one option"),
    ]


def test_training_needs_flops_per_run_or_both_sizes():
    message = "is required unless params_billion and tokens_billion are both given"
    training = {"type": "training", "name": "t", "runs_per_year": 2, "params_billion": 8}
    assert problems(doc(workloads=[training])) == [("workloads[0].flops_per_run", message)]


def test_training_flops_are_six_times_parameters_times_tokens():
    training = {
        "type": "training",
        "name": "t",
        "runs_per_year": 2,
        "params_billion": 8,
        "tokens_billion": 2000,
    }
    workload = ok(doc(workloads=[training])).document["workloads"][0]
    assert workload["flops_per_run"] == pytest.approx(6 * 8e9 * 2000e9)
    assert workload["params_billion"] == 8.0 and workload["tokens_billion"] == 2000.0


def test_an_explicit_flops_per_run_wins_over_the_sizes():
    training = {
        "type": "training",
        "name": "t",
        "runs_per_year": 2,
        "flops_per_run": 1e22,
        "params_billion": 8,
        "tokens_billion": 2000,
    }
    workload = ok(doc(workloads=[training])).document["workloads"][0]
    assert workload["flops_per_run"] == 1e22 and workload["params_billion"] == 8.0


def test_inference_without_a_per_gpu_rate_needs_params_billion():
    inference = {"type": "inference", "name": "chat", "tokens_per_second": 1000}
    assert problems(doc(workloads=[inference])) == [
        ("workloads[0].params_billion", "is required when tokens_per_second_per_gpu is not given")
    ]


def test_inference_with_zero_parameters_cannot_be_estimated():
    inference = {
        "type": "inference",
        "name": "chat",
        "tokens_per_second": 1000,
        "params_billion": 0,
    }
    assert problems(doc(workloads=[inference])) == [
        ("workloads[0].params_billion", "must be > 0 to estimate tokens_per_second_per_gpu")
    ]


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
    (lambda v: doc(hours_per_month=v), "hours_per_month", 0, "must be > 0"),
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
    (lambda v: with_workload(start_month=v), "workloads[0].start_month", -1, "must be ≥ 0"),
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


# --- names, baseline, months ------------------------------------------------------------------


def test_option_names_must_be_unique():
    options = [
        {"type": "cloud", "name": "same", "usd_per_gpu_hour": 1},
        {"type": "cloud", "name": "other", "usd_per_gpu_hour": 2},
        {"type": "cloud", "name": "same", "usd_per_gpu_hour": 3},
    ]
    assert problems(doc(options=options)) == [("options[2].name", "repeats the name of options[0]")]


def test_the_baseline_must_name_an_option():
    assert problems(doc(baseline="rnet")) == [("baseline", 'names no option: "rnet"')]


def test_the_baseline_defaults_to_the_first_option():
    options = [
        {"type": "cloud", "name": "first", "usd_per_gpu_hour": 1},
        {"type": "cloud", "name": "second", "usd_per_gpu_hour": 2},
    ]
    assert ok(doc(options=options)).document["baseline"] == "first"
    assert ok(doc(options=options, baseline="second")).document["baseline"] == "second"


def test_start_month_must_not_be_after_end_month():
    assert problems(with_workload(start_month=10, end_month=5)) == [
        ("workloads[0].end_month", "must be ≥ start_month (10)")
    ]


def test_start_month_must_be_within_the_horizon():
    assert problems(
        doc(
            horizon_months=24,
            workloads=[{"type": "steady", "name": "w", "gpus": 1, "start_month": 25}],
        )
    ) == [("workloads[0].start_month", "must be ≤ horizon_months (24)")]


def test_an_end_month_beyond_the_horizon_is_cut_with_a_warning():
    result = ok(
        doc(
            horizon_months=24,
            workloads=[{"type": "steady", "name": "fleet", "gpus": 1, "end_month": 30}],
        )
    )
    assert result.document["workloads"][0]["end_month"] == 24
    assert len(result.warnings) == 1
    assert (
        '"fleet"' in result.warnings[0]
        and "30" in result.warnings[0]
        and "24" in result.warnings[0]
    )


def test_end_month_defaults_to_the_horizon_without_a_warning():
    result = ok(doc(horizon_months=12))
    assert result.document["workloads"][0]["end_month"] == 12
    assert result.warnings == []


def test_lead_time_must_be_shorter_than_the_horizon():
    assert problems(on_prem(lead_time_months=36)) == [
        ("options[0].lead_time_months", "must be less than horizon_months (36)")
    ]
    ok(on_prem(lead_time_months=35))


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


# --- size limits ------------------------------------------------------------------------------


def test_at_most_fifty_workloads():
    workloads = [{"type": "steady", "name": f"w{i}", "gpus": 1} for i in range(51)]
    assert problems(doc(workloads=workloads)) == [
        ("workloads", "must have at most 50 workloads, not 51")
    ]
    ok(doc(workloads=workloads[:50]))


def test_at_most_fifty_options():
    options = [{"type": "cloud", "name": f"o{i}", "usd_per_gpu_hour": 1} for i in range(51)]
    assert problems(doc(options=options)) == [("options", "must have at most 50 options, not 51")]
    ok(doc(options=options[:50]))


def test_at_most_one_hundred_thousand_paths():
    assert problems(doc(simulation={"paths": 100_001})) == [
        ("simulation.paths", "must be ≤ 100000")
    ]


def test_a_document_over_one_million_bytes_of_json_is_rejected_whole():
    [(field, message)] = problems(doc(name="x" * 1_000_000))
    assert field is None and "1 000 000 bytes" in message


# --- GPUs -------------------------------------------------------------------------------------


def test_a_workload_gpu_must_exist_in_the_catalog():
    assert problems(with_workload(gpu="h1000")) == [("workloads[0].gpu", 'unknown GPU "h1000"')]


def test_an_option_gpu_must_exist_in_the_catalog():
    assert problems(cloud(gpu="h1000")) == [("options[0].gpu", 'unknown GPU "h1000"')]


@pytest.mark.parametrize(
    ("gpu", "precision"),
    [("t4", "bf16"), ("a100-sxm-80gb", "fp8"), ("b300", "tf32"), ("v100-sxm2-32gb", "fp8")],
)
def test_a_training_precision_must_exist_on_the_workload_gpu(gpu, precision):
    training = {
        "type": "training",
        "name": "t",
        "gpu": gpu,
        "runs_per_year": 1,
        "flops_per_run": 1e21,
        "precision": precision,
    }
    assert problems(doc(workloads=[training])) == [
        ("workloads[0].precision", f'{precision} is not available on the GPU "{gpu}"')
    ]


def test_a_training_precision_that_exists_is_accepted():
    training = {
        "type": "training",
        "name": "t",
        "gpu": "t4",
        "runs_per_year": 1,
        "flops_per_run": 1e21,
        "precision": "fp16",
    }
    assert ok(doc(workloads=[training])).document["workloads"][0]["precision"] == "fp16"


def test_an_option_gpu_defaults_to_the_first_workload_gpu():
    workloads = [
        {"type": "steady", "name": "a", "gpu": "l40s", "gpus": 1},
        {"type": "steady", "name": "b", "gpu": "l4", "gpus": 1},
    ]
    options = ok(doc(workloads=workloads)).document["options"]
    assert options[0]["gpu"] == "l40s"


# --- the inference estimate -------------------------------------------------------------------


def test_an_absent_per_gpu_rate_is_estimated_with_a_warning_naming_the_workload_and_value():
    inference = {
        "type": "inference",
        "name": "70B chat",
        "gpu": "h100-sxm",
        "tokens_per_second": 6000,
        "params_billion": 70,
    }
    result = ok(doc(workloads=[inference]))
    value = result.document["workloads"][0]["tokens_per_second_per_gpu"]
    bandwidth_bound = 32 * 3.35e12 / (2 * 70e9)
    compute_bound = 0.5 * 989.4e12 / (2 * 70e9)
    assert value == pytest.approx(min(bandwidth_bound, compute_bound))
    assert value == pytest.approx(765.714285714)
    [warning] = result.warnings
    assert '"70B chat"' in warning and "765.7" in warning and "estimated" in warning


def test_the_estimate_is_capped_by_half_the_compute_for_small_models():
    figures = {"memory_bandwidth_tb_s": 8.0, "bf16_dense_tflops": 10.0}
    assert estimate_tokens_per_second_per_gpu(1, figures) == pytest.approx(0.5 * 10e12 / 2e9)


def test_the_estimate_uses_fp16_where_a_gpu_has_no_bf16():
    figures = {"memory_bandwidth_tb_s": 100.0, "bf16_dense_tflops": None, "fp16_dense_tflops": 65.0}
    assert estimate_tokens_per_second_per_gpu(1, figures) == pytest.approx(0.5 * 65e12 / 2e9)


def test_a_given_per_gpu_rate_is_kept_without_a_warning():
    inference = {
        "type": "inference",
        "name": "chat",
        "tokens_per_second": 6000,
        "tokens_per_second_per_gpu": 900,
    }
    result = ok(doc(workloads=[inference]))
    workload = result.document["workloads"][0]
    assert workload["tokens_per_second_per_gpu"] == 900.0 and workload["params_billion"] is None
    assert result.warnings == []


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
        "demand_multiplier": {"dist": "triangular", "low": 1.0, "mode": 1.0, "high": 1.0},
    }


def test_simulation_defaults_and_absence():
    assert ok(doc()).document["simulation"] is None
    assert ok(doc(simulation={})).document["simulation"] == {"paths": 0, "seed": 0}


def test_simulation_distributions_are_written_in_a_fixed_order():
    simulation = {
        "interruption_overhead": {"dist": "uniform", "low": 0, "high": 0.3},
        "seed": 5,
        "demand_multiplier": {"dist": "normal", "mean": 1, "sd": 0.1},
        "paths": 10,
    }
    result = ok(doc(simulation=simulation)).document["simulation"]
    assert list(result) == ["paths", "seed", "demand_multiplier", "interruption_overhead"]


# --- defaults and the normalised shape --------------------------------------------------------


def test_top_level_defaults_are_filled_in():
    result = ok(doc()).document
    assert list(result) == [
        "name",
        "horizon_months",
        "hours_per_month",
        "discount_rate",
        "egress_tb_per_month",
        "baseline",
        "workloads",
        "options",
        "simulation",
        "sizing",
    ]
    assert result["horizon_months"] == 36 and result["hours_per_month"] == 730.0
    assert result["discount_rate"] == 0.0 and result["egress_tb_per_month"] == 0.0
    assert result["baseline"] == "rent" and result["simulation"] is None


def test_every_workload_type_gets_all_its_fields_with_defaults():
    workloads = [
        {"type": "steady", "name": "s", "gpus": 4},
        {"type": "training", "name": "t", "runs_per_year": 1, "flops_per_run": 1e21},
        {"type": "inference", "name": "i", "tokens_per_second": 10, "tokens_per_second_per_gpu": 5},
    ]
    steady, training, inference = ok(doc(workloads=workloads)).document["workloads"]
    common = {"gpu": "h100-sxm", "start_month": 1, "end_month": 36, "monthly_growth": 0.0}
    assert steady == {"type": "steady", "name": "s", **common, "gpus": 4.0, "utilization": 1.0}
    assert training == {
        "type": "training",
        "name": "t",
        **common,
        "runs_per_year": 1.0,
        "flops_per_run": 1e21,
        "params_billion": None,
        "tokens_billion": None,
        "mfu": 0.4,
        "precision": "bf16",
        "cluster_gpus": None,
    }
    assert inference == {
        "type": "inference",
        "name": "i",
        **common,
        "tokens_per_second": 10.0,
        "peak_to_average": 1.0,
        "tokens_per_second_per_gpu": 5.0,
        "params_billion": None,
    }
    for workload in (steady, training, inference):
        assert list(workload)[:2] == ["type", "name"]


def test_every_cloud_billing_gets_all_its_fields_with_defaults():
    options = [
        {"type": "cloud", "name": "od", "usd_per_gpu_hour": 2},
        {"type": "cloud", "name": "spot", "billing": "spot", "usd_per_gpu_hour": 1},
        {"type": "cloud", "name": "c", "billing": "committed", "usd_per_gpu_hour": 1.5},
    ]
    on_demand, spot, committed = ok(doc(options=options, horizon_months=24)).document["options"]
    common = {"gpu": "h100-sxm", "throughput_factor": 1.0}
    tail = {
        "price_change_per_year": 0.0,
        "support_fraction": 0.0,
        "egress_usd_per_gb": None,
        "egress_tiers": None,
        "offer": None,
    }
    assert on_demand == {
        "type": "cloud",
        "name": "od",
        **common,
        "billing": "on_demand",
        "usd_per_gpu_hour": 2.0,
        "scaling": "elastic",
        **tail,
    }
    assert spot == {
        "type": "cloud",
        "name": "spot",
        **common,
        "billing": "spot",
        "usd_per_gpu_hour": 1.0,
        "scaling": "elastic",
        "interruption_overhead": 0.1,
        **tail,
    }
    assert committed == {
        "type": "cloud",
        "name": "c",
        **common,
        "billing": "committed",
        "usd_per_gpu_hour": 1.5,
        "committed_gpus": None,
        "term_months": 24,
        "upfront_usd": 0.0,
        "on_demand_usd_per_gpu_hour": None,
        **tail,
    }


def test_a_dedicated_option_gets_all_its_fields_with_defaults():
    option = ok(dedicated()).document["options"][0]
    assert option == {
        "type": "dedicated",
        "name": "opt",
        "gpu": "h100-sxm",
        "throughput_factor": 1.0,
        "gpus_per_server": 8,
        "servers": None,
        "usd_per_server_month": 14500.0,
        "setup_usd": 0.0,
        "included_egress_tb": 0.0,
        "overage_usd_per_tb": 0.0,
        "burst_usd_per_gpu_hour": None,
        "quote": None,
    }


def test_an_on_prem_option_gets_all_its_fields_with_defaults():
    option = ok(on_prem()).document["options"][0]
    assert option == {
        "type": "on_prem",
        "name": "opt",
        "gpu": "h100-sxm",
        "throughput_factor": 1.0,
        "gpus_per_server": 8,
        "servers": None,
        "capex_usd_per_server": 300000.0,
        "server_kw": 10.0,
        "lead_time_months": 0,
        "bridge_usd_per_gpu_hour": None,
        "burst_usd_per_gpu_hour": None,
        "idle_power_fraction": 0.3,
        "pue": 1.3,
        "usd_per_kwh": 0.1,
        "colo_usd_per_kw_month": 0.0,
        "support_fraction_per_year": 0.0,
        "staff_usd_per_month": 0.0,
        "residual_fraction": 0.0,
        "egress_usd_per_tb": 0.0,
        "financing": None,
        "quote": None,
    }


def test_the_defaults_come_from_the_schema_tables():
    option = ok(on_prem()).document["options"][0]
    for name, spec in schema.ON_PREM_FIELDS.items():
        if spec.default is not None:
            assert option[name] == spec.default


# --- catalog references -----------------------------------------------------------------------


OFFER = {"provider": "aws", "instance": "p5.48xlarge", "region": "us-east-1"}
OFFER_TIERS = [
    {"up_to_tb": 0.1, "usd_per_gb": 0},
    {"up_to_tb": 10, "usd_per_gb": 0.09},
    {"up_to_tb": None, "usd_per_gb": 0.05},
]
CATALOG = CatalogRefs(
    offers={
        ("aws", "p5.48xlarge", "us-east-1"): {
            "gpu": "h100-sxm",
            "gpu_count": 8,
            "usd_per_gpu_hour": {
                "on_demand": 6.88,
                "spot": 2.5,
                "commit_1y": 4.8,
                "commit_3y": 3.9,
            },
            "egress_tiers": OFFER_TIERS,
        },
        ("lambda", "gpu_8x_a100", "us-west-1"): {
            "gpu": "a100-sxm-80gb",
            "gpu_count": 8,
            "usd_per_gpu_hour": {"on_demand": 1.79},
            "egress_tiers": None,
        },
    },
    dedicated_quotes={
        7: {
            "gpu": "h200",
            "gpus_per_server": 8,
            "usd_per_server_month": 19000,
            "setup_usd": 5000,
            "included_egress_tb": 20,
            "overage_usd_per_tb": 3,
        }
    },
    purchase_quotes={
        9: {
            "gpu": "mi300x",
            "gpus_per_server": 8,
            "capex_usd_per_server": 240000,
            "server_kw": 8.5,
            "lead_time_months": 3,
            "support_fraction_per_year": 0.08,
        }
    },
    egress_providers={
        "gcp": [{"up_to_tb": 1, "usd_per_gb": 0.12}, {"up_to_tb": None, "usd_per_gb": 0.08}]
    },
)


def offer_option(**fields: Any) -> dict[str, Any]:
    return with_option(type="cloud", offer=OFFER, **fields)


@pytest.mark.parametrize(
    ("fields", "price"),
    [
        ({}, 6.88),
        ({"billing": "spot"}, 2.5),
        ({"billing": "committed", "term_months": 12}, 4.8),
        ({"billing": "committed", "term_months": 36}, 3.9),
        ({"billing": "committed"}, 3.9),  # term_months defaults to the 36-month horizon
    ],
    ids=["on_demand", "spot", "commit 1y", "commit 3y", "commit default term"],
)
def test_an_offer_supplies_the_price_of_the_billing(fields, price):
    option = ok(offer_option(**fields), CATALOG).document["options"][0]
    assert option["usd_per_gpu_hour"] == price
    assert option["gpu"] == "h100-sxm"
    assert option["offer"] == OFFER


def test_an_offer_supplies_the_on_demand_rate_of_a_committed_option():
    option = ok(offer_option(billing="committed", term_months=12), CATALOG).document["options"][0]
    assert option["on_demand_usd_per_gpu_hour"] == 6.88


def test_an_offer_supplies_its_provider_egress_tiers():
    option = ok(offer_option(), CATALOG).document["options"][0]
    assert option["egress_tiers"] == [
        {"up_to_tb": 0.1, "usd_per_gb": 0.0},
        {"up_to_tb": 10.0, "usd_per_gb": 0.09},
        {"up_to_tb": None, "usd_per_gb": 0.05},
    ]
    assert option["egress_usd_per_gb"] is None


def test_explicit_fields_win_over_what_the_offer_supplies():
    option = ok(
        offer_option(
            billing="committed",
            term_months=12,
            usd_per_gpu_hour=4.0,
            on_demand_usd_per_gpu_hour=7.5,
            egress_usd_per_gb=0.02,
            gpu="h100-sxm",
        ),
        CATALOG,
    ).document["options"][0]
    assert option["usd_per_gpu_hour"] == 4.0
    assert option["on_demand_usd_per_gpu_hour"] == 7.5
    assert option["egress_usd_per_gb"] == 0.02 and option["egress_tiers"] is None


def test_a_committed_term_other_than_one_or_three_years_needs_an_explicit_price():
    assert problems(offer_option(billing="committed", term_months=24), CATALOG) == [
        (
            "options[0].usd_per_gpu_hour",
            "is required for a 24-month term: the offer has committed prices for 12- and 36-month terms only",
        )
    ]
    option = ok(offer_option(billing="committed", term_months=24, usd_per_gpu_hour=4.2), CATALOG)
    assert option.document["options"][0]["usd_per_gpu_hour"] == 4.2


def test_an_offer_without_a_price_for_the_billing_needs_an_explicit_price():
    offer = {"provider": "lambda", "instance": "gpu_8x_a100", "region": "us-west-1"}
    assert problems(with_option(type="cloud", offer=offer, billing="spot"), CATALOG) == [
        ("options[0].usd_per_gpu_hour", "is required: the offer has no spot price")
    ]


def test_a_gpu_contradicting_the_offer_is_an_error():
    assert problems(offer_option(gpu="a100-sxm-80gb"), CATALOG) == [
        ("options[0].gpu", 'contradicts the offer\'s GPU "h100-sxm"')
    ]


def test_an_offer_not_in_the_catalog_is_an_error_at_the_offer():
    offer = {**OFFER, "region": "eu-west-1"}
    assert problems(with_option(type="cloud", offer=offer), CATALOG) == [
        ("options[0].offer", "no such offer in the catalog: aws p5.48xlarge in eu-west-1")
    ]
    # even when the option gives everything the offer would supply
    assert problems(
        with_option(type="cloud", offer=offer, usd_per_gpu_hour=1, gpu="h100-sxm"), CATALOG
    ) == [("options[0].offer", "no such offer in the catalog: aws p5.48xlarge in eu-west-1")]


def test_an_offer_must_name_provider_instance_and_region():
    assert problems(
        with_option(type="cloud", offer={"provider": "aws", "instance": "p5"}), CATALOG
    ) == [("options[0].offer.region", "is required")]


def test_an_egress_provider_is_resolved_into_tiers_and_dropped():
    option = ok(cloud(egress_provider="gcp"), CATALOG).document["options"][0]
    assert "egress_provider" not in option
    assert option["egress_tiers"] == [
        {"up_to_tb": 1.0, "usd_per_gb": 0.12},
        {"up_to_tb": None, "usd_per_gb": 0.08},
    ]


def test_an_egress_provider_wins_over_the_offer_tiers():
    option = ok(offer_option(egress_provider="gcp"), CATALOG).document["options"][0]
    assert option["egress_tiers"][0] == {"up_to_tb": 1.0, "usd_per_gb": 0.12}


def test_an_unknown_egress_provider_is_an_error():
    assert problems(cloud(egress_provider="ovh"), CATALOG) == [
        ("options[0].egress_provider", 'unknown egress provider "ovh"')
    ]


def test_a_dedicated_quote_supplies_its_fields_and_explicit_fields_win():
    option = ok(with_option(type="dedicated", quote=7, setup_usd=0), CATALOG).document["options"][0]
    assert option["gpu"] == "h200"
    assert option["usd_per_server_month"] == 19000.0
    assert option["setup_usd"] == 0.0
    assert option["included_egress_tb"] == 20.0 and option["overage_usd_per_tb"] == 3.0
    assert option["quote"] == 7


def test_a_purchase_quote_supplies_its_fields_and_explicit_fields_win():
    option = ok(with_option(type="on_prem", quote=9, server_kw=9.0), CATALOG).document["options"][0]
    assert option["gpu"] == "mi300x"
    assert option["capex_usd_per_server"] == 240000.0
    assert option["server_kw"] == 9.0
    assert option["lead_time_months"] == 3 and option["support_fraction_per_year"] == 0.08


def test_a_gpu_contradicting_the_quote_is_an_error():
    assert problems(with_option(type="dedicated", quote=7, gpu="h100-sxm"), CATALOG) == [
        ("options[0].gpu", 'contradicts the quote\'s GPU "h200"')
    ]


def test_a_quote_not_in_the_catalog_is_an_error_at_the_quote():
    assert problems(with_option(type="on_prem", quote=7), CATALOG) == [
        ("options[0].quote", "no such quote in the catalog: 7")
    ]


def test_a_quoted_lead_time_must_be_shorter_than_the_horizon():
    assert problems(
        doc(horizon_months=3, options=[{"type": "on_prem", "name": "p", "quote": 9}]), CATALOG
    ) == [("options[0].lead_time_months", "must be less than horizon_months (3)")]


def test_without_a_catalog_a_reference_that_must_supply_a_field_is_an_error():
    assert problems(with_option(type="cloud", offer=OFFER)) == [
        ("options[0].offer", "cannot be resolved without the catalog: give gpu, usd_per_gpu_hour")
    ]
    assert problems(cloud(egress_provider="gcp")) == [
        ("options[0].egress_provider", "cannot be resolved without the catalog")
    ]


def test_a_resolved_document_normalises_to_itself_with_or_without_the_catalog():
    options = [
        {"type": "cloud", "name": "od", "offer": OFFER},
        {
            "type": "cloud",
            "name": "c",
            "offer": OFFER,
            "billing": "committed",
            "term_months": 12,
            "egress_provider": "gcp",
        },
        {"type": "dedicated", "name": "d", "quote": 7},
        {"type": "on_prem", "name": "p", "quote": 9, "financing": {"apr": 0.05, "term_months": 36}},
    ]
    first = ok(doc(options=options), CATALOG).document
    assert ok(copy.deepcopy(first), CATALOG).document == first
    assert ok(copy.deepcopy(first)).document == first


# --- property tests ---------------------------------------------------------------------------


finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    horizon=st.integers(1, 120),
    hours=st.floats(0.001, 1000),
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


@settings(max_examples=60, deadline=None)
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


@settings(max_examples=40, deadline=None)
@given(value=st.one_of(st.booleans(), st.text(max_size=5), st.lists(st.integers(), max_size=2)))
def test_anything_but_a_number_in_a_number_field_is_an_error(value):
    assert problems(cloud(usd_per_gpu_hour=value)) == [
        ("options[0].usd_per_gpu_hour", "must be a number")
    ]


@settings(max_examples=40, deadline=None)
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


def test_catalog_tiers_that_break_the_tier_rules_are_reported_at_the_reference():
    catalog = CatalogRefs(egress_providers={"odd": [{"up_to_tb": 10, "usd_per_gb": 0.09}]})
    assert problems(cloud(egress_provider="odd"), catalog) == [
        (
            "options[0].egress_provider",
            "the provider's tiers: tier 0's up_to_tb must be null: the last tier has no bound",
        )
    ]


def test_an_offer_naming_a_gpu_missing_from_the_gpu_table_is_an_error_at_the_offer():
    catalog = CatalogRefs(
        offers={("x", "y", "z"): {"gpu": "h1000", "usd_per_gpu_hour": {"on_demand": 1.0}}}
    )
    offer = {"provider": "x", "instance": "y", "region": "z"}
    assert problems(with_option(type="cloud", offer=offer), catalog) == [
        ("options[0].offer", 'the offer names an unknown GPU "h1000"')
    ]


def test_without_a_catalog_a_quote_with_missing_fields_is_an_error_at_the_quote():
    assert problems(with_option(type="on_prem", quote=9, gpu="mi300x", server_kw=8)) == [
        ("options[0].quote", "cannot be resolved without the catalog: give capex_usd_per_server")
    ]


def test_a_document_given_as_a_python_dict_with_nan_is_rejected_with_the_path():
    document = with_workload(utilization=float("nan"))
    assert problems(document) == [("workloads[0].utilization", "must be a finite number")]


KNOWN_NAMES = sorted(
    {
        name
        for table in (
            schema.TOP_LEVEL_FIELDS,
            schema.WORKLOAD_COMMON_FIELDS,
            *schema.WORKLOAD_TYPE_FIELDS.values(),
            schema.OPTION_COMMON_FIELDS,
            *schema.OPTION_TYPE_FIELDS.values(),
            *schema.BILLING_FIELDS.values(),
            schema.EGRESS_TIER_FIELDS,
            schema.OFFER_FIELDS,
            schema.FINANCING_FIELDS,
            schema.SIMULATION_FIELDS,
            *schema.DISTRIBUTION_FIELDS.values(),
        )
        for name in table
    }
    | set(schema.SIMULATED_QUANTITIES)
    | {"dist", "x"}
)
KNOWN_VALUES = [
    *schema.WORKLOAD_TYPES,
    *schema.OPTION_TYPES,
    *schema.BILLINGS,
    *schema.PRECISIONS,
    *schema.DISTRIBUTIONS,
    "h100-sxm",
    "t4",
]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 200)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(KNOWN_VALUES),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(KNOWN_NAMES), children, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    top=st.dictionaries(st.sampled_from(KNOWN_NAMES), json_values, max_size=8),
    workload=st.dictionaries(st.sampled_from(KNOWN_NAMES), json_values, max_size=8),
    option=st.dictionaries(st.sampled_from(KNOWN_NAMES), json_values, max_size=8),
)
def test_any_document_either_normalises_or_is_rejected_never_crashes(top, workload, option):
    document = {"name": "fuzz", **top, "workloads": [workload], "options": [option]}
    try:
        result = normalize(document, GPUS, CATALOG)
    except ScenarioError as error:
        assert error.errors and all(isinstance(e.message, str) for e in error.errors)
    else:
        assert normalize(copy.deepcopy(result.document), GPUS, CATALOG).document == result.document
