"""Charts of result documents: figure JSON built from real engine results of the shipped
scenarios, checked against the result's own numbers and against the tables beside it."""

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.subplots import make_subplots

from costapp import charts
from costapp.reports import categories
from costapp.tco.core import CATEGORIES
from costapp.tco.curves import cost_curves
from tests.tco.helpers import by_name, run, scenario, scenario_names


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    return {name: run(scenario(name)) for name in scenario_names()}


def axis_titles(figure: dict, axis: str = "xaxis") -> list[str]:
    return [v["title"]["text"] for k, v in figure["layout"].items() if k.startswith(axis)]


def assert_titled_with_units(chart: charts.Chart) -> None:
    layout = chart.figure["layout"]
    assert layout["title"]["text"]
    for title in axis_titles(chart.figure, "xaxis") + axis_titles(chart.figure, "yaxis"):
        assert title
    assert any("[" in t for t in axis_titles(chart.figure, "yaxis")), "y axis without a unit"
    assert chart.tables and all(t.rows for t in chart.tables)


@pytest.mark.parametrize("name", scenario_names())
def test_every_chart_of_a_shipped_result_has_a_title_units_and_a_table(name, results):
    result = results[name]
    built = charts.result_charts(result, cost_curves(result["inputs"], result["gpus"]))
    assert [c.key for c in built][:2] == ["cumulative", "breakdown"]
    assert ("fan" in [c.key for c in built]) == charts.has_simulation(result)
    for chart in built:
        assert_titled_with_units(chart)
        assert chart.config["displaylogo"] is False


def checked(figure: dict) -> dict:
    """``figure`` built again by plotly with every property checked, as JSON data."""
    return json.loads(pio.to_json(go.Figure(figure), validate=True))


@pytest.mark.parametrize("name", scenario_names())
def test_figures_built_unchecked_are_the_json_plotly_builds_checked(name, results):
    # charts builds figures without plotly's per-property checks (for speed); checking each
    # figure changes nothing, the whole plotly_white template included
    result = results[name]
    template = checked({"layout": {"template": "plotly_white"}})["layout"]["template"]
    for chart in charts.result_charts(result, cost_curves(result["inputs"], result["gpus"])):
        assert checked(chart.figure) == chart.figure, chart.key
        assert chart.figure["layout"]["template"] == template, chart.key


def test_cumulative_lines_are_the_results_and_break_even_markers_sit_on_the_baseline(results):
    result = results["h100-fleet-buy-vs-rent"]
    chart = charts.cumulative_cost_chart(result)
    lines = [t for t in chart.figure["data"] if t["mode"] == "lines"]
    assert [t["name"] for t in lines] == [o["name"] for o in result["options"]]
    for trace, option in zip(lines, result["options"], strict=True):
        assert trace["y"] == option["cumulative_usd"]
        assert trace["x"] == list(range(37))
    markers = [t for t in chart.figure["data"] if t["mode"] == "markers"]
    paying_back = [
        o
        for o in result["options"]
        if o["name"] != result["baseline"] and o["break_even_month"] not in (None, 0)
    ]
    assert len(markers) == len(paying_back) > 0
    baseline = by_name(result)[result["baseline"]]["cumulative_usd"]
    for marker, option in zip(markers, paying_back, strict=True):
        month = option["break_even_month"]
        assert marker["x"] == [month]
        k = int(month)
        expected = baseline[k] + (month - k) * (baseline[k + 1] - baseline[k])
        assert marker["y"][0] == pytest.approx(expected)
        # the option's own line meets the baseline there
        own = option["cumulative_usd"]
        assert own[k] + (month - k) * (own[k + 1] - own[k]) == pytest.approx(expected, rel=1e-9)
    table, marks = chart.tables
    assert table.rows[36][1:] == [o["cumulative_usd"][36] for o in result["options"]]
    assert [row[1] for row in marks.rows] == [o["break_even_month"] for o in paying_back]


def test_breakdown_stacks_each_used_category_and_sums_to_the_total(results):
    result = results["llm-train-and-serve"]
    chart = charts.breakdown_chart(result)
    assert chart.figure["layout"]["barmode"] == "relative"
    used = [c for c in CATEGORIES if any(o["breakdown_usd"][c] for o in result["options"])]
    traces = chart.figure["data"]
    assert [t["name"] for t in traces] == [categories.CATEGORY_LABELS[c] for c in used]
    for i, option in enumerate(result["options"]):
        stacked = sum(t["y"][i] for t in traces)
        assert stacked == pytest.approx(option["total_usd"], rel=1e-12)
    (table,) = chart.tables
    assert table.rows[-1] == ["Total", *(o["total_usd"] for o in result["options"])]
    assert [r[0] for r in table.rows[:-1]] == [t["name"] for t in traces]


