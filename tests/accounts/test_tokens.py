"""Token endpoints (docs/api.md): hashed, expiring keys shown once; per-token throttling; JSON
404/405 everywhere under /api/."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from accounts.throttling import TokenRateThrottle

TOKENS = "/api/v1/auth/tokens/"


def forget_address_budget() -> None:
    """Reset the anonymous budget of the test client's address (and only that: the cache may be
    the Redis the broker uses)."""
    throttle = TokenRateThrottle()
    cache.delete(throttle.cache_format % {"scope": throttle.scope, "ident": "address:127.0.0.1"})


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="correct horse 1")


def token_for(user, client=None) -> str:
    client = client or APIClient()
    response = client.post(
        TOKENS, {"username": user.username, "password": "correct horse 1"}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()["key"]


@pytest.mark.django_db
def test_username_and_password_give_a_key_shown_once_and_stored_only_as_a_hash(alice, settings):
    settings.API_TOKEN_LIFETIME = timedelta(days=7)
    before = timezone.now()
    response = APIClient().post(
        TOKENS, {"username": "alice", "password": "correct horse 1"}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"id", "key", "expires", "created"}
    key = body["key"]
    stored = AuthToken.objects.get(user=alice)
    assert stored.token_key == body["id"] and key.startswith(body["id"])
    assert key not in (stored.digest, stored.token_key)
    assert len(stored.digest) == 128  # SHA-512 of the key, never the key
    expires = stored.expiry
    assert before + timedelta(days=7) <= expires <= timezone.now() + timedelta(days=7)

    client = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    listed = client.get(TOKENS)
    assert listed.status_code == 200
    rows = listed.json()["results"]
    assert [r["id"] for r in rows] == [body["id"]]
    assert "key" not in rows[0] and key not in listed.content.decode()


@pytest.mark.django_db
def test_a_session_gets_a_token_without_sending_the_password(alice):
    client = APIClient()
    client.force_login(alice)
    response = client.post(TOKENS, {}, format="json")
    assert response.status_code == 201
    assert AuthToken.objects.filter(user=alice).count() == 1


@pytest.mark.django_db
def test_wrong_or_missing_credentials_give_no_token(alice):
    client = APIClient()
    wrong = client.post(TOKENS, {"username": "alice", "password": "nope"}, format="json")
    assert wrong.status_code == 401
    assert wrong["WWW-Authenticate"].startswith("Token")
    assert wrong.json()["errors"][0]["message"] == "Wrong username or password."
    half = client.post(TOKENS, {"username": "alice"}, format="json")
    assert half.status_code == 400
    assert half.json()["errors"] == [
        {"field": "password", "message": "Give both username and password."}
    ]
    nothing = client.post(TOKENS, {}, format="json")
    assert nothing.status_code == 401
    assert not AuthToken.objects.exists()
    assert client.get(TOKENS).status_code == 401


@pytest.mark.django_db
def test_revoking_a_token_stops_it_and_nobody_else_can_revoke_it(alice, django_user_model):
    key = token_for(alice)
    token_id = AuthToken.objects.get(user=alice).token_key
    bob = django_user_model.objects.create_user("bob", password="correct horse 1")
    bob_client = APIClient(HTTP_AUTHORIZATION=f"Token {token_for(bob)}")
    assert bob_client.delete(f"{TOKENS}{token_id}/").status_code == 404
    client = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(TOKENS).status_code == 200
    assert client.delete(f"{TOKENS}{token_id}/").status_code == 204
    after = client.get(TOKENS)
    assert after.status_code == 401
    assert not AuthToken.objects.filter(user=alice).exists()


@pytest.mark.django_db
def test_an_expired_token_is_refused(alice):
    key = token_for(alice)
    AuthToken.objects.filter(user=alice).update(expiry=timezone.now() - timedelta(seconds=1))
    response = APIClient(HTTP_AUTHORIZATION=f"Token {key}").get(TOKENS)
    assert response.status_code == 401
    assert response.json()["errors"][0]["field"] is None


@pytest.mark.django_db
def test_an_expired_token_is_deleted_when_used_and_the_users_others_when_a_token_is_made(alice):
    from accounts.services import token_create

    expired_key, kept_key = token_for(alice), token_for(alice)
    expired, kept = (AuthToken.objects.get(token_key=k[:15]) for k in (expired_key, kept_key))
    AuthToken.objects.filter(pk=expired.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    assert APIClient(HTTP_AUTHORIZATION=f"Token {expired_key}").get(TOKENS).status_code == 401
    assert not AuthToken.objects.filter(pk=expired.pk).exists()
    assert APIClient(HTTP_AUTHORIZATION=f"Token {kept_key}").get(TOKENS).status_code == 200
    AuthToken.objects.filter(pk=kept.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    new, _ = token_create(user=alice)
    # the expired one went without being presented: only the new token is left
    assert list(AuthToken.objects.filter(user=alice)) == [new]


@pytest.mark.django_db
def test_a_token_request_reads_token_user_and_role_in_one_query(alice):
    from django.contrib.auth.models import Group
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from accounts.roles import ANALYST, VIEWER

    key = token_for(alice)
    client = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/gpus/").status_code == 403  # no role yet
    alice.groups.add(Group.objects.get(name=VIEWER))
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/v1/gpus/", {"page_size": 1}).status_code == 200
    token_queries = [q for q in queries if "knox_authtoken" in q["sql"]]
    assert len(token_queries) == 1 and "auth_group" in token_queries[0]["sql"]
    assert not [q for q in queries if q not in token_queries and "auth_" in q["sql"]]
    assert client.post("/api/v1/simulate/", {}, format="json").status_code == 403  # viewers read
    alice.groups.add(Group.objects.get(name=ANALYST))
    # the new role, at once: the empty document reaches the engine
    assert client.post("/api/v1/simulate/", {}, format="json").status_code == 400
    alice.is_active = False
    alice.save()
    refused = client.get("/api/v1/gpus/")
    assert refused.status_code == 401
    assert refused.json()["errors"][0]["message"] == "User inactive or deleted."
    wrong = key[:-1] + ("a" if key[-1] != "a" else "b")  # right token_key, wrong digest
    assert APIClient(HTTP_AUTHORIZATION=f"Token {wrong}").get(TOKENS).status_code == 401


@pytest.mark.django_db
def test_each_token_has_its_own_request_budget(alice, settings):
    forget_address_budget()
    first = APIClient(HTTP_AUTHORIZATION=f"Token {token_for(alice)}")
    second = APIClient(HTTP_AUTHORIZATION=f"Token {token_for(alice)}")
    settings.API_THROTTLE_RATE = "3/minute"
    assert [first.get(TOKENS).status_code for _ in range(4)] == [200, 200, 200, 429]
    throttled = first.get(TOKENS)
    assert throttled.status_code == 429
    assert int(throttled["Retry-After"]) > 0
    assert throttled.json()["errors"][0]["message"].startswith("Request was throttled")
    assert second.get(TOKENS).status_code == 200
    forget_address_budget()


@pytest.mark.django_db
def test_password_guessing_is_throttled_by_address(alice, settings):
    forget_address_budget()
    settings.API_THROTTLE_RATE = "2/minute"
    client = APIClient()
    answers = [
        client.post(TOKENS, {"username": "alice", "password": "guess"}, format="json").status_code
        for _ in range(3)
    ]
    assert answers == [401, 401, 429]
    forget_address_budget()


@pytest.mark.django_db
def test_unknown_api_paths_and_methods_answer_in_the_error_format(alice):
    client = APIClient(HTTP_AUTHORIZATION=f"Token {token_for(alice)}")
    missing = client.get("/api/v1/no-such-thing/")
    assert missing.status_code == 404
    assert missing.json() == {
        "errors": [{"field": None, "message": "No API endpoint at /api/v1/no-such-thing/."}]
    }
    slashless = client.get("/api/v1/auth/tokens")
    assert slashless.status_code == 404
    assert slashless.json()["errors"][0]["message"].endswith("Did you mean /api/v1/auth/tokens/ ?")
    posted = APIClient(enforce_csrf_checks=True).post("/api/v1/gpus/a.b/", {}, format="json")
    assert posted.status_code == 404 and posted.json()["errors"][0]["field"] is None
    wrong_method = client.put(TOKENS, {}, format="json")
    assert wrong_method.status_code == 405
    assert wrong_method.json() == {
        "errors": [{"field": None, "message": 'Method "PUT" not allowed.'}]
    }
