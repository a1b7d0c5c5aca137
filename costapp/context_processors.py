"""Template context shared by every page: the signed-in user's role."""

from django.http import HttpRequest

from accounts.roles import user_role as role_of


def user_role(request: HttpRequest) -> dict[str, str | None]:
    """``user_role`` for the header: the user's highest role (accounts.roles), or None."""
    return {"user_role": role_of(request.user)}
