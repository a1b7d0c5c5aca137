"""Plotly figures of a result document (docs: scenario-format.md, "The result document").

Pure functions: a result document (and, for cost against utilization, the curves of
``costapp.tco.curves``; for price history, a list of dated prices) in, a :class:`Chart` out. A
chart carries the Plotly figure as JSON-ready data (drawn by plotly.js served from ``static/``)
and the tables of the same numbers, built from the same lists so the two never disagree. Every
figure has a title and axis titles with units.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from costapp import sizing_summary as summary
from costapp.tco import CATEGORIES

COLORS = (
    "#2457c5",
    "#d9730d",
    "#2e9e5b",
    "#b8336a",
    "#7a5cc7",
    "#8c6d1f",
    "#1a9bb0",
    "#c23b22",
    "#5b6475",
    "#4f8a10",
)
BAND_ALPHA = 0.18
CHARTS_VERSION = "4"
"""The version of the figures these functions draw: part of the key a run's cached charts are
kept under (``costapp.selectors.run_charts_cache_key``). Bump it with any change to what a chart
shows, so a deploy never serves figures drawn by the code before it."""
TEMPLATE = "plotly_white"
"""The plotly template of every figure."""
PLOTLY_CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True, "showLink": False}
"""plotly.js options for every chart: no Plotly logo link, no "edit in Chart Studio" link."""

CATEGORY_LABELS = {
    "compute": "Compute",
    "egress": "Egress",
    "support": "Support",
    "setup": "Setup",
    "upfront": "Upfront",
    "capex": "Capex",
    "financing": "Financing",
    "power": "Power",
    "colo": "Colocation",
    "staff": "Staff",
    "residual": "Residual (resale)",
    "bridge": "Bridge",
    "burst": "Burst",
}


@dataclass(frozen=True)
class Table:
    """Rows of numbers with their column headers (units in the headers)."""

    caption: str
    columns: list[str]
    rows: list[list[Any]]


@dataclass(frozen=True)
class Chart:
    """A Plotly figure (JSON-ready ``{"data", "layout"}``) and the tables of its numbers."""

    key: str
    title: str
    figure: dict[str, Any]
    tables: list[Table] = field(default_factory=list)
    note: str = ""

    @property
    def config(self) -> dict[str, Any]:
        """plotly.js options (the logo link off)."""
        return PLOTLY_CONFIG


def chart_tables(chart: Chart) -> list[Table]:
    """The tables with the same numbers as ``chart``'s figure."""
    return chart.tables


def _color(index: int) -> str:
    return COLORS[index % len(COLORS)]


def _rgba(hex_color: str, alpha: float) -> str:
    red, green, blue = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def _figure_json(figure: go.Figure) -> dict[str, Any]:
    """The figure as plain JSON data (lists, numbers, strings)."""
    data: dict[str, Any] = json.loads(pio.to_json(figure, validate=False))
    return data


@functools.cache
def _template_json(name: str) -> dict[str, Any]:
    """Plotly's template ``name`` as a validated figure's JSON carries it (its data and layout
    defaults), worked out once per process: building it is most of a validated figure's cost."""
    template: dict[str, Any] = _figure_json(go.Figure(layout={"template": name}))["layout"][
        "template"
    ]
    return template


def _figure(*, layout: Mapping[str, Any]) -> go.Figure:
    """An empty figure with ``layout``, its ``template`` named and resolved by ``_template_json``.

    Built without plotly's check of each property (``_validate=False``, as its traces are):
    checking copies and coerces every value, which took most of a run page's first view. The
    figure's JSON is the same as a checked figure's; tests/costapp/test_charts.py builds every
    chart both ways and compares them."""
    resolved = {**layout, "template": _template_json(layout.get("template", TEMPLATE))}
    return go.Figure(layout=resolved, _validate=False)


def _scatter(**props: Any) -> go.Scatter:
    """A scatter trace, built unchecked like its figure (``_figure``)."""
    return go.Scatter(props, _validate=False)


def _bar(**props: Any) -> go.Bar:
    """A bar trace, built unchecked like its figure (``_figure``)."""
    return go.Bar(props, _validate=False)


def _axis_suffix(panel: int) -> str:
    """Plotly's numbering of the axes of panel ``panel`` (1, 2 …): "", "2" …"""
    return "" if panel == 1 else str(panel)


