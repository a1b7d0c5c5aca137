"""How a person reads a figure: money, prices per hour, percentages and the age of a source's
statement, in words. Pure functions of plain values (the pages' template filters,
``hardware/templatetags/figures.py``, and the charts' labels call them); downloads and the API
keep the exact figures.

- A total: whole dollars with thousands separators (``$1,234,567``).
- A price per hour (or per GPU-hour, per million tokens): 2 decimals from $1 up (``$2.49``), 3
  significant figures below (``$0.0625``, ``$0.412``); never in exponent form.
- A percentage: one decimal (``37.5 %``).
- A count or quantity (tokens, FLOPs, GPU-hours): below a million with thousands separators
  (``150,000``), from a million up with the letter of its size (``20 M``, ``2 B``, ``1.5 T``, then
  SI's ``P``, ``E``, ``Z``, ``Y``), 3 significant figures.
- A column of a table: one precision for the whole column, by its largest figure: whole from
  1,000 up (``265,000`` beside ``0``), 2 decimals from 1 (``125.00`` beside ``75.00``), 4 below.
- No figure is ever written in exponent form (``4.2e+20``).
- An age: "today", "yesterday", "3 days ago" (under 60 days), "14 months ago" (under 24 months),
  "3 years ago"; a date in the future is "in 5 days" (a quote valid until then, say).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

Number = int | float | Decimal

DASH = "—"


def _number(value: Any) -> float | None:
    """A finite float, or None for no value (None, "", NaN, an infinity, a non-number)."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def plain_number(value: Any, digits: int = 10) -> str:
    """A number with thousands separators and at most ``digits`` significant figures, its
    trailing zeros dropped, never in exponent form: ``1,234.5``, ``0.034366``, ``2,000,000``. A
    dash for no value."""
    number = _number(value)
    if number is None:
        return DASH
    rounded = Decimal(f"{number:.{int(digits)}g}")
    text = format(rounded, ",f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in {"-0", ""} else text


def decimal_text(value: Decimal | None) -> str:
    """A stored Decimal as plain text with its trailing zeros dropped: ``23.9200000000`` ->
    ``23.92``, ``80.00`` -> ``80``, ``0E-10`` -> ``0``; never rounded, never in exponent form;
    ``None`` -> ``""``."""
    if value is None:
        return ""
    text = format(Decimal(value).normalize(), "f")
    return "0" if text in {"-0", "0"} else text


EXPONENT_FORM = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?[eE][+-]\d+(?!\w)")
"""A number written in exponent form inside a text ("per token in/out 5e-07/2.15e-06")."""


def plain_numbers_in(text: str) -> str:
    """``text`` with every number in exponent form written in plain digits (a source's note
    "per token 5e-07" reads "per token 0.0000005"); the rest as it is."""
    return EXPONENT_FORM.sub(lambda found: plain_number(float(found.group(0)), 10), text or "")


SIZE_LETTERS = (
    (1e24, "Y"),
    (1e21, "Z"),
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "B"),
    (1e6, "M"),
)
"""The letters of a quantity's size from a million up: million, billion, trillion (as a person
says a count of tokens), then SI's peta, exa, zetta, yotta (FLOPs)."""


def quantity_text(value: Any, digits: int = 3) -> str:
    """A count or quantity as a person reads it: below a million with thousands separators and
    at most 6 significant figures (``150,000``, ``12.5``); from a million up with the letter of
    its size and ``digits`` significant figures (``20 M``, ``2 B``, ``1.5 T``, ``424 E``);
    never in exponent form. A dash for no value."""
    number = _number(value)
    if number is None:
        return DASH
    for size, letter in SIZE_LETTERS:
        if abs(number) >= size * (1 - 0.5 * 10.0 ** (1 - digits)):  # 999.9 M reads 1 B
            return f"{plain_number(number / size, digits)} {letter}"
    return plain_number(number, max(int(digits), 6))


def column_decimals(values: Iterable[Any]) -> int:
    """The decimals of a column of figures, one for the whole column, by its largest figure:
    none from 1,000 up (``265,000`` and ``0``), 2 from 1 (``125.00`` and ``75.00``), 4 below
    (``0.0625`` and ``0.0310``); none for a column of whole numbers."""
    numbers = [n for n in (_number(v) for v in values) if n is not None]
    largest = max((abs(n) for n in numbers), default=0.0)
    if largest >= 1000 or all(n.is_integer() for n in numbers):
        return 0
    return 2 if largest >= 1 else 4


