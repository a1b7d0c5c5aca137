"""Template context shared by every page: the signed-in user's role."""

from django.http import HttpRequest

ROLES = ("admin", "catalog-editor", "analyst", "viewer")
"""The roles (Django groups), most powerful first (docs: api.md, "Authentication and roles")."""


def role_of(user) -> str | None:
    """The user's role: ``admin`` for a superuser, else the most powerful role group the user is
    in; None for an anonymous user or one in no role group."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return "admin"
    names = set(user.groups.values_list("name", flat=True))
    return next((role for role in ROLES if role in names), None)


def user_role(request: HttpRequest) -> dict[str, str | None]:
    """``user_role`` for the header."""
    return {"user_role": role_of(request.user)}
