"""The scheduled refresh of one public feed: lock, fetch (conditionally), then the pipeline.

``feed_source_refresh(source=...)`` is what the Celery task ``hardware.refresh_source`` runs:

1. take the source's lock, so two refreshes of one source never overlap: a Redis lock when
   ``REDIS_URL`` is set (shared by every worker process), otherwise a lease on the source's
   ``RefreshLock`` row taken by one conditional UPDATE. A refresh that finds the lock taken does
   nothing and answers ``skipped`` (no run is written: nothing was attempted);
2. fetch the feed from ``settings.PRICE_SOURCES[source]["url"]`` with the validators (ETag,
   Last-Modified) of the last run whose feed was applied or found unchanged; a ``304`` answer
   ends the run as ``unchanged`` with ``not_modified`` set (nothing downloaded);
3. otherwise parse, stage, check, then apply or hold (``hardware.refresh``).

A fetch that fails ends its run as ``failed`` with the reason; the catalog is untouched.
"""

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import timedelta

import redis
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from .models import RefreshLock, RefreshRun, RefreshStatus
from .refresh import RefreshError, fetched_feed_refresh, refresh_run_finish, refresh_run_start
from .sources.feeds import FEEDS
from .sources.fetch import FetchError, FetchPolicy, Validators, feed_fetch, url_shown

# Validators are taken from the last run whose feed reached the catalog or matched it.
FETCHED_STATUSES = (RefreshStatus.APPLIED, RefreshStatus.UNCHANGED, RefreshStatus.APPROVED)
LOCK_PREFIX = "gpu-tco:refresh-lock:"


@dataclass(frozen=True)
class FeedRefreshOutcome:
    """What a scheduled refresh did: its run (none when skipped), status and why."""

    source: str
    status: str
    run_id: int | None = None
    not_modified: bool = False
    detail: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def _lock_ttl_s() -> int:
    return int(settings.PRICE_REFRESH_LOCK_SECONDS)


@contextlib.contextmanager
def refresh_lock(*, source: str) -> Iterator[bool]:
    """Hold the source's refresh lock for the block; yield whether it was taken."""
    if settings.REDIS_URL:
        client = redis.Redis.from_url(settings.REDIS_URL)
        lock = client.lock(LOCK_PREFIX + source, timeout=_lock_ttl_s(), blocking=False)
        taken = bool(lock.acquire(blocking=False))
        try:
            yield taken
        finally:
            if taken:
                with contextlib.suppress(redis.exceptions.LockError):
                    lock.release()
            client.close()
        return
    token = uuid.uuid4().hex
    RefreshLock.objects.get_or_create(source=source)
    now = timezone.now()
    taken = bool(
        RefreshLock.objects.filter(source=source)
        .filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now))
        .update(token=token, locked_until=now + timedelta(seconds=_lock_ttl_s()))
    )
    try:
        yield taken
    finally:
        if taken:
            RefreshLock.objects.filter(source=source, token=token).update(
                token="", locked_until=None
            )


def last_validators(*, source: str) -> Validators:
    """The ETag and Last-Modified of the source's last applied or unchanged fetch."""
    run = (
        RefreshRun.objects.filter(source=source, status__in=FETCHED_STATUSES)
        .exclude(etag="", last_modified="")
        .order_by("-started_at", "-pk")
        .first()
    )
    if run is None:
        return Validators()
    return Validators(etag=run.etag, last_modified=run.last_modified)


def fetch_policy() -> FetchPolicy:
    """Timeouts and retries from settings."""
    return FetchPolicy(
        timeout_s=float(settings.PRICE_FETCH_TIMEOUT_SECONDS),
        retries=int(settings.PRICE_FETCH_RETRIES),
    )


def feed_source_refresh(*, source: str) -> FeedRefreshOutcome:
    """Refresh ``source`` from its URL (module docstring); raise ``RefreshError`` when the source
    is unknown or off (no URL).
    """
    if source not in FEEDS:
        raise RefreshError(f"unknown feed source {source!r}: one of {', '.join(FEEDS)}")
    url = str(settings.PRICE_SOURCES.get(source, {}).get("url") or "").strip()
    if not url:
        raise RefreshError(f"source {source} is off: PRICE_SOURCES[{source!r}].url is empty")
    with refresh_lock(source=source) as taken:
        if not taken:
            return FeedRefreshOutcome(
                source, "skipped", detail=f"a refresh of {source} is already running"
            )
        return _fetch_and_refresh(source, url)


def _fetch_and_refresh(source: str, url: str) -> FeedRefreshOutcome:
    feed = FEEDS[source]
    validators = last_validators(source=source)
    run = refresh_run_start(
        source=source, provider=feed.provider, feed_name=f"{source} feed", feed_url=url_shown(url)
    )
    try:
        fetched = feed_fetch(
            url=url, validators=validators, paging=feed.paging, policy=fetch_policy()
        )
    except FetchError as exc:
        run = refresh_run_finish(run=run, status=RefreshStatus.FAILED, error=f"fetch: {exc}")
        return FeedRefreshOutcome(source, run.status, run.pk, detail=run.error)
    run.etag, run.last_modified = fetched.validators.etag, fetched.validators.last_modified
    if fetched.not_modified:
        run.not_modified = True
        run = refresh_run_finish(run=run, status=RefreshStatus.UNCHANGED)
        return FeedRefreshOutcome(source, run.status, run.pk, not_modified=True)
    run.save(update_fields=["etag", "last_modified"])
    run = fetched_feed_refresh(run=run, pages=fetched.pages)
    return FeedRefreshOutcome(source, run.status, run.pk, detail=run.error)