def column_text(value: Any, decimals: int) -> str:
    """A figure of a table's column at the column's ``decimals`` (``column_decimals``), with
    thousands separators; never ``-0``. A dash for no value."""
    number = _number(value)
    if number is None:
        return DASH
    text = f"{number:,.{int(decimals)}f}"
    if text.lstrip("-").strip("0.,") == "":
        return text.lstrip("-")
    return text


def usd_total(value: Any, *, sign: bool = False) -> str:
    """A sum of money in whole dollars with thousands separators: ``$1,234,567``, ``-$12``;
    ``sign`` writes ``+`` before a positive figure (a difference). A dash for no value."""
    number = _number(value)
    if number is None:
        return DASH
    rounded = int(Decimal(repr(number)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    if rounded == 0:
        return "$0"
    text = f"${abs(rounded):,}"
    if rounded < 0:
        return "-" + text
    return ("+" + text) if sign else text


def usd_rate(value: Any) -> str:
    """A price per hour, per GPU-hour or per million tokens: 2 decimals from $1 up (``$2.49``,
    ``$1,234.50``), 3 significant figures below (``$0.0625``, ``$0.412``, ``$0.000150``). A dash
    for no value."""
    number = _number(value)
    if number is None:
        return DASH
    size = abs(number)
    if size == 0:
        return "$0.00"
    if size >= 1:
        text = f"{size:,.2f}"
    else:
        decimals = 2 - math.floor(math.log10(size))  # 3 significant figures
        text = f"{size:.{decimals}f}"
        if float(text) >= 1:  # 0.9996 rounds up to 1.00
            text = f"{float(text):,.2f}"
    return f"{'-' if number < 0 else ''}${text}"


def percent_text(value: Any, *, share: bool = True) -> str:
    """A percentage with one decimal and its sign: ``37.5 %``. ``share``: the value is a share
    in [0, 1] (``0.375``); otherwise already in percent (``37.5``). A dash for no value."""
    number = _number(value)
    if number is None:
        return DASH
    pct = 100.0 * number if share else number
    text = f"{pct:,.1f}"
    if text in {"-0.0", "0.0"}:
        return "0.0 %"
    return text + " %"


def savings_text(value: Any) -> str:
    """Savings against a baseline, given in percent: ``37.5 %`` saved, ``-50.0 %`` (costs half as
    much again); beyond -100 % (more than twice the baseline) a multiple reads better than a
    percentage: ``costs 8.3 × the baseline``. A dash for no value."""
    number = _number(value)
    if number is None:
        return DASH
    if number < -100.0:
        return f"costs {1.0 - number / 100.0:,.1f} × the baseline"
    return percent_text(number, share=False)


def change_text(value: Any, digits: int = 2) -> str:
    """A difference with its sign (+ or −), thousands separators and ``digits`` decimals;
    "unchanged" where it is 0 at that precision (no sign on nothing), a dash for no value."""
    number = _number(value)
    if number is None:
        return DASH
    text = f"{abs(number):,.{int(digits)}f}"
    if float(text.replace(",", "")) == 0.0:
        return "unchanged"
    return ("+" if number > 0 else "−") + text


def _day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def age_words(value: date | datetime | None, today: date) -> str:
    """How long before ``today`` a day was, in words ("today", "yesterday", "3 days ago",
    "14 months ago", "3 years ago"); after it, "tomorrow" or "in N days" (and months, years).
    An empty string for no day."""
    if value is None:
        return ""
    day = _day(value)
    days = (today - day).days
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days == -1:
        return "tomorrow"
    span = abs(days)
    months = (abs((today.year - day.year) * 12 + today.month - day.month)) - (
        1 if (today.day < day.day if days > 0 else day.day < today.day) else 0
    )
    if span < 60:
        amount, unit = span, "day"
    elif months < 24:
        amount, unit = max(months, 2), "month"
    else:
        amount, unit = months // 12, "year"
    words = f"{amount} {unit}{'' if amount == 1 else 's'}"
    return f"{words} ago" if days > 0 else f"in {words}"


def stated_words(value: date | datetime | None, today: date) -> str:
    """When a source stated a figure, in words: "stated 14 months ago"; "date unknown" for no
    day."""
    if value is None:
        return "date unknown"
    return f"stated {age_words(value, today)}"