def _axis_name(axis: str, panel: int) -> str:
    """The layout key of an axis of panel ``panel``: ``xaxis``, ``xaxis2`` …"""
    return f"{axis}{_axis_suffix(panel)}"


@functools.cache
def _stacked_panels_json(count: int) -> str:
    """The layout (as JSON) of ``count`` panels stacked in one column, as ``make_subplots`` lays
    them out: axes with their domains and anchors, one title annotation per panel (its text to
    fill in), no template. Worked out once per count: ``make_subplots`` checks every property it
    sets, which took a third of a run page's first view."""
    figure = make_subplots(
        rows=count,
        cols=1,
        subplot_titles=["-"] * count,
        vertical_spacing=min(0.12, 0.5 / count),
    )
    layout = _figure_json(figure)["layout"]
    layout.pop("template", None)
    return json.dumps(layout)


def _stacked_panels_layout(count: int) -> dict[str, Any]:
    """A fresh copy of ``_stacked_panels_json(count)``, to fill in."""
    layout: dict[str, Any] = json.loads(_stacked_panels_json(count))
    return layout


def _option_bar(
    options: Sequence[Mapping[str, Any]], values: Sequence[float | None], **props: Any
) -> go.Bar:
    """A bar trace with one bar per option (x: the options' names, y: ``values``, in order)."""
    return _bar(x=[o["name"] for o in options], y=list(values), **props)


Cell = str | Callable[[Mapping[str, Any]], Any]
"""A per-option table cell: a field of the option, or how to work it out from the option."""


def _option_table(
    caption: str, options: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, Cell]]
) -> Table:
    """A table with one row per option: its name first ("Option"), then each column's cell
    (headers carry the units)."""
    return Table(
        caption,
        ["Option", *(header for header, _cell in columns)],
        [
            [
                option["name"],
                *(cell(option) if callable(cell) else option[cell] for _header, cell in columns),
            ]
            for option in options
        ],
    )


def _break_even_marker(color: str) -> dict[str, Any]:
    """The marker of a break-even point: a diamond of the option's color, outlined."""
    return {
        "color": color,
        "size": 11,
        "symbol": "diamond",
        "line": {"color": "#1d2330", "width": 1},
    }


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "template": TEMPLATE,
        "hovermode": "closest",
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22},
        "margin": {"t": 60, "r": 20, "b": 40, "l": 80},
        **extra,
    }


def _horizon(result: Mapping[str, Any]) -> int:
    return len(result["options"][0]["monthly_usd"]) - 1


def _interpolate(values: Sequence[float], month: float) -> float:
    """A monthly series (index = month) read at a fractional month, linearly."""
    low = int(month)
    if low >= len(values) - 1:
        return float(values[-1])
    fraction = month - low
    return float(values[low] + fraction * (values[low + 1] - values[low]))


def cumulative_cost_chart(result: Mapping[str, Any]) -> Chart:
    """Cumulative cost per option, month 0 … H [USD], with each option's break-even month
    against the baseline marked where its cumulative cost meets the baseline's."""
    options = result["options"]
    horizon = _horizon(result)
    months = list(range(horizon + 1))
    baseline = next(o for o in options if o["name"] == result["baseline"])
    figure = _figure(layout=_layout("Cumulative cost per option", "Month", "Cumulative cost [USD]"))
    markers: list[list[Any]] = []
    for index, option in enumerate(options):
        name = option["name"] + ("" if option["feasible"] else " (infeasible)")
        figure.add_trace(
            _scatter(
                x=months,
                y=option["cumulative_usd"],
                mode="lines",
                name=name,
                line={"color": _color(index), "dash": "solid" if option["feasible"] else "dot"},
                hovertemplate="%{fullData.name}<br>month %{x}: %{y:$,.0f}<extra></extra>",
            )
        )
        month = option["break_even_month"]
        if option["name"] == baseline["name"] or month is None or month <= 0:
            continue
        usd = _interpolate(baseline["cumulative_usd"], month)
        markers.append([option["name"], month, usd])
        figure.add_trace(
            _scatter(
                x=[month],
                y=[usd],
                mode="markers",
                name=f"{option['name']}: break-even, month {month:.1f}",
                marker=_break_even_marker(_color(index)),
                showlegend=False,
                hovertemplate=(
                    f"{option['name']} pays back against {baseline['name']}"
                    "<br>month %{x:.2f}, %{y:$,.0f}<extra></extra>"
                ),
            )
        )
    columns = ["Month", *(f"{o['name']} [USD]" for o in options)]
    rows = [[m, *(o["cumulative_usd"][m] for o in options)] for m in months]
    tables = [Table("Cumulative cost per option", columns, rows)]
    if markers:
        tables.append(
            Table(
                f"Break-even against {baseline['name']}",
                ["Option", "Break-even month", "Cumulative cost there [USD]"],
                markers,
            )
        )
    return Chart("cumulative", "Cumulative cost per option", _figure_json(figure), tables)


