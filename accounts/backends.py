"""The sign-in backend: Django's ``ModelBackend`` behind the guessing limit
(``accounts.guessing``). Every password check goes through it (the login page, the admin's, token
creation by password), so none escapes the limit."""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from . import guessing

REFUSED_ATTRIBUTE = "sign_in_refused"
"""Set on the request (a ``guessing.TooManyFailures``) when an attempt was refused unheard, so
the view can answer 429 with ``Retry-After``."""


def sign_in_refusal(request: Any) -> guessing.TooManyFailures | None:
    """Why the last sign-in on ``request`` was refused unheard; ``None`` when it was heard."""
    return getattr(request, REFUSED_ATTRIBUTE, None)


class LimitedModelBackend(ModelBackend):
    """``ModelBackend``, refusing without hashing when the account or the address has failed too
    often (``PermissionDenied`` stops ``authenticate`` at once)."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return super().authenticate(request, username, password, **kwargs)
        remote_addr = request.META.get("REMOTE_ADDR") if request is not None else None
        try:
            attempt = guessing.attempt_begin(username=username, remote_addr=remote_addr)
        except guessing.TooManyFailures as refusal:
            if request is not None:
                setattr(request, REFUSED_ATTRIBUTE, refusal)
            raise PermissionDenied(str(refusal)) from None
        user = super().authenticate(request, username, password, **kwargs)
        if user is not None:
            attempt.succeeded()
        return user
