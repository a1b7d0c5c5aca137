"""The Content-Security-Policy in a real browser (headless Chromium) on the pages the crawl leaves
out: the API's documentation (Swagger UI and Redoc, served from the site's own files) draws
under the policy with no console error, and an inline script is refused where one is tried."""

import pytest

from costapp.csp import HEADER

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def console_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def test_swagger_ui_and_redoc_draw_under_the_policy(page, live_server):
    page.set_default_timeout(60_000)
    errors = console_errors(page)
    docs = page.goto(f"{live_server.url}/api/docs/")
    assert docs is not None and docs.header_value("content-security-policy") == HEADER
    page.wait_for_selector(".swagger-ui .info .title")
    page.wait_for_selector(".opblock-tag")  # the operations, read from the schema
    redoc = page.goto(f"{live_server.url}/api/redoc/")
    assert redoc is not None and redoc.header_value("content-security-policy") == HEADER
    page.wait_for_selector("redoc .api-content h1")
    # Redoc's sidebar credits Redocly with a logo from its CDN: the policy blocks it (no page
    # loads anything from another site), and that is the one refusal expected.
    assert [e for e in errors if "https://cdn.redoc.ly/" not in e] == [], errors


def test_an_inline_script_is_refused(page, live_server):
    errors = console_errors(page)
    page.goto(f"{live_server.url}/login/")
    ran = page.evaluate(
        """() => { window.inlineRan = false;
        const s = document.createElement("script"); s.textContent = "window.inlineRan = true";
        document.body.appendChild(s); return window.inlineRan; }"""
    )
    assert ran is False
    assert any("Content Security Policy" in error for error in errors), errors
