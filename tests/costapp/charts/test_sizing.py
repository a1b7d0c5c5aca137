"""The sizing charts and sentences of a result's sweeps, from real engine results: the objective
against the size with the scenario's own size and the best marked, the candidates that do not
qualify drawn apart, the P10–P90 band equal to the percentiles of plain runs' per-path NPVs, the
table the same numbers as the figure, and a sentence per sweep built from the numbers."""

from typing import Any

import numpy as np
import pytest

from costapp import charts
from costapp.reports import sizing_summary
from costapp.tco import montecarlo, sizing
from tests.tco.helpers import plan_of, run, scenario

SIMULATION = {
    "paths": 2_100,
    "seed": 9,
    "demand_multiplier": {"dist": "triangular", "low": 0.6, "mode": 1.0, "high": 1.5},
    "cloud_price_change_per_year": {"dist": "normal", "mean": -0.12, "sd": 0.08},
}


def fleet(sweeps: list[dict[str, Any]] | None = None, simulation: bool = False) -> dict:
    document = scenario("size-the-fleet")
    if sweeps is not None:
        document["sizing"] = sweeps
    if simulation:
        document["simulation"] = dict(SIMULATION)
    return document


def traces(chart: charts.Chart) -> dict[str, dict]:
    return {t["name"]: t for t in chart.figure["data"]}


def by_prefix(chart: charts.Chart, prefix: str) -> dict:
    found = [t for t in chart.figure["data"] if t["name"].startswith(prefix)]
    assert len(found) == 1, [t["name"] for t in chart.figure["data"]]
    return found[0]


@pytest.fixture(scope="module")
def plain() -> dict:
    return run(fleet())


@pytest.fixture(scope="module")
def simulated() -> tuple[dict, list[dict]]:
    """A small simulated sweep and its bands, computed as the run pipeline computes them."""
    document = fleet(
        [
            {"option": "Commit some, rest on-demand", "min": 32, "max": 192, "step": 32},
            {
                "option": "Buy some, burst the rest",
                "min": 0,
                "max": 16,
                "step": 4,
                "max_shortfall_probability": 0.0,
            },
        ],
        simulation=True,
    )
    result = run(document)
    plan = plan_of(document)
    blocks = sizing.sweep_blocks_compute(plan, range(montecarlo.block_count(2_100)))
    bands = sizing.sweeps_bands(plan, [blocks])
    assert bands is not None
    return result, bands


def table_columns(chart):
    return chart.tables[0].columns


def test_every_sweep_has_a_titled_chart_with_units_and_a_table(plain):
    built = charts.sizing_charts(plain)
    assert [c.key for c in built] == ["sizing-1", "sizing-2", "sizing-3"]
    for chart, sweep in zip(built, plain["sizing"], strict=True):
        layout = chart.figure["layout"]
        assert sweep["option"] in layout["title"]["text"]
        x_title = layout["xaxis"]["title"]["text"]
        assert x_title == (
            "Size [committed GPUs]" if sweep["field"] == "committed_gpus" else "Size [servers]"
        )
        assert x_title == table_columns(chart)[0]
        assert layout["yaxis"]["title"]["text"] == "NPV [USD]"
        (table,) = chart.tables
        assert [row[0] for row in table.rows] == sweep["candidates"]
        assert [row[1] for row in table.rows] == sweep["npv_usd"]
        assert [row[3] for row in table.rows] == sweep["total_usd"]
    assert charts.sizing_charts({"options": [], "inputs": {}}) == []


def test_the_objective_line_own_size_and_best_are_the_results_numbers(plain):
    chart = charts.sizing_charts(plain)[0]
    sweep = plain["sizing"][0]
    line = traces(chart)["NPV"]
    assert line["x"] == sweep["candidates"] and line["y"] == sweep["npv_usd"]
    best = by_prefix(chart, "Best: ")
    assert best["name"] == "Best: 96 committed GPUs"
    assert best["x"] == [96] and best["y"] == [sweep["best_objective_usd"]]
    own = by_prefix(chart, "The scenario's own size")
    assert own["name"] == "The scenario's own size: 64"
    assert own["x"] == [64] and own["y"] == [sweep["npv_usd"][sweep["candidates"].index(64)]]
    assert chart.figure["layout"]["shapes"][0]["x0"] == 64  # the own size's vertical line
    marks = {row[0]: row[-1] for row in chart.tables[0].rows}
    assert marks[96] == "best" and marks[64] == "scenario's own" and marks[0] == ""
    assert "predates" not in chart.note  # no simulation, so no band is missing
    assert "lower is better" in chart.note


