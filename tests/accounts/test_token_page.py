"""The API tokens page (/tokens/): lists your tokens without their keys, makes one and shows its
key once, revokes one (POST with the CSRF token), for any signed-in user."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from accounts import services

pytestmark = pytest.mark.django_db

PAGE = "/tokens/"
API = "/api/v1/auth/tokens/"


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice", password="correct horse 1")


def api_answer(key: str) -> int:
    """What the API answers a request made with ``key``."""
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}").get(API).status_code


def key_field(html: str) -> str:
    found = re.search(r'<input type="text" id="new-token-key" value="([^"]+)"', html)
    assert found, "no key field"
    return found.group(1)


def test_the_page_lists_your_working_tokens_with_dates_and_a_prefix_never_the_key(client, alice):
    _old, old_key = services.token_create(user=alice)
    mine, key = services.token_create(user=alice)
    expired, expired_key = services.token_create(user=alice)
    AuthToken.objects.filter(pk=expired.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    bob = get_user_model().objects.create_user("bob")
    _theirs, their_key = services.token_create(user=bob)
    client.force_login(alice)
    response = client.get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    rows = re.findall(r'<tr data-token="(\w+)">', html)
    assert sorted(rows) == sorted([key[:8], old_key[:8]])
    for secret in (old_key, key, expired_key, their_key):
        assert secret not in html
    assert expired_key[:8] not in html and their_key[:8] not in html
    made = timezone.localtime(mine.created).strftime("%Y-%m-%d %H:%M")
    expires = timezone.localtime(mine.expiry).strftime("%Y-%m-%d %H:%M")
    assert made in html and expires in html
    assert "new-token-key" not in html  # no key shown without making one
    assert "no-store" in response["Cache-Control"]


def test_making_a_token_shows_its_working_key_once(client, alice, settings):
    settings.API_TOKEN_LIFETIME = timedelta(days=30)
    client.force_login(alice)
    response = client.post(PAGE)
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]  # the key is not kept by any cache
    html = response.content.decode()
    key = key_field(html)
    assert "Copy the key now: it won't be shown again." in html
    assert '<label for="new-token-key">' in html and 'data-copy="new-token-key"' in html
    (stored,) = AuthToken.objects.filter(user=alice)
    assert key.startswith(stored.token_key) and key not in (stored.digest, stored.token_key)
    assert timezone.now() + timedelta(days=29) < stored.expiry <= timezone.now() + timedelta(30)
    assert f'<tr data-token="{key[:8]}">' in html
    assert api_answer(key) == 200
    again = client.get(PAGE).content.decode()
    assert key not in again and f'<tr data-token="{key[:8]}">' in again


def test_revoking_a_token_stops_it_and_only_its_owner_may(client, alice):
    token, key = services.token_create(user=alice)
    _kept, kept_key = services.token_create(user=alice)
    token_id = token.token_key
    mallory = get_user_model().objects.create_user("mallory")
    client.force_login(mallory)
    refused = client.post(PAGE, {"revoke": token_id}, follow=True)
    assert "No such token of yours" in refused.content.decode()
    assert api_answer(key) == 200
    client.force_login(alice)
    response = client.post(PAGE, {"revoke": token_id})
    assert response.status_code == 302 and response["Location"] == PAGE
    page = client.get(PAGE).content.decode()
    assert f"The token {key[:8]}… was revoked" in page
    assert (
        f'<tr data-token="{key[:8]}">' not in page and f'<tr data-token="{kept_key[:8]}">' in page
    )
    assert api_answer(key) == 401 and api_answer(kept_key) == 200
    again = client.post(PAGE, {"revoke": token_id}, follow=True)
    assert "No such token of yours" in again.content.decode()


def test_making_and_revoking_need_the_csrf_token(alice):
    token, key = services.token_create(user=alice)
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(PAGE).status_code == 403
    assert client.post(PAGE, {"revoke": token.token_key}).status_code == 403
    assert AuthToken.objects.filter(user=alice).count() == 1 and api_answer(key) == 200
    html = client.get(PAGE).content.decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    made = client.post(PAGE, {"csrfmiddlewaretoken": csrf})
    assert made.status_code == 200 and AuthToken.objects.filter(user=alice).count() == 2


def test_any_signed_in_user_reaches_the_page_from_the_header_and_visitors_log_in(client):
    assert client.get(PAGE)["Location"].startswith("/login/?next=/tokens/")
    assert client.post(PAGE).status_code == 302 and not AuthToken.objects.exists()
    nobody = get_user_model().objects.create_user("nobody")  # no role at all
    viewer = get_user_model().objects.create_user("viewer")
    viewer.groups.add(Group.objects.get(name="viewer"))
    for user in (nobody, viewer):
        client.force_login(user)
        assert client.get(PAGE).status_code == 200
        assert '<a href="/tokens/"' in client.get("/").content.decode()
