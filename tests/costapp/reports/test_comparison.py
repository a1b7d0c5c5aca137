"""The comparison of two results (``costapp.comparison``) and its chart, by value, without the
web or the database."""

import copy
import json
from pathlib import Path

import pytest

from costapp.charts import comparison_cumulative_chart
from costapp.reports.comparison import (
    ABSENT,
    difference,
    inputs_flatten,
    results_compare,
    value_text,
)
from costapp.reports.input_changes import inputs_changes
from costapp.reports.input_words import change_words, formatted, value_words
from costapp.reports.pairing import pairing_of
from costapp.tco import simulate
from tests.tco.documents import gpu_table

CLAIMS = Path(__file__).resolve().parents[3] / "costapp" / "data" / "claims"


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


def words_of(inputs_a: dict, inputs_b: dict) -> list[str]:
    return [c.words for c in inputs_changes(inputs_a, inputs_b, pairing_of(inputs_a, inputs_b))]


def test_inputs_of_another_count_are_paired_by_name_one_row_in_words_per_difference():
    inputs_b = {
        "horizon_months": 2,
        "discount_rate": 0.08,
        "workloads": [{"name": "fleet", "type": "steady", "gpus": 8}],  # 8 == 8.0: no change
        "options": [
            {"name": "Dedicated", "servers": 1},  # another place: paired by name
            {"name": "Cloud", "usd_per_gpu_hour": 2.0, "egress_tiers": [{"usd_per_gb": 0.09}]},
            {"name": "Spot", "usd_per_gpu_hour": 1.1},
        ],
        "simulation": {"paths": 1000},
    }
    pairing = pairing_of(INPUTS_A, inputs_b)
    assert pairing.by == "name"
    assert pairing.said == (
        "Workloads and options paired by name: run A has 1 workload and 2 options, "
        "run B 1 workload and 3 options."
    )
    changes = inputs_changes(INPUTS_A, inputs_b, pairing)
    assert [c.words for c in changes] == [
        "option “Cloud” (1 in A, 2 in B), USD per GPU hour: $2.50 → $2.00",
        "option 3 “Spot”: only in run B",
        "Monte Carlo simulation: only in run B",
    ]
    price = changes[0]
    assert (price.a, price.b, price.delta, price.delta_pct) == (2.5, 2.0, -0.5, -20.0)
    assert price.change == "−$0.500 (−20 %)" and price.only_in == ""
    assert price.key == "options[0].usd_per_gpu_hour"
    assert changes[1].only_in == "B" and changes[1].key == "B:options[2]"
    assert words_of(INPUTS_A, INPUTS_A) == []
    # a string and a number are never the same value
    assert words_of({"x": "1"}, {"x": 1}) == ["X: 1 → 1"]


def test_two_runs_differing_in_one_utilization_show_that_one_row():
    """The shipped claim pair, 64 H100s 90 % and 30 % busy: the same options, one workload of
    the same type named after its utilization. Paired by position, the one difference is one
    row in words (by name it was 16 rows of "(absent)" paths); the renamed workload is said in
    the pairing's sentence, the scenario's name in the facts."""
    high, low = (
        simulate(
            json.loads((CLAIMS / f"dedicated-saves-half--{kind}.json").read_text()), gpu_table()
        )
        for kind in ("high-utilization", "low-utilization")
    )
    compared = results_compare(high, low)
    assert [c.words for c in compared.input_changes] == ["workload 1, utilization: 90 % → 30 %"]
    assert compared.input_changes[0].change == "−60 points"
    assert compared.input_changes[0].key == "workloads[0].utilization"
    assert compared.pairing.by == "position"
    assert compared.pairing.said == (
        "Workloads and options paired by position: both runs have 1 workload and 3 options of "
        "the same types. Named differently: workload 1 is “64 H100s of work, 90% busy” in A "
        "and “64 H100s of work, 30% busy” in B."
    )
    assert [o.label for o in compared.options] == [
        "option 1 “Hyperscaler on-demand”",
        "option 2 “GPU cloud on-demand”",
        "option 3 “Dedicated 8-GPU servers”",
    ]
    assert compared.only_in_a == compared.only_in_b == []
    assert ("Scenario", high["name"], low["name"]) in compared.facts


