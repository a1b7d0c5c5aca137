"""The cumulative cost per option over the months [USD], with its break-even points."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costapp.charts.base import (
    break_even_marker,
    horizon_of,
    interpolate,
)
from hardware.display.charts import (
    Chart,
    Table,
    chart_layout,
    empty_figure,
    figure_json,
    scatter_trace,
    series_color,
)


def cumulative_cost_chart(result: Mapping[str, Any]) -> Chart:
    """Cumulative cost per option, month 0 … H [USD], with each option's break-even month
    against the baseline marked where its cumulative cost meets the baseline's."""
    options = result["options"]
    horizon = horizon_of(result)
    months = list(range(horizon + 1))
    baseline = next(o for o in options if o["name"] == result["baseline"])
    figure = empty_figure(
        layout=chart_layout("Cumulative cost per option", "Month", "Cumulative cost [USD]")
    )
    markers: list[list[Any]] = []
    for index, option in enumerate(options):
        name = option["name"] + ("" if option["feasible"] else " (infeasible)")
        figure.add_trace(
            scatter_trace(
                x=months,
                y=option["cumulative_usd"],
                mode="lines",
                name=name,
                line={
                    "color": series_color(index),
                    "dash": "solid" if option["feasible"] else "dot",
                },
                hovertemplate="%{fullData.name}<br>month %{x}: %{y:$,.0f}<extra></extra>",
            )
        )
        month = option["break_even_month"]
        if option["name"] == baseline["name"] or month is None or month <= 0:
            continue
        usd = interpolate(baseline["cumulative_usd"], month)
        markers.append([option["name"], month, usd])
        figure.add_trace(
            scatter_trace(
                x=[month],
                y=[usd],
                mode="markers",
                name=f"{option['name']}: break-even, month {month:.1f}",
                marker=break_even_marker(series_color(index)),
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
    return Chart("cumulative", "Cumulative cost per option", figure_json(figure), tables)
