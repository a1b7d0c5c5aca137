"""The cost per busy GPU-hour of each GPU option [USD/GPU-h], and (format 1.2) the all-in cost per
million tokens served of every option, ``api`` options included [USD per million tokens]."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costapp.charts.base import (
    option_bar,
    option_table,
)
from hardware.display.charts import (
    Chart,
    chart_layout,
    empty_figure,
    figure_json,
    series_color,
)


def by_the_token_note(result: Mapping[str, Any], what: str) -> str:
    """The note of a chart that leaves the ``api`` options out ("" when there are none)."""
    names = [o["name"] for o in result["options"] if o["type"] == "api"]
    if not names:
        return ""
    quoted = ", ".join(f"“{name}”" for name in names)
    verb = "is" if len(names) == 1 else "are"
    return (
        f"{quoted} {verb} bought by the token, with no GPUs of {'its' if len(names) == 1 else 'their'}"
        f" own: left out of {what}. The cost per million tokens compares every option."
    )


def unit_cost_bar(
    options: list[Mapping[str, Any]], values: list[Any], unit: str, empty: str
) -> Any:
    """One bar per option of a unit cost, coloured by option, infeasible ones hatched, each
    labelled with its value ("``empty``" where there is none); hover says the ``unit``."""
    return option_bar(
        options,
        values,
        marker={
            "color": [series_color(i) for i in range(len(options))],
            "pattern": {"shape": ["" if o["feasible"] else "/" for o in options]},
        },
        text=[
            empty if v is None else f"${v:,.2f}" + ("" if o["feasible"] else " (infeasible)")
            for v, o in zip(values, options, strict=True)
        ],
        textposition="outside",
        hovertemplate=f"%{{x}}: %{{y:$,.3f}} {unit}<extra></extra>",
        showlegend=False,
    )


def usd_per_busy_gpu_hour_chart(result: Mapping[str, Any]) -> Chart:
    """Total cost divided by the GPU-hours of work done [USD per busy GPU-hour], per GPU option
    (an ``api`` option has no GPU-hours: left out, with a note); an option without work has no
    bar."""
    options = [o for o in result["options"] if o["type"] != "api"]
    values = [o["usd_per_busy_gpu_hour"] for o in options]
    figure = empty_figure(
        layout=chart_layout(
            "Cost per busy GPU-hour", "Option", "Cost per busy GPU-hour [USD/GPU-h]"
        )
    )
    figure.add_trace(unit_cost_bar(options, values, "per busy GPU-hour", "no work"))
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
    return Chart(
        "usd-per-gpu-hour",
        "Cost per busy GPU-hour",
        figure_json(figure),
        [table],
        note=by_the_token_note(result, "the cost per busy GPU-hour"),
    )


def usd_per_million_tokens_chart(result: Mapping[str, Any]) -> Chart | None:
    """Each option's all-in cost per million tokens served [USD per million tokens]: its whole
    cost (training included) over the scenario's generated tokens; None when it serves none."""
    options = result["options"]
    values = [o.get("all_in_usd_per_million_tokens") for o in options]
    if all(v is None for v in values):
        return None
    title = "All-in cost per million tokens served"
    figure = empty_figure(layout=chart_layout(title, "Option", "Cost [USD per million tokens]"))
    figure.add_trace(unit_cost_bar(options, values, "per million tokens", "no tokens"))
    table = option_table(
        title,
        options,
        [
            ("Type", "type"),
            ("USD per million tokens", "all_in_usd_per_million_tokens"),
            ("Total [USD]", "total_usd"),
            ("Feasible", lambda o: "yes" if o["feasible"] else "no"),
        ],
    )
    return Chart(
        "usd-per-million-tokens",
        title,
        figure_json(figure),
        [table],
        note="Every cost of the option over the generated tokens of the scenario (prompt tokens "
        "are not counted); an infeasible option does not do all the work.",
    )