def test_the_fan_is_the_p10_p90_band_with_the_median_of_every_option(results):
    result = results["uncertain-h100-fleet"]
    assert charts.has_simulation(result)
    chart = charts.fan_chart(result)
    data = chart.figure["data"]
    assert len(data) == 3 * len(result["options"])
    for i, option in enumerate(result["options"]):
        low, high, mid = data[3 * i : 3 * i + 3]
        assert low["y"] == option["cumulative_p10_usd"]
        assert high["y"] == option["cumulative_p90_usd"] and high["fill"] == "tonexty"
        assert mid["y"] == option["cumulative_p50_usd"]
        assert all(a <= b <= c for a, b, c in zip(low["y"], mid["y"], high["y"], strict=True))
    totals = chart.tables[1]
    assert [r[3] for r in totals.rows] == [o["p90_usd"] for o in result["options"]]
    assert "20,000 simulated paths" in chart.note


def test_no_fan_without_a_simulation(results):
    assert charts.fan_chart(results["h100-fleet-buy-vs-rent"]) is None


def test_cost_per_busy_gpu_hour_bars_are_total_over_busy_hours(results):
    result = results["cross-gpu-70b"]
    chart = charts.usd_per_busy_gpu_hour_chart(result)
    (bars,) = chart.figure["data"]
    for value, option in zip(bars["y"], result["options"], strict=True):
        assert value == pytest.approx(option["total_usd"] / option["busy_gpu_hours"])
    assert [r[2] for r in chart.tables[0].rows] == bars["y"]


def test_cost_against_utilization_marks_each_break_even_utilization(results):
    result = results["h100-fleet-buy-vs-rent"]
    curves = cost_curves(result["inputs"], result["gpus"])
    chart = charts.utilization_chart(result, curves)
    kinds = {o["name"]: (o["type"], o.get("billing")) for o in result["inputs"]["options"]}
    with_capacity = [
        name
        for name, (kind, billing) in kinds.items()
        if name != result["baseline"] and (kind != "cloud" or billing == "committed")
    ]
    assert len(chart.figure["layout"]["annotations"]) == len(with_capacity) == 3
    marks = [t for t in chart.figure["data"] if "break-even" in t["name"]]
    expected = {
        o["name"]: o["break_even_utilization"]
        for o in result["options"]
        if o["break_even_utilization"] is not None
    }
    assert {m["name"].removesuffix(": break-even"): m["x"][0] / 100 for m in marks} == (
        pytest.approx(expected, rel=1e-12)
    )
    assert expected["Dedicated 8-GPU servers"] == pytest.approx(0.3204, abs=1e-4)
    first = chart.tables[0]
    assert [row[1] for row in first.rows] == [100 * expected[row[0]] for row in first.rows]
    assert "[%]" in axis_titles(chart.figure)[0]


def test_utilization_panels_are_laid_out_as_make_subplots_lays_them_out(results):
    result = results["h100-fleet-buy-vs-rent"]
    chart = charts.utilization_chart(result, cost_curves(result["inputs"], result["gpus"]))
    layout = chart.figure["layout"]
    titles = [a["text"] for a in layout["annotations"]]
    count = len(titles)
    reference = checked(
        make_subplots(
            rows=count, cols=1, subplot_titles=titles, vertical_spacing=min(0.12, 0.5 / count)
        )
    )["layout"]
    assert reference["annotations"] == layout["annotations"]
    axes = [key for key in reference if key.startswith(("xaxis", "yaxis"))]
    assert len(axes) == 2 * count == 6
    for key in axes:
        assert {k: v for k, v in layout[key].items() if k != "title"} == reference[key]
    # each panel's traces are drawn on that panel's axes, titled with the option's name
    for panel, title in enumerate(titles, start=1):
        suffix = "" if panel == 1 else str(panel)
        option = title.removesuffix(f" against {result['baseline']}")
        assert layout[f"xaxis{suffix}"]["title"]["text"] == "Average utilization [%]"
        own = next(t for t in chart.figure["data"] if t["name"] == option)
        assert (own["xaxis"], own["yaxis"]) == (f"x{suffix}", f"y{suffix}")


def test_no_utilization_chart_when_only_hourly_options_are_compared():
    doc = scenario("h100-fleet-buy-vs-rent")
    doc["options"] = [
        o for o in doc["options"] if o["type"] == "cloud" and o.get("billing") != "committed"
    ]
    result = run(doc)
    assert charts.utilization_chart(result, cost_curves(result["inputs"], result["gpus"])) is None
