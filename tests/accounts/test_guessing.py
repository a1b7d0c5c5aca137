"""Password guessing is limited (docs/api.md): 10 failed sign-ins per account and 50 per address in
15 minutes, on the login page and on token creation by password; then 429 with Retry-After, the
right password included, until the window passes. The check hashes no password."""

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from rest_framework.test import APIClient

from accounts import guessing

TOKENS = "/api/v1/auth/tokens/"
PASSWORD = "correct horse 1"


class Clock:
    """``accounts.guessing.clock``, moved on by hand."""

    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    moved = Clock()
    monkeypatch.setattr(guessing, "clock", moved)
    return moved


@pytest.fixture(autouse=True)
def quick_hashing(settings):
    """A fast hasher: these tests check hundreds of passwords (what is counted, not the cost)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users(django_user_model):
    return {
        name: django_user_model.objects.create_user(name, password=PASSWORD)
        for name in ("guessed", "other")
    }


def token_post(username: str, password: str, address: str = "127.0.0.1"):
    return APIClient().post(
        TOKENS, {"username": username, "password": password}, format="json", REMOTE_ADDR=address
    )


@pytest.mark.django_db
def test_eleven_wrong_passwords_lock_the_account_for_the_window_right_password_included(
    users, clock
):
    answers = [token_post("guessed", f"wrong {n}").status_code for n in range(10)]
    assert answers == [401] * 10
    eleventh = token_post("guessed", "wrong 10")
    assert eleventh.status_code == 429
    assert eleventh["Retry-After"] == str(15 * 60)
    [error] = eleventh.json()["errors"]
    assert error["field"] is None and "Too many failed sign-ins" in error["message"]

    clock.now += 600
    right = token_post("guessed", PASSWORD)
    assert right.status_code == 429
    assert right["Retry-After"] == str(15 * 60 - 600)

    other = token_post("other", PASSWORD)  # another account is not affected
    assert other.status_code == 201

    clock.now += 300  # the window has passed
    assert token_post("guessed", PASSWORD).status_code == 201


@pytest.mark.django_db
def test_a_refused_attempt_hashes_no_password(users, clock, monkeypatch):
    for n in range(10):
        token_post("guessed", f"wrong {n}")
    hashed = []
    original = MD5PasswordHasher.encode

    def encode(self, password, salt):
        hashed.append(password)
        return original(self, password, salt)

    monkeypatch.setattr(MD5PasswordHasher, "encode", encode)
    assert token_post("guessed", PASSWORD).status_code == 429
    assert hashed == []
    assert token_post("other", PASSWORD).status_code == 201
    assert hashed == [PASSWORD]


@pytest.mark.django_db
def test_a_success_forgets_the_accounts_failures(users, clock):
    for n in range(9):
        assert token_post("guessed", f"wrong {n}").status_code == 401
    assert token_post("guessed", PASSWORD).status_code == 201
    for n in range(10):
        assert token_post("guessed", f"wrong again {n}").status_code == 401
    assert token_post("guessed", PASSWORD).status_code == 429


@pytest.mark.django_db
def test_fifty_failures_from_one_address_lock_that_address_only(django_user_model, clock):
    for n in range(50):
        answer = token_post(f"nobody-{n}", "wrong", address="203.0.113.7")
        assert answer.status_code == 401, n
    django_user_model.objects.create_user("real", password=PASSWORD)
    refused = token_post("real", PASSWORD, address="203.0.113.7")
    assert refused.status_code == 429 and int(refused["Retry-After"]) == 15 * 60
    assert token_post("real", PASSWORD, address="203.0.113.8").status_code == 201


def test_an_ipv6_address_is_counted_by_its_64():
    assert guessing.address_of("2001:db8:1:2::5") == guessing.address_of("2001:db8:1:2:ffff::1")
    assert guessing.address_of("2001:db8:1:2::5") != guessing.address_of("2001:db8:1:3::5")
    assert guessing.address_of("198.51.100.1") == "198.51.100.1"


@pytest.mark.django_db
def test_the_login_page_answers_429_with_a_message_while_locked(users, clock, client):
    for n in range(10):
        page = client.post("/login/", {"username": "guessed", "password": f"wrong {n}"})
        assert page.status_code == 200 and b"didn't match" in page.content
    locked = client.post("/login/", {"username": "guessed", "password": PASSWORD})
    assert locked.status_code == 429
    assert locked["Retry-After"] == str(15 * 60)
    assert b"Too many failed sign-ins" in locked.content and b"15 minutes" in locked.content
    assert "_auth_user_id" not in client.session
    # the login page and the token endpoint count the same failures
    assert token_post("guessed", PASSWORD).status_code == 429
    clock.now += 15 * 60
    signed_in = client.post("/login/", {"username": "guessed", "password": PASSWORD})
    assert signed_in.status_code == 302


@pytest.mark.django_db
def test_a_token_cannot_make_a_token(users):
    key = token_post("guessed", PASSWORD).json()["key"]
    client = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    refused = client.post(TOKENS, {}, format="json")
    assert refused.status_code == 403
    [error] = refused.json()["errors"]
    assert error["field"] is None and "A token cannot make tokens" in error["message"]
    with_password = client.post(
        TOKENS, {"username": "guessed", "password": PASSWORD}, format="json"
    )
    assert with_password.status_code == 403
    assert client.get(TOKENS).json()["count"] == 1  # no token was made
