"""The comparison of two results (``costapp.comparison``) and its chart, by value, without the
web or the database."""

import pytest

from costapp.charts import comparison_cumulative_chart
from costapp.reports.comparison import (
    ABSENT,
    difference,
    inputs_diff,
    inputs_flatten,
    results_compare,
    value_text,
)


def option(name: str, total: float, *, npv: float | None = None, months=(0.0,), **extra) -> dict:
    cumulative, running = [], 0.0
    for value in months:
        running += value
        cumulative.append(running)
    return {
        "name": name,
        "type": "cloud",
        "gpu": "h100-sxm",
        "feasible": True,
        "total_usd": total,
        "npv_usd": total if npv is None else npv,
        "usd_per_busy_gpu_hour": 2.0,
        "provisioned_gpus": 8.0,
        "break_even_month": None,
        "savings_vs_baseline_pct": None,
        "monthly_usd": list(months),
        "cumulative_usd": cumulative,
        **extra,
    }


def result(options: list[dict], inputs: dict, **extra) -> dict:
    return {
        "name": "fleet",
        "baseline": options[0]["name"],
        "cheapest": options[0]["name"],
        "options": options,
        "inputs": inputs,
        "engine_version": "1.3.0",
        **extra,
    }


INPUTS_A = {
    "horizon_months": 2,
    "discount_rate": 0.08,
    "workloads": [{"name": "fleet", "type": "steady", "gpus": 8.0}],
    "options": [
        {"name": "Cloud", "usd_per_gpu_hour": 2.5, "egress_tiers": [{"usd_per_gb": 0.09}]},
        {"name": "Dedicated", "servers": 1},
    ],
}


def test_difference_is_b_minus_a_and_relative_to_a():
    assert difference(200.0, 150.0) == (-50.0, -25.0)
    assert difference(-200.0, -100.0) == (100.0, 50.0)  # relative to |A|
    assert difference(0.0, 10.0) == (10.0, None)  # nothing to be relative to
    assert difference(3.0, 5.0, relative=False) == (2.0, None)
    assert difference(None, 5.0) == (None, None)
    assert difference(True, 5.0) == (None, None)  # a boolean is not an amount


def test_inputs_flatten_names_workloads_and_options_and_indexes_other_lists():
    flat = inputs_flatten(INPUTS_A)
    assert flat == {
        "horizon_months": 2,
        "discount_rate": 0.08,
        "workloads[fleet].name": "fleet",
        "workloads[fleet].type": "steady",
        "workloads[fleet].gpus": 8.0,
        "options[Cloud].name": "Cloud",
        "options[Cloud].usd_per_gpu_hour": 2.5,
        "options[Cloud].egress_tiers[0].usd_per_gb": 0.09,
        "options[Dedicated].name": "Dedicated",
        "options[Dedicated].servers": 1,
    }
    assert inputs_flatten({"a": [], "b": {}, "c": None}) == {"a": [], "b": {}, "c": None}


def test_inputs_diff_lists_changed_added_and_removed_paths_with_numeric_differences():
    inputs_b = {
        "horizon_months": 2,
        "discount_rate": 0.08,
        "workloads": [{"name": "fleet", "type": "steady", "gpus": 8}],  # 8 == 8.0: no change
        "options": [
            {"name": "Dedicated", "servers": 1},  # order does not matter: matched by name
            {"name": "Cloud", "usd_per_gpu_hour": 2.0, "egress_tiers": [{"usd_per_gb": 0.09}]},
            {"name": "Spot", "usd_per_gpu_hour": 1.1},
        ],
        "simulation": {"paths": 1000},
    }
    changes = {c.path: c for c in inputs_diff(INPUTS_A, inputs_b)}
    assert list(changes) == [
        "options[Cloud].usd_per_gpu_hour",
        "options[Spot].name",
        "options[Spot].usd_per_gpu_hour",
        "simulation.paths",
    ]
    price = changes["options[Cloud].usd_per_gpu_hour"]
    assert (price.a, price.b, price.delta, price.delta_pct) == (2.5, 2.0, -0.5, -20.0)
    assert price.only_in == ""
    spot = changes["options[Spot].usd_per_gpu_hour"]
    assert spot.a is ABSENT and spot.b == 1.1 and spot.only_in == "B"
    assert spot.delta is None and spot.delta_pct is None
    assert inputs_diff(INPUTS_A, INPUTS_A) == []
    # a string and a number are never the same value
    assert [c.path for c in inputs_diff({"x": "1"}, {"x": 1})] == ["x"]


