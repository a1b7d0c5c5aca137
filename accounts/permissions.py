"""DRF permission classes for the roles (accounts.roles).

An anonymous request is refused before these run (401 with ``WWW-Authenticate: Token``, since
token authentication comes first); a signed-in user without the role gets 403.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.permissions import SAFE_METHODS, BasePermission

from accounts.roles import ADMIN, ANALYST, CATALOG_EDITOR, VIEWER, user_has_role

if TYPE_CHECKING:  # rest_framework.views reads the settings that name this module
    from rest_framework.request import Request
    from rest_framework.views import APIView


class _RolePermission(BasePermission):
    read_role = VIEWER
    write_role = ADMIN

    def has_permission(self, request: Request, view: APIView) -> bool:
        role = self.read_role if request.method in SAFE_METHODS else self.write_role
        return bool(
            request.user and request.user.is_authenticated and user_has_role(request.user, role)
        )


class CatalogPermission(_RolePermission):
    """The catalog: viewers read, catalog editors write."""

    read_role = VIEWER
    write_role = CATALOG_EDITOR


class ScenarioPermission(_RolePermission):
    """Scenarios and runs: every role reads (viewers the shared ones), analysts write (their
    own; object privacy is the view's)."""

    read_role = VIEWER
    write_role = ANALYST


class AnalystPermission(_RolePermission):
    """Pricing a document at once: analysts only."""

    read_role = ANALYST
    write_role = ANALYST


class AdminPermission(_RolePermission):
    """Price refreshes, held feeds and users: admins only."""

    read_role = ADMIN
    write_role = ADMIN