def breakdown_chart(result: Mapping[str, Any]) -> Chart:
    """Total cost per option over the horizon, stacked by cost category [USD]; categories no
    option uses are left out (the residual, a resale value, stacks below zero)."""
    options = result["options"]
    names = [o["name"] for o in options]
    used = [c for c in CATEGORIES if any(o["breakdown_usd"][c] != 0.0 for o in options)]
    horizon = _horizon(result)
    figure = _figure(
        layout=_layout(
            "Cost breakdown per option",
            "Option",
            f"Total cost over {horizon} months [USD]",
            barmode="relative",
            showlegend=True,
        )
    )
    for index, category in enumerate(used):
        figure.add_trace(
            _option_bar(
                options,
                [o["breakdown_usd"][category] for o in options],
                name=CATEGORY_LABELS[category],
                marker={"color": _color(index)},
                hovertemplate="%{x}<br>"
                + CATEGORY_LABELS[category]
                + ": %{y:$,.0f}<extra></extra>",
            )
        )
    columns = ["Category", *(f"{n} [USD]" for n in names)]
    rows: list[list[Any]] = [
        [CATEGORY_LABELS[c], *(o["breakdown_usd"][c] for o in options)] for c in used
    ]
    rows.append(["Total", *(o["total_usd"] for o in options)])
    return Chart(
        "breakdown",
        "Cost breakdown per option",
        _figure_json(figure),
        [Table("Cost by category", columns, rows)],
    )


def has_simulation(result: Mapping[str, Any]) -> bool:
    """True when the result carries Monte Carlo fields (``simulation.paths`` > 0)."""
    simulation = result.get("simulation") or {}
    return int(simulation.get("paths") or 0) > 0 and all(
        "cumulative_p50_usd" in o for o in result["options"]
    )


def fan_chart(result: Mapping[str, Any]) -> Chart | None:
    """The P10–P90 band and the P50 line of each option's cumulative cost [USD] over the
    simulated paths; None without a simulation."""
    if not has_simulation(result):
        return None
    options = result["options"]
    horizon = _horizon(result)
    months = list(range(horizon + 1))
    paths = int(result["simulation"]["paths"])
    fan_paths = min(paths, 10_000)
    title = "Cumulative cost, P10–P90 band and median"
    figure = _figure(layout=_layout(title, "Month", "Cumulative cost [USD]"))
    for index, option in enumerate(options):
        color = _color(index)
        # the band's edges, unseen: P10, then P90 filled down to it
        for edge, fill in (
            ("P10", {}),
            ("P90", {"fill": "tonexty", "fillcolor": _rgba(color, BAND_ALPHA)}),
        ):
            figure.add_trace(
                _scatter(
                    x=months,
                    y=option[f"cumulative_{edge.lower()}_usd"],
                    mode="lines",
                    line={"width": 0, "color": color},
                    **fill,
                    name=f"{option['name']} {edge}",
                    legendgroup=option["name"],
                    showlegend=False,
                    hovertemplate="%{fullData.name}, month %{x}: %{y:$,.0f}<extra></extra>",
                )
            )
        figure.add_trace(
            _scatter(
                x=months,
                y=option["cumulative_p50_usd"],
                mode="lines",
                line={"color": color},
                name=f"{option['name']} (P50, band P10–P90)",
                legendgroup=option["name"],
                hovertemplate="%{fullData.name}, month %{x}: %{y:$,.0f}<extra></extra>",
            )
        )
    columns = ["Month"]
    for option in options:
        columns += [f"{option['name']} P{q} [USD]" for q in (10, 50, 90)]
    rows = [
        [
            m,
            *(
                value
                for o in options
                for value in (
                    o["cumulative_p10_usd"][m],
                    o["cumulative_p50_usd"][m],
                    o["cumulative_p90_usd"][m],
                )
            ),
        ]
        for m in months
    ]
    totals = _option_table(
        "Total cost over the paths",
        options,
        [
            ("P10 [USD]", "p10_usd"),
            ("P50 [USD]", "p50_usd"),
            ("P90 [USD]", "p90_usd"),
            ("Probability cheapest [%]", lambda o: 100.0 * o["probability_cheapest"]),
        ],
    )
    note = f"{paths:,} simulated paths; the monthly band is drawn from the first {fan_paths:,}."
    return Chart(
        "fan",
        title,
        _figure_json(figure),
        [Table("Cumulative cost percentiles", columns, rows), totals],
        note,
    )