def own_entries(chart: charts.Chart) -> list[dict]:
    return [t for t in chart.figure["data"] if t["name"].startswith("The scenario's own size")]


def test_an_own_size_off_the_step_is_a_labelled_line_without_a_point_or_legend_entry(plain):
    chart = charts.sizing_charts(plain)[2]  # servers 0 … 30 by 3; the scenario has 8
    assert own_entries(chart) == []  # nothing drawn for it, so nothing in the legend
    assert chart.figure["layout"]["shapes"][0]["x0"] == 8
    (label,) = chart.figure["layout"]["annotations"]
    assert label["text"] == "own size: 8 (not swept)"
    assert (
        "The scenario's own size, 8 servers, is not among the sizes swept: it lies between 6 "
        "and 9, which the step skips, so it has no point on the chart." in chart.note
    )
    assert "8 servers, is not among the sizes swept: it lies between 6 and 9" in (
        sizing_summary.sentence(plain, 2)
    )


def test_an_own_size_outside_the_sweep_is_not_drawn_and_the_note_says_where_it_lies():
    result = run(
        fleet(
            [
                {"option": "Commit some, rest on-demand", "min": 120, "max": 200, "step": 8},
                {"option": "Buy some, burst the rest", "min": 0, "max": 4},
            ]
        )
    )
    above, below = charts.sizing_charts(result)
    for chart in (above, below):
        assert own_entries(chart) == []
        assert "shapes" not in chart.figure["layout"]  # no line stretching the axis away
        assert [row[-1] for row in chart.tables[0].rows if row[-1]] in ([], ["best"])
    assert (
        "The scenario's own size, 64 committed GPUs, is not among the sizes swept: it lies below "
        "the range swept, 120 to 200 committed GPUs, so it has no point on the chart." in above.note
    )
    assert "8 servers, is not among the sizes swept: it lies above the range swept, 0 to 4 " in (
        below.note
    )
    assert "it lies above the range swept, 0 to 4 servers, so what the best size saves" in (
        sizing_summary.sentence(result, 1)
    )
    # the own size swept: the diamond and its legend entry, and no such words
    swept = charts.sizing_chart(run(fleet()), 0)
    assert [t["name"] for t in own_entries(swept)] == ["The scenario's own size: 64"]
    assert "not among the sizes swept" not in swept.note


def test_sizes_that_leave_work_undone_are_hollow_grey_with_a_legend_entry():
    document = fleet([{"option": "Buy some, burst the rest", "min": 6, "max": 20, "step": 2}])
    del document["options"][2]["burst_usd_per_gpu_hour"]
    result = run(document)
    sweep = result["sizing"][0]
    assert not all(sweep["feasible"]) and any(sweep["feasible"])
    chart = charts.sizing_chart(result, 0)
    grey = traces(chart)["Leaves work undone: does not qualify"]
    assert grey["marker"]["symbol"] == "circle-open"
    assert grey["marker"]["line"]["color"] == charts.SIZING_GREY
    undone = [s for s, ok in zip(sweep["candidates"], sweep["feasible"], strict=True) if not ok]
    assert grey["x"] == undone
    qualifying = traces(chart)["Size that qualifies"]
    assert qualifying["x"] == [s for s in sweep["candidates"] if s not in undone]
    assert sweep["best"] == qualifying["x"][0]  # without burst the fewest servers that do it
    rows = {row[0]: row for row in chart.tables[0].rows}
    assert rows[undone[0]][-2] == "no: leaves work undone on the scenario's own values"
    text = sizing_summary.sentence(result, 0)
    assert text.startswith(f"Buy {sweep['best']} servers: the fewest that do the work")


