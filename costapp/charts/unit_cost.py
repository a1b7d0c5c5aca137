"""The cost per busy GPU-hour of each option [USD/GPU-h]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costapp.charts.base import (
    option_bar,
    option_table,
)
from hardware.charts import (
    Chart,
    chart_layout,
    empty_figure,
    figure_json,
    series_color,
)


def usd_per_busy_gpu_hour_chart(result: Mapping[str, Any]) -> Chart:
    """Total cost divided by the GPU-hours of work done [USD per busy GPU-hour], per option;
    an option without work has no bar."""
    options = result["options"]
    values = [o["usd_per_busy_gpu_hour"] for o in options]
    figure = empty_figure(
        layout=chart_layout(
            "Cost per busy GPU-hour", "Option", "Cost per busy GPU-hour [USD/GPU-h]"
        )
    )
    figure.add_trace(
        option_bar(
            options,
            values,
            marker={
                "color": [series_color(i) for i in range(len(options))],
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
    table = option_table(
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
    return Chart("usd-per-gpu-hour", "Cost per busy GPU-hour", figure_json(figure), [table])