def usd_per_busy_gpu_hour_chart(result: Mapping[str, Any]) -> Chart:
    """Total cost divided by the GPU-hours of work done [USD per busy GPU-hour], per option;
    an option without work has no bar."""
    options = result["options"]
    values = [o["usd_per_busy_gpu_hour"] for o in options]
    figure = _figure(
        layout=_layout("Cost per busy GPU-hour", "Option", "Cost per busy GPU-hour [USD/GPU-h]")
    )
    figure.add_trace(
        _option_bar(
            options,
            values,
            marker={
                "color": [_color(i) for i in range(len(options))],
                "pattern": {"shape": ["" if o["feasible"] else "/" for o in options]},
            },
            text=[
                "no work"
                if v is None
                else f"${v:,.2f}" + ("" if o["feasible"] else " (infeasible)")
                for v, o in zip(values, options, strict=True)
            ],
            textposition="outside",
            hovertemplate="%{x}: %{y:$,.3f} per busy GPU-hour<extra></extra>",
            showlegend=False,
        )
    )
    table = _option_table(
        "Cost per busy GPU-hour",
        options,
        [
            ("GPU", "gpu"),
            ("USD per busy GPU-hour", "usd_per_busy_gpu_hour"),
            ("Busy GPU-hours [GPU-h]", "busy_gpu_hours"),
            ("Total [USD]", "total_usd"),
            ("Feasible", lambda o: "yes" if o["feasible"] else "no"),
        ],
    )
    return Chart("usd-per-gpu-hour", "Cost per busy GPU-hour", _figure_json(figure), [table])


