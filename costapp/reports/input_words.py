"""A scenario input as a person reads it: a field's words (the builder's labels,
``costapp.reports.field_labels``) and its value in its unit: shares as percentages ("90 %"),
money in dollars with thousands separators ("$14,600", "$2.99", "$0.0850"), durations with their
unit ("36 months", "month 12", "2 hours"), counts and other numbers with thousands separators.

Pure: no Django. ``formatted`` is the one place a kind of value becomes text; a price at the
usual precision is written by the pages' rule, ``hardware.display.figures.usd_rate``.
"""

from __future__ import annotations

import math
from typing import Any

from costapp.reports.field_labels import LABELS, QUANTITY_LABELS, label_of
from hardware.display.figures import usd_rate

PERCENT_FIELDS = frozenset(
    {
        "utilization",
        "mfu",
        "support_fraction",
        "support_fraction_per_year",
        "idle_power_fraction",
        "residual_fraction",
        "discount_rate",
        "monthly_growth",
        "price_change_per_year",
        "interruption_overhead",
        "apr",
    }
)
"""Fields holding a share or a rate (0.9 is 90 %)."""

PERCENT_QUANTITIES = frozenset(
    {"cloud_price_change_per_year", "api_price_change_per_year", "interruption_overhead"}
)
"""Uncertain quantities whose distribution's numbers are rates (the multipliers are not)."""

DURATIONS = {
    "horizon_months": "months",
    "term_months": "months",
    "lead_time_months": "months",
    "checkpoint_hours": "hours",
    "restart_hours": "hours",
    "gpu_mtbf_hours": "GPU-hours",
}
"""Fields holding a duration, and its unit (the label's unit in parentheses is then left out)."""

