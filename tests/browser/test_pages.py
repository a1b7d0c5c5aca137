"""Pages in a real browser (headless Chromium)."""

import re

import pytest
from django.contrib.auth import get_user_model

from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_visitor_logs_in_opens_the_gpu_models_and_logs_out(page, live_server, catalog):
    user_with_role("finance", "viewer", password="a long pass phrase")
    page.goto(live_server.url + "/")
    assert re.search(r"/login/\?next=/$", page.url)
    page.fill("#id_username", "finance")
    page.fill("#id_password", "a long pass phrase")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    page.get_by_role("link", name="GPU models", exact=True).click()
    page.wait_for_url(live_server.url + "/gpus/")
    rows = page.locator("#gpu-table tbody tr")
    assert rows.count() >= 28
    h100 = page.locator("#gpu-table tbody tr", has_text="h100-sxm").first
    assert "989.4" in h100.inner_text() and "3.35" in h100.inner_text()
    page.click("text=Log out")
    page.wait_for_url(re.compile(r"/login/"))
    page.goto(live_server.url + "/")
    assert "/login/" in page.url


def test_a_wrong_password_shows_an_error(page, live_server):
    get_user_model().objects.create_user("infra", password="a long pass phrase")
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", "infra")
    page.fill("#id_password", "nope")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text().startswith("Your username and password")