def utilization_chart(result: Mapping[str, Any], curves: Mapping[str, Any]) -> Chart | None:
    """Cost against utilization: one panel per option with fixed capacity (committed, dedicated,
    on-prem) other than the baseline. Along its average utilization [%], the option's total cost
    and the baseline's for the same work [USD]; the break-even utilization is marked. ``curves``
    is ``costapp.tco.curves.cost_curves`` of the result. None when no option has capacity."""
    by_name = {o["name"]: o for o in curves["options"]}
    baseline_name = curves["baseline"]
    baseline_curve = by_name[baseline_name]
    panels = [
        o
        for o in result["options"]
        if o["name"] != baseline_name and by_name[o["name"]]["has_capacity"]
    ]
    if not panels:
        return None
    horizon = _horizon(result)
    layout = _stacked_panels_layout(len(panels))
    for panel, option in enumerate(panels, start=1):
        layout["annotations"][panel - 1]["text"] = f"{option['name']} against {baseline_name}"
        layout[_axis_name("xaxis", panel)]["title"] = {
            "text": f"Average utilization of {option['name']} [%]"
        }
        layout[_axis_name("yaxis", panel)]["title"] = {"text": f"Total over {horizon} months [USD]"}
    layout.update(
        title={"text": "Cost against utilization"},
        template=TEMPLATE,
        height=max(380, 320 * len(panels)),
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0},
        margin={"t": 80, "r": 20, "b": 100, "l": 80},
    )
    figure = _figure(layout=layout)
    rows: list[list[Any]] = []
    marks: list[list[Any]] = []
    scales = curves["scale"]
    for panel, option in enumerate(panels, start=1):
        curve = by_name[option["name"]]
        index = result["options"].index(option)
        axes = {"xaxis": f"x{_axis_suffix(panel)}", "yaxis": f"y{_axis_suffix(panel)}"}
        x = [100.0 * u for u in curve["average_utilization"]]
        own = [
            t if ok else None for t, ok in zip(curve["total_usd"], curve["feasible"], strict=True)
        ]
        figure.add_trace(
            _scatter(
                x=x,
                y=own,
                mode="lines",
                name=option["name"],
                line={"color": _color(index)},
                hovertemplate="utilization %{x:.1f}%: %{y:$,.0f}<extra>%{fullData.name}</extra>",
                **axes,
            )
        )
        figure.add_trace(
            _scatter(
                x=x,
                y=baseline_curve["total_usd"],
                mode="lines",
                name=f"{baseline_name} (same work)",
                line={"color": "#5b6475", "dash": "dash"},
                showlegend=panel == 1,
                legendgroup="baseline",
                hovertemplate="utilization %{x:.1f}%: %{y:$,.0f}<extra>%{fullData.name}</extra>",
                **axes,
            )
        )
        here = option["average_utilization"] * 100.0
        figure.add_trace(
            _scatter(
                x=[here],
                y=[option["total_usd"]],
                mode="markers",
                name="the scenario's own demand",
                marker={"color": _color(index), "size": 9, "symbol": "circle-open"},
                showlegend=False,
                hovertemplate="this scenario: %{x:.1f}%, %{y:$,.0f}<extra></extra>",
                **axes,
            )
        )
        break_even = curve["break_even"]
        if break_even is not None:
            marks.append(
                [
                    option["name"],
                    100.0 * break_even["average_utilization"],
                    break_even["scale"],
                    break_even["total_usd"],
                ]
            )
            figure.add_trace(
                _scatter(
                    x=[100.0 * break_even["average_utilization"]],
                    y=[break_even["total_usd"]],
                    mode="markers+text",
                    text=[f"break-even {100.0 * break_even['average_utilization']:.1f}%"],
                    textposition="top left",
                    name=f"{option['name']}: break-even",
                    marker=_break_even_marker(_color(index)),
                    showlegend=False,
                    hovertemplate="break-even at %{x:.1f}% utilization, %{y:$,.0f}<extra></extra>",
                    **axes,
                )
            )
        for s, u, t, b, ok in zip(
            scales,
            curve["average_utilization"],
            curve["total_usd"],
            baseline_curve["total_usd"],
            curve["feasible"],
            strict=True,
        ):
            rows.append([option["name"], s, 100.0 * u, t, b, "yes" if ok else "no"])
    tables = [
        Table(
            "Cost against utilization",
            [
                "Option",
                "Demand scale [× the scenario's]",
                "Average utilization [%]",
                "Option total [USD]",
                f"{baseline_name} total [USD]",
                "Does all the work",
            ],
            rows,
        )
    ]
    if marks:
        tables.insert(
            0,
            Table(
                f"Break-even utilization against {baseline_name}",
                ["Option", "Break-even utilization [%]", "Demand scale [×]", "Total there [USD]"],
                marks,
            ),
        )
    note = (
        "Every workload's work scaled by one factor (the servers, commitments and fleet stay as "
        "sized); options billed by the hour have no utilization of their own and get no panel."
    )
    return Chart("utilization", "Cost against utilization", _figure_json(figure), tables, note)


@dataclass(frozen=True)
class DatedPrice:
    """One price of an offer over the span it was observed (a price-history row)."""

    series: str  # e.g. "us-east-1 on-demand"
    first_seen: datetime
    last_seen: datetime
    usd_per_gpu_hour: Decimal
    usd_per_hour: Decimal


def price_history_chart(title: str, prices: Sequence[DatedPrice]) -> Chart:
    """An offer's price per GPU-hour over time [USD/GPU-h], one step line per series (region and
    billing): each price holds from its ``first_seen`` until the next one, the last until its
    ``last_seen``."""
    series: dict[str, list[DatedPrice]] = {}
    for price in sorted(prices, key=lambda p: (p.series, p.first_seen)):
        series.setdefault(price.series, []).append(price)
    figure = _figure(
        layout=_layout(title, "Date (UTC)", "Price [USD per GPU-hour]", hovermode="x unified")
    )
    figure.update_xaxes(type="date", tickformat="%Y-%m-%d", hoverformat="%Y-%m-%d %H:%M")
    for index, (name, rows) in enumerate(series.items()):
        x = [p.first_seen.isoformat() for p in rows] + [rows[-1].last_seen.isoformat()]
        y = [float(p.usd_per_gpu_hour) for p in rows] + [float(rows[-1].usd_per_gpu_hour)]
        figure.add_trace(
            _scatter(
                x=x,
                y=y,
                mode="lines+markers",
                line={"shape": "hv", "color": _color(index)},
                name=name,
                hovertemplate="%{y:$,.4f} per GPU-hour<extra>%{fullData.name}</extra>",
            )
        )
    rows_out = [
        [p.series, p.first_seen, p.last_seen, p.usd_per_gpu_hour, p.usd_per_hour]
        for rows in series.values()
        for p in rows
    ]
    table = Table(
        "Price history",
        [
            "Region and billing",
            "First seen (UTC)",
            "Last seen (UTC)",
            "USD per GPU-hour",
            "USD per instance-hour",
        ],
        rows_out,
    )
    return Chart("price-history", title, _figure_json(figure), [table])


