"""Charts in a real browser (headless Chromium): an offer's price history draws a Plotly plot."""

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from hardware.models import InstanceOffer, InstancePrice
from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def test_an_offers_price_history_draws_a_plotly_chart_from_local_scripts(
    page, live_server, catalog
):
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    first = InstancePrice.objects.get(offer=offer, region__code="us-east-1", billing="on_demand")
    for days, usd_per_hour in ((30, "50.00"), (60, "45.60")):
        at = first.first_seen + timedelta(days=days)
        InstancePrice.objects.create(
            offer=offer,
            region=first.region,
            billing="on_demand",
            usd_per_hour=Decimal(usd_per_hour),
            first_seen=at,
            last_seen=at + timedelta(days=5),
            stated_on=at.date(),
            source_name="test refresh",
        )
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
    on_demand = next(t for t in traces if t["name"] == "us-east-1 on-demand")
    assert on_demand["y"] == [6.88, 6.25, 5.7, 5.7]
    assert page.locator("#chart-price-history .main-svg .scatterlayer .trace").count() == len(
        traces
    )
    assert page.locator(".modebar-btn--logo").count() == 0  # Plotly's logo link is off
    assert all(url.startswith(live_server.url) for url in requests), requests
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "offer-price-history.png"), full_page=True)
    assert (SCREENSHOTS / "offer-price-history.png").stat().st_size > 10_000
