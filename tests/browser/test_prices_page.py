"""The Prices page in a real browser (headless Chromium): filter with the form, sort by a column."""

import re
from decimal import Decimal

import pytest

from hardware.selectors import current_prices
from tests.browser.support import PASSWORD, log_in
from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def column(page, name: str) -> list[str]:
    """The exact figures of one money column of the price table, found by its header (each
    cell reads rounded and carries the source's figure in ``data-exact``)."""
    headers = [h.strip() for h in page.locator("#price-table thead th").all_inner_texts()]
    index = next(i for i, h in enumerate(headers) if h.startswith(name))
    cells = page.locator(f"#price-table tbody tr td:nth-child({index + 1})")
    return [cell.get_attribute("data-exact") or "" for cell in cells.all()]


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


MID_WORD_BREAKS = """(selector) => Array.from(document.querySelectorAll(selector)).flatMap(code => {
  const chars = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      chars.push([node.data[i], range.getBoundingClientRect().top]);
    }
  }
  const breaks = [];
  for (let i = 1; i < chars.length; i++) {
    if (chars[i][1] > chars[i - 1][1] + 2 && !"._-/:".includes(chars[i - 1][0])) {
      breaks.push(code.textContent + " after " + chars[i - 1][0]);
    }
  }
  return breaks;
})"""
"""Where an instance name wraps to a new line other than after a separator."""


@pytest.mark.parametrize("width", [390, 1280, 1440])
def test_the_price_source_and_age_show_without_sideways_scrolling(
    page, live_server, catalog, width
):
    user_with_role("lead", "viewer", password=PASSWORD)
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "lead")
    page.goto(live_server.url + "/prices/?ordering=-usd_per_gpu_hour")
    fit = page.evaluate(
        """() => { const t = document.querySelector('#price-table');
        const box = t.closest('.table-scroll');
        return [t.scrollWidth, box.clientWidth, document.documentElement.scrollWidth,
                document.documentElement.clientWidth]; }"""
    )
    # an instance name wraps only after its separators (p3. / 16xlarge), never mid-word
    assert page.evaluate(MID_WORD_BREAKS, "#price-table td.instance code") == []
    if width < 640:
        return  # a phone scrolls the table sideways in its box
    assert fit[0] <= fit[1] and fit[2] <= fit[3], fit
    # price, source and its age are on screen in every row, the load times folded away
    viewport = page.viewport_size["width"]
    first = page.locator("#price-table tbody tr").first
    for cell in ("td.usd-per-gpu-hour", "td.source"):
        box = first.locator(cell).bounding_box()
        assert box is not None and box["x"] + box["width"] <= viewport, (cell, box)
    source = first.locator("td.source")
    assert source.locator("time").first.inner_text().startswith("stated ")
    assert source.locator("details.loaded").get_attribute("open") is None
    price = first.locator("td.usd-per-gpu-hour")
    assert price.inner_text().startswith("$")
    assert (
        Decimal(price.get_attribute("data-exact"))
        == current_prices().order_by("-usd_per_gpu_hour").first().usd_per_gpu_hour
    )
