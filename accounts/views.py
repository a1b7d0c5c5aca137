"""Server-rendered page of the signed-in user's API tokens: the tokens that still work (when
made, when they expire, the first characters of their id; never a key), a button to make one (its
key shown in that answer only) and one to revoke each. The same services as the token endpoints
(``/api/v1/auth/tokens/``)."""

import math
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from . import selectors, services
from .backends import sign_in_refusal
from .guessing import retry_after

TOKEN_PREFIX_LENGTH = 8
"""How many characters of a token's id (its key's first characters) the page shows."""


class AuthenticatedHttpRequest(HttpRequest):
    """A request ``login_required`` let through: its user is signed in (for type checking)."""

    user: User


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Your API tokens. ``POST`` without ``revoke`` makes a token and answers with its key, shown
    this once (the answer is never cached); ``POST`` with ``revoke=<id>`` revokes that token of
    yours."""
    new_key = None
    if request.method == "POST":
        token_id = request.POST.get("revoke")
        if token_id is not None:
            return _revoke(request, token_id)
        _token, new_key = services.token_create(user=request.user)
    context = {
        "tokens": selectors.tokens_for_user(user=request.user),
        "new_key": new_key,
        "new_prefix": new_key[:TOKEN_PREFIX_LENGTH] if new_key else None,
        "prefix_length": TOKEN_PREFIX_LENGTH,
        "lifetime_days": settings.API_TOKEN_LIFETIME.days,
    }
    return render(request, "accounts/tokens.html", context)


def _revoke(request: AuthenticatedHttpRequest, token_id: str) -> HttpResponse:
    if services.token_revoke(user=request.user, token_id=token_id):
        prefix = token_id[:TOKEN_PREFIX_LENGTH]
        messages.success(request, f"The token {prefix}… was revoked: it no longer works.")
    else:
        messages.error(request, "No such token of yours: it was revoked already, or has expired.")
    return redirect("tokens")


def _minutes(wait: float) -> str:
    minutes = math.ceil(wait / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


class SignInView(LoginView):
    """The login page: 429 with ``Retry-After`` and a message while the account or the address is
    over its limit of failed sign-ins (``accounts.guessing``), the right password included."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        refusal = sign_in_refusal(self.request)
        if refusal is not None:
            context["sign_in_refused"] = (
                "Too many failed sign-ins for this account or from this address: try again"
                f" in {_minutes(refusal.wait)}."
            )
        return context

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        response = super().form_invalid(form)
        refusal = sign_in_refusal(self.request)
        if refusal is not None:
            response.status_code = 429
            response["Retry-After"] = str(retry_after(refusal.wait))
        return response
