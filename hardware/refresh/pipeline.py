"""Price refreshes: a public price feed into the catalog without ever damaging it.

``price_refresh`` runs the pipeline for one feed of one provider, holding the source's lease
(``hardware.refresh.lease``: one lock per source for the command, the schedule and approvals);
a run of the source that stopped without finishing is first marked failed
(``refresh_runs_stopped_fail``):

1. a ``RefreshRun`` row is written (``running``) and committed, so every attempt is on record;
2. parse: the format's parser (``hardware.sources``) turns the feed into plain rows, touching no
   table; a feed that cannot be read whole fails the run with the reason (``failed``);
3. stage: the rows are stored as ``StagedPrice`` rows of the run; the rows the parser rejected
   are listed with the offer they were about (``RefreshRun.prices_kept``), and the GPU and
   instance names it could not map are recorded per run (``hardware.coverage``);
4. validate (``hardware.refresh.checks``): the staged rows are compared with the provider's
   current prices in the feed's scope; a rejected row keeps its offer's current price, and the
   run is held for review (``held``) when the checks say so, or when a CSV feed does not end with
   a line break (cut short);
5. apply, in one short transaction: new and changed prices become new price rows (the older
   rows stay as history) dated ``stated_on`` as the feed states it (the load day when it states
   none) and with the ``flag`` the parser gave a suspect price, prices seen again move their
   ``last_seen``, prices the feed no longer lists get ``vanished_at`` and stop being current.
   ``applied``, or ``unchanged`` when nothing but ``last_seen`` moved: the same feed applied
   twice adds nothing.

Anything that goes wrong while applying rolls the whole transaction back and fails the run: the
catalog stays as it was; a database error fails the run with the reason as soon as the database
answers again (``RefreshDatabaseError``). A held run is applied as staged by
``refresh_run_approve`` once it is checked again against the catalog as it is now (hand edits
then give way to the feed, by someone's decision), or dropped by ``refresh_run_discard``.
"""

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.db import Error as DatabaseError
from django.db import connection, transaction
from django.utils import timezone
from simple_history.utils import bulk_update_with_history

from hardware.coverage import coverage_record
from hardware.models import (
    GpuModel,
    InstancePrice,
    RefreshRun,
    RefreshStatus,
    StagedPrice,
)
from hardware.refresh.checks import RefreshPlan, rejected_rows, staged_egress_tiers, staged_rows
from hardware.refresh.checks import refresh_plan as checks_plan
from hardware.refresh.lease import (
    RefreshLease,
    RefreshLocked,
    lease_is_live,
    lease_name,
    refresh_lease,
)
from hardware.services import SQL_BATCH, egress_tiers_load, instance_prices_load
from hardware.sources.common import ParseReport, PriceRow, SourceError, file_sha256
from hardware.sources.egress import EgressTierRow
from hardware.sources.registry import FILE, HTTP, PRICE_SOURCES, PriceSource

# The formats by name (``hardware.sources.registry``): files, and feeds also fetched over HTTP.
SOURCES = tuple(PRICE_SOURCES)
KEEP_REJECTIONS = 100
Feed = Sequence[Path | bytes]


class RefreshError(ValueError):
    """A refresh cannot be started or changed as asked (unknown source, run not held, ...)."""


class RefreshDatabaseError(RuntimeError):
    """The database failed during a refresh; the message is one line, saying what became of the
    run."""


__all__ = ["RefreshLocked", "RefreshPlan", "staged_egress_tiers", "staged_rows"]


def _source(name: str) -> PriceSource:
    """The format named ``name`` (``hardware.sources.registry``); ``RefreshError`` when unknown."""
    if name not in PRICE_SOURCES:
        raise RefreshError(f"unknown source {name!r}: one of {', '.join(SOURCES)}")
    return PRICE_SOURCES[name]


def _parse(
    *, source: str, pages: Feed, provider: str, file_name: str = ""
) -> tuple[list[PriceRow], ParseReport, list[EgressTierRow]]:
    """The feed's price rows, its report and the egress tiers it states (Oracle only)."""
    entry = _source(source)
    known = set(GpuModel.objects.values_list("slug", flat=True))
    if not known:
        raise SourceError("the catalog has no GPU models yet: run load_catalog first")
    if entry.provider_fixed and provider != entry.provider:
        raise RefreshError(f"{source} feeds are {entry.provider}'s, not {provider}'s")
    if entry.fetch == FILE and not all(isinstance(p, Path) for p in pages):
        raise RefreshError(f"{source} feeds are read from files")
    if entry.fetch == HTTP:
        file_name = file_name or ", ".join(p.name for p in pages[:3] if isinstance(p, Path))
        file_name = file_name or source
        if not pages:
            raise SourceError(f"{file_name}: no pages to parse")
    parsed = entry.parse(pages, provider=provider, known_slugs=known, file_name=file_name)
    if entry.fetch == HTTP:
        parsed.report.bytes_read = sum(
            p.stat().st_size if isinstance(p, Path) else len(p) for p in pages
        )
        parsed.report.sha256 = _pages_sha256(pages)
    return parsed.rows, parsed.report, parsed.egress_tiers


