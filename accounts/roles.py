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
    held = [role for role in ROLES if role in names]
    role = held[-1] if held else None
    user._gpu_tco_role = role
    return role


def user_has_role(user: Any, role: str) -> bool:
    """Whether ``user`` holds ``role`` or a higher one."""
    held = user_role(user)
    return held is not None and role_rank(held) >= role_rank(role)
