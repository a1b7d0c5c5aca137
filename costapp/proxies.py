"""Which clients may say how the request reached the site: ``X-Forwarded-Proto`` (read by
Django's ``SECURE_PROXY_SSL_HEADER`` for ``request.is_secure()``, secure cookies and the HTTPS
redirect) is kept only when the request comes from an address of ``TRUSTED_PROXIES``, and
dropped from any other client, which could otherwise pass a plain-HTTP request off as HTTPS."""

import ipaddress
from collections.abc import Callable
from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse

FORWARDED_PROTO = "HTTP_X_FORWARDED_PROTO"


@cache
def _networks(
    trusted: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in trusted)


def trusted_proxy(remote_addr: str | None) -> bool:
    """Whether ``remote_addr`` is one of the proxies ``TRUSTED_PROXIES`` names (addresses or
    networks, e.g. ``10.0.0.0/8``)."""
    if not remote_addr:
        return False
    try:
        address = ipaddress.ip_address(remote_addr)
    except ValueError:
        return False
    return any(address in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


class ForwardedProtoMiddleware:
    """Drops ``X-Forwarded-Proto`` from a request that no trusted proxy sent."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if FORWARDED_PROTO in request.META and not trusted_proxy(request.META.get("REMOTE_ADDR")):
            del request.META[FORWARDED_PROTO]
        return self.get_response(request)
