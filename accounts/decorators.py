"""The roles (accounts.roles) on server-rendered pages: a visitor is sent to log in; a signed-in
user below the page's role gets 403, as from the API (accounts.permissions)."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from .roles import ANALYST, user_has_role, user_role

View = Callable[..., HttpResponse]


def role_required(role: str) -> Callable[[View], View]:
    """A view decorator: signed in (else the login page) and holding ``role`` or a higher one
    (else 403, saying which role the page needs)."""

    def decorator(view: View) -> View:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not user_has_role(request.user, role):
                held = user_role(request.user) or "no role"
                raise PermissionDenied(
                    f"This page is for the {role} role and above; you have {held}."
                )
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def analyst_required(view: View) -> View:
    """Signed in (else the login page) and analyst or above (else 403): the pages that make or
    change scenarios and runs (viewers read the shared ones only)."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not user_has_role(request.user, ANALYST):
            raise PermissionDenied(
                "Making and changing scenarios and runs is for analysts and above; viewers read "
                "the shared ones."
            )
        return view(request, *args, **kwargs)

    return wrapped
