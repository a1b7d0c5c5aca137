"""The four roles of docs/api.md, as Django groups, each including the ones before it.

- ``viewer``: read the catalog;
- ``analyst``: also own scenarios and runs;
- ``catalog-editor``: also write the catalog and quotes;
- ``admin``: also price refreshes, held feeds, users.

Superusers hold every role. A user's role is the highest group it belongs to.
"""

from typing import Any

VIEWER = "viewer"
ANALYST = "analyst"
CATALOG_EDITOR = "catalog-editor"
ADMIN = "admin"

ROLES: tuple[str, ...] = (VIEWER, ANALYST, CATALOG_EDITOR, ADMIN)
"""Lowest to highest: each role may do what the roles before it may."""


def role_rank(role: str) -> int:
    """The position of ``role`` in ``ROLES`` (ValueError for an unknown role)."""
    return ROLES.index(role)


def user_role(user: Any) -> str | None:
    """The highest role of ``user``: ``admin`` for a superuser, ``None`` without any role."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    if user.is_superuser:
        return ADMIN
    if hasattr(user, "_gpu_tco_role"):
        cached: str | None = user._gpu_tco_role
        return cached
    names = set(user.groups.values_list("name", flat=True))
    return remember_role(user, [role in names for role in ROLES])


def remember_role(user: Any, held: list[bool]) -> str | None:
    """Keep on ``user`` the highest role of ``ROLES`` whose flag in ``held`` is true (what
    :func:`user_role` then answers without a query); returns it."""
    roles = [role for role, holds in zip(ROLES, held, strict=True) if holds]
    role = roles[-1] if roles else None
    user._gpu_tco_role = role
    return role


def user_has_role(user: Any, role: str) -> bool:
    """Whether ``user`` holds ``role`` or a higher one."""
    held = user_role(user)
    return held is not None and role_rank(held) >= role_rank(role)