def test_the_band_is_p10_p90_of_plain_runs_per_path_npvs(simulated):
    result, bands = simulated
    for index, sweep in enumerate(result["sizing"]):
        chart = charts.sizing_chart(result, index, bands[index])
        low = traces(chart)["NPV P10 over 2,100 paths"]
        high = traces(chart)["NPV P10–P90 over 2,100 paths"]
        assert high["fill"] == "tonexty" and low["x"] == high["x"] == sweep["candidates"]
        assert high["y"] == sweep["p90_npv_usd"]  # the result's own P90, bit for bit
        option = [o["name"] for o in result["inputs"]["options"]].index(sweep["option"])
        for i, size in enumerate(sweep["candidates"]):
            document = fleet(simulation=True)
            del document["sizing"]
            document["options"][option][sweep["field"]] = size
            plan = plan_of(document)
            npv = montecarlo.blocks_compute(
                plan, plan.inputs["simulation"], range(montecarlo.block_count(2_100))
            ).npv_usd[option]
            assert low["y"][i] == np.percentile(npv, 10)
            assert high["y"][i] == np.percentile(npv, 90)
        columns = chart.tables[0].columns
        p10 = columns.index("NPV P10 over the paths [USD]")
        assert [row[p10] for row in chart.tables[0].rows] == low["y"]
        assert "Paths leaving work undone [%]" in columns


def test_without_a_band_a_simulated_sweep_says_so(simulated):
    result, bands = simulated
    chart = charts.sizing_chart(result, 0, None)
    assert not any("P10" in t["name"] for t in chart.figure["data"])
    assert "run it again" in chart.note
    # a band of another sweep is never drawn on this one
    other = charts.sizing_chart(result, 0, bands[1])
    assert not any("P10" in t["name"] for t in other.figure["data"])


def test_shortfall_beyond_the_cap_disqualifies_a_feasible_size():
    document = fleet(
        [
            {
                "option": "Buy some, burst the rest",
                "min": 12,
                "max": 30,
                "step": 2,
                "objective": "npv",
                "max_shortfall_probability": 0.05,
            }
        ],
        simulation=True,
    )
    del document["options"][2]["burst_usd_per_gpu_hour"]
    result = run(document)
    sweep = result["sizing"][0]
    over = [
        size
        for size, ok, p in zip(
            sweep["candidates"], sweep["feasible"], sweep["shortfall_probability"], strict=True
        )
        if ok and p > 0.05
    ]
    assert over, sweep
    chart = charts.sizing_chart(result, 0)
    assert set(over) <= set(traces(chart)["Leaves work undone: does not qualify"]["x"])
    assert sweep["best"] not in over
    rows = {row[0]: row for row in chart.tables[0].rows}
    p = sweep["shortfall_probability"][sweep["candidates"].index(over[0])]
    assert rows[over[0]][-2] == (
        f"no: leaves work undone on {100 * p:.1f} % of paths (at most 5 % allowed)"
    )


def sentence_of(document: dict, index: int = 0) -> tuple[str, dict]:
    result = run(document)
    return sizing_summary.sentence(result, index), result["sizing"][index]


def test_the_sentences_say_the_best_why_and_the_saving_against_the_own_size(plain):
    first = sizing_summary.sentence(plain, 0)
    sweep = plain["sizing"][0]
    own = sweep["npv_usd"][sweep["candidates"].index(64)]
    saving = own - sweep["best_objective_usd"]
    assert first == (
        "Commit to 96 GPUs: beyond that, a committed GPU is idle often enough that paying "
        f"on-demand for the peaks is cheaper (NPV: ${sweep['best_objective_usd']:,.0f}). Against "
        f"the scenario's own 64 committed GPUs (NPV ${own:,.0f}), that saves ${saving:,.0f} "
        f"({100 * saving / own:.1f} %) in NPV."
    )
    second = sizing_summary.sentence(plain, 1)
    assert second.startswith("Buy 13 servers: beyond that, a server is idle often enough that ")
    assert "bursting the peaks at $2.99 per GPU-hour is cheaper" in second
    assert "Against the scenario's own 8 servers" in second
    third = sizing_summary.sentence(plain, 2)
    assert "8 servers, is not among the sizes swept" in third


def test_a_best_at_an_edge_of_the_range_says_to_widen_it():
    text, sweep = sentence_of(
        fleet([{"option": "Commit some, rest on-demand", "min": 0, "max": 48, "step": 8}])
    )
    assert sweep["best"] == 48
    assert "is the largest, 48 committed GPUs" in text
    assert "the best size may lie above the range swept: widen max" in text
    text, sweep = sentence_of(
        fleet([{"option": "Commit some, rest on-demand", "min": 120, "max": 200, "step": 8}])
    )
    assert sweep["best"] == 120
    assert "may lie below the range swept: lower min" in text
    assert "The scenario's own size, 64 committed GPUs, is not among the sizes swept" in text