def test_options_renamed_in_place_are_paired_by_position_with_references_following_them():
    inputs_a = {
        "baseline": "Rent",
        "workloads": [{"type": "training", "name": "Run", "mfu": 0.4, "end_month": 24}],
        "options": [
            {"type": "cloud", "name": "Rent", "usd_per_gpu_hour": 2.5, "discount_rate": 0.1},
            {"type": "on_prem", "name": "Buy", "capex_usd_per_server": 280000.0, "pue": 1.3},
        ],
        "sizing": [{"option": "Buy", "min": 0, "max": 4}],
    }
    inputs_b = copy.deepcopy(inputs_a)
    inputs_b["options"][0]["name"] = "Rent H100"  # renamed: the baseline follows it
    inputs_b["baseline"] = "Rent H100"
    inputs_b["options"][1].update(name="Buy 8×H100", capex_usd_per_server=310000.0, pue=1.25)
    inputs_b["sizing"][0].update(option="Buy 8×H100", max=6)
    inputs_b["workloads"][0].update(mfu=0.35, end_month=36)
    pairing = pairing_of(inputs_a, inputs_b)
    assert pairing.by == "position"
    assert pairing.renamed == (
        "option 1 is “Rent” in A and “Rent H100” in B",
        "option 2 is “Buy” in A and “Buy 8×H100” in B",
    )
    changes = inputs_changes(inputs_a, inputs_b, pairing)
    assert [(c.words, c.change) for c in changes] == [
        ("workload 1 “Run”, MFU (model FLOPs utilization): 40 % → 35 %", "−5 points"),
        ("workload 1 “Run”, end month: month 24 → month 36", "+12 months"),
        ("option 2, capex USD per server: $280,000 → $310,000", "+$30,000 (+10.7 %)"),
        ("option 2, PUE: 1.3 → 1.25", "−0.05 (−3.8 %)"),
        ("sizing sweep 1, largest size: 4 → 6", "+2 (+50 %)"),
    ]
    # the baseline and the sweep name other options than their pairs: they differ
    inputs_b["baseline"] = "Buy 8×H100"
    inputs_b["sizing"][0]["option"] = "Rent H100"
    words = words_of(inputs_a, inputs_b)
    assert "Baseline option: Rent → Buy 8×H100" in words
    assert "sizing sweep 1, option to size: Buy → Rent H100" in words


def test_options_of_other_types_in_the_same_places_are_paired_by_name_and_it_says_why():
    inputs_a = {
        "options": [{"type": "cloud", "name": "Rent"}, {"type": "dedicated", "name": "Lease"}],
        "workloads": [],
    }
    inputs_b = {
        "options": [{"type": "dedicated", "name": "Lease"}, {"type": "cloud", "name": "Rent"}],
        "workloads": [],
    }
    pairing = pairing_of(inputs_a, inputs_b)
    assert pairing.by == "name"
    assert pairing.said == (
        "Workloads and options paired by name: both runs have 0 workloads and 2 options, but "
        "option 1 is cloud in A and dedicated in B."
    )
    assert [p.label for p in pairing.options] == [
        "option “Rent” (1 in A, 2 in B)",
        "option “Lease” (2 in A, 1 in B)",
    ]
    assert words_of(inputs_a, inputs_b) == []  # the same options, in another order


