"""Figures as a person reads them: totals, prices per hour, percentages, ages in words."""

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from django.template import Context, Template
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from hardware.display import figures

TODAY = date(2026, 12, 2)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1234567.49, "$1,234,567"),
        (1234.5, "$1,235"),  # half up, as money is rounded
        (Decimal("15960.00"), "$15,960"),
        (0.4, "$0"),
        (-12.6, "-$13"),
        (None, "—"),
        (float("nan"), "—"),
    ],
)
def test_totals_are_whole_dollars_with_thousands_separators(value, text):
    assert figures.usd_total(value) == text


def test_a_difference_of_totals_writes_its_sign():
    assert figures.usd_total(2500, sign=True) == "+$2,500"
    assert figures.usd_total(-2500, sign=True) == "-$2,500"
    assert figures.usd_total(0.2, sign=True) == "$0"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.4949, "$2.49"),
        (1, "$1.00"),
        (98.32, "$98.32"),
        (1234.5, "$1,234.50"),
        (Decimal("3.9290000"), "$3.93"),
        (0.41249, "$0.412"),
        (0.0625, "$0.0625"),
        (0.00015, "$0.000150"),
        (0.9996, "$1.00"),
        (0.99949, "$0.999"),
        (Decimal("0.1234567"), "$0.123"),
        (0, "$0.00"),
        (-3.2, "-$3.20"),
        (None, "—"),
    ],
)
def test_prices_per_hour_have_2_decimals_from_a_dollar_and_3_significant_figures_below(value, text):
    assert figures.usd_rate(value) == text


@given(st.floats(min_value=1e-6, max_value=0.9994, allow_nan=False))
def test_a_price_below_a_dollar_keeps_3_significant_figures(value):
    text = figures.usd_rate(value).removeprefix("$")
    digits = text.replace("0.", "", 1).lstrip("0")
    assert len(digits) == 3, (value, text)
    assert abs(float(text) - value) <= 0.0051 * value


@pytest.mark.parametrize(
    ("value", "share", "text"),
    [(0.375, True, "37.5 %"), (0.9, True, "90.0 %"), (37.46, False, "37.5 %"),
     (-0.0001, True, "0.0 %"), (None, True, "—")],
)  # fmt: skip
def test_percentages_have_one_decimal(value, share, text):
    assert figures.percent_text(value, share=share) == text


@pytest.mark.parametrize(
    ("day", "words"),
    [
        (date(2026, 12, 2), "today"),
        (date(2026, 12, 1), "yesterday"),
        (date(2026, 11, 29), "3 days ago"),
        (date(2026, 10, 4), "59 days ago"),
        (date(2026, 10, 3), "2 months ago"),
        (date(2025, 10, 1), "14 months ago"),
        (date(2025, 10, 3), "13 months ago"),
        (date(2024, 12, 3), "23 months ago"),
        (date(2024, 12, 2), "2 years ago"),
        (date(2021, 6, 30), "5 years ago"),
        (date(2026, 12, 3), "tomorrow"),
        (date(2026, 12, 7), "in 5 days"),
        (date(2027, 6, 2), "in 6 months"),
        (datetime(2026, 11, 29, 23, 59, tzinfo=UTC), "3 days ago"),
    ],
)
def test_ages_are_in_words(day, words):
    assert figures.age_words(day, TODAY) == words


def test_a_statement_without_a_day_says_so():
    assert figures.stated_words(None, TODAY) == "date unknown"
    assert figures.stated_words(date(2025, 10, 1), TODAY) == "stated 14 months ago"


def test_the_stated_filter_writes_words_with_the_date_on_hover():
    day = timezone.now().date().replace(day=1)
    html = Template("{% load figures %}{{ day|stated }}").render(Context({"day": day}))
    expected_words = figures.stated_words(day, timezone.now().date())
    assert html == (
        f'<time datetime="{day.isoformat()}" title="{day.isoformat()}">{expected_words}</time>'
    )
    none = Template("{% load figures %}{{ day|stated }}").render(Context({"day": None}))
    assert none == "date unknown"


def test_the_stated_filter_reads_a_result_documents_iso_day():
    day = timezone.now().date().replace(day=1)
    html = Template("{% load figures %}{{ day|stated }}").render(Context({"day": day.isoformat()}))
    assert html.endswith(f">{figures.stated_words(day, timezone.now().date())}</time>")
    bad = Template("{% load figures %}{{ day|stated }}").render(Context({"day": "soon"}))
    assert bad == "date unknown"


def test_savings_beyond_minus_100_percent_read_as_a_multiple_of_the_baseline():
    from hardware.display.figures import savings_text

    assert savings_text(37.5) == "37.5 %"
    assert savings_text(-50.0) == "-50.0 %"
    assert savings_text(-729.8) == "costs 8.3 × the baseline"
    assert savings_text(-3431.4) == "costs 35.3 × the baseline"
    assert savings_text(None) == "—"


def test_a_change_of_nothing_is_unchanged_without_a_sign():
    from hardware.display.figures import change_text

    assert change_text(0.0) == "unchanged"
    assert change_text(0.001, 2) == "unchanged"  # nothing at the precision shown
    assert change_text(-1234.5, 1) == "−1,234.5"
    assert change_text(2.5, 0) == "+2"
