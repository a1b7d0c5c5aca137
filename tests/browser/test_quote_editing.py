"""Quotes in a real browser: a catalog editor opens the form in the page (htmx), sees a field
error, corrects it and saves; a viewer sees no way to edit."""

from decimal import Decimal

import pytest

from hardware.models import DedicatedQuote
from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page, live_server, username: str) -> None:
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "a long pass phrase")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")


def test_an_editor_adds_a_dedicated_quote_in_the_page(page, live_server, catalog):
    user_with_role("editor", "catalog-editor", password="a long pass phrase")
    log_in(page, live_server, "editor")
    page.get_by_role("link", name="Quotes", exact=True).click()
    page.wait_for_url(live_server.url + "/quotes/")

    page.get_by_role("link", name="New dedicated-server quote").click()
    form = page.locator("#quote-editor #quote-form")
    form.wait_for()
    assert page.url == live_server.url + "/quotes/"  # the form came into the page
    page.fill("#id_vendor", "Hoster")
    page.fill("#id_reference", "Q-77")
    page.fill("#id_server_description", "8x H100 SXM")
    page.select_option("#id_gpu", label="H100 SXM5 80GB")
    page.fill("#id_gpus_per_server", "8")
    page.fill("#id_usd_per_server_month", "-14250.50")
    page.fill("#id_term_months", "12")
    page.get_by_role("button", name="Add quote").click()
    alert = page.locator("#quote-editor [role=alert]")
    alert.wait_for()
    assert "USD per server-month: must be more than 0" in alert.inner_text()
    assert not DedicatedQuote.objects.filter(reference="Q-77").exists()

    page.fill("#id_usd_per_server_month", "14250.50")
    page.get_by_role("button", name="Add quote").click()
    page.locator(".messages li").wait_for()
    assert "Hoster Q-77 was added" in page.locator(".messages").inner_text()
    row = page.locator("#dedicated-quotes tbody tr", has_text="Q-77")
    assert "$14,251" in row.inner_text()  # whole dollars on the page, exact in the database
    assert DedicatedQuote.objects.get(reference="Q-77").usd_per_server_month == Decimal("14250.5")
    assert row.get_by_role("link", name="Edit").count() == 1
    # a viewer sees the quotes with no way to add or edit one
    user_with_role("reader", "viewer", password="a long pass phrase")
    page.context.clear_cookies()
    log_in(page, live_server, "reader")
    page.goto(live_server.url + "/quotes/")
    reader_row = page.locator("#dedicated-quotes tbody tr", has_text="Q-77")
    assert "$14,251" in reader_row.inner_text()
    assert page.get_by_role("link", name="Edit").count() == 0
    assert page.get_by_role("link", name="New dedicated-server quote").count() == 0