def _pages_sha256(pages: Feed) -> str:
    """One SHA-256 over all the feed's pages in order (a file read in chunks)."""
    if len(pages) == 1:
        return file_sha256(pages[0])
    digest = hashlib.sha256()
    for page in pages:
        digest.update(page.read_bytes() if isinstance(page, Path) else page)
    return digest.hexdigest()


def price_refresh(*, source: str, paths: Feed, provider: str, dry_run: bool = False) -> RefreshRun:
    """Run the whole pipeline for one feed (module docstring); return the finished run.

    ``paths`` are the feed's files, or for ``azure``, ``gcp`` and ``oracle`` also its fetched
    pages (bytes). Raise ``RefreshLocked`` when another refresh of the source holds its lease,
    ``RefreshDatabaseError`` when the database fails. With ``dry_run`` everything happens in a
    transaction that is rolled back, without the lease: the run returned says what the feed
    would do, and nothing is stored, not even the run.
    """
    _source(source)
    if dry_run:
        with transaction.atomic():
            trial = _refresh(source=source, pages=paths, provider=provider)
            transaction.set_rollback(True)
        return trial
    run: RefreshRun | None = None
    try:
        lock = lease_name(source=source, provider=provider)
        with refresh_lease(source=lock) as lease:
            refresh_runs_stopped_fail(source=lock, found_by=f"the next refresh of {lock}")
            names = [p.name if isinstance(p, Path) else f"{source} page" for p in paths]
            run = refresh_run_start(source=source, provider=provider, feed_name=", ".join(names))
            return _refresh(source=source, pages=paths, provider=provider, run=run, lease=lease)
    except DatabaseError as exc:
        raise refresh_database_failure(run, exc) from None


