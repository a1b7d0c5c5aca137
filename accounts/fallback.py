"""A per-process stand-in for the shared cache while Redis is down.

The throttle (``accounts.throttling``) and the sign-in limits (``accounts.guessing``) keep their
counts in Redis, shared by every process. When Redis does not answer the throttle falls back to a
cache of this process's own (Django's ``LocMemCache``): its limits still hold, per process instead
of across them, and reads that need no Redis keep answering; the sign-in limits count in the
database instead (``accounts.models.SignInLog``), across processes still. The fall-back is logged once per
outage, and again when Redis answers.
"""

import logging
import threading
from typing import Any

from django.core.cache.backends.locmem import LocMemCache

logger = logging.getLogger(__name__)

_scripts: dict[tuple[int, str], Any] = {}


def redis_script(cache: Any, source: str) -> Any:
    """The Lua script ``source`` registered on ``cache``'s Redis client (once per client);
    ``None`` when the cache is not Redis."""
    client_of = getattr(cache, "redis_client", None)
    if client_of is None:
        return None
    client = client_of()
    key = (id(client), source)
    script = _scripts.get(key)
    if script is None:
        script = _scripts[key] = client.register_script(source)
    return script


class LocalFallback:
    """The stand-in for one use (``what``, in the log): :attr:`cache`, and the log of its state."""

    def __init__(self, what: str, instead: str = "per process") -> None:
        self.what = what
        self.instead = instead
        self.cache = LocMemCache(f"gputco-fallback-{what}", {"OPTIONS": {"MAX_ENTRIES": 10_000}})
        self.degraded = False
        self._lock = threading.Lock()

    def failed(self, exc: Exception) -> LocMemCache:
        """Redis failed: log it (once until it answers again); the cache to use instead."""
        with self._lock:
            if not self.degraded:
                self.degraded = True
                logger.warning(
                    "Redis does not answer (%s: %s): %s counted %s until it does",
                    type(exc).__name__,
                    exc,
                    self.what,
                    self.instead,
                )
        return self.cache

    def answered(self) -> None:
        """Redis answered: log the end of an outage."""
        if self.degraded:
            with self._lock:
                if self.degraded:
                    self.degraded = False
                    logger.warning("Redis answers again: %s shared across processes", self.what)
