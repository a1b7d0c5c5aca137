"""Plotly figures of a result document (docs: scenario-format.md, "The result document").

Pure functions: a result document (and, for cost against utilization, the curves of
``costapp.tco.curves``; for price history, a list of dated prices) in, a :class:`Chart` out. A
chart carries the Plotly figure as JSON-ready data (drawn by plotly.js served from ``static/``)
and the tables of the same numbers, built from the same lists so the two never disagree. Every
figure has a title and axis titles with units.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

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


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "template": "plotly_white",
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
    figure = go.Figure(
        layout=_layout("Cumulative cost per option", "Month", "Cumulative cost [USD]")
    )
    markers: list[list[Any]] = []
    for index, option in enumerate(options):
        name = option["name"] + ("" if option["feasible"] else " (infeasible)")
        figure.add_trace(
            go.Scatter(
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
            go.Scatter(
                x=[month],
                y=[usd],
                mode="markers",
                name=f"{option['name']}: break-even, month {month:.1f}",
                marker={
                    "color": _color(index),
                    "size": 11,
                    "symbol": "diamond",
                    "line": {"color": "#1d2330", "width": 1},
                },
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
    figure = go.Figure(
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
            go.Bar(
                x=names,
                y=[o["breakdown_usd"][category] for o in options],
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
    figure = go.Figure(layout=_layout(title, "Month", "Cumulative cost [USD]"))
    for index, option in enumerate(options):
        color = _color(index)
        figure.add_trace(
            go.Scatter(
                x=months,
                y=option["cumulative_p10_usd"],
                mode="lines",
                line={"width": 0, "color": color},
                name=f"{option['name']} P10",
                legendgroup=option["name"],
                showlegend=False,
                hovertemplate="%{fullData.name}, month %{x}: %{y:$,.0f}<extra></extra>",
            )
        )
        figure.add_trace(
            go.Scatter(
                x=months,
                y=option["cumulative_p90_usd"],
                mode="lines",
                line={"width": 0, "color": color},
                fill="tonexty",
                fillcolor=_rgba(color, BAND_ALPHA),
                name=f"{option['name']} P90",
                legendgroup=option["name"],
                showlegend=False,
                hovertemplate="%{fullData.name}, month %{x}: %{y:$,.0f}<extra></extra>",
            )
        )
        figure.add_trace(
            go.Scatter(
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
    totals = Table(
        "Total cost over the paths",
        ["Option", "P10 [USD]", "P50 [USD]", "P90 [USD]", "Probability cheapest [%]"],
        [
            [
                o["name"],
                o["p10_usd"],
                o["p50_usd"],
                o["p90_usd"],
                100.0 * o["probability_cheapest"],
            ]
            for o in options
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
    names = [o["name"] for o in options]
    values = [o["usd_per_busy_gpu_hour"] for o in options]
    figure = go.Figure(
        layout=_layout("Cost per busy GPU-hour", "Option", "Cost per busy GPU-hour [USD/GPU-h]")
    )
    figure.add_trace(
        go.Bar(
            x=names,
            y=values,
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
    rows = [
        [
            o["name"],
            o["gpu"],
            o["usd_per_busy_gpu_hour"],
            o["busy_gpu_hours"],
            o["total_usd"],
            "yes" if o["feasible"] else "no",
        ]
        for o in options
    ]
    return Chart(
        "usd-per-gpu-hour",
        "Cost per busy GPU-hour",
        _figure_json(figure),
        [
            Table(
                "Cost per busy GPU-hour",
                [
                    "Option",
                    "GPU",
                    "USD per busy GPU-hour",
                    "Busy GPU-hours [GPU-h]",
                    "Total [USD]",
                    "Feasible",
                ],
                rows,
            )
        ],
    )


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
    figure = make_subplots(
        rows=len(panels),
        cols=1,
        subplot_titles=[f"{o['name']} against {baseline_name}" for o in panels],
        vertical_spacing=min(0.12, 0.5 / len(panels)),
    )
    rows: list[list[Any]] = []
    marks: list[list[Any]] = []
    scales = curves["scale"]
    for panel, option in enumerate(panels, start=1):
        curve = by_name[option["name"]]
        index = result["options"].index(option)
        x = [100.0 * u for u in curve["average_utilization"]]
        own = [
            t if ok else None for t, ok in zip(curve["total_usd"], curve["feasible"], strict=True)
        ]
        figure.add_trace(
            go.Scatter(
                x=x,
                y=own,
                mode="lines",
                name=option["name"],
                line={"color": _color(index)},
                hovertemplate="utilization %{x:.1f}%: %{y:$,.0f}<extra>%{fullData.name}</extra>",
            ),
            row=panel,
            col=1,
        )
        figure.add_trace(
            go.Scatter(
                x=x,
                y=baseline_curve["total_usd"],
                mode="lines",
                name=f"{baseline_name} (same work)",
                line={"color": "#5b6475", "dash": "dash"},
                showlegend=panel == 1,
                legendgroup="baseline",
                hovertemplate="utilization %{x:.1f}%: %{y:$,.0f}<extra>%{fullData.name}</extra>",
            ),
            row=panel,
            col=1,
        )
        here = option["average_utilization"] * 100.0
        figure.add_trace(
            go.Scatter(
                x=[here],
                y=[option["total_usd"]],
                mode="markers",
                name="the scenario's own demand",
                marker={"color": _color(index), "size": 9, "symbol": "circle-open"},
                showlegend=False,
                hovertemplate="this scenario: %{x:.1f}%, %{y:$,.0f}<extra></extra>",
            ),
            row=panel,
            col=1,
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
                go.Scatter(
                    x=[100.0 * break_even["average_utilization"]],
                    y=[break_even["total_usd"]],
                    mode="markers+text",
                    text=[f"break-even {100.0 * break_even['average_utilization']:.1f}%"],
                    textposition="top left",
                    name=f"{option['name']}: break-even",
                    marker={
                        "color": _color(index),
                        "size": 11,
                        "symbol": "diamond",
                        "line": {"color": "#1d2330", "width": 1},
                    },
                    showlegend=False,
                    hovertemplate="break-even at %{x:.1f}% utilization, %{y:$,.0f}<extra></extra>",
                ),
                row=panel,
                col=1,
            )
        figure.update_xaxes(
            title_text=f"Average utilization of {option['name']} [%]", row=panel, col=1
        )
        figure.update_yaxes(title_text=f"Total over {horizon} months [USD]", row=panel, col=1)
        for s, u, t, b, ok in zip(
            scales,
            curve["average_utilization"],
            curve["total_usd"],
            baseline_curve["total_usd"],
            curve["feasible"],
            strict=True,
        ):
            rows.append([option["name"], s, 100.0 * u, t, b, "yes" if ok else "no"])
    figure.update_layout(
        title={"text": "Cost against utilization"},
        template="plotly_white",
        height=max(380, 320 * len(panels)),
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0},
        margin={"t": 80, "r": 20, "b": 100, "l": 80},
    )
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
    figure = go.Figure(
        layout=_layout(title, "Date (UTC)", "Price [USD per GPU-hour]", hovermode="x unified")
    )
    figure.update_xaxes(type="date", tickformat="%Y-%m-%d", hoverformat="%Y-%m-%d %H:%M")
    for index, (name, rows) in enumerate(series.items()):
        x = [p.first_seen.isoformat() for p in rows] + [rows[-1].last_seen.isoformat()]
        y = [float(p.usd_per_gpu_hour) for p in rows] + [float(rows[-1].usd_per_gpu_hour)]
        figure.add_trace(
            go.Scatter(
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
