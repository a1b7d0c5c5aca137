"""Writes for users and tokens."""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils import timezone
from knox.models import AuthToken

from .roles import ROLES


def token_create(*, user: AbstractBaseUser) -> tuple[AuthToken, str]:
    """A new API token for ``user``, expiring after ``API_TOKEN_LIFETIME``; returns the stored
    token (only a hash of the key is kept) and the key itself, which is not kept anywhere.
    The user's expired tokens are deleted (token authentication checks only the one presented)."""
    AuthToken.objects.filter(user=user, expiry__lt=timezone.now()).delete()
    return AuthToken.objects.create(user=user, expiry=settings.API_TOKEN_LIFETIME)


def token_revoke(*, user: AbstractBaseUser, token_id: str) -> bool:
    """Delete ``user``'s token with that id; whether there was one."""
    deleted, _ = AuthToken.objects.filter(user=user, token_key=token_id).delete()
    return deleted > 0


DEMO_ROLE_USERNAMES = {role: f"demo-{role}" for role in ROLES}


@transaction.atomic
def demo_role_users_create(*, password_factory: Callable[[], str]) -> dict[str, str]:
    """One user per role (``demo-viewer`` … ``demo-admin``), each in its role's group only,
    with a fresh password from ``password_factory()``; returns ``{username: password}``."""
    passwords = {}
    for role, username in DEMO_ROLE_USERNAMES.items():
        user, _ = get_user_model().objects.get_or_create(username=username)
        password = password_factory()
        user.set_password(password)
        user.save()
        user.groups.set([Group.objects.get(name=role)])
        passwords[username] = password
    return passwords