def result_charts(
    result: Mapping[str, Any], curves: Mapping[str, Any] | None = None
) -> list[Chart]:
    """The charts of a result page, in reading order: cumulative cost, breakdown, the fan (with
    a simulation), cost per busy GPU-hour, and cost against utilization (with ``curves``).

    A result with ``sizing`` (version 1.1) will add one chart per sweep (objective against size)
    here, built the same way: a figure and the table of its numbers."""
    charts = [cumulative_cost_chart(result), breakdown_chart(result)]
    fan = fan_chart(result)
    if fan is not None:
        charts.append(fan)
    charts.append(usd_per_busy_gpu_hour_chart(result))
    if curves is not None:
        utilization = utilization_chart(result, curves)
        if utilization is not None:
            charts.append(utilization)
    return charts


def comparison_cumulative_chart(
    a: Mapping[str, Any], b: Mapping[str, Any], *, label_a: str = "A", label_b: str = "B"
) -> Chart:
    """The cumulative cost of every option of two results on one figure [USD]: one colour per
    option name (matched across the two), run A solid, run B dashed; an option only one run has
    gets only that run's line. The table has the same numbers, month by month (a dash past a
    run's horizon)."""
    options_a = {o["name"]: o for o in a["options"]}
    options_b = {o["name"]: o for o in b["options"]}
    names = [*options_a, *(n for n in options_b if n not in options_a)]
    title = f"Cumulative cost per option, {label_a} (solid) and {label_b} (dashed)"
    figure = go.Figure(layout=_layout(title, "Month", "Cumulative cost [USD]"))
    series: list[tuple[str, list[float]]] = []
    for index, name in enumerate(names):
        for label, options, dash in ((label_a, options_a, "solid"), (label_b, options_b, "dash")):
            option = options.get(name)
            if option is None:
                continue
            values = option["cumulative_usd"]
            series.append((f"{name}, {label} [USD]", values))
            figure.add_trace(
                go.Scatter(
                    x=list(range(len(values))),
                    y=values,
                    mode="lines",
                    name=f"{name} ({label})",
                    legendgroup=name,
                    line={"color": _color(index), "dash": dash},
                    hovertemplate="%{fullData.name}<br>month %{x}: %{y:$,.0f}<extra></extra>",
                )
            )
    months = max(len(values) for _column, values in series)
    rows = [
        [m, *(values[m] if m < len(values) else None for _column, values in series)]
        for m in range(months)
    ]
    table = Table(
        f"Cumulative cost per option, {label_a} and {label_b}",
        ["Month", *(column for column, _values in series)],
        rows,
    )
    return Chart("compare-cumulative", title, _figure_json(figure), [table])


# --- sizing sweeps (scenario format 1.1) ---------------------------------------------------------

SIZING_GREY = "#8a93a3"


def _sizing_band(
    sweep: Mapping[str, Any], band: Mapping[str, Any] | None
) -> tuple[list[float], list[float]] | None:
    """The band's P10 and P90 lists when they belong to this sweep (same option, field and
    candidates), else None."""
    if band is None:
        return None
    same = (band.get("option"), band.get("field"), list(band.get("candidates") or ())) == (
        sweep["option"],
        sweep["field"],
        list(sweep["candidates"]),
    )
    return (list(band["p10_npv_usd"]), list(band["p90_npv_usd"])) if same else None


SIZE_TICKS = 10
"""At most about this many ticks on a sizing chart's size axis."""


