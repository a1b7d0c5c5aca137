"""The Prices page in a real browser (headless Chromium): filter with the form, sort by a column."""

import re
from decimal import Decimal

import pytest

from hardware.selectors import current_prices
from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def column(page, name: str) -> list[str]:
    """The texts of one column of the price table, found by its header."""
    headers = [h.strip() for h in page.locator("#price-table thead th").all_inner_texts()]
    index = next(i for i, h in enumerate(headers) if h.startswith(name))
    return [
        text.strip()
        for text in page.locator(
            f"#price-table tbody tr td:nth-child({index + 1})"
        ).all_inner_texts()
    ]


def test_a_user_filters_prices_by_gpu_and_billing_then_sorts_by_usd_per_gpu_hour(
    page, live_server, catalog
):
    user_with_role("infra", "viewer", password="a long pass phrase")
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", "infra")
    page.fill("#id_password", "a long pass phrase")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")

    page.get_by_role("link", name="Prices", exact=True).click()
    page.wait_for_url(live_server.url + "/prices/")
    assert page.locator("#price-table tbody tr").count() == 50

    page.get_by_label("GPU", exact=True).select_option(label="H100 SXM5 80GB")
    page.get_by_label("Billing").select_option(value="spot")
    page.get_by_role("button", name="Apply filters").click()
    page.wait_for_url(re.compile(r"/prices/\?.*gpu=h100-sxm"))

    expected = current_prices().filter(offer__gpu__slug="h100-sxm", billing="spot").count()
    rows = page.locator("#price-table tbody tr")
    assert 0 < expected == rows.count()
    assert page.locator("#price-count").inner_text().startswith(f"{expected} current prices")
    assert {row.get_attribute("data-gpu") for row in rows.all()} == {"h100-sxm"}
    assert {row.get_attribute("data-billing") for row in rows.all()} == {"spot"}

    page.locator("#price-table thead a[data-sort=usd_per_gpu_hour]").click()
    page.wait_for_url(re.compile(r"ordering=usd_per_gpu_hour"))
    assert "gpu=h100-sxm" in page.url and "billing=spot" in page.url
    values = [Decimal(v) for v in column(page, "USD per GPU-hour")]
    assert len(values) == expected and values == sorted(values)

    page.locator("#price-table thead a[data-sort=usd_per_gpu_hour]").click()
    page.wait_for_url(re.compile(r"ordering=-usd_per_gpu_hour"))
    values = [Decimal(v) for v in column(page, "USD per GPU-hour")]
    assert values == sorted(values, reverse=True) and values[0] > values[-1]
    header = page.locator("#price-table thead th", has_text="USD per GPU-hour")
    assert header.get_attribute("aria-sort") == "descending"
