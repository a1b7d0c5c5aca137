"""Cost against utilization: each option's cost with every workload's work scaled by one factor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costapp.charts.base import (
    axis_name,
    axis_suffix,
    break_even_marker,
    horizon_of,
    stacked_panels_layout,
)
from costapp.charts.unit_cost import by_the_token_note
from hardware.display.charts import (
    TEMPLATE,
    Chart,
    Table,
    empty_figure,
    figure_json,
    scatter_trace,
    series_color,
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
    horizon = horizon_of(result)
    layout = stacked_panels_layout(len(panels))
    for panel, option in enumerate(panels, start=1):
        layout["annotations"][panel - 1]["text"] = f"{option['name']} against {baseline_name}"
        layout[axis_name("xaxis", panel)]["title"] = {"text": "Average utilization [%]"}
        layout[axis_name("yaxis", panel)]["title"] = {"text": f"Total over {horizon} months [USD]"}
    layout.update(
        title={"text": "Cost against utilization"},
        template=TEMPLATE,
        height=max(380, 320 * len(panels)),
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0},
        margin={"t": 80, "r": 20, "b": 100, "l": 80},
    )
    figure = empty_figure(layout=layout)
    rows: list[list[Any]] = []
    marks: list[list[Any]] = []
    scales = curves["scale"]
    for panel, option in enumerate(panels, start=1):
        curve = by_name[option["name"]]
        index = result["options"].index(option)
        axes = {"xaxis": f"x{axis_suffix(panel)}", "yaxis": f"y{axis_suffix(panel)}"}
        x = [100.0 * u for u in curve["average_utilization"]]
        own = [
            t if ok else None for t, ok in zip(curve["total_usd"], curve["feasible"], strict=True)
        ]
        figure.add_trace(
            scatter_trace(
                x=x,
                y=own,
                mode="lines",
                name=option["name"],
                line={"color": series_color(index)},
                hovertemplate="utilization %{x:.1f}%: %{y:$,.0f}<extra>%{fullData.name}</extra>",
                **axes,
            )
        )
        figure.add_trace(
            scatter_trace(
                x=x,
                y=baseline_curve["total_usd"],
                mode="lines",
                name=f"{baseline_name} (same work)",
                line={"color": "#5b6475", "dash": "dash"},
                showlegend=panel == 1,
                legendgroup="baseline",
                hovertemplate="utilization %{x:.1f}%: %{y:$,.0f}<extra>%{fullData.name}</extra>",
                **axes,
            )
        )
        here = option["average_utilization"] * 100.0
        figure.add_trace(
            scatter_trace(
                x=[here],
                y=[option["total_usd"]],
                mode="markers",
                name="the scenario's own demand",
                marker={"color": series_color(index), "size": 9, "symbol": "circle-open"},
                showlegend=False,
                hovertemplate="this scenario: %{x:.1f}%, %{y:$,.0f}<extra></extra>",
                **axes,
            )
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
                scatter_trace(
                    x=[100.0 * break_even["average_utilization"]],
                    y=[break_even["total_usd"]],
                    mode="markers+text",
                    text=[f"break-even {100.0 * break_even['average_utilization']:.1f}%"],
                    # toward the middle of the panel, never over an axis's labels
                    textposition=(
                        "top right" if break_even["average_utilization"] < 0.5 else "top left"
                    ),
                    name=f"{option['name']}: break-even",
                    marker=break_even_marker(series_color(index)),
                    showlegend=False,
                    hovertemplate="break-even at %{x:.1f}% utilization, %{y:$,.0f}<extra></extra>",
                    **axes,
                )
            )
        for s, u, t, b, ok in zip(
            scales,
            curve["average_utilization"],
            curve["total_usd"],
            baseline_curve["total_usd"],
            curve["feasible"],
            strict=True,
        ):
            rows.append([option["name"], s, 100.0 * u, t, b, "yes" if ok else "no"])
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
    by_the_token = by_the_token_note(result, "this chart: it has no utilization")
    if by_the_token:
        note += " " + by_the_token
    return Chart("utilization", "Cost against utilization", figure_json(figure), tables, note)