def test_values_read_as_a_person_reads_them():
    assert value_words(0.9, "utilization") == "90 %"
    assert value_words(0.085, "discount_rate") == "8.5 %"
    assert value_words(-0.1, "price_change_per_year") == "−10 %"
    assert value_words(14600.0, "usd_per_server_month") == "$14,600"
    assert value_words(2.99, "usd_per_gpu_hour") == "$2.99"
    assert value_words(0.085, "egress_usd_per_gb") == "$0.0850"
    assert value_words(36, "horizon_months") == "36 months"
    assert value_words(1, "term_months") == "1 month"
    assert value_words(12, "start_month") == "month 12"
    assert value_words(50000.0, "gpu_mtbf_hours") == "50,000 GPU-hours"
    assert value_words(1000, "tokens_per_second") == "1,000"
    assert value_words(None, "servers") == "none"
    assert value_words(True, "x") == "yes"
    assert value_words(-0.3, "low", "cloud_price_change_per_year") == "−30 %"
    assert value_words(0.8, "low", "demand_multiplier") == "0.8"
    offer = {"provider": "lambda", "instance": "gpu_8x_h100_sxm5", "region": "us-east-1"}
    assert value_words(offer, "offer") == "lambda gpu_8x_h100_sxm5 in us-east-1"
    tiers = [{"up_to_tb": 10, "usd_per_gb": 0.09}, {"up_to_tb": None, "usd_per_gb": 0.07}]
    assert value_words(tiers, "egress_tiers") == "$0.0900 per GB up to 10 TB, then $0.0700"
    dist = {"dist": "triangular", "low": 0.8, "mode": 1, "high": 1.3}
    assert value_words(dist, "demand_multiplier") == "triangular (low 0.8, mode 1, high 1.3)"
    assert formatted("money", 1234567.891) == "$1,234,567.89"
    assert change_words(2.99, 2.49, "usd_per_gpu_hour") == "−$0.500 (−16.7 %)"
    assert change_words(0.9, 0.3, "utilization") == "−60 points"
    assert change_words(8, 16, "gpus") == "+8 (+100 %)"
    assert change_words("a", "b", "gpu") == ""


def test_two_values_that_read_the_same_are_written_with_more_figures():
    a = {"options": [{"type": "cloud", "name": "Rent", "usd_per_gpu_hour": 2.49}]}
    b = {"options": [{"type": "cloud", "name": "Rent", "usd_per_gpu_hour": 2.4917}]}
    assert words_of(a, b) == ["option 1 “Rent”, USD per GPU hour: $2.49 → $2.4917"]


def test_results_compare_pairs_options_by_name_when_they_moved_and_lists_the_ones_only_in_one():
    def inputs(*names: str, horizon: int = 2) -> dict:
        options = [{"type": "cloud", "name": n, "usd_per_gpu_hour": 2.5} for n in names]
        return {**INPUTS_A, "horizon_months": horizon, "options": options}

    a = result(
        [option("Cloud", 1000.0, npv=950.0), option("Dedicated", 800.0), option("Old", 5.0)],
        inputs("Cloud", "Dedicated", "Old"),
    )
    b = result(
        [option("New", 7.0), option("Dedicated", 800.0), option("Cloud", 1250.0, npv=1000.0)],
        inputs("New", "Dedicated", "Cloud", horizon=3),
        simulation={"paths": 2000},
    )
    compared = results_compare(a, b)
    assert compared.pairing.by == "name"
    assert compared.pairing.said == (
        "Workloads and options paired by name: both runs have 1 workload and 3 options of the "
        "same types, but option “Cloud” is 1 in A and 3 in B."
    )
    assert [o.name for o in compared.options] == ["Cloud", "Dedicated"]  # A's order
    assert [o.label for o in compared.options] == [
        "option “Cloud” (1 in A, 3 in B)",
        "option 2 “Dedicated”",
    ]
    assert compared.only_in_a == ["option 3 “Old”"] and compared.only_in_b == ["option 1 “New”"]
    cloud = {f.key: f for f in compared.options[0].figures}
    assert (cloud["total_usd"].a, cloud["total_usd"].b) == (1000.0, 1250.0)
    assert (cloud["total_usd"].delta, cloud["total_usd"].delta_pct) == (250.0, 25.0)
    assert (cloud["npv_usd"].delta, cloud["npv_usd"].delta_pct) == (50.0, pytest.approx(5.2631579))
    assert cloud["usd_per_busy_gpu_hour"].delta == 0.0
    assert "p50_usd" not in cloud  # neither run has a simulation's figures
    assert cloud["break_even_month"].delta is None  # no break-even in either run
    assert ("Horizon [months]", 2, 3) in compared.facts
    assert ("Monte Carlo paths", 0, 2000) in compared.facts
    assert [c.words for c in compared.input_changes] == [
        "Horizon: 2 months → 3 months",
        "option 3 “Old”: only in run A",
        "option 1 “New”: only in run B",
    ]


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
    assert value_text(2e9) == "2 B" and value_text(4.2359999999999993e20) == "423.6 E"
    assert value_text(0.0000125) == "0.0000125"  # never "1.25e-05"
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
    # Old and New stand in the same place, of the same type: paired by position, one colour
    assert traces[2]["line"]["color"] == traces[3]["line"]["color"]
    assert traces[1]["y"] == [10.0, 30.0, 60.0] and traces[1]["x"] == [0, 1, 2]
    layout = chart.figure["layout"]
    assert layout["title"]["text"] == (
        "Cumulative cost per option,<br>run 1 (solid) and run 2 (dashed)"
    )
    assert chart.title == "Cumulative cost per option, run 1 (solid) and run 2 (dashed)"
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


