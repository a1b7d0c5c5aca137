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


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2e9, "2 B"),
        (20_000_000, "20 M"),
        (1.5e12, "1.5 T"),
        (2_000e9, "2 T"),  # never "2e+03 B"
        (4.236e20, "424 E"),
        (1.56e23, "156 Z"),
        (999_950_000, "1 B"),  # rounds up into the next size
        (1_234_567, "1.23 M"),
        (150_000, "150,000"),
        (12.5, "12.5"),
        (-2.5e6, "-2.5 M"),
        (None, "—"),
    ],
)
def test_quantities_read_with_the_letter_of_their_size(value, text):
    assert figures.quantity_text(value) == text


@given(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False))
def test_no_figure_is_ever_written_in_exponent_form(value):
    for text in (
        figures.quantity_text(value),
        figures.plain_number(value),
        figures.column_text(value, figures.column_decimals([value])),
    ):
        assert "e" not in text.lower(), text


def test_plain_numbers_keep_their_significant_figures_without_trailing_zeros():
    assert figures.plain_number(0.034366) == "0.034366"
    assert figures.plain_number(4.2359999999999993e20) == "423,600,000,000,000,000,000"
    assert figures.plain_number(1234.5) == "1,234.5"
    assert figures.plain_number(-0.0) == "0"


@pytest.mark.parametrize(
    ("column", "texts"),
    [
        ([75.0, 125.0, 0.25], ["75.00", "125.00", "0.25"]),
        ([265_000.0, 0.0, 12_345.6], ["265,000", "0", "12,346"]),
        ([0.0625, 0.031, None], ["0.0625", "0.0310", "—"]),
        ([999.5, 2.991], ["999.50", "2.99"]),
        ([73.4622, 50.8483], ["73.46", "50.85"]),
        ([1, 2, 30], ["1", "2", "30"]),
        ([3.0, 12.0], ["3", "12"]),  # whole numbers stay whole
        ([-0.001, 2.5], ["0.00", "2.50"]),  # no "-0.00"
    ],
)
def test_a_column_has_one_precision_for_all_its_figures(column, texts):
    decimals = figures.column_decimals(column)
    assert [figures.column_text(value, decimals) for value in column] == texts


def test_a_texts_numbers_in_exponent_form_read_in_plain_digits():
    note = "DeepSeek R1 0528; cached input 4e-07/token; per token in/out 5e-07/2.15e-06"
    assert figures.plain_numbers_in(note) == (
        "DeepSeek R1 0528; cached input 0.0000004/token; per token in/out 0.0000005/0.00000215"
    )
    assert figures.plain_numbers_in("H100 v5e-8 at 1.5E+3 USD") == "H100 v5e-8 at 1,500 USD"


def test_a_stored_decimal_reads_without_exponent_or_trailing_zeros():
    assert figures.decimal_text(Decimal("0E-10")) == "0"
    assert figures.decimal_text(Decimal("23.9200000000")) == "23.92"
    assert figures.decimal_text(Decimal("100")) == "100"
    assert figures.decimal_text(None) == ""