def refresh_database_failure(run: RefreshRun | None, exc: Exception) -> RefreshDatabaseError:
    """Fail ``run`` after a database error, on a new connection if the database answers; the
    error to raise, in one line. A run that cannot be written now is failed by the next refresh
    of its source or by beat's sweep (``refresh_runs_sweep``)."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if run is None:
        return RefreshDatabaseError(f"database error: {reason}")
    try:
        connection.close()
        StagedPrice.objects.filter(run_id=run.pk).delete()
        RefreshRun.objects.filter(pk=run.pk, status=RefreshStatus.RUNNING).update(
            status=RefreshStatus.FAILED,
            error=f"database error: {reason}"[:2000],
            finished_at=timezone.now(),
        )
    except DatabaseError:
        return RefreshDatabaseError(
            f"database error: {reason}; run {run.pk} is marked failed by the next refresh of "
            f"{run.source} or by beat's sweep"
        )
    return RefreshDatabaseError(f"database error: {reason}; run {run.pk} failed")


def _running_under(lock: str) -> list[RefreshRun]:
    """The ``running`` runs written under the lease named ``lock``."""
    return [
        run
        for run in RefreshRun.objects.filter(status=RefreshStatus.RUNNING).order_by("pk")
        if lease_name(source=run.source, provider=run.provider) == lock
    ]


def refresh_runs_stopped_fail(*, source: str, found_by: str) -> list[int]:
    """Fail every run still ``running`` under the lease named ``source`` (``lease_name``) and
    remove its staged rows; the caller holds that lease, so none of them is alive (every run is
    written under it)."""
    now = timezone.now()
    failed = []
    for run in _running_under(source):
        run.staged_prices.all().delete()
        why = (
            "stopped without finishing (its process ended or lost the database, and its lease "
            f"lapsed): found by {found_by} at {now:%Y-%m-%d %H:%M:%S} UTC; staged rows removed"
        )
        _finish(run, RefreshStatus.FAILED, error=f"{run.error}; {why}" if run.error else why)
        failed.append(run.pk)
    return failed


def refresh_runs_sweep() -> list[int]:
    """Beat's sweep: fail the runs that stopped without finishing, of every source whose lease
    lapsed (a live holder's runs are left alone); the ids of the runs failed."""
    failed: list[int] = []
    running = RefreshRun.objects.filter(status=RefreshStatus.RUNNING).order_by()
    locks = {
        lease_name(source=source, provider=provider)
        for source, provider in running.values_list("source", "provider")
    }
    for source in sorted(locks):
        if lease_is_live(source=source):
            continue
        try:
            with refresh_lease(source=source, renew=False):
                failed += refresh_runs_stopped_fail(source=source, found_by="beat's sweep")
        except RefreshLocked:
            continue
    return failed


def refresh_run_start(*, source: str, provider: str, feed_name: str, **fields: Any) -> RefreshRun:
    """A new ``running`` run, on record at once (``fields``: more of its columns)."""
    return RefreshRun.objects.create(
        source=source,
        provider=provider,
        feed_name=feed_name[:300],
        started_at=timezone.now(),
        **fields,
    )


def _refresh(
    *,
    source: str,
    pages: Feed,
    provider: str,
    run: RefreshRun | None = None,
    file_name: str = "",
    lease: RefreshLease | None = None,
) -> RefreshRun:
    if run is None:
        names = [p.name if isinstance(p, Path) else f"{source} page" for p in pages]
        run = refresh_run_start(source=source, provider=provider, feed_name=", ".join(names))
    try:
        rows, report, tiers = _parse(
            source=source, pages=pages, provider=provider, file_name=file_name
        )
    except SourceError as exc:
        return _finish(run, RefreshStatus.FAILED, error=str(exc))
    except DatabaseError:
        raise
    except Exception as exc:  # a parser fault: on record as failed, then raised
        _finish(run, RefreshStatus.FAILED, error=f"parser fault: {exc!r}")
        raise
    run.prices_kept = rejected_rows(source=source, pages=list(pages), report=report)
    _record_report(run, report)
    coverage_record(
        source=source, provider=provider, report=report, recorded_at=run.started_at, refresh_run=run
    )
    run.staged_egress_tiers = [_tier_json(tier) for tier in tiers]
    _stage(run, rows)
    plan = refresh_plan(run=run)
    first = pages[0] if pages else None
    if _source(source).csv_feed and first is not None and not _ends_with_newline(first):
        shown = first.name if isinstance(first, Path) else run.feed_name
        plan.held_reasons.append(
            f"{shown} does not end with a line break: the feed may have been cut short"
        )
    return _apply_or_hold(run, plan, keep_hand_edits=True, lease=lease)


def refresh_plan(*, run: RefreshRun) -> RefreshPlan:
    """The run's staged rows against the catalog as it is now (``hardware.refresh.checks``)."""
    entry = _source(run.source)
    return checks_plan(run=run, billings=entry.billings, regional=entry.regional)


def refresh_run_diff(*, run: RefreshRun) -> dict[str, list[dict]]:
    """What applying a held run would change now: each price and egress tier, old and new.

    Only a held run still has its staged rows; for any other run both lists are empty.
    """
    if run.status != RefreshStatus.HELD:
        return {"prices": [], "egress_tiers": []}
    plan = refresh_plan(run=run)
    return {"prices": plan.changes, "egress_tiers": plan.egress_changes}


def fetched_feed_refresh(
    *, run: RefreshRun, pages: Sequence[bytes | Path], lease: RefreshLease | None = None
) -> RefreshRun:
    """Run the pipeline on the fetched pages of a ``running`` run (the scheduled refresh, under
    the source's ``lease``), or on the file a spooled feed was written to; the prices it writes
    name the feed's URL as their source.
    """
    return _refresh(
        source=run.source,
        pages=list(pages),
        provider=run.provider,
        run=run,
        file_name=run.feed_url or run.feed_name,
        lease=lease,
    )


def refresh_run_finish(*, run: RefreshRun, status: str, error: str = "") -> RefreshRun:
    """Close a run that never reached parsing (nothing fetched, or the feed unchanged)."""
    return _finish(run, status, error=error)


def _tier_json(tier: EgressTierRow) -> dict:
    return {
        "up_to_tb": None if tier.up_to_tb is None else str(tier.up_to_tb),
        "usd_per_gb": str(tier.usd_per_gb),
        "scope": tier.scope,
        "source": tier.source,
        "line_no": tier.line_no,
    }


def _ends_with_newline(path: Path | bytes) -> bool:
    if isinstance(path, bytes):
        return not path or path.endswith(b"\n")
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        if handle.tell() == 0:
            return True
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"


def _record_report(run: RefreshRun, report: ParseReport) -> None:
    run.feed_name = report.file_name[:300]
    run.feed_sha256 = report.sha256
    run.feed_stated_on = report.stated_on
    run.bytes_read = report.bytes_read
    run.rows_read = report.rows_read
    run.rows_accepted = report.rows_accepted
    run.rows_rejected = report.rows_read - report.rows_accepted
    run.rejected_by_reason = dict(report.rejected_by_reason)
    run.rejections = [
        {"line": r.line_no, "reason": r.reason, "detail": r.detail, "subject": r.subject}
        for r in report.rejections[:KEEP_REJECTIONS]
    ]
    run.save()


def _stage(run: RefreshRun, rows: list[PriceRow]) -> None:
    StagedPrice.objects.bulk_create(
        [
            StagedPrice(
                run=run,
                line_no=row.line_no,
                instance_type=row.instance_type,
                gpu_slug=row.gpu_slug,
                gpu_count=row.gpu_count,
                vcpus=row.vcpus,
                memory_gib=row.memory_gib,
                host=row.host,
                region=row.region,
                zone=row.zone,
                billing=row.billing,
                usd_per_hour=row.usd_per_hour,
                zone_count=row.zone_count,
                zone_min_usd_per_hour=row.zone_min_usd_per_hour,
                zone_median_usd_per_hour=row.zone_median_usd_per_hour,
                zone_max_usd_per_hour=row.zone_max_usd_per_hour,
                gpu_confirmed=row.gpu_confirmed,
                gpu_evidence=row.gpu_evidence,
                flag=row.note if row.is_suspect else "",
                note="" if row.is_suspect else row.note,
                stated_on=row.stated_on,
            )
            for row in rows
        ],
        batch_size=SQL_BATCH,
    )


def _apply_or_hold(
    run: RefreshRun, plan: RefreshPlan, *, keep_hand_edits: bool, lease: RefreshLease | None
) -> RefreshRun:
    _record_plan(run, plan)
    if plan.held_reasons and keep_hand_edits:
        return _finish(run, RefreshStatus.HELD)
    try:
        with transaction.atomic():
            if lease is not None:
                lease.confirm()  # still this refresh's lease, held by this transaction
            _apply(run, plan, keep_hand_edits=keep_hand_edits)
    except DatabaseError:
        raise
    except Exception as exc:  # the transaction is rolled back: record why, catalog untouched
        return _finish(run, RefreshStatus.FAILED, error=f"not applied: {exc!r}")
    if not keep_hand_edits:
        status = RefreshStatus.APPROVED
    elif plan.added or plan.changed or plan.vanished or plan.egress_changes:
        status = RefreshStatus.APPLIED
    else:
        status = RefreshStatus.UNCHANGED
    run.staged_prices.all().delete()
    return _finish(run, status)


def _record_plan(run: RefreshRun, plan: RefreshPlan) -> None:
    run.prices_added, run.prices_changed = plan.added, plan.changed
    run.prices_unchanged, run.prices_vanished = plan.unchanged, len(plan.vanished)
    run.held_reasons, run.conflicts = plan.held_reasons, plan.conflicts
    run.egress_changes = plan.egress_changes
    run.prices_kept = plan.kept
    run.catalog_sha256 = plan.catalog_sha256


def _apply(run: RefreshRun, plan: RefreshPlan, *, keep_hand_edits: bool) -> None:
    observed_at = timezone.now()
    counts = instance_prices_load(
        rows=staged_rows(run=run),
        source_name=run.feed_name,
        source_sha256=run.feed_sha256,
        observed_at=observed_at,
        stated_on=run.feed_stated_on,
        keep_hand_edits=keep_hand_edits,
    )
    if counts.rejections:
        run.rejections = (
            run.rejections
            + [
                {"line": r.line_no, "reason": r.reason, "detail": r.detail, "subject": r.subject}
                for r in counts.rejections
            ]
        )[:KEEP_REJECTIONS]
        for r in counts.rejections:
            run.rejected_by_reason[r.reason] = run.rejected_by_reason.get(r.reason, 0) + 1
    if plan.egress_changes:
        egress = egress_tiers_load(
            rows=staged_egress_tiers(run=run),
            source_name=run.feed_name,
            keep_hand_edits=keep_hand_edits,
        )
        if egress.kept:  # edited by hand since the run was checked: nothing is applied
            raise RefreshError("; ".join(egress.kept))
    for price in plan.vanished:
        price.vanished_at = observed_at
    if plan.vanished:
        bulk_update_with_history(
            plan.vanished,
            InstancePrice,
            ["vanished_at"],
            batch_size=SQL_BATCH,
            default_change_reason=f"vanished from {run.feed_name}"[:100],
        )


def _finish(run: RefreshRun, status: str, *, error: str = "") -> RefreshRun:
    run.status = status
    run.error = error
    run.finished_at = timezone.now()
    run.save()
    return run


CATALOG_MOVED = (
    "the catalog changed since this feed was checked: held again, with the diff against the "
    "catalog as it is now"
)


def refresh_run_approve(*, run_id: int) -> RefreshRun:
    """Apply a held run as staged: its checks were reviewed, hand-edited values give way.

    Under the source's lease, the staged rows are checked again against the catalog as it is
    now: when it changed since they were checked (another refresh, a hand edit), the run stays
    held with the new diff and reasons, to be reviewed again. Raise ``RefreshLocked`` while
    another refresh of the source runs.
    """
    source, provider = RefreshRun.objects.values_list("source", "provider").get(pk=run_id)
    lock = lease_name(source=source, provider=provider)
    with refresh_lease(source=lock) as lease, transaction.atomic():
        run = RefreshRun.objects.select_for_update().get(pk=run_id)
        if run.status != RefreshStatus.HELD:
            raise RefreshError(f"refresh run {run_id} is {run.status}, not held")
        lease.confirm()
        plan = refresh_plan(run=run)
        if plan.catalog_sha256 != run.catalog_sha256:
            _record_plan(run, plan)
            run.held_reasons = [CATALOG_MOVED, *plan.held_reasons]
            return _finish(run, RefreshStatus.HELD)
        return _apply_or_hold(run, plan, keep_hand_edits=False, lease=None)


def refresh_run_discard(*, run_id: int) -> RefreshRun:
    """Drop a held run: its staged rows are deleted, the catalog is left as it is."""
    with transaction.atomic():
        run = RefreshRun.objects.select_for_update().get(pk=run_id)
        if run.status != RefreshStatus.HELD:
            raise RefreshError(f"refresh run {run_id} is {run.status}, not held")
        run.staged_prices.all().delete()
        return _finish(run, RefreshStatus.DISCARDED)


def refresh_summary(*, run: RefreshRun) -> list[str]:
    """The run in a few lines, for the command and the logs."""
    stated = f", stated {run.feed_stated_on:%Y-%m-%d}" if run.feed_stated_on else ""
    lines = [
        f"refresh {run.source} {run.provider}: {run.status}",
        f"  feed {run.feed_name} ({run.bytes_read} bytes, sha256 {run.feed_sha256[:16] or '-'}"
        f"{stated})",
        f"  rows: {run.rows_read} read, {run.rows_accepted} accepted, "
        f"{run.rows_rejected} rejected"
        + (
            " (" + ", ".join(f"{k}: {v}" for k, v in sorted(run.rejected_by_reason.items())) + ")"
            if run.rejected_by_reason
            else ""
        ),
        f"  prices: {run.prices_added} added, {run.prices_changed} changed, "
        f"{run.prices_unchanged} unchanged, {run.prices_vanished} vanished",
    ]
    for e in run.egress_changes:
        bound = "no limit" if e["up_to_tb"] is None else f"up to {e['up_to_tb']} TB"
        lines.append(
            f"  egress tier {bound} {e['kind']}: {e['old_usd_per_gb'] or '-'} -> "
            f"{e['new_usd_per_gb'] or '-'} USD/GB"
        )
    kept = [(row, price) for row in run.prices_kept for price in row["kept"]]
    if kept:
        lines.append(f"  kept: {len(kept)} current price(s) of rejected rows")
    for row, price in kept[:20]:
        lines.append(
            f"    line {row['line']} ({row['reason']}): {price['instance_type']} "
            f"{price['region']} {price['billing']} kept at {price['usd_per_hour']}"
        )
    if len(kept) > 20:
        lines.append(f"    ... and {len(kept) - 20} more")
    if run.not_modified:
        lines.append("  not modified since the last fetch (304): not downloaded")
    lines += [f"  held: {reason}" for reason in run.held_reasons]
    for c in run.conflicts[:20]:
        if "egress_tier_id" in c:
            bound = "no limit" if c["up_to_tb"] is None else f"up to {c['up_to_tb']} TB"
            lines.append(
                f"    {c['why']}: egress tier {bound}: catalog {c['old_usd_per_gb']}, "
                f"feed {c['new_usd_per_gb'] or 'not listed'} USD/GB"
            )
            continue
        feed = "not listed" if c["feed_usd_per_hour"] is None else c["feed_usd_per_hour"]
        lines.append(
            f"    {c['why']}: {c['instance_type']} {c['region']} {c['billing']}: "
            f"catalog {c['catalog_usd_per_hour']}, feed {feed}"
        )
    if len(run.conflicts) > 20:
        lines.append(f"    ... and {len(run.conflicts) - 20} more")
    if run.error:
        lines.append(f"  error: {run.error}")
    return lines
