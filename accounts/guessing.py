"""Password guessing, limited (docs/api.md, "Authentication and roles"): at most
``SIGN_IN_FAILURES_PER_ACCOUNT`` failed sign-ins per account and ``SIGN_IN_FAILURES_PER_ADDRESS``
per address in any ``SIGN_IN_WINDOW_SECONDS``; past either, every attempt is refused, the right
password too, until the window has passed.

The check comes before the password is hashed, so a refused attempt costs one cache round trip
and no hashing. An attempt is counted when it starts (check and count in one step, so guessers
running side by side cannot slip past the limit between the check and the count) and taken back
when the password was right: what stays counted are the failures. A success also forgets the
account's earlier failures (the address's stay).

The counts are sliding logs: with Redis one sorted set per account and per address, checked and
written by one script (atomic across processes); without Redis (the embedded default, or while
Redis does not answer, ``accounts.fallback`` logging the outage) one ``SignInLog`` row per account
and per address in the database, checked and written under the rows' locks, so the limits hold
across every process either way, and signing in keeps working.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from redis import RedisError

from .fallback import LocalFallback, redis_script
from .models import SignInLog

KEY_PREFIX = "sign-in-failures"

# For each key (account, then address): drop the times at or before now - window; when as many as
# its limit remain, the wait until the oldest of the last `limit` leaves the window. Refused when
# any key waits (nothing written); otherwise `member` is added at `now` to every key. Returns the
# longest wait in seconds as a string ("0": counted and allowed).
BEGIN = """
local now, window, member = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local wait = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[3 + i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  if count >= limit then
    local edge = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
    local left = tonumber(edge[2]) + window - now
    if left > wait then wait = left end
  end
end
if wait > 0 then return tostring(wait) end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, member)
  redis.call('EXPIRE', key, math.ceil(window))
end
return '0'
"""
FALLBACK = LocalFallback("failed sign-ins", instead="in the database")


def clock() -> float:
    """Now, in seconds (a function of its own so tests can move time on)."""
    return time.time()


class TooManyFailures(Exception):
    """Too many failed sign-ins for this account or address: ``wait`` seconds until the next
    attempt is heard."""

    def __init__(self, wait: float) -> None:
        self.wait = wait
        super().__init__(f"Too many failed sign-ins: try again in {retry_after(wait)} seconds.")


def retry_after(wait: float) -> int:
    """``wait`` as whole seconds for a ``Retry-After`` header (never 0 while refused)."""
    return max(1, math.ceil(wait))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def address_of(remote_addr: str | None) -> str:
    """The address an attempt is counted against: the client's IPv4 address, or its IPv6 /64
    (one machine is usually given a whole /64)."""
    try:
        ip = ipaddress.ip_address(remote_addr or "")
    except ValueError:
        return remote_addr or "unknown"
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _keys(username: str, remote_addr: str | None) -> list[tuple[str, int]]:
    """The cache keys (account, then address) and their limits."""
    return [
        (
            f"{KEY_PREFIX}:account:{_digest(username.casefold())}",
            settings.SIGN_IN_FAILURES_PER_ACCOUNT,
        ),
        (
            f"{KEY_PREFIX}:address:{_digest(address_of(remote_addr))}",
            settings.SIGN_IN_FAILURES_PER_ADDRESS,
        ),
    ]


@dataclass
class Attempt:
    """A sign-in attempt that was let through and is counted until :meth:`succeeded`, in Redis or
    (``in_database``) in the ``SignInLog`` rows."""

    keys: list[str]
    member: str
    in_database: bool = False

    def succeeded(self) -> None:
        """The password was right: the account's failures are forgotten, and this attempt no
        longer counts against the address."""
        account, address = self.keys
        if not self.in_database:
            try:
                client = cache.redis_client()  # type: ignore[attr-defined]
                client.delete(cache.make_and_validate_key(account))
                client.zrem(cache.make_and_validate_key(address), self.member)
            except RedisError as exc:  # the counts wait in Redis for their window to pass
                FALLBACK.failed(exc)
            return
        with transaction.atomic():
            SignInLog.objects.filter(key=account).delete()
            row = SignInLog.objects.select_for_update().filter(key=address).first()
            if row is not None:
                row.entries = [entry for entry in row.entries if entry[1] != self.member]
                row.save(update_fields=["entries", "updated"])


def _database_begin(keyed: list[tuple[str, int]], now: float, member: str) -> float:
    """Check and count an attempt in the ``SignInLog`` rows of ``keyed`` (locked in one order, so
    attempts side by side in any processes count one after the other); the wait before another
    attempt may start, 0 when this one was counted."""
    window = float(settings.SIGN_IN_WINDOW_SECONDS)
    keys = sorted(key for key, _limit in keyed)
    with transaction.atomic():
        SignInLog.objects.bulk_create([SignInLog(key=key) for key in keys], ignore_conflicts=True)
        rows = {
            row.key: row
            for row in SignInLog.objects.select_for_update().filter(key__in=keys).order_by("key")
        }
        wait = 0.0
        for key, limit in keyed:
            log = [entry for entry in rows[key].entries if entry[0] > now - window]
            rows[key].entries = log
            if len(log) >= limit:
                wait = max(wait, log[len(log) - limit][0] + window - now)
        if wait > 0:
            return wait
        for key in keys:
            rows[key].entries = [*rows[key].entries, [now, member]]
            rows[key].save(update_fields=["entries", "updated"])
    if secrets.randbelow(100) == 0:  # now and then, the logs of keys quiet for a window
        quiet = timezone.now() - timedelta(seconds=window)
        SignInLog.objects.filter(updated__lt=quiet).delete()
    return 0.0


def attempt_begin(*, username: str, remote_addr: str | None) -> Attempt:
    """Count a sign-in attempt for ``username`` from ``remote_addr``, or raise
    :class:`TooManyFailures` (nothing counted) when the account or the address is over its
    limit. Costs one cache round trip with Redis; hashes no password."""
    window = float(settings.SIGN_IN_WINDOW_SECONDS)
    now = clock()
    member = secrets.token_hex(8)
    keyed = _keys(username, remote_addr)
    keys = [key for key, _limit in keyed]
    script = redis_script(cache, BEGIN)
    if script is not None:
        try:
            wait = float(
                script(
                    keys=[cache.make_and_validate_key(key) for key in keys],
                    args=[repr(now), window, member, *(limit for _key, limit in keyed)],
                )
            )
        except RedisError as exc:  # counted in the database until Redis is back
            FALLBACK.failed(exc)
        else:
            FALLBACK.answered()
            if wait > 0:
                raise TooManyFailures(wait)
            return Attempt(keys, member)
    wait = _database_begin(keyed, now, member)
    if wait > 0:
        raise TooManyFailures(wait)
    return Attempt(keys, member, in_database=True)
