"""X-Forwarded-Proto is believed from the proxies TRUSTED_PROXIES names, from no other client."""

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


@override_settings(
    SECURE_SSL_REDIRECT=True, TRUSTED_PROXIES=["10.1.0.0/16", "::1"], SECURE_HSTS_SECONDS=60
)
@pytest.mark.parametrize(
    ("remote_addr", "believed"),
    [("10.1.2.3", True), ("::1", True), ("10.2.0.1", False), ("203.0.113.9", False)],
)
def test_only_a_named_proxy_makes_a_request_https(remote_addr, believed):
    response = Client().get("/login/", HTTP_X_FORWARDED_PROTO="https", REMOTE_ADDR=remote_addr)
    if believed:  # served as HTTPS: no redirect, HSTS sent
        assert response.status_code == 200
        assert response["Strict-Transport-Security"].startswith("max-age=60")
    else:  # a plain request: sent to HTTPS, no HSTS
        assert response.status_code == 301 and response["Location"].startswith("https://")
        assert "Strict-Transport-Security" not in response
