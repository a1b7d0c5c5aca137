"""The four roles of docs/api.md, as Django groups, each including the ones before it.

- ``viewer``: read the catalog, and the shared scenarios and their runs;
- ``analyst``: also own scenarios and runs;
- ``catalog-editor``: also write the catalog and quotes (in the pages, the API and the admin);
- ``admin``: also price refreshes, held feeds, users (in the admin and the API).

Superusers hold every role. A user's role is the highest group it belongs to. Catalog editors and
admins use the admin: their staff flag follows their role (``accounts.services.role_staff_sync``)
and their groups hold the model permissions of ``ROLE_MODELS``.
"""

from typing import Any

VIEWER = "viewer"
ANALYST = "analyst"
CATALOG_EDITOR = "catalog-editor"
ADMIN = "admin"

ROLES: tuple[str, ...] = (VIEWER, ANALYST, CATALOG_EDITOR, ADMIN)
"""Lowest to highest: each role may do what the roles before it may."""


STAFF_ROLES: tuple[str, ...] = (CATALOG_EDITOR, ADMIN)
"""The roles that use the admin (staff)."""

CATALOG_MODELS: tuple[str, ...] = (
    "hardware.gpumodel",
    "hardware.provider",
    "hardware.region",
    "hardware.instanceoffer",
    "hardware.instanceprice",
    "hardware.egresstier",
    "hardware.dedicatedquote",
    "hardware.purchasequote",
    "hardware.tokenprice",
    "hardware.assumption",
)
"""The catalog, quotes, token prices and assumptions: what catalog editors edit."""

EVERY_ACTION = ("view", "add", "change", "delete")

ROLE_MODELS: dict[str, dict[str, tuple[str, ...]]] = {
    VIEWER: {},
    ANALYST: {},
    CATALOG_EDITOR: {model: EVERY_ACTION for model in CATALOG_MODELS},
    ADMIN: {
        **{model: EVERY_ACTION for model in CATALOG_MODELS},
        # refresh runs are records: looked at, and held ones approved or discarded
        "hardware.refreshrun": ("view", "change"),
        "auth.user": EVERY_ACTION,
        "auth.group": ("view",),
    },
}
"""Each role group's model permissions in the admin (``app_label.model``: the actions), given to
the group after every migration (``accounts.services.role_permissions_sync``). Each role's group
holds all of its role's permissions, since a user is in their highest role's group only."""


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
