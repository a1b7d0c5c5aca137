"""Two runs' cumulative costs on one figure (the comparison page) [USD]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from costapp.reports.pairing import results_pairing
from hardware.display.charts import (
    Chart,
    Table,
    chart_layout,
    figure_json,
    series_color,
)


def comparison_cumulative_chart(
    a: Mapping[str, Any], b: Mapping[str, Any], *, label_a: str = "A", label_b: str = "B"
) -> Chart:
    """The cumulative cost of every option of two results on one figure [USD]: one colour per
    pair of options (paired as the comparison pairs them, by position or by name:
    ``costapp.reports.pairing``), run A solid, run B dashed, each line named with its own run's
    option name; an option only one run has gets only that run's line. The table has the same
    numbers, month by month (a dash past a run's horizon)."""
    pairing = results_pairing(a, b)
    title = f"Cumulative cost per option, {label_a} (solid) and {label_b} (dashed)"
    # the title in two lines and the legend at the figure's foot, the figure taller: on a phone
    # the title is not cut at the right edge and the legend (a line per run and option) never
    # covers the axis title
    figure = go.Figure(
        layout=chart_layout(
            f"Cumulative cost per option,<br>{label_a} (solid) and {label_b} (dashed)",
            "Month",
            "Cumulative cost [USD]",
            legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
            margin={"t": 84, "r": 20, "b": 40, "l": 80},
            height=540,  # room for the plot beside its axis title above a phone's 6-line legend
        )
    )
    series: list[tuple[str, list[float]]] = []
    for index, pair in enumerate(pairing.options):
        sides = ((label_a, a, pair.a, "solid"), (label_b, b, pair.b, "dash"))
        for label, result, at, dash in sides:
            if at is None or at >= len(result["options"]):
                continue
            option = result["options"][at]
            name = option["name"]
            values = option["cumulative_usd"]
            series.append((f"{name}, {label} [USD]", values))
            figure.add_trace(
                go.Scatter(
                    x=list(range(len(values))),
                    y=values,
                    mode="lines",
                    name=f"{name} ({label})",
                    legendgroup=pair.label,
                    line={"color": series_color(index), "dash": dash},
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
    return Chart("compare-cumulative", title, figure_json(figure), [table])
