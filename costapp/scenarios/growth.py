"""Growth as a person says it and as the scenario format takes it: a rate a year in percent
("50 % a year"), Ask's rate a month in percent ("3.437 % a month") and the format's
``monthly_growth``, a fraction a month, (1 + g)^(1/12) − 1 from a rate a year. Ask and the
scenario builder both convert by these, so the same growth gives the same document.
"""

from __future__ import annotations

import math
from decimal import Decimal

from hardware.display.figures import plain_number

AGREE_REL = 1e-4
"""How close a rate a month and a rate a year given together must be to say the same growth
(relative, on the rate a month): a yearly figure shown to 6 significant digits reads back as
the rate a month it was shown for."""


def monthly_from_yearly(percent_a_year: float) -> float:
    """The format's ``monthly_growth`` for a growth of ``percent_a_year`` % a year (above −100):
    (1 + g)^(1/12) − 1; 50 gives 0.0343661."""
    return float((1 + percent_a_year / 100) ** (1 / 12) - 1)


def percent_a_month(percent: float) -> float:
    """A growth of ``percent`` % a month as the format's ``monthly_growth`` (3.437 gives
    0.03437): Ask takes the rate a month in percent, as a person says it."""
    return percent / 100


def given_monthly(percent_a_year: float | None, percent_month: float | None) -> float:
    """The format's ``monthly_growth`` of a growth given a year or a month in percent (either,
    the month's when both are given, as the builder keeps a rate a month typed; none is no
    growth)."""
    if percent_month is not None:
        return percent_a_month(percent_month)
    return monthly_from_yearly(percent_a_year or 0.0)


def yearly_percent(monthly: float) -> float | None:
    """A growth a month (the format's fraction) as percent a year, (1 + m)^12 − 1; None when
    that is beyond a float."""
    try:
        return float(((1 + monthly) ** 12 - 1) * 100)
    except OverflowError:
        return None


def agree(monthly: float, percent_a_year: float) -> bool:
    """Whether a rate a month and a rate a year given together say the same growth."""
    if percent_a_year <= -100:
        return False
    return math.isclose(monthly_from_yearly(percent_a_year), monthly, rel_tol=AGREE_REL,
                        abs_tol=1e-12)  # fmt: skip


def yearly_text(monthly: float) -> str:
    """The rate a year a form shows beside a rate a month (6 significant digits, plain digits
    as a number field takes them: ``50.0008``); empty when no rate a year reads back as it."""
    percent = yearly_percent(monthly)
    if percent is None or not math.isfinite(percent):
        return ""
    for digits in (6, 10, 17):
        text = format(Decimal(f"{percent:.{digits}g}"), "f")
        if agree(monthly, float(text)):
            return text
    return ""


def growth_words(monthly: float) -> str:
    """A rate a month with its rate a year, in words: "3.437 % a month (50 % a year)"."""
    percent = yearly_percent(monthly)
    yearly = "beyond any figure" if percent is None else f"{plain_number(percent, 4)} %"
    return f"{plain_number(100 * monthly, 4)} % a month ({yearly} a year)"


def _typed(raw: object) -> float | None:
    try:
        value = float(str(raw if raw is not None else "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def typed_note(monthly: object, percent_a_year: object, *, month_scale: float = 1.0) -> str:
    """The note a form shows under its rate a month: the growth as typed, in words, the rate a
    month first (``month_scale`` turns it into the format's fraction: 1 for the builder's
    fraction, 0.01 for Ask's percent), "= 3.437 % a month (50 % a year)"; "" when neither reads
    as a growth above −100 %."""
    month = _typed(monthly)
    if month is not None and month * month_scale > -1:
        return "= " + growth_words(month * month_scale)
    year = _typed(percent_a_year)
    if year is not None and year > -100:
        try:
            return "= " + growth_words(monthly_from_yearly(year))
        except OverflowError:
            return ""
    return ""
