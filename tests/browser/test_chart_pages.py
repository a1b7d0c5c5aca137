"""Charts in a real browser (headless Chromium): an offer's price history draws a Plotly plot
whose text (title, ticks, axis titles, legend, the labels beside lone dots) never overlaps and
never leaves the chart, at a desktop's width and a phone's."""

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from hardware.models import InstanceOffer, InstancePrice
from tests.browser.layout import FITTED, OVERFLOWS, PLOT_TEXT
from tests.browser.support import log_in
from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def add_later_prices(first: InstancePrice) -> None:
    """Two later prices of ``first``'s offer, region and billing, stated 30 and 60 days after it
    (loaded a day after they were stated)."""
    for days, usd_per_hour in ((30, "50.00"), (60, "45.60")):
        stated = first.stated_on + timedelta(days=days)
        at = first.first_seen + timedelta(days=days)
        InstancePrice.objects.create(
            offer=first.offer,
            region=first.region,
            billing=first.billing,
            usd_per_hour=Decimal(usd_per_hour),
            first_seen=at,
            last_seen=at + timedelta(days=5),
            stated_on=stated,
            source_name="test refresh",
        )


def test_an_offers_price_history_draws_a_plotly_chart_from_local_scripts(
    page, live_server, catalog
):
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    first = InstancePrice.objects.get(offer=offer, region__code="us-east-1", billing="on_demand")
    add_later_prices(first)
    user_with_role("finance", "viewer", password="a long pass phrase")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", "finance")
    page.fill("#id_password", "a long pass phrase")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    page.goto(f"{live_server.url}/offers/{offer.pk}/")

    plot = page.locator("#chart-price-history .js-plotly-plot")
    plot.wait_for()
    traces = page.evaluate(
        "() => document.querySelector('#chart-price-history .js-plotly-plot')"
        ".data.map(t => ({name: t.name, y: t.y}))"
    )
    on_demand = next(t for t in traces if t["name"] == "us-east-1, on-demand")
    assert on_demand["y"] == [6.88, 6.25, 5.7]  # by the days their sources stated them
    assert page.locator("#chart-price-history .main-svg .scatterlayer .trace").count() == len(
        traces
    )
    assert page.locator(".modebar-btn--logo").count() == 0  # Plotly's logo link is off
    assert all(url.startswith(live_server.url) for url in requests), requests
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "offer-price-history.png"), full_page=True)
    assert (SCREENSHOTS / "offer-price-history.png").stat().st_size > 10_000


TEXTS = """(plot) => Array.from(plot.querySelectorAll("svg text"))
  .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
  .map(t => ({text: t.textContent, kind: t.getAttribute("class") || t.parentNode.getAttribute("class") || ""}))"""
"""Every drawn text of a Plotly chart with its kind (``xtick``, ``legendtext``, ``annotation-text``,
``gtitle``, ``ytitle`` …)."""
SCROLLED = """() => Array.from(document.querySelectorAll("#chart-price-history .legend .scrollbar"))
  .filter(bar => { const r = bar.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
  .length"""
"""How many scroll bars the chart's legend shows (plotly.js draws one, of no size, in every
legend; it has a size when the legend is longer than its room)."""


@pytest.mark.parametrize("width", [1440, 390])
@pytest.mark.parametrize("history", ["as shipped", "with later prices"])
def test_an_offers_price_history_text_never_overlaps_nor_leaves_the_chart(
    browser, live_server, catalog, width, history
):
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    if history == "with later prices":
        add_later_prices(
            InstancePrice.objects.get(offer=offer, region__code="us-east-1", billing="on_demand")
        )
    user_with_role("finance", "viewer", password="a long pass phrase")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        log_in(page, live_server, "finance")
        page.goto(f"{live_server.url}/offers/{offer.pk}/")
        plot = page.locator("#chart-price-history .js-plotly-plot")
        plot.wait_for()
        page.wait_for_function(FITTED)
        problems = page.evaluate(OVERFLOWS) + page.evaluate(PLOT_TEXT)
        scrolls = page.evaluate(SCROLLED)
        found = plot.evaluate(TEXTS)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        name = f"offer-price-history-{history.replace(' ', '-')}-{width}.png"
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)
    finally:
        context.close()
    texts = [t["text"] for t in found]
    series = InstancePrice.objects.filter(offer=offer).values("region", "billing").distinct()
    legend = [t["text"] for t in found if t["kind"] == "legendtext"]
    assert len(legend) == series.count() and "us-east-1, on-demand" in legend
    assert scrolls == 0  # the whole legend in sight, none of it scrolled away
    assert "Price per GPU-hour as stated" in texts and "Price [USD per GPU-hour]" in texts
    ticks = [t["text"] for t in found if t["kind"] == "xtick"]
    assert ticks and len(set(ticks)) == len(ticks), ticks
    labels = [t for t in texts if t.endswith(" on 2025-10-01")]
    if history == "as shipped":
        assert ticks == ["Oct 12025"]  # one tick, at the day the source stated the prices
        assert len(labels) >= 15  # the lone dots' values and days written beside them
    else:
        assert len(ticks) >= 2  # the days span two months: a tick per month, each different
    assert problems == [], problems