def test_the_sources_of_options_paired_by_name_are_compared_pair_by_pair():
    def row(path: str, value: float, stated_on: str = "2025-01-02") -> dict:
        return {"path": path, "value": value, "source": "feed", "stated_on": stated_on, "flags": []}

    lam, flat = option("Lambda", 10.0), option("Flat", 5.0)
    a = result([lam, flat], {"horizon_months": 1, "options": [lam, flat]})
    b = result([flat, lam], {"horizon_months": 1, "options": [flat, lam]})  # moved: by name
    a["sources"] = [row("options[0].usd_per_gpu_hour", 2.99)]
    b["sources"] = [row("options[1].usd_per_gpu_hour", 2.99)]
    assert results_compare(a, b).source_changes == []  # the same figure of the same option
    b["sources"] = [row("options[1].usd_per_gpu_hour", 3.29, "2025-03-04")]
    [change] = results_compare(a, b).source_changes
    assert change.words == "option “Lambda” (1 in A, 2 in B), USD per GPU hour"
    assert (change.a["value"], change.b["value"]) == (2.99, 3.29)


def test_two_mixes_compare_layer_by_layer():
    from tests.tco.helpers import run as priced
    from tests.tco.helpers import scenario

    document = scenario("own-commit-rent-mix")
    a = priced(document)
    larger = copy.deepcopy(document)
    larger["options"][3]["layers"][1]["size"] = 16  # commit to 16 GPUs instead of 8
    b = priced(larger)
    compared = results_compare(a, b)
    mix = next(o for o in compared.options if o.type_a == "mix")
    by_key = {figure.key: figure for figure in mix.figures}
    held = by_key["layers[1].provisioned_gpus"]
    assert (held.a, held.b, held.delta) == (8.0, 16.0, 8.0)
    assert held.label.startswith("Layer 2 “H100 3-year commitment")
    served = by_key["layers[1].served_gpu_hours"]
    layers_a, layers_b = a["options"][3]["layers"], b["options"][3]["layers"]
    assert served.a == layers_a[1]["served_gpu_hours"]
    assert served.delta == pytest.approx(
        layers_b[1]["served_gpu_hours"] - layers_a[1]["served_gpu_hours"]
    )
    rest = by_key["layers[2].served_gpu_hours"]
    assert rest.label.startswith("Rest “H100 on-demand") and rest.delta < 0  # less rented
    assert "tail_npv_usd" not in by_key  # no simulation: no tail
    # an option that is no mix has no layer rows
    other = next(o for o in compared.options if o.type_a == "cloud")
    assert not any(f.key.startswith("layers[") for f in other.figures)
