"""The chance each option has cost least so far, month by month (the run's risk figures,
``costapp.tco.risk``) [% of futures]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from costapp.charts.layers import short_name
from hardware.display.charts import (
    Chart,
    Table,
    chart_layout,
    empty_figure,
    figure_json,
    series_color,
)


def leader_chart(figures: Mapping[str, Any]) -> Chart:
    """One line per option: the share of futures in which it has cost least from month 0 to each
    month 1 … H (month 0, before any month of service, is left out)."""
    names = list(figures["options"])
    shares = figures["cheapest_so_far"]
    horizon = len(shares[names[0]]) - 1 if names else 0
    x = list(range(1, horizon + 1))
    title = "Chance each option has cost least so far, by month"
    layout = chart_layout(title, "Month", "Futures in which it has cost least [%]", showlegend=True)
    layout["yaxis"]["range"] = [0, 100]
    figure = empty_figure(layout=layout)
    for o, name in enumerate(names):
        label = short_name(name)
        figure.add_trace(
            go.Scatter(
                x=x,
                y=[100.0 * share for share in shares[name][1:]],
                name=label,
                mode="lines",
                line={"width": 2, "color": series_color(o), "shape": "hv"},
                hovertemplate=f"month %{{x}}<br>{label}: %{{y:.1f}} %<extra></extra>",
            )
        )
    columns = ["Month", *(f"{name} [% of futures]" for name in names)]
    rows = [[m, *(100.0 * shares[name][m] for name in names)] for m in x]
    return Chart(
        "risk-leader",
        title,
        figure_json(figure),
        tables=[
            Table("Share of futures in which each option has cost least so far", columns, rows)
        ],
    )
