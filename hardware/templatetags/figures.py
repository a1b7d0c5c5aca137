"""Template filters for figures as a person reads them (``hardware/display/figures.py``): totals in
whole dollars, prices per hour, percentages, and when a source stated a figure, in words with
the date on hover."""

from datetime import UTC, date, datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import format_html

from hardware.display import figures

register = template.Library()


@register.filter
def usd(value: Any) -> str:
    """A total in whole dollars with thousands separators: ``$1,234,567``."""
    return figures.usd_total(value)


@register.filter
def usd_rate(value: Any) -> str:
    """A price per hour: ``$2.49``, ``$0.0625``."""
    return figures.usd_rate(value)


@register.filter
def pct(value: Any) -> str:
    """A share in [0, 1] as a percentage with one decimal: ``37.5 %``."""
    return figures.percent_text(value)


@register.filter
def pct_points(value: Any) -> str:
    """A figure already in percent, with one decimal: ``37.5 %``."""
    return figures.percent_text(value, share=False)


@register.filter
def savings(value: Any) -> str:
    """Savings in percent, a multiple of the baseline beyond -100 %: ``costs 8.3 × the baseline``."""
    return figures.savings_text(value)


def _today() -> date:
    return timezone.now().date()


def _parsed(value: date | datetime | str | None) -> date | datetime | None:
    """A day or instant, also from its ISO text (a result document's ``stated_on``); None for
    no value or text that is not a date."""
    if isinstance(value, str):
        try:
            return date.fromisoformat(value) if len(value) == 10 else datetime.fromisoformat(value)
        except ValueError:
            return None
    return value


def _when(value: date | datetime) -> tuple[str, str]:
    """The ``datetime`` attribute and the hover text of a day or an instant (UTC)."""
    if isinstance(value, datetime):
        moment = value.astimezone(UTC) if timezone.is_aware(value) else value
        return moment.isoformat(), moment.strftime("%Y-%m-%d %H:%M UTC")
    return value.isoformat(), value.isoformat()


def _time(value: date | datetime, words: str) -> str:
    """``words`` in a ``<time>`` element with the day or instant on hover."""
    machine, shown = _when(value)
    return format_html('<time datetime="{}" title="{}">{}</time>', machine, shown, words)


@register.filter
def stated(value: date | datetime | str | None) -> str:
    """When a source stated a figure: ``<time … title="2025-10-01">stated 14 months ago</time>``;
    "date unknown" for no day."""
    value = _parsed(value)
    if value is None:
        return "date unknown"
    return _time(value, figures.stated_words(value, _today()))


@register.filter
def ago(value: date | datetime | str | None) -> str:
    """How long ago a day or instant was, in words, with its date on hover: ``3 days ago``."""
    value = _parsed(value)
    if value is None:
        return "—"
    return _time(value, figures.age_words(value, _today()))
