"""The answer's chart of each key input moved ±25 %: how far the recommended option leads (or
trails) the cheapest other feasible option, in NPV."""

from __future__ import annotations

from typing import Any

from costapp.charts.base import bar_trace
from hardware.display.charts import (
    Chart,
    Table,
    chart_layout,
    empty_figure,
    figure_json,
    series_color,
)


def sensitivity_chart(changes: dict[str, Any]) -> Chart:
    """One bar per input and move (−25 %, +25 %): the recommended option's NPV lead over the
    cheapest other feasible option [USD]; below 0 the answer changes."""
    moves = changes["moves"]
    figure = empty_figure(
        layout=chart_layout(
            "Each key input moved by 25 %",
            f"Lead of {changes['recommended']} in NPV [USD] (below 0: another option wins)",
            "",
            barmode="group",
            height=360,
            margin={"l": 260, "r": 20, "t": 60, "b": 60},
        )
    )
    for index, factor in enumerate((0.75, 1.25)):
        chosen = [m for m in moves if m["factor"] == factor]
        figure.add_trace(
            bar_trace(
                y=[m["input"] for m in chosen],
                x=[m["recommended_lead_usd"] for m in chosen],
                orientation="h",
                name=f"{factor * 100:.0f} % of the plan's",
                marker={"color": series_color(index)},
                hovertemplate="%{y}: lead %{x:$,.0f}<extra>%{fullData.name}</extra>",
            )
        )
    table = Table(
        "Each key input moved by 25 %",
        ["Input", "Moved to [% of the plan's]", "Cheapest then", "Lead of the recommended [USD]"],
        [[m["input"], 100 * m["factor"], m["winner"], m["recommended_lead_usd"]] for m in moves],
    )
    return Chart(
        "sensitivity",
        "Each key input moved by 25 %",
        figure_json(figure),
        [table],
        note="Sizes as planned; each input moved alone. Below 0, another option is cheaper.",
    )
