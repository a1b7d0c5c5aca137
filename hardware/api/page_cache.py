"""Rendered pages of ``prices/current/``, kept in the shared cache for ``API_PAGE_CACHE_SECONDS``.

A page is keyed by everything its bytes depend on: the database, the absolute URL (scheme, host, path and the
whole query string: filters, ordering, page, page size, ``as_of``; the ``next`` and ``previous``
links are built from it), the media type negotiated (JSON only; the browsable API is never
cached) and the first day a price is not stale (``stale`` changes with the date and
``PRICE_STALE_DAYS``). It is stored with the catalog version read *before* its rows were queried
and served only while that is still the version (``hardware/catalog_version.py``): after any
committed write to the catalog, no page cached before it is served again. Authentication,
permissions and throttling run before the view, as for any request; only answers 200 are kept.

One cache round trip on a hit: the version and the page are read together. While the cache
(Redis) does not answer, pages are made for each request and not kept.
"""

import hashlib
import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from redis import RedisError
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from hardware.catalog_version import VERSION_KEY, catalog_version
from hardware.models import stale_before

logger = logging.getLogger(__name__)

PAGE_KEY_PREFIX = "hardware:api-page:"


@dataclass(frozen=True)
class PageLookup:
    """A page looked up: ``hit`` is the cached answer, or ``None`` and the page is to be made
    and stored under ``key`` with ``version``."""

    key: str
    version: str
    hit: HttpResponse | None


def page_key(request: Request) -> str | None:
    """The cache key of the page ``request`` asks for; ``None`` when it is not to be cached."""
    if not settings.API_PAGE_CACHE_SECONDS or request.method not in ("GET", "HEAD"):
        return None
    if type(getattr(request, "accepted_renderer", None)) is not JSONRenderer:
        return None
    text = "\n".join(
        (
            settings.DATABASES["default"]["NAME"],
            request.build_absolute_uri(),
            request.accepted_media_type,
            stale_before().isoformat(),
        )
    )
    return PAGE_KEY_PREFIX + hashlib.sha256(text.encode()).hexdigest()


def page_lookup(request: Request) -> PageLookup | None:
    """The cached page for ``request`` if it was made under the current catalog version."""
    key = page_key(request)
    if key is None:
        return None
    try:
        found = cache.get_many([VERSION_KEY, key])
        version = found.get(VERSION_KEY) or catalog_version()
    except RedisError as exc:
        logger.warning("the page cache does not answer (%s): page made, not kept", exc)
        return None
    entry = found.get(key)
    if entry is not None and entry[0] == version:
        _, content_type, body = entry
        return PageLookup(key, version, HttpResponse(body, content_type=content_type))
    return PageLookup(key, version, None)


def page_store(lookup: PageLookup | None, response: Response) -> Response:
    """Keep ``response`` once rendered (when it is a 200) under ``lookup``; returns it."""
    if lookup is None or response.status_code != 200:
        return response

    def store(rendered: Response) -> None:
        entry = (lookup.version, rendered["Content-Type"], rendered.content)
        try:
            cache.set(lookup.key, entry, timeout=settings.API_PAGE_CACHE_SECONDS)
        except RedisError as exc:
            logger.warning("the page cache does not answer (%s): page not kept", exc)

    response.add_post_render_callback(store)
    return response
