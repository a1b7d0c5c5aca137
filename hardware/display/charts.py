"""Plotly figures as the pages draw them: the parts every figure is built with (the catalog's
own, an offer's price history, is ``hardware/display/price_chart.py``).

A :class:`Chart` carries the Plotly figure as JSON-ready data (drawn by plotly.js served from
``static/``) and the tables of the same numbers, built from the same lists so the two never
disagree; every figure has a title and axis titles with units. The cost side's figures of a
result (``costapp.charts``) are built with the same parts.
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

COLORS = (
    "#2457c5",
    "#d9730d",
    "#2e9e5b",
    "#b8336a",
    "#7a5cc7",
    "#8c6d1f",
    "#1a9bb0",
    "#c23b22",
    "#5b6475",
    "#4f8a10",
)


TEMPLATE = "plotly_white"
"""The plotly template of every figure."""
PLOTLY_CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True, "showLink": False}
"""plotly.js options for every chart: no Plotly logo link, no "edit in Chart Studio" link."""


@dataclass(frozen=True)
class Table:
    """Rows of numbers with their column headers (units in the headers)."""

    caption: str
    columns: list[str]
    rows: list[list[Any]]


@dataclass(frozen=True)
class Chart:
    """A Plotly figure (JSON-ready ``{"data", "layout"}``) and the tables of its numbers."""

    key: str
    title: str
    figure: dict[str, Any]
    tables: list[Table] = field(default_factory=list)
    note: str = ""

    @property
    def config(self) -> dict[str, Any]:
        """plotly.js options (the logo link off)."""
        return PLOTLY_CONFIG


def series_color(index: int) -> str:
    return COLORS[index % len(COLORS)]


MARKUP_KEPT = ("<br>", "<extra>", "</extra>")
"""The only tags of Plotly's HTML subset the figures use: a line break, and a hover label's
trace box. Every other ``<``, ``>`` and ``&`` of a figure is text."""


def plain_text(text: str) -> str:
    """``text`` as Plotly shows it, never as its HTML subset: ``<``, ``>`` and ``&`` written as
    entities (a name ``<a href="...">`` reads as typed and links nowhere), the tags of
    ``MARKUP_KEPT`` left as they are."""
    escaped = html.escape(text, quote=False)
    if "&lt;" in escaped:
        for tag in MARKUP_KEPT:
            escaped = escaped.replace(html.escape(tag, quote=False), tag)
    return escaped


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return plain_text(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def figure_json(figure: go.Figure) -> dict[str, Any]:
    """The figure as plain JSON data (lists, numbers, strings), every string of it, the names a
    user or a feed wrote among them, plain text to Plotly (``plain_text``)."""
    data: dict[str, Any] = _plain(json.loads(pio.to_json(figure, validate=False)))
    return data


@functools.cache
def template_json(name: str) -> dict[str, Any]:
    """Plotly's template ``name`` as a validated figure's JSON carries it (its data and layout
    defaults), worked out once per process: building it is most of a validated figure's cost."""
    template: dict[str, Any] = figure_json(go.Figure(layout={"template": name}))["layout"][
        "template"
    ]
    return template


PAGE_DIGITS = 9
"""The significant digits of a figure's numbers on a page: whole dollars up to a billion, cents
below ten million; what a chart draws and its tooltip says (the tables beside it, downloads and
the API keep the exact figures)."""


