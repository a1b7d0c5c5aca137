"""Writes for users and tokens."""

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group, Permission
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from knox.models import AuthToken

from .roles import ROLE_MODELS, ROLES, STAFF_ROLES, user_role


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


def role_permissions_sync() -> None:
    """Each role's group (made when missing) holds exactly the model permissions
    ``accounts.roles.ROLE_MODELS`` gives its role, of those that exist yet (run after every
    migration, when Django has made the permissions of each model)."""
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role)
        wanted = Q(pk__in=[])
        for model, actions in ROLE_MODELS[role].items():
            app_label, model_name = model.split(".")
            wanted |= Q(
                content_type__app_label=app_label,
                content_type__model=model_name,
                codename__in=[f"{action}_{model_name}" for action in actions],
            )
        group.permissions.set(Permission.objects.filter(wanted))


def role_staff_sync(*, user: AbstractBaseUser) -> None:
    """``user`` may use the admin (staff) when their role is one of
    ``accounts.roles.STAFF_ROLES`` or they are a superuser, and may not otherwise: the staff flag
    follows the role, never set by hand."""
    if hasattr(user, "_gpu_tco_role"):
        del user._gpu_tco_role  # the groups just changed
    staff = bool(getattr(user, "is_superuser", False)) or user_role(user) in STAFF_ROLES
    get_user_model().objects.filter(pk=user.pk).exclude(is_staff=staff).update(is_staff=staff)
    user.is_staff = staff  # type: ignore[attr-defined]
