"""The API tokens page in a real browser: make a token from the header link, copy its key,
use it on the API, revoke it."""

import json
import urllib.error
import urllib.request

import pytest

from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def api_status(base: str, key: str) -> int:
    request = urllib.request.Request(
        base + "/api/v1/auth/tokens/", headers={"Authorization": f"Token {key}"}
    )
    try:
        with urllib.request.urlopen(request) as answer:
            json.load(answer)
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_viewer_makes_copies_uses_and_revokes_a_token(page, live_server, tmp_path):
    user_with_role("viewer", "viewer", password="a long pass phrase")
    # a fresh browser's first page can take a while on a loaded machine
    page.goto(live_server.url + "/login/", timeout=60_000)
    page.fill("#id_username", "viewer")
    page.fill("#id_password", "a long pass phrase")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    page.get_by_role("link", name="API tokens").click()
    page.wait_for_url(live_server.url + "/tokens/")
    assert "no token that works" in page.locator("#tokens-table").inner_text()
    page.click("#create-token")
    page.wait_for_selector("#new-token-key")
    key = page.input_value("#new-token-key")
    assert len(key) == 64
    assert "won't be shown again" in page.locator("#new-token").inner_text()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("#copy-key")
    page.wait_for_selector("[data-copied-for=new-token-key]:has-text('Copied.')")
    assert page.evaluate("navigator.clipboard.readText()") == key
    page.screenshot(path=str(tmp_path / "tokens.png"), full_page=True)
    row = page.locator("#tokens-table tbody tr")
    assert row.count() == 1 and key[:8] in row.inner_text() and key not in row.inner_text()
    assert api_status(live_server.url, key) == 200
    page.get_by_role("button", name=f"Revoke token {key[:8]}…").click()
    page.wait_for_selector(f"text=The token {key[:8]}… was revoked")
    assert "no token that works" in page.locator("#tokens-table").inner_text()
    assert page.locator("#new-token-key").count() == 0
    assert api_status(live_server.url, key) == 401