def _page_number(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return value
        short = float(f"{value:.{PAGE_DIGITS}g}")
        return int(short) if short.is_integer() and abs(short) < 1e15 else short
    if isinstance(value, list):
        return [_page_number(item) for item in value]
    if isinstance(value, dict):
        return {key: _page_number(item) for key, item in value.items()}
    return value


HOVER_FORMAT = re.compile(r"%\{([xyz])(?::([^}]*))?\}")
"""A trace's ``hovertemplate`` placeholder of a coordinate and its d3 format, if any."""
FIXED_FORMAT = re.compile(r"^[$]?,?\.(\d+)(f|%)$")
"""A d3 format with fixed decimals (``$,.0f``, ``.1f``, ``.1%``): what the tooltip shows of a
number, the decimals of a percentage two more."""


def hover_decimals(trace: Mapping[str, Any]) -> dict[str, int]:
    """Per coordinate (``x``, ``y``, ``z``) of a trace, the decimals its tooltip shows, where
    every placeholder of it in the trace's ``hovertemplate`` has fixed decimals (a coordinate
    shown unformatted, or as ``$,.3s``, or not at all, is left out: its numbers stay as
    ``PAGE_DIGITS`` gives them)."""
    template = trace.get("hovertemplate")
    if not isinstance(template, str):
        return {}
    found: dict[str, int] = {}
    unfixed: set[str] = set()
    for axis, spec in HOVER_FORMAT.findall(template):
        fixed = FIXED_FORMAT.match(spec or "")
        if fixed is None:
            unfixed.add(axis)
            continue
        decimals = int(fixed.group(1)) + (2 if fixed.group(2) == "%" else 0)
        found[axis] = max(decimals, found.get(axis, 0))
    return {axis: decimals for axis, decimals in found.items() if axis not in unfixed}


def _rounded(value: Any, decimals: int) -> Any:
    if isinstance(value, float) and math.isfinite(value):
        short = round(value, decimals)
        return int(short) if short.is_integer() and abs(short) < 1e15 else short
    if isinstance(value, list):
        return [_rounded(item, decimals) for item in value]
    return value


def page_trace(trace: Mapping[str, Any]) -> dict[str, Any]:
    """A trace as a page carries it: each coordinate its tooltip shows at fixed decimals
    (``hover_decimals``) rounded to them, no more than the chart can show (a dollar on an axis
    of millions is not a pixel; the tooltip reads the same), the rest to ``PAGE_DIGITS``."""
    decimals = hover_decimals(trace)
    return {
        key: _rounded(value, decimals[key]) if key in decimals else _page_number(value)
        for key, value in trace.items()
    }


def page_figure(figure: Mapping[str, Any]) -> dict[str, Any]:
    """A figure as a page carries it: its template by name where it is ``TEMPLATE`` as
    ``template_json`` resolves it (the page holds that template once, ``page_templates``, and
    ``static/js/charts.js`` puts it back before drawing), each trace's numbers as its tooltip
    shows them (``page_trace``), the others to ``PAGE_DIGITS`` significant digits (a whole
    number without its ``.0``). A figure's own JSON keeps both whole (``figure_json``)."""
    layout = dict(figure.get("layout") or {})
    if layout.get("template") == template_json(TEMPLATE):
        layout["template"] = TEMPLATE
    rest = {key: value for key, value in figure.items() if key != "data"}
    shown: dict[str, Any] = _page_number({**rest, "layout": layout})
    shown["data"] = [
        page_trace(trace) if isinstance(trace, Mapping) else _page_number(trace)
        for trace in figure.get("data") or []
    ]
    return shown


def page_templates() -> dict[str, Any]:
    """The templates a page's figures name (``page_figure``), by name: written once per page."""
    return {TEMPLATE: template_json(TEMPLATE)}


def empty_figure(*, layout: Mapping[str, Any]) -> go.Figure:
    """An empty figure with ``layout``, its ``template`` named and resolved by ``template_json``.

    Built without plotly's check of each property (``_validate=False``, as its traces are):
    checking copies and coerces every value, which took most of a run page's first view. The
    figure's JSON is the same as a checked figure's; tests/costapp/charts/test_charts.py builds every
    chart both ways and compares them."""
    resolved = {**layout, "template": template_json(layout.get("template", TEMPLATE))}
    return go.Figure(layout=resolved, _validate=False)


def scatter_trace(**props: Any) -> go.Scatter:
    """A scatter trace, built unchecked like its figure (``empty_figure``)."""
    return go.Scatter(props, _validate=False)


def chart_layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "template": TEMPLATE,
        "hovermode": "closest",
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.22},
        "margin": {"t": 60, "r": 20, "b": 40, "l": 80},
        **extra,
    }