def test_results_compare_matches_options_by_name_and_lists_the_ones_only_in_one_run():
    a = result(
        [option("Cloud", 1000.0, npv=950.0), option("Dedicated", 800.0), option("Old", 5.0)],
        INPUTS_A,
    )
    inputs_b = {**INPUTS_A, "horizon_months": 3}
    b = result(
        [option("New", 7.0), option("Dedicated", 800.0), option("Cloud", 1250.0, npv=1000.0)],
        inputs_b,
        simulation={"paths": 2000},
    )
    compared = results_compare(a, b)
    assert [o.name for o in compared.options] == ["Cloud", "Dedicated"]  # A's order
    assert compared.only_in_a == ["Old"] and compared.only_in_b == ["New"]
    cloud = {f.key: f for f in compared.options[0].figures}
    assert (cloud["total_usd"].a, cloud["total_usd"].b) == (1000.0, 1250.0)
    assert (cloud["total_usd"].delta, cloud["total_usd"].delta_pct) == (250.0, 25.0)
    assert (cloud["npv_usd"].delta, cloud["npv_usd"].delta_pct) == (50.0, pytest.approx(5.2631579))
    assert cloud["usd_per_busy_gpu_hour"].delta == 0.0
    assert "p50_usd" not in cloud  # neither run has a simulation's figures
    assert cloud["break_even_month"].delta is None  # no break-even in either run
    assert ("Horizon [months]", 2, 3) in compared.facts
    assert ("Monte Carlo paths", 0, 2000) in compared.facts
    assert [c.path for c in compared.input_changes] == ["horizon_months"]


def test_relative_differences_are_left_out_for_months_and_percentages():
    a = result([option("Cloud", 10.0, break_even_month=12.0, savings_vs_baseline_pct=20.0)], {})
    a["inputs"] = {"horizon_months": 1}
    b = result([option("Cloud", 10.0, break_even_month=9.0, savings_vs_baseline_pct=25.0)], {})
    b["inputs"] = {"horizon_months": 1}
    figures = {f.key: f for f in results_compare(a, b).options[0].figures}
    assert (figures["break_even_month"].delta, figures["break_even_month"].delta_pct) == (
        -3.0,
        None,
    )
    assert figures["savings_vs_baseline_pct"].delta == 5.0
    assert figures["savings_vs_baseline_pct"].delta_pct is None


def test_value_text():
    assert value_text(ABSENT) == "(absent)"
    assert value_text(None) == "—"
    assert value_text(14500.0) == "14,500"
    assert value_text(0.085) == "0.085"
    assert value_text([1, 2]) == "[1, 2]"
    assert value_text(True) == "yes"


def test_the_comparison_chart_draws_a_solid_and_b_dashed_in_one_colour_per_option():
    a = result(
        [option("Cloud", 30.0, months=(10.0, 20.0)), option("Old", 1.0, months=(1.0, 0.0))], {}
    )
    b = result(
        [option("Cloud", 60.0, months=(10.0, 20.0, 30.0)), option("New", 2.0, months=(2.0,))], {}
    )
    chart = comparison_cumulative_chart(a, b, label_a="run 1", label_b="run 2")
    traces = chart.figure["data"]
    assert [t["name"] for t in traces] == [
        "Cloud (run 1)",
        "Cloud (run 2)",
        "Old (run 1)",
        "New (run 2)",
    ]
    assert [t["line"]["dash"] for t in traces] == ["solid", "dash", "solid", "dash"]
    assert traces[0]["line"]["color"] == traces[1]["line"]["color"] != traces[2]["line"]["color"]
    assert traces[1]["y"] == [10.0, 30.0, 60.0] and traces[1]["x"] == [0, 1, 2]
    layout = chart.figure["layout"]
    assert layout["title"]["text"] == "Cumulative cost per option, run 1 (solid) and run 2 (dashed)"
    assert layout["xaxis"]["title"]["text"] == "Month"
    assert layout["yaxis"]["title"]["text"] == "Cumulative cost [USD]"
    [table] = chart.tables
    assert table.columns == [
        "Month",
        "Cloud, run 1 [USD]",
        "Cloud, run 2 [USD]",
        "Old, run 1 [USD]",
        "New, run 2 [USD]",
    ]
    assert table.rows == [
        [0, 10.0, 10.0, 1.0, 2.0],
        [1, 30.0, 30.0, 1.0, None],
        [2, None, 60.0, None, None],
    ]
