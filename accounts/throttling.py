"""Throttling per API token (docs/api.md): each token has its own budget of requests.

A request made with a token is counted against that token; a browser session against its user;
an anonymous request against its address. The rate is the ``API_THROTTLE_RATE`` setting
(``"<count>/<second|minute|hour|day>"``), read at each request so an operator can change it
without touching code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

if TYPE_CHECKING:  # rest_framework.views reads the settings that name this module
    from rest_framework.request import Request
    from rest_framework.views import APIView


class TokenRateThrottle(SimpleRateThrottle):
    """At most ``API_THROTTLE_RATE`` requests per token (per user for sessions)."""

    scope = "token"

    def __init__(self) -> None:
        # The rate is looked up per request in allow_request, not once at import.
        pass

    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATE

    def allow_request(self, request: Request, view: APIView) -> bool:
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: APIView) -> str:
        token = getattr(request, "auth", None)
        token_key = getattr(token, "token_key", None)
        if token_key:
            ident = f"token:{token_key}"
        elif request.user and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"address:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
