"""Template filters for catalog figures."""

import re
from decimal import Decimal

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from hardware.confidence import (
    PriceConfidence,
    observation_confidence,
    price_confidence,
    token_price_confidence,
)
from hardware.display.figures import decimal_text
from hardware.models import InstancePrice, MarketObservation, TokenPrice

register = template.Library()


@register.filter
def plain_decimal(value: Decimal | None) -> str:
    """A stored Decimal as plain text with its trailing zeros dropped: ``23.9200000000`` ->
    ``23.92``, ``80.00`` -> ``80``; never rounded, never in exponent form; ``None`` -> ``""``."""
    return decimal_text(value)


@register.filter
def confidence(price: InstancePrice) -> PriceConfidence:
    """A price's confidence and its reasons (``hardware.confidence.price_confidence``)."""
    return price_confidence(price)


@register.filter
def token_confidence(price: TokenPrice) -> PriceConfidence:
    """A token price's confidence (``hardware.confidence.token_price_confidence``)."""
    return token_price_confidence(price)


@register.filter
def observed_confidence(observation: MarketObservation) -> PriceConfidence:
    """A market observation's confidence (``hardware.confidence.observation_confidence``)."""
    return observation_confidence(observation)


@register.filter
def confidence_label(price: InstancePrice) -> str:
    """A price's confidence in a few words: "Medium confidence (marketplace)"."""
    judged = price_confidence(price)
    return f"{judged.label} ({', '.join(judged.short)})" if judged.short else judged.label


BREAK_AFTER = re.compile(r"([._/:-]+)")


@register.filter
def breakable(name: str) -> SafeString:
    """A machine name (an instance type, a region code) that may wrap only after its separators
    (``.``, ``_``, ``-``, ``/``, ``:``), never inside a word: ``p3.16xlarge`` wraps as
    ``p3.`` / ``16xlarge``, not ``p3.16xlarg`` / ``e``."""
    return mark_safe(BREAK_AFTER.sub(r"\1<wbr>", escape(str(name))))
