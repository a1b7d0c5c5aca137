"""Throttling per API token (docs/api.md): each token has its own budget of requests.

A request made with a token is counted against that token; a browser session against its user;
an anonymous request against its address. The rate is the ``API_THROTTLE_RATE`` setting
(``"<count>/<second|minute|hour|day>"``), read at each request so an operator can change it
without touching code.

The budget is DRF's sliding log: at most that many requests in any window of the period. With
Redis the log is a sorted set checked and updated by one script (one round trip, and atomic, so
two workers cannot both take the last request of a budget); with another cache, DRF's own list.
While Redis does not answer, DRF's list in a cache of the process's own (``accounts.fallback``):
the budget holds per process, and the API keeps answering.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from django.conf import settings
from redis import RedisError
from rest_framework.throttling import SimpleRateThrottle

from .fallback import LocalFallback, redis_script

# DRF's sliding log, kept in Redis as a sorted set and checked in one round trip: drop the times
# at or before now - window; refuse when as many as the limit remain (answering how many, and
# the oldest); otherwise add now. Returns {allowed, count, oldest}.
SLIDING_LOG = """
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, count, oldest[2]}
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('EXPIRE', key, math.ceil(window))
return {1, count + 1, '0'}
"""
FALLBACK = LocalFallback("API requests per token")


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
        self.window: tuple[int, float] | None = None
        script = redis_script(self.cache, SLIDING_LOG) if self.rate is not None else None
        if script is None:  # not Redis: DRF's list in the cache (read, then written back)
            return super().allow_request(request, view)
        self.key = self.get_cache_key(request, view)
        self.now = self.timer()
        try:
            allowed, count, oldest = script(
                keys=[self.cache.make_and_validate_key(self.key)],
                args=[repr(self.now), self.duration, self.num_requests, secrets.token_hex(8)],
            )
        except RedisError as exc:  # DRF's list in this process's own cache until Redis is back
            self.cache = FALLBACK.failed(exc)
            return super().allow_request(request, view)
        FALLBACK.answered()
        self.window = (int(count), float(oldest))
        return bool(allowed)

    def wait(self) -> float | None:
        """Seconds until a request would be allowed again, as DRF's throttle computes it."""
        if self.window is None or self.num_requests is None or self.duration is None:
            return super().wait()  # (a window implies a rate, so its count and period are set)
        count, oldest = self.window
        remaining = self.duration - (self.now - oldest) if count else self.duration
        available = self.num_requests - count + 1
        return None if available <= 0 else remaining / float(available)

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
