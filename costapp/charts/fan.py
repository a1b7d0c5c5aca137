"""The spread of the Monte Carlo paths: each option's cumulative cost P10–P90 around its P50
[USD].
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costapp.charts.base import (
    BAND_ALPHA,
    horizon_of,
    option_table,
    rgba,
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
    horizon = horizon_of(result)
    months = list(range(horizon + 1))
    paths = int(result["simulation"]["paths"])
    fan_paths = min(paths, 10_000)
    title = "Cumulative cost, P10–P90 band and median"
    figure = empty_figure(layout=chart_layout(title, "Month", "Cumulative cost [USD]"))
    for index, option in enumerate(options):
        color = series_color(index)
        # the band's edges, unseen: P10, then P90 filled down to it
        for edge, fill in (
            ("P10", {}),
            ("P90", {"fill": "tonexty", "fillcolor": rgba(color, BAND_ALPHA)}),
        ):
            figure.add_trace(
                scatter_trace(
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
            scatter_trace(
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
    totals = option_table(
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
        figure_json(figure),
        [Table("Cumulative cost percentiles", columns, rows), totals],
        note,
    )