MONTH_FIELDS = frozenset({"start_month", "end_month"})
"""Fields naming a month of the horizon ("month 12")."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _plain(number: float, digits: int) -> str:
    """A number with thousands separators and at most ``digits`` significant figures, whole
    numbers whole ("64", "14,600", "0.085")."""
    if number.is_integer() and abs(number) < 1e15:
        return f"{int(number):,}"
    text = f"{number:,.{digits}g}"
    return text if "e" not in text else f"{number:.{digits}g}"


def formatted(kind: str, value: float, digits: int = 3) -> str:
    """One number as text in its kind: ``percent`` (a share: 0.9 -> "90 %"), ``points`` (a
    difference of shares: -0.6 -> "−60 points"), ``money`` (whole dollars from $100: "$14,600";
    2 decimals from $1: "$2.99"; 3 significant figures below: "$0.0850"), ``months`` / ``hours`` / ``GPU-hours``
    ("36 months"), ``month`` ("month 12"), else ``number`` ("1,000", "0.8"). ``digits`` is the
    least number of significant figures written (more are written where whole numbers need
    them); a negative number starts with "−"."""
    sign = "−" if value < 0 else ""
    size = abs(value)
    if kind in ("percent", "points"):
        shown = _plain(size * 100, max(digits, 3))
        return f"{sign}{shown} {'%' if kind == 'percent' else 'points'}"
    if kind == "money":
        if size.is_integer() and size >= 100:
            return f"{sign}${int(size):,}"
        if digits <= 3:
            return sign + usd_rate(size)  # the pages' rule for a price
        if size >= 1:
            return f"{sign}${_plain(size, digits + 2)}"
        return f"{sign}${size:#.{digits}g}"
    if kind == "month":
        return f"{sign}month {_plain(size, max(digits, 6))}"
    if kind in ("months", "hours", "GPU-hours"):
        unit = kind[:-1] if size == 1 and kind != "GPU-hours" else kind
        return f"{sign}{_plain(size, max(digits, 6))} {unit}"
    return f"{sign}{_plain(size, max(digits, 6))}"


def value_kind(key: str, parent: str = "") -> str:
    """The kind of number field ``key`` holds (``parent``: the field it is part of, such as the
    uncertain quantity of a distribution's ``low``)."""
    if parent in QUANTITY_LABELS:
        return "percent" if parent in PERCENT_QUANTITIES else "number"
    if key in PERCENT_FIELDS:
        return "percent"
    if key in DURATIONS:
        return DURATIONS[key]
    if key in MONTH_FIELDS:
        return "month"
    if "usd" in key.split("_"):
        return "money"
    return "number"


def field_words(key: str, parent: str = "") -> str:
    """A field's words: the builder's label ("Utilization", "Financing: APR"), the uncertain
    quantities' names, and a duration's label without its unit ("Horizon"), since its value
    says it."""
    if key in QUANTITY_LABELS:
        return QUANTITY_LABELS[key]
    if key == "simulation":
        return "Monte Carlo simulation"
    if key == "sizing":
        return "Sizing sweeps"
    joined = f"{parent}_{key}" if parent else key
    label = label_of(joined) if joined in LABELS else label_of(key)
    if key in DURATIONS and label.endswith(")"):
        label = label[: label.rindex(" (")]
    return label


def _tiers_text(tiers: list[Any]) -> str:
    parts = []
    for tier in tiers:
        if not isinstance(tier, dict):
            return str(tiers)
        price = _number(tier.get("usd_per_gb"))
        rate = formatted("money", price) if price is not None else "?"
        up = _number(tier.get("up_to_tb"))
        parts.append(f"{rate} per GB up to {_plain(up, 6)} TB" if up is not None else rate)
    return ", then ".join(parts) if parts else "none"


def value_words(value: Any, key: str = "", parent: str = "", digits: int = 3) -> str:
    """An input's value as a person reads it, by the field it is in (``key``, within
    ``parent``): "90 %", "$2.99", "36 months", "yes"; "none" for no value; an offer as its
    provider, instance and region; egress tiers in one line."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    number = _number(value)
    if number is not None:
        return formatted(value_kind(key, parent), number, digits)
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and {"provider", "instance", "region"} <= set(value):
        return f"{value['provider']} {value['instance']} in {value['region']}"
    if isinstance(value, dict) and {"provider", "model"} <= set(value):
        return f"{value['provider']} {value['model']}"
    if isinstance(value, list) and key == "egress_tiers":
        return _tiers_text(value)
    if isinstance(value, dict) and "dist" in value:
        numbers = ", ".join(
            f"{name} {value_words(v, name, parent or key, digits)}"
            for name, v in value.items()
            if name != "dist"
        )
        return f"{value['dist']} ({numbers})" if numbers else str(value["dist"])
    if isinstance(value, dict):
        return "; ".join(
            f"{field_words(k, key)} {value_words(v, k, key)}" for k, v in value.items()
        )
    if isinstance(value, list):
        return ", ".join(value_words(v, key, parent, digits) for v in value) or "none"
    return str(value)


def values_apart(a: Any, b: Any, key: str = "", parent: str = "") -> tuple[str, str]:
    """Two different values written so that they read differently: more figures where the
    usual ones would make them look the same ("$2.49" and "$2.4917")."""
    for digits in (3, 5, 8, 12, 17):
        texts = value_words(a, key, parent, digits), value_words(b, key, parent, digits)
        if texts[0] != texts[1]:
            return texts
    return texts


def change_words(a: Any, b: Any, key: str = "", parent: str = "") -> str:
    """B − A in words, for two numbers: "−60 points" for shares, "−$0.500 (−16.7 %)" for money,
    "+12 months", "+8 (+100 %)"; "" when either is not a number."""
    x, y = _number(a), _number(b)
    if x is None or y is None or x == y:
        return ""
    kind = value_kind(key, parent)
    delta = y - x
    sign = "+" if delta > 0 else ""
    if kind == "percent":
        return sign + formatted("points", delta)
    text = sign + formatted(kind, delta)
    if kind in ("month", "months", "hours", "GPU-hours") or x == 0:
        return text.replace("month ", "") + (" months" if kind == "month" else "")
    pct = 100 * delta / abs(x)
    return f"{text} ({sign}{formatted('number', round(pct, 1))} %)"
