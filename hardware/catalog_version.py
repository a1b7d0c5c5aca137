"""The catalog's version: a token that changes after every committed write to what the price
lists show (prices, offers, regions, providers, GPU models), so that a page cached under one
version is never served after such a write (``hardware/api/page_cache.py``).

The token lives in the shared cache (Redis in production) with no expiry. It is a random string,
not a counter: if the key is ever lost, the token made to replace it matches no cached page.

Every write path reaches :func:`catalog_changed`: ``save()`` and ``delete()`` (the admin, the API,
services) through the model signals connected in ``hardware/apps.py``; bulk writes and
``QuerySet.update()`` (loads, refresh apply, vanished prices) through ``CatalogQuerySet``; a
migration through ``post_migrate``. The new token is written once the transaction commits, so a
reader never caches rows of an uncommitted write under the new token. A write made while the
cache (Redis) does not answer is kept (it has committed); the failed bump is logged, and a page
cached before it may be served until ``API_PAGE_CACHE_SECONDS`` pass, if Redis comes back with it.
"""

import logging
import secrets
from typing import Any

from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections, models, transaction
from redis import RedisError

logger = logging.getLogger(__name__)

VERSION_KEY = "hardware:catalog-version"


def catalog_version() -> str:
    """The current version token (made, and kept without expiry, when there is none)."""
    version = cache.get(VERSION_KEY)
    if version is None:
        cache.add(VERSION_KEY, secrets.token_hex(8), timeout=None)
        version = cache.get(VERSION_KEY)
    return version


def _bump() -> None:
    try:
        cache.set(VERSION_KEY, secrets.token_hex(8), timeout=None)
    except RedisError as exc:
        logger.error("the catalog changed but its version could not be bumped: %s", exc)


def catalog_changed(*, using: str | None = None) -> None:
    """Give the catalog a new version once the current transaction on ``using`` commits (at once
    outside a transaction). Called many times in one transaction, it bumps once."""
    connection = connections[using or DEFAULT_DB_ALIAS]
    if connection.in_atomic_block and any(
        entry[1] is _bump for entry in getattr(connection, "run_on_commit", ())
    ):
        return
    transaction.on_commit(_bump, using=using)


class CatalogQuerySet(models.QuerySet):
    """A queryset whose bulk writes, which send no model signals, change the catalog version."""

    def update(self, **kwargs: Any) -> int:
        rows = super().update(**kwargs)
        if rows:
            catalog_changed(using=self.db)
        return rows

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list:
        created = super().bulk_create(objs, *args, **kwargs)
        if created:
            catalog_changed(using=self.db)
        return created


def on_catalog_write(sender: type, using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """Receiver of ``post_save`` / ``post_delete`` / ``post_migrate``."""
    catalog_changed(using=using)
