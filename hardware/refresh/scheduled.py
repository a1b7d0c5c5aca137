"""The scheduled refresh of one public feed: lock, fetch (conditionally), then the pipeline.

``feed_source_refresh(source=...)`` is what the Celery task ``hardware.refresh_source`` runs:

1. take the source's lease (``hardware.refresh.lease``: the one lock per source that the
   ``refresh_prices`` command and approvals take too, a database row, renewed while the refresh
   works). A refresh that finds it taken does nothing and answers ``skipped`` (no run is written:
   nothing was attempted); a run of the source that stopped without finishing is marked failed;
2. fetch the feed from ``settings.PRICE_SOURCES[source]["url"]`` with the validators (ETag,
   Last-Modified) of the last run whose feed was applied or found unchanged; a ``304`` answer
   ends the run as ``unchanged`` with ``not_modified`` set (nothing downloaded);
3. otherwise parse, stage, check, then apply or hold (``hardware.refresh.pipeline``). A ``spooled``
   format's feed (the AWS bulk offer file, gigabytes) is written to a temporary file as it
   arrives and parsed from it, the file removed when the run ends.

A fetch that fails ends its run as ``failed`` with the reason; the catalog is untouched.
"""

import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from django.conf import settings
from django.db import Error as DatabaseError

from hardware.models import RefreshRun, RefreshStatus
from hardware.refresh.lease import RefreshLease, RefreshLocked, refresh_lease
from hardware.refresh.pipeline import (
    RefreshError,
    fetched_feed_refresh,
    refresh_database_failure,
    refresh_run_finish,
    refresh_run_start,
    refresh_runs_stopped_fail,
)
from hardware.sources.fetch import FetchError, FetchPolicy, Validators, feed_fetch, url_shown
from hardware.sources.registry import HTTP_SOURCES

# Validators are taken from the last run whose feed reached the catalog or matched it.
FETCHED_STATUSES = (RefreshStatus.APPLIED, RefreshStatus.UNCHANGED, RefreshStatus.APPROVED)


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
    if source not in HTTP_SOURCES:
        raise RefreshError(f"unknown feed source {source!r}: one of {', '.join(HTTP_SOURCES)}")
    url = str(settings.PRICE_SOURCES.get(source, {}).get("url") or "").strip()
    if not url:
        raise RefreshError(f"source {source} is off: PRICE_SOURCES[{source!r}].url is empty")
    try:
        with refresh_lease(source=source) as lease:
            refresh_runs_stopped_fail(source=source, found_by=f"the next refresh of {source}")
            return _fetch_and_refresh(source, url, lease)
    except RefreshLocked as exc:
        return FeedRefreshOutcome(source, "skipped", detail=str(exc))


def _fetch_and_refresh(source: str, url: str, lease: RefreshLease) -> FeedRefreshOutcome:
    feed = HTTP_SOURCES[source]
    validators = last_validators(source=source)
    run = refresh_run_start(
        source=source, provider=feed.provider, feed_name=f"{source} feed", feed_url=url_shown(url)
    )
    with tempfile.TemporaryDirectory(prefix="price-feed-") as spool:
        into = Path(spool) / "feed" if feed.spooled else None
        return _fetched_refresh(run, url, validators, lease, into)


def _fetched_refresh(
    run: RefreshRun,
    url: str,
    validators: Validators,
    lease: RefreshLease,
    into: Path | None,
) -> FeedRefreshOutcome:
    source, feed = run.source, HTTP_SOURCES[run.source]
    try:
        fetched = feed_fetch(
            url=url, validators=validators, paging=feed.paging, policy=fetch_policy(), into=into
        )
        if fetched.not_modified:
            run.etag, run.last_modified = fetched.validators.etag, fetched.validators.last_modified
            run.not_modified = True
            run = refresh_run_finish(run=run, status=RefreshStatus.UNCHANGED)
            return FeedRefreshOutcome(source, run.status, run.pk, not_modified=True)
        run.etag, run.last_modified = fetched.validators.etag, fetched.validators.last_modified
        run.save(update_fields=["etag", "last_modified"])
        pages = [fetched.path] if fetched.path is not None else list(fetched.pages)
        run = fetched_feed_refresh(run=run, pages=pages, lease=lease)
    except FetchError as exc:
        run = refresh_run_finish(run=run, status=RefreshStatus.FAILED, error=f"fetch: {exc}")
        return FeedRefreshOutcome(source, run.status, run.pk, detail=run.error)
    except DatabaseError as exc:
        failure = refresh_database_failure(run, exc)
        return FeedRefreshOutcome(source, RefreshStatus.FAILED, run.pk, detail=str(failure))
    return FeedRefreshOutcome(source, run.status, run.pk, detail=run.error)