def _size_ticks(sizes: Sequence[int], tozero: bool) -> dict[str, Any]:
    """The size axis's ticks: sizes are whole numbers, so ticks fall on the sweep's step (``tick0``
    the smallest size modulo the step: round numbers with a step of 1), every ``step`` × 1, 2, 5,
    10, 20, … sizes, the first such spacing that leaves at most ``SIZE_TICKS`` intervals over the
    axis (from 0 with ``tozero``); never a fractional tick, however narrow the sweep."""
    step = sizes[1] - sizes[0] if len(sizes) > 1 else 1
    span = max(sizes) - (0 if tozero else min(sizes))
    factor, k = 1, 0
    while span > SIZE_TICKS * step * factor:
        k += 1
        factor = (1, 2, 5)[k % 3] * 10 ** (k // 3)
    return {
        "tickmode": "linear",
        "tick0": sizes[0] % step,
        "dtick": step * factor,
        "tickformat": ",d",
    }


def sizing_chart(
    result: Mapping[str, Any], index: int, band: Mapping[str, Any] | None = None
) -> Chart:
    """Sweep ``index`` of the result's ``sizing``: the objective [USD] against the size (committed
    GPUs or servers), the scenario's own size and ``best`` marked, the candidates that do not
    qualify for best (not feasible, or leaving work undone on more paths than the sweep allows)
    drawn hollow and grey; with ``band`` (an entry of ``costapp.tco.sizing.sweeps_bands`` for this
    sweep) the P10–P90 band of the NPV over the paths."""
    sweep = result["sizing"][index]
    field, objective = sweep["field"], sweep["objective"]
    plural = summary.unit(field)
    found = summary.candidates(result, index)
    own = summary.own_size(result, index)
    best = sweep["best"]
    label = summary.objective_label(result, objective)
    spread = _sizing_band(sweep, band)
    n_paths = summary.paths(result)
    sizes = [c.size for c in found]
    values = [c.objective_usd for c in found]
    title = f"{sweep['option']}: {label} by number of {plural}"
    figure = go.Figure(
        layout=_layout(
            title,
            f"Size [{plural}]",  # as the table's first column
            f"{label[0].upper()}{label[1:]} [USD]",
        )
    )
    figure.update_yaxes(tickprefix="$", tickformat=",.3~s", separatethousands=True)
    tozero = min(sizes) <= max(1, max(sizes) // 10)
    figure.update_xaxes(rangemode="tozero" if tozero else "normal", **_size_ticks(sizes, tozero))
    color = _color(0)
    hover = f"%{{x:,}} {plural}: %{{y:$,.0f}}<extra>%{{fullData.name}}</extra>"
    if spread is not None:
        p10, p90 = spread
        figure.add_trace(
            go.Scatter(
                x=sizes,
                y=p10,
                mode="lines",
                line={"width": 0, "color": color},
                name=f"NPV P10 over {n_paths:,} paths",
                legendgroup="band",
                showlegend=False,
                hovertemplate=hover,
            )
        )
        figure.add_trace(
            go.Scatter(
                x=sizes,
                y=p90,
                mode="lines",
                line={"width": 0, "color": color},
                fill="tonexty",
                fillcolor=_rgba(color, BAND_ALPHA),
                name=f"NPV P10–P90 over {n_paths:,} paths",
                legendgroup="band",
                hovertemplate=hover,
            )
        )
    figure.add_trace(
        go.Scatter(
            x=sizes,
            y=values,
            mode="lines",
            line={"color": color, "width": 2},
            name=label[0].upper() + label[1:],
            hovertemplate=hover,
        )
    )
    ok = [c for c in found if c.qualifies]
    if ok:
        figure.add_trace(
            go.Scatter(
                x=[c.size for c in ok],
                y=[c.objective_usd for c in ok],
                mode="markers",
                marker={"color": color, "size": 7},
                name="Size that qualifies",
                hovertemplate=hover,
            )
        )
    not_ok = [c for c in found if not c.qualifies]
    if not_ok:
        figure.add_trace(
            go.Scatter(
                x=[c.size for c in not_ok],
                y=[c.objective_usd for c in not_ok],
                mode="markers",
                marker={
                    "color": "rgba(0,0,0,0)",
                    "size": 8,
                    "symbol": "circle-open",
                    "line": {"color": SIZING_GREY, "width": 2},
                },
                name="Leaves work undone: does not qualify",
                text=[c.reason for c in not_ok],
                hovertemplate=f"%{{x:,}} {plural}: %{{y:$,.0f}}<br>%{{text}}<extra></extra>",
            )
        )
    # the own size: a dotted line and a diamond (with its legend entry) when the sweep priced
    # it; between two sizes swept, the line alone, labelled; outside the range, nothing drawn
    # (the note says where it lies)
    mine = next((c for c in found if c.size == own), None)
    own_line = {"color": "#5b6475", "dash": "dot", "width": 1.5}
    if mine is not None:
        figure.add_vline(x=own, line=own_line)
        figure.add_trace(
            go.Scatter(
                x=[mine.size],
                y=[mine.objective_usd],
                mode="markers",
                marker={
                    "color": "#ffffff",
                    "size": 13,
                    "symbol": "diamond",
                    "line": {"color": "#1d2330", "width": 2},
                },
                name=f"The scenario's own size: {own:,}",
                hovertemplate=(
                    f"the scenario's own size, %{{x:,}} {plural}: %{{y:$,.0f}}<extra></extra>"
                ),
            )
        )
    elif sizes[0] < own < sizes[-1]:
        figure.add_vline(
            x=own,
            line=own_line,
            annotation_text=f"own size: {own:,} (not swept)",
            annotation_position="top",
        )
    if best is not None:
        at = found[sizes.index(int(best))]
        figure.add_trace(
            go.Scatter(
                x=[at.size],
                y=[at.objective_usd],
                mode="markers+text",
                marker={
                    "color": _color(2),
                    "size": 17,
                    "symbol": "star",
                    "line": {"color": "#1d2330", "width": 1},
                },
                text=[f"best: {at.size:,}"],
                textposition="top center",
                name=f"Best: {at.size:,} {summary.unit(field, at.size)}",
                hovertemplate=f"best, %{{x:,}} {plural}: %{{y:$,.0f}}<extra></extra>",
            )
        )
    shortfall = sweep.get("shortfall_probability")
    columns = [f"Size [{plural}]", f"{label[0].upper()}{label[1:]} [USD]"]
    columns += [
        "NPV on the scenario's own values [USD]",
        "Total on the scenario's own values [USD]",
    ]
    if spread is not None:
        columns += ["NPV P10 over the paths [USD]", "NPV P90 over the paths [USD]"]
    if shortfall is not None:
        columns.append("Paths leaving work undone [%]")
    columns += ["Qualifies", "Marked"]
    rows: list[list[Any]] = []
    for i, c in enumerate(found):
        marks = [
            m for m, hit in (("best", c.size == best), ("scenario's own", c.size == own)) if hit
        ]
        row: list[Any] = [c.size, c.objective_usd, sweep["npv_usd"][i], sweep["total_usd"][i]]
        if spread is not None:
            row += [spread[0][i], spread[1][i]]
        if shortfall is not None:
            row.append(100.0 * shortfall[i])
        row += ["yes" if c.qualifies else f"no: {c.reason}", ", ".join(marks)]
        rows.append(row)
    caption = f"{sweep['option']}: {sweep['field']} from {sizes[0]:,} to {sizes[-1]:,}"
    note = "NPV is the present value of the costs over the horizon: lower is better."
    unswept = summary.own_size_unswept(result, index)
    if unswept:
        note += f" {unswept}, so it has no point on the chart."
    if spread is not None:
        note += (
            " The band holds the middle 80 % of the simulated futures (P10 to P90) at each size."
        )
    elif n_paths:
        note += " This run predates the P10–P90 band of the sizing charts: run it again to see it."
    return Chart(
        f"sizing-{index + 1}",
        title,
        _figure_json(figure),
        [Table(caption, columns, rows)],
        note,
    )


def sizing_charts(
    result: Mapping[str, Any], bands: Sequence[Mapping[str, Any]] | None = None
) -> list[Chart]:
    """One :func:`sizing_chart` per sweep of the result, in order (none without ``sizing``);
    ``bands`` are ``costapp.tco.sizing.sweeps_bands`` of the run (None: no band)."""
    sweeps = result.get("sizing") or []
    return [
        sizing_chart(result, i, bands[i] if bands is not None and i < len(bands) else None)
        for i in range(len(sweeps))
    ]
