"""Template tags of the chart pages: a chart with its tables, and how a table cell is written."""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from numbers import Number
from typing import Any

from django import template
from django.core.serializers.json import DjangoJSONEncoder
from django.utils.html import json_script

from costapp.reports.glossary import meaning_of
from hardware.display.charts import Chart, Table, page_figure, page_templates
from hardware.display.figures import column_decimals, column_text, plain_number, quantity_text

register = template.Library()


class CompactJSONEncoder(DjangoJSONEncoder):
    """JSON without the spaces after its commas and colons: a figure's thousands of numbers."""

    item_separator = ","
    key_separator = ":"


@register.inclusion_tag("charts/_chart.html")
def chart(chart: Chart, suffix: str = "") -> dict[str, Any]:
    """A chart's figure (drawn in the browser) and its tables; ``suffix`` keeps element ids
    unique when a page shows the same kind of chart twice."""
    dom_id = f"{chart.key}-{suffix}" if suffix else chart.key
    figure_id = f"figure-{dom_id}"
    script = json_script(page_figure(chart.figure), figure_id, encoder=CompactJSONEncoder)
    return {"chart": chart, "dom_id": dom_id, "figure_id": figure_id, "figure_script": script}


@register.inclusion_tag("charts/_templates.html")
def chart_templates() -> dict[str, Any]:
    """The Plotly templates the page's figures name, once for the page (``page_figure``)."""
    script = json_script(page_templates(), "plotly-templates", encoder=CompactJSONEncoder)
    return {"templates_script": script}


@register.filter
def is_number(value: Any) -> bool:
    """True for numbers (right-aligned in tables), not for booleans."""
    return isinstance(value, Number) and not isinstance(value, bool)


def chart_cell(value: Any, decimals: int | None = None) -> str:
    """A table cell: a number at its column's ``decimals`` (``hardware.display.figures.column_text``;
    without them, whole numbers with thousands separators and other numbers to 4 significant
    figures), Decimals alike, booleans as yes or no, times in UTC, a dash for no value."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float | Decimal):
        if decimals is None:
            decimals = column_decimals([value])
        return column_text(value, decimals)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


@register.filter
def table_rows(table: Table) -> list[list[tuple[str, bool]]]:
    """A chart table's rows as cells of (text, is a number), each column's numbers at one
    precision (``hardware.display.figures.column_decimals`` over the column)."""
    width = max((len(row) for row in table.rows), default=0)
    decimals = [
        column_decimals(
            row[index] for row in table.rows if index < len(row) and is_number(row[index])
        )
        for index in range(width)
    ]
    return [
        [(chart_cell(cell, decimals[index]), is_number(cell)) for index, cell in enumerate(row)]
        for row in table.rows
    ]


FOLD_ROWS = 3
"""A table folds its first column into headings of groups of rows when its groups hold this
many rows on average or more (``table_groups``)."""


@dataclass(frozen=True)
class TableBody:
    """A chart table as a page writes it: its column headers and its rows, in groups under a
    heading (``heading`` "" for one group without one)."""

    columns: list[str]
    groups: list[tuple[str, list[list[tuple[str, bool]]]]]


@register.filter
def table_groups(table: Table) -> TableBody:
    """A chart table's rows (``table_rows``), folded where its first column is text repeated
    over runs of rows (an option's name on each of its 20 points): each run a group of rows
    under one heading of its name, the column left out, so the page carries each name once; a
    table whose first column does not repeat so is written whole."""
    rows = table_rows(table)
    firsts = [row[0] for row in rows if row]
    groups: list[tuple[str, list[list[tuple[str, bool]]]]] = []
    if len(firsts) == len(rows) >= 2 * FOLD_ROWS and not any(number for _, number in firsts):
        for row in rows:
            if not groups or groups[-1][0] != row[0][0]:
                groups.append((row[0][0], []))
            groups[-1][1].append(row[1:])
        if len(rows) >= FOLD_ROWS * len(groups):
            return TableBody(table.columns[1:], groups)
    return TableBody(table.columns, [("", rows)])


@register.filter
def percent(value: Any) -> str:
    """A share in [0, 1] as a percentage with one decimal; a dash for no value."""
    if value is None:
        return "—"
    return f"{100.0 * float(value):.1f}"


@register.filter
def meaning(slug: str) -> str:
    """The glossary's one line of meaning of a term (``costapp.reports.glossary``), for hover."""
    return meaning_of(slug)


@register.filter
def fixed(value: Any, digits: int = 2) -> str:
    """A number with thousands separators and ``digits`` decimals; a dash for no value."""
    if value is None:
        return "—"
    return f"{float(value):,.{int(digits)}f}"


@register.filter
def source_value(value: Any) -> str:
    """A figure of the sources table as written in ``inputs`` (up to 10 significant digits; from
    100 up, a fraction to the cent; from a trillion up with the letter of its size, never in
    exponent form), an egress tier list in words; a dash for no value."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        if abs(value) >= 1e12:
            return quantity_text(value, 10)  # 4.236e+20 as 423.6 E
        if abs(value) >= 100 and value != int(value):
            return f"{value:,.2f}"  # money of this size to the cent
        return plain_number(value)
    if isinstance(value, list):
        parts = []
        for tier in value:
            if not isinstance(tier, dict):
                return str(value)
            bound = tier.get("up_to_tb")
            where = "beyond" if bound is None else f"up to {plain_number(bound)} TB"
            if bound is None and len(value) == 1:
                where = "all traffic"
            parts.append(f"{where}: {plain_number(tier.get('usd_per_gb', 0))} USD/GB")
        return "; ".join(parts)
    return str(value)


@register.filter
def source_text(row: Any) -> str:
    """A row of ``sources`` in one line: value, source, stated day, flags; for no row, that the
    figure had no catalog source."""
    if not row:
        return "no catalog source (typed in the scenario, or no such figure)"
    stated = f"stated {row.get('stated_on')}" if row.get("stated_on") else "date unknown"
    flags = ", ".join(row.get("flags") or [])
    parts = [source_value(row.get("value")), str(row.get("source", "")), stated]
    return " · ".join(parts + ([flags] if flags else []))
