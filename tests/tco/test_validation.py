"""Validation and normalisation of scenario documents: the walk over a whole document.

Plain functions: no database. The shipped scenarios normalise and normalisation is idempotent;
every problem is reported at once; required fields, names, the baseline, months, size limits,
GPUs, the inference estimate and the defaults of the normalised document each have a test naming
the exact path and message (docs: scenario-format.md, "Validation"). The generic rules (types,
ranges, unknown fields, tiers, distributions) are tested in test_rules.py, catalog references in
test_references.py.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costapp.tco import ScenarioError, normalize, schema
from costapp.tco.demand import estimate_tokens_per_second_per_gpu
from tests.examples import examples

from .documents import (
    CATALOG,
    GPUS,
    SCENARIOS,
    cloud,
    dedicated,
    doc,
    ok,
    on_prem,
    problems,
    with_option,
    with_workload,
)

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
    [("t4", "bf16"), ("a100-sxm-80gb", "fp8"), ("mi355x", "tf32"), ("v100-sxm2-32gb", "fp8")],
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
        "min_replicas": 1,
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
        "min_replicas": 1,
    }
    result = ok(doc(workloads=[inference]))
    workload = result.document["workloads"][0]
    assert workload["tokens_per_second_per_gpu"] == 900.0 and workload["params_billion"] is None
    assert result.warnings == []


def test_an_inference_workload_without_min_replicas_warns_that_one_replica_is_now_counted():
    inference = {
        "type": "inference",
        "name": "chat",
        "tokens_per_second": 6000,
        "tokens_per_second_per_gpu": 900,
    }
    result = ok(doc(workloads=[inference]))
    assert result.document["workloads"][0]["min_replicas"] == 1
    [warning] = result.warnings
    assert '"chat"' in warning and "one resident replica" in warning
    assert '"min_replicas": 0' in warning and "1.1" in warning
    # fed back in, the normalised document states min_replicas: no warning
    assert ok(result.document).warnings == []


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
        "checkpoint_hours": 0.0,
        "restart_hours": 0.0,
    }
    assert inference == {
        "type": "inference",
        "name": "i",
        **common,
        "tokens_per_second": 10.0,
        "peak_to_average": 1.0,
        "tokens_per_second_per_gpu": 5.0,
        "params_billion": None,
        "input_tokens_per_output_token": 0.0,
        "min_replicas": 1,
        "prefill_tokens_per_second_per_gpu": None,  # version 1.3: not read without prompts
        "peak_hours_per_day": 4.0,  # version 1.3: min(4, 24 / peak_to_average)
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
        "gpu_mtbf_hours": None,
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
        "gpu_mtbf_hours": None,
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
        "gpu_mtbf_hours": None,
        "quote": None,
    }


def test_the_defaults_come_from_the_schema_tables():
    option = ok(on_prem()).document["options"][0]
    for name, spec in schema.ON_PREM_FIELDS.items():
        if spec.default is not None:
            assert option[name] == spec.default


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


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
