"""Template filters of the token prices and assumptions pages."""

import re
from typing import Any

from django import template

from hardware.display.figures import percent_text, plain_numbers_in, usd_rate, usd_total

register = template.Library()

SCHEME = re.compile(r"\b[a-z][a-z0-9+.-]*://", re.I)


@register.filter
def address_as_text(value: str) -> str:
    """A source's text with every web address's scheme dropped (``fireworks.ai/pricing``): the
    page names the address but never links to or loads another site; its numbers never in
    exponent form (``hardware.display.figures.plain_numbers_in``)."""
    return plain_numbers_in(SCHEME.sub("", value or ""))


WHOLE_DOLLARS = {"USD", "USD per year", "USD per month", "USD per server"}
"""Units of an assumption written in whole dollars; other ``USD per …`` units are rates."""


@register.filter
def assumption_value(figure: Any) -> str:
    """An assumption's value as a person reads it, by its unit: a sum in whole dollars
    (``$200,000`` a year), a rate in USD to the cent or 3 significant figures (``$184.06`` per
    kW-month, ``$0.0826`` per kWh), a share of capex as a percentage (``12.0 %``), anything else
    as stored, with thousands separators (``1.25``, ``50,677``)."""
    unit = str(figure.unit or "")
    if unit in WHOLE_DOLLARS:
        return usd_total(figure.value)
    if unit.startswith("USD per "):
        return usd_rate(figure.value)
    if unit.startswith("share of"):
        return percent_text(figure.value)
    return format(figure.value.normalize(), ",f") if figure.value is not None else ""
