"""One lock per price source, for every path that writes a refresh (command, schedule, approval).

The lock is a lease on the source's ``RefreshLock`` row, in the database itself, so it holds the
same on the embedded default (SQLite, no Redis) as on PostgreSQL:

- taken by one conditional UPDATE (the row has no holder, or its lease lapsed) with a token of
  the holder's own; a refresh finding it taken raises ``RefreshLocked``;
- renewed by its holder every third of ``PRICE_REFRESH_LEASE_SECONDS`` from a thread of its own
  (a holder busy parsing a large feed keeps it), and once more inside the transaction that
  applies a feed (``RefreshLease.confirm``): a holder whose lease was taken over applies nothing;
- given back when the holder is done. A holder that dies (killed, database gone) renews it no
  more, so its lease lapses within ``PRICE_REFRESH_LEASE_SECONDS``.

A lock is named by ``lease_name``: the source's own name, except that a hand refresh of the
``skypilot`` format for a cloud that has a scheduled source of its own (``skypilot-<cloud>``)
takes that source's lock, so the command and the schedule never refresh one cloud's prices at
the same time.

Every ``running`` run of a source is written under its lease, so whoever takes the lease knows
that any run of that source still ``running`` stopped without finishing
(``hardware.refresh.pipeline.refresh_runs_sweep``).
"""

import contextlib
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from hardware.models import RefreshLock
from hardware.sources.registry import PRICE_SOURCES


def lease_name(*, source: str, provider: str) -> str:
    """The lock a refresh of ``source`` for ``provider`` takes (module docstring)."""
    own = f"{source}-{provider}"
    if (
        source in PRICE_SOURCES
        and PRICE_SOURCES[source].per_provider_lease
        and own in PRICE_SOURCES
    ):
        return own
    return source


class RefreshLocked(RuntimeError):
    """Another refresh of the source holds its lease."""

    def __init__(self, source: str, until: datetime | None):
        shown = f" (its lease runs until {until:%Y-%m-%d %H:%M:%S} UTC)" if until else ""
        super().__init__(f"a refresh of {source} is already running{shown}")
        self.source = source
        self.until = until


class LeaseLost(RuntimeError):
    """The holder's lease lapsed and was taken by another refresh: it must write nothing more."""


def lease_seconds() -> int:
    return max(1, int(settings.PRICE_REFRESH_LEASE_SECONDS))


class RefreshLease:
    """A lease held on one source's lock."""

    def __init__(self, source: str, token: str):
        self.source = source
        self.token = token
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def renew(self) -> bool:
        """Extend the lease; whether it is still this holder's."""
        until = timezone.now() + timedelta(seconds=lease_seconds())
        return bool(
            RefreshLock.objects.filter(source=self.source, token=self.token).update(
                locked_until=until
            )
        )

    def confirm(self) -> None:
        """Renew inside the caller's transaction, or raise ``LeaseLost``. On PostgreSQL the row
        stays locked by that transaction until it ends, so nobody takes the lease meanwhile."""
        if not self.renew():
            raise LeaseLost(f"the lock of {self.source} was taken by another refresh")

    def _keep_renewing(self) -> None:
        try:
            while not self._stop.wait(lease_seconds() / 3):
                with contextlib.suppress(Exception):  # the next renewal tries again
                    self.renew()
        finally:
            connection.close()

    def start_renewing(self) -> None:
        self._thread = threading.Thread(
            target=self._keep_renewing, name=f"refresh-lease-{self.source}", daemon=True
        )
        self._thread.start()

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with contextlib.suppress(Exception):  # a database gone: the lease lapses by itself
            RefreshLock.objects.filter(source=self.source, token=self.token).update(
                token="", locked_until=None
            )


def lease_take(*, source: str) -> RefreshLease:
    """Take the source's lease now, or raise ``RefreshLocked``."""
    RefreshLock.objects.get_or_create(source=source)
    token = uuid.uuid4().hex
    now = timezone.now()
    taken = (
        RefreshLock.objects.filter(source=source)
        .filter(Q(token="") | Q(locked_until__isnull=True) | Q(locked_until__lt=now))
        .update(token=token, locked_until=now + timedelta(seconds=lease_seconds()))
    )
    if not taken:
        lock = RefreshLock.objects.filter(source=source).first()
        raise RefreshLocked(source, lock.locked_until if lock else None)
    return RefreshLease(source, token)


def lease_is_live(*, source: str) -> bool:
    """Whether a holder's lease on the source is running now."""
    return (
        RefreshLock.objects.filter(source=source, locked_until__gte=timezone.now())
        .exclude(token="")
        .exists()
    )


@contextlib.contextmanager
def refresh_lease(*, source: str, renew: bool = True) -> Iterator[RefreshLease]:
    """Hold the source's lease for the block (renewed meanwhile), or raise ``RefreshLocked``."""
    lease = lease_take(source=source)
    if renew:
        lease.start_renewing()
    try:
        yield lease
    finally:
        lease.release()