def test_no_best_says_why():
    document = fleet([{"option": "Buy some, burst the rest", "min": 1, "max": 4}])
    del document["options"][2]["burst_usd_per_gpu_hour"]
    text, sweep = sentence_of(document)
    assert sweep["best"] is None
    assert text.startswith("No size from 1 to 4 servers qualifies: every one leaves work undone")
    document = fleet(
        [{"option": "Buy some, burst the rest", "min": 14, "max": 20, "objective": "npv"}],
        simulation=True,
    )
    del document["options"][2]["burst_usd_per_gpu_hour"]
    text, sweep = sentence_of(document)
    assert sweep["best"] is None and any(sweep["feasible"]), sweep
    assert "still leaves work undone on more than 0 % of the simulated paths" in text
    assert f"the largest, 20, on {100 * sweep['shortfall_probability'][-1]:.1f} %" in text


def test_the_own_size_left_to_its_default_is_the_size_priced():
    document = fleet([{"option": "Commit some, rest on-demand", "min": 0, "max": 240, "step": 8}])
    del document["options"][1]["committed_gpus"]
    result = run(document)
    option = next(o for o in result["options"] if o["name"] == "Commit some, rest on-demand")
    assert sizing_summary.own_size(result, 0) == option["provisioned_gpus"] > 0
    servers = fleet([{"option": "Buy some, burst the rest", "min": 0, "max": 30}])
    del servers["options"][2]["servers"]
    result = run(servers)
    option = next(o for o in result["options"] if o["name"] == "Buy some, burst the rest")
    assert sizing_summary.own_size(result, 0) * 8 == option["provisioned_gpus"]


def size_axis_ticks(chart: charts.Chart, sizes: list[int]) -> list[float]:
    """The ticks the size axis shows over its range (from 0 when it starts there), from its
    layout as plotly places linear ticks: ``tick0 + k × dtick``."""
    axis = chart.figure["layout"]["xaxis"]
    assert axis["tickmode"] == "linear" and axis["tickformat"] == ",d"
    low = 0 if axis.get("rangemode") == "tozero" else min(sizes)
    tick0, dtick = axis["tick0"], axis["dtick"]
    first = tick0 + np.ceil((low - tick0) / dtick) * dtick
    return list(np.arange(first, max(sizes) + 1e-9, dtick))


@pytest.mark.parametrize(
    ("sweep", "dtick"),
    [
        ({"option": "Buy some, burst the rest", "min": 0, "max": 2}, 1),
        ({"option": "Buy some, burst the rest", "min": 5, "max": 7}, 1),
        ({"option": "Buy some, burst the rest", "min": 1, "max": 9, "step": 2}, 2),
        ({"option": "Buy some, burst the rest", "min": 3, "max": 3}, 1),
        ({"option": "Commit some, rest on-demand", "min": 0, "max": 240, "step": 8}, 40),
        ({"option": "Commit some, rest on-demand", "min": 1, "max": 700}, 100),
    ],
)
def test_the_size_axis_shows_whole_sizes_only_on_the_sweeps_step(sweep, dtick):
    """Sizes are whole numbers: a narrow sweep's axis has no 0.5 or 1.5 tick, the ticks fall on
    the sweep's sizes, every step or a round multiple of it, about ten at most."""
    result = run(fleet([sweep]))
    sizes = result["sizing"][0]["candidates"]
    chart = charts.sizing_chart(result, 0)
    axis = chart.figure["layout"]["xaxis"]
    assert axis["dtick"] == dtick
    assert isinstance(axis["tick0"], int) and isinstance(axis["dtick"], int)
    ticks = size_axis_ticks(chart, sizes)
    assert 1 <= len(ticks) <= charts.SIZE_TICKS + 1
    assert all(float(t).is_integer() for t in ticks)
    step = sweep.get("step", 1)
    assert all((t - sweep["min"]) % step == 0 for t in ticks)  # on the sweep's step
    assert set(ticks) & set(sizes)
    if step == 1:  # round numbers
        assert all(t % dtick == 0 for t in ticks)
