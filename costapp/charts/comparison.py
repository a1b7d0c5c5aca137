"""Two runs' cumulative costs on one figure (the comparison page) [USD]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from hardware.charts import (
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
    option name (matched across the two), run A solid, run B dashed; an option only one run has
    gets only that run's line. The table has the same numbers, month by month (a dash past a
    run's horizon)."""
    options_a = {o["name"]: o for o in a["options"]}
    options_b = {o["name"]: o for o in b["options"]}
    names = [*options_a, *(n for n in options_b if n not in options_a)]
    title = f"Cumulative cost per option, {label_a} (solid) and {label_b} (dashed)"
    figure = go.Figure(layout=chart_layout(title, "Month", "Cumulative cost [USD]"))
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
