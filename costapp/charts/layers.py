"""A mix's layers month by month (format 1.3): the GPU-hours each layer and ``rest`` serve,
stacked from the bottom layer up, with each layer's capacity as a line [GPU-h]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from hardware.display.charts import (
    Chart,
    Table,
    chart_layout,
    empty_figure,
    figure_json,
    series_color,
)


def layers_charts(
    result: Mapping[str, Any], months: Mapping[str, Mapping[str, Any]]
) -> list[Chart]:
    """One chart per mix of the result, in the order of its options; ``months`` is
    ``costapp.tco.mix_months`` of the result's inputs (none without a mix)."""
    charts = []
    for index, option in enumerate(result["options"]):
        found = months.get(option["name"])
        if option["type"] == "mix" and found is not None:
            charts.append(layers_chart(option["name"], index, found))
    return charts


def layers_chart(name: str, index: int, found: Mapping[str, Any]) -> Chart:
    """What each layer of the mix ``name`` serves month by month, stacked in layer order, ``rest``
    on top; a dashed line at the top of each layer's capacity (the layers below it included)."""
    rows = list(found["layers"])
    horizon = len(found["supply_gpu_hours"])
    x = list(range(1, horizon + 1))
    title = f"{name}: GPU-hours served by each layer, month by month"
    figure = empty_figure(
        layout=chart_layout(title, "Month", "Served [GPU-h per month]", showlegend=True)
    )
    held = [0.0] * horizon
    for j, row in enumerate(rows):
        color = series_color(j)
        short = short_name(row["name"])
        label = short if row["role"] == "layer" else f"Rest: {short}"
        figure.add_trace(
            go.Scatter(
                x=x,
                y=row["served_gpu_hours"],
                name=label,
                stackgroup="served",
                mode="lines",
                line={"width": 0.5, "color": color},
                hovertemplate=f"month %{{x}}<br>{label}: %{{y:,.0f}} GPU-h<extra></extra>",
            )
        )
        if row["capacity_gpu_hours"] is not None:
            held = [a + b for a, b in zip(held, row["capacity_gpu_hours"], strict=True)]
            figure.add_trace(
                go.Scatter(
                    x=x,
                    y=list(held),
                    name=f"Capacity up to {short}",
                    mode="lines",
                    line={"dash": "dash", "width": 1.5, "color": color, "shape": "hv"},
                    hovertemplate=(
                        f"month %{{x}}<br>capacity up to {short}: %{{y:,.0f}} GPU-h<extra></extra>"
                    ),
                )
            )
    columns = ["Month", *(f"{row['name']} [GPU-h]" for row in rows), "Supply [GPU-h]"]
    table_rows = [
        [m, *(row["served_gpu_hours"][m - 1] for row in rows), found["supply_gpu_hours"][m - 1]]
        for m in x
    ]
    return Chart(
        f"layers-{index + 1}",
        title,
        figure_json(figure),
        tables=[Table(f"GPU-hours served each month by the layers of {name}", columns, table_rows)],
    )


def short_name(name: str) -> str:
    """An option's name up to its first parenthesis (long names keep their sources there; the
    table beside the chart gives them whole)."""
    head = name.split(" (", 1)[0].strip()
    return head or name
