"""The total cost per option over the horizon, stacked by cost category [USD]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costapp.charts.base import (
    horizon_of,
    option_bar,
)
from costapp.reports.categories import CATEGORY_LABELS
from costapp.tco import CATEGORIES
from hardware.display.charts import (
    Chart,
    Table,
    chart_layout,
    empty_figure,
    figure_json,
    series_color,
)


def breakdown_chart(result: Mapping[str, Any]) -> Chart:
    """Total cost per option over the horizon, stacked by cost category [USD]; categories no
    option uses are left out (the residual, a resale value, stacks below zero)."""
    options = result["options"]
    names = [o["name"] for o in options]
    used = [c for c in CATEGORIES if any(o["breakdown_usd"][c] != 0.0 for o in options)]
    horizon = horizon_of(result)
    figure = empty_figure(
        layout=chart_layout(
            "Cost breakdown per option",
            "Option",
            f"Total cost over {horizon} months [USD]",
            barmode="relative",
            showlegend=True,
        )
    )
    for index, category in enumerate(used):
        figure.add_trace(
            option_bar(
                options,
                [o["breakdown_usd"][category] for o in options],
                name=CATEGORY_LABELS[category],
                marker={"color": series_color(index)},
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
        figure_json(figure),
        [Table("Cost by category", columns, rows)],
    )
