"""The parts every figure of a result is built with, beside those of :mod:`hardware.display.charts`: the
version of the figures (part of the chart cache's key), bands, traces of options, panels, the
horizon and months read between months.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hardware.display.charts import (
    Table,
    figure_json,
)

BAND_ALPHA = 0.18
CHARTS_VERSION = "7"
"""The version of the figures these functions draw: part of the key a run's cached charts are
kept under (``costapp.selectors.run_charts_cache_key``). Bump it with any change to what a chart
shows, so a deploy never serves figures drawn by the code before it."""


def rgba(hex_color: str, alpha: float) -> str:
    red, green, blue = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def bar_trace(**props: Any) -> go.Bar:
    """A bar trace, built unchecked like its figure (``empty_figure``)."""
    return go.Bar(props, _validate=False)


def axis_suffix(panel: int) -> str:
    """Plotly's numbering of the axes of panel ``panel`` (1, 2 …): "", "2" …"""
    return "" if panel == 1 else str(panel)


def axis_name(axis: str, panel: int) -> str:
    """The layout key of an axis of panel ``panel``: ``xaxis``, ``xaxis2`` …"""
    return f"{axis}{axis_suffix(panel)}"


@functools.cache
def stacked_panels_json(count: int) -> str:
    """The layout (as JSON) of ``count`` panels stacked in one column, as ``make_subplots`` lays
    them out: axes with their domains and anchors, one title annotation per panel (its text to
    fill in), no template. Worked out once per count: ``make_subplots`` checks every property it
    sets, which took a third of a run page's first view."""
    figure = make_subplots(
        rows=count,
        cols=1,
        subplot_titles=["-"] * count,
        vertical_spacing=min(0.12, 0.5 / count),
    )
    layout = figure_json(figure)["layout"]
    layout.pop("template", None)
    return json.dumps(layout)


def stacked_panels_layout(count: int) -> dict[str, Any]:
    """A fresh copy of ``stacked_panels_json(count)``, to fill in."""
    layout: dict[str, Any] = json.loads(stacked_panels_json(count))
    return layout


def option_bar(
    options: Sequence[Mapping[str, Any]], values: Sequence[float | None], **props: Any
) -> go.Bar:
    """A bar trace with one bar per option (x: the options' names, y: ``values``, in order)."""
    return bar_trace(x=[o["name"] for o in options], y=list(values), **props)


Cell = str | Callable[[Mapping[str, Any]], Any]
"""A per-option table cell: a field of the option, or how to work it out from the option."""


def option_table(
    caption: str, options: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, Cell]]
) -> Table:
    """A table with one row per option: its name first ("Option"), then each column's cell
    (headers carry the units)."""
    return Table(
        caption,
        ["Option", *(header for header, _cell in columns)],
        [
            [
                option["name"],
                *(cell(option) if callable(cell) else option[cell] for _header, cell in columns),
            ]
            for option in options
        ],
    )


def break_even_marker(color: str) -> dict[str, Any]:
    """The marker of a break-even point: a diamond of the option's color, outlined."""
    return {
        "color": color,
        "size": 11,
        "symbol": "diamond",
        "line": {"color": "#1d2330", "width": 1},
    }


def horizon_of(result: Mapping[str, Any]) -> int:
    return len(result["options"][0]["monthly_usd"]) - 1


def interpolate(values: Sequence[float], month: float) -> float:
    """A monthly series (index = month) read at a fractional month, linearly."""
    low = int(month)
    if low >= len(values) - 1:
        return float(values[-1])
    fraction = month - low
    return float(values[low] + fraction * (values[low + 1] - values[low]))
