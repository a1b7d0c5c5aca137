"""Price refreshes: a public price feed into the catalog without ever damaging it.

``price_refresh`` runs the pipeline for one feed of one provider:

1. a ``RefreshRun`` row is written (``running``) and committed, so every attempt is on record;
2. parse: the format's parser (``hardware.sources``) turns the feed into plain rows, touching no
   table; a feed that cannot be read whole fails the run with the reason (``failed``);
3. stage: the rows are stored as ``StagedPrice`` rows of the run;
4. validate: the staged rows are compared with the provider's current prices in the feed's scope
   (the billing models the format states; for AWS feeds, also only the regions the feed lists).
   The run is held for review (``held``), with the reasons and both values, when more than
   ``PRICE_REFRESH_MAX_VANISHED_SHARE`` of those prices would vanish, when a price would move by
   more than ``PRICE_REFRESH_MAX_PRICE_FACTOR`` up or down, when a value edited by hand (admin or
   API, read from the price's history) would change or vanish, or when a CSV feed does not end
   with a line break (cut short);
5. apply, in one short transaction: new and changed prices become new price rows (the older
   rows stay as history) dated ``stated_on`` as the feed states it (the load day when it states
   none) and with the ``flag`` the parser gave a suspect price, prices seen again move their
   ``last_seen``, prices the feed no longer lists get ``vanished_at`` and stop being current. ``applied``, or ``unchanged`` when nothing
   but ``last_seen`` moved: the same feed applied twice adds nothing.

Anything that goes wrong while applying rolls the whole transaction back and fails the run: the
catalog stays as it was. A held run is applied as staged by ``refresh_run_approve`` (hand edits
then give way to the feed, by someone's decision) or dropped by ``refresh_run_discard``.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from simple_history.utils import bulk_update_with_history

from .hand_edits import hand_edited_ids
from .models import (
    EgressTier,
    GpuModel,
    InstancePrice,
    RefreshRun,
    RefreshStatus,
    StagedPrice,
)
from .selectors import current_prices
from .services import SQL_BATCH, egress_tiers_load, instance_prices_load, price_spread
from .sources.common import ParseReport, PriceRow, SourceError
from .sources.egress import EgressTierRow
from .sources.registry import FILE, HTTP, PRICE_SOURCES, PriceSource

# The formats by name (``hardware.sources.registry``): files, and feeds also fetched over HTTP.
SOURCES = tuple(PRICE_SOURCES)
KEEP_REJECTIONS = 100
Feed = Sequence[Path | bytes]


class RefreshError(ValueError):
    """A refresh cannot be started or changed as asked (unknown source, run not held, ...)."""


@dataclass
class RefreshPlan:
    """What applying the staged rows would do to the provider's current prices."""

    added: int = 0
    changed: int = 0
    unchanged: int = 0
    vanished: list[InstancePrice] = field(default_factory=list)
    in_scope: int = 0
    held_reasons: list[str] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)
    changes: list[dict] = field(default_factory=list)
    egress_changes: list[dict] = field(default_factory=list)


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
    """One SHA-256 over all the feed's pages in order."""
    digest = hashlib.sha256()
    for page in pages:
        digest.update(page.read_bytes() if isinstance(page, Path) else page)
    return digest.hexdigest()


def price_refresh(*, source: str, paths: Feed, provider: str, dry_run: bool = False) -> RefreshRun:
    """Run the whole pipeline for one feed (module docstring); return the finished run.

    ``paths`` are the feed's files, or for ``azure``, ``gcp`` and ``oracle`` also its fetched
    pages (bytes). With ``dry_run`` everything happens in a transaction that is rolled back: the
    run returned says what the feed would do, and nothing is stored, not even the run.
    """
    _source(source)
    if dry_run:
        with transaction.atomic():
            run = _refresh(source=source, pages=paths, provider=provider)
            transaction.set_rollback(True)
        return run
    return _refresh(source=source, pages=paths, provider=provider)


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
    *, source: str, pages: Feed, provider: str, run: RefreshRun | None = None, file_name: str = ""
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
    except Exception as exc:  # a parser fault: on record as failed, then raised
        _finish(run, RefreshStatus.FAILED, error=f"parser fault: {exc!r}")
        raise
    _record_report(run, report)
    run.staged_egress_tiers = [_tier_json(tier) for tier in tiers]
    _stage(run, rows)
    plan = refresh_plan(run=run)
    first = pages[0] if pages else None
    if source == "skypilot" and isinstance(first, Path) and not _ends_with_newline(first):
        plan.held_reasons.append(
            f"{first.name} does not end with a line break: the feed may have been cut short"
        )
    return _apply_or_hold(run, plan, keep_hand_edits=True)


def fetched_feed_refresh(*, run: RefreshRun, pages: Sequence[bytes]) -> RefreshRun:
    """Run the pipeline on the fetched pages of a ``running`` run (the scheduled refresh); the
    prices it writes name the feed's URL as their source.
    """
    return _refresh(
        source=run.source,
        pages=list(pages),
        provider=run.provider,
        run=run,
        file_name=run.feed_url or run.feed_name,
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


def staged_egress_tiers(*, run: RefreshRun) -> list[EgressTierRow]:
    """The egress tiers the run's feed states, as plain tier rows (none: egress not stated)."""
    return [
        EgressTierRow(
            provider=run.provider,
            up_to_tb=None if t["up_to_tb"] is None else Decimal(t["up_to_tb"]),
            usd_per_gb=Decimal(t["usd_per_gb"]),
            scope=t["scope"],
            source=t["source"],
            line_no=t["line_no"],
        )
        for t in run.staged_egress_tiers
    ]


def _ends_with_newline(path: Path) -> bool:
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


def staged_rows(*, run: RefreshRun) -> list[PriceRow]:
    """The run's staged rows as plain price rows (file order)."""
    return [
        PriceRow(
            provider=run.provider,
            instance_type=s.instance_type,
            gpu_slug=s.gpu_slug,
            gpu_count=s.gpu_count,
            vcpus=s.vcpus,
            memory_gib=s.memory_gib,
            host=s.host,
            region=s.region,
            zone=s.zone,
            billing=s.billing,
            usd_per_hour=s.usd_per_hour,
            line_no=s.line_no,
            is_suspect=bool(s.flag),
            note=s.flag or s.note,
            stated_on=s.stated_on,
            gpu_confirmed=s.gpu_confirmed,
            gpu_evidence=s.gpu_evidence,
            zone_count=s.zone_count,
            zone_min_usd_per_hour=s.zone_min_usd_per_hour,
            zone_median_usd_per_hour=s.zone_median_usd_per_hour,
            zone_max_usd_per_hour=s.zone_max_usd_per_hour,
        )
        for s in run.staged_prices.order_by("pk")
    ]


def refresh_plan(*, run: RefreshRun) -> RefreshPlan:
    """Compare the run's staged rows with the provider's current prices in the feed's scope."""
    plan = RefreshPlan()
    rows = staged_rows(run=run)
    entry = _source(run.source)
    current = current_prices().filter(
        offer__provider__slug=run.provider, billing__in=entry.billings
    )
    if entry.regional:
        current = current.filter(region__code__in={row.region for row in rows})
    by_key = {(p.offer.instance_type, p.region.code, p.billing): p for p in current}
    plan.in_scope = len(by_key)
    factor = Decimal(str(settings.PRICE_REFRESH_MAX_PRICE_FACTOR))
    changed: list[tuple[PriceRow, InstancePrice]] = []
    seen: set[tuple[str, str, str]] = set()
    for row in rows:
        key = (row.instance_type, row.region, row.billing)
        seen.add(key)
        price = by_key.get(key)
        if price is None:
            plan.added += 1
            plan.changes.append(_change("added", key, None, row))
        elif price.usd_per_hour == row.usd_per_hour and price_spread(price) == price_spread(row):
            plan.unchanged += 1
        else:
            plan.changed += 1
            changed.append((row, price))
            plan.changes.append(_change("changed", key, price, row))
            low, high = sorted((price.usd_per_hour, row.usd_per_hour))
            if low > 0 and high / low > factor:
                plan.conflicts.append(_conflict("moves more than allowed", price, row))
    plan.vanished = [price for key, price in by_key.items() if key not in seen]
    plan.changes += [
        _change("vanished", key, price, None) for key, price in by_key.items() if key not in seen
    ]
    _plan_egress(run, plan, factor)

    hand = hand_edited_ids(
        model=InstancePrice, ids=[p.pk for _, p in changed] + [p.pk for p in plan.vanished]
    )
    hand_conflicts = [_conflict("edited by hand", p, row) for row, p in changed if p.pk in hand]
    hand_conflicts += [_conflict("edited by hand", p, None) for p in plan.vanished if p.pk in hand]
    plan.conflicts = hand_conflicts + plan.conflicts

    moves = sum(1 for c in plan.conflicts if c["why"] == "moves more than allowed")
    if moves:
        plan.held_reasons.append(
            f"{moves} price(s) would move by more than a factor of {factor} (see conflicts)"
        )
    if hand_conflicts:
        plan.held_reasons.append(
            f"{len(hand_conflicts)} price(s) edited by hand would change or vanish (see conflicts)"
        )
    share = Decimal(str(settings.PRICE_REFRESH_MAX_VANISHED_SHARE))
    if plan.in_scope and Decimal(len(plan.vanished)) > share * plan.in_scope:
        plan.held_reasons.append(
            f"{len(plan.vanished)} of the provider's {plan.in_scope} current price(s) in this "
            f"feed's scope would vanish (more than {share:%})"
        )
    return plan


def _plan_egress(run: RefreshRun, plan: RefreshPlan, factor: Decimal) -> None:
    """The feed's egress tiers against the provider's stored ones, under the same checks."""
    tiers = staged_egress_tiers(run=run)
    if not tiers:
        return  # the feed states no egress tiers: the stored ones stay
    stored = {t.up_to_tb: t for t in EgressTier.objects.filter(provider__slug=run.provider)}
    wanted = {t.up_to_tb: t for t in tiers}
    hand = hand_edited_ids(model=EgressTier, ids=[t.pk for t in stored.values()])
    for bound in sorted(set(stored) | set(wanted), key=lambda b: (b is None, b or 0)):
        old, new = stored.get(bound), wanted.get(bound)
        if old is not None and new is not None and old.usd_per_gb == new.usd_per_gb:
            continue
        change = {
            "kind": "added" if old is None else "vanished" if new is None else "changed",
            "up_to_tb": None if bound is None else str(bound),
            "old_usd_per_gb": None if old is None else str(old.usd_per_gb),
            "new_usd_per_gb": None if new is None else str(new.usd_per_gb),
        }
        plan.egress_changes.append(change)
        if old is None:
            continue  # a new tier conflicts with nothing
        why = ""
        if old.pk in hand:
            why = "edited by hand"
        elif new is not None:
            low, high = sorted((old.usd_per_gb, new.usd_per_gb))
            if low > 0 and high / low > factor:
                why = "moves more than allowed"
        if why:
            plan.conflicts.append({"why": why, "egress_tier_id": old.pk, **change})
    hand_count = sum(
        1 for c in plan.conflicts if "egress_tier_id" in c and c["why"] == "edited by hand"
    )
    moves = sum(1 for c in plan.conflicts if "egress_tier_id" in c and c["why"] != "edited by hand")
    if hand_count:
        plan.held_reasons.append(
            f"{hand_count} egress tier(s) edited by hand would change or vanish (see conflicts)"
        )
    if moves:
        plan.held_reasons.append(
            f"{moves} egress tier(s) would move by more than a factor of {factor} (see conflicts)"
        )


def _change(
    kind: str, key: tuple[str, str, str], price: InstancePrice | None, row: PriceRow | None
) -> dict:
    """One line of a run's diff: a price added, changed or vanished, with both values."""
    instance_type, region, billing = key
    return {
        "kind": kind,
        "instance_type": instance_type,
        "region": region,
        "billing": billing,
        "price_id": None if price is None else price.pk,
        "old_usd_per_hour": None if price is None else str(price.usd_per_hour),
        "new_usd_per_hour": None if row is None else str(row.usd_per_hour),
        "old_zone": None if price is None else price.zone,
        "new_zone": None if row is None else row.zone,
    }


def refresh_run_diff(*, run: RefreshRun) -> dict[str, list[dict]]:
    """What applying a held run would change now: each price and egress tier, old and new.

    Only a held run still has its staged rows; for any other run both lists are empty.
    """
    if run.status != RefreshStatus.HELD:
        return {"prices": [], "egress_tiers": []}
    plan = refresh_plan(run=run)
    return {"prices": plan.changes, "egress_tiers": plan.egress_changes}


def _conflict(why: str, price: InstancePrice, row: PriceRow | None) -> dict:
    """One value to review: the catalog's and the feed's (``None``: the feed no longer lists it)."""
    return {
        "why": why,
        "instance_type": price.offer.instance_type,
        "region": price.region.code,
        "billing": price.billing,
        "price_id": price.pk,
        "catalog_usd_per_hour": str(price.usd_per_hour),
        "feed_usd_per_hour": None if row is None else str(row.usd_per_hour),
        "feed_line": None if row is None else row.line_no,
    }


def _apply_or_hold(run: RefreshRun, plan: RefreshPlan, *, keep_hand_edits: bool) -> RefreshRun:
    run.prices_added, run.prices_changed = plan.added, plan.changed
    run.prices_unchanged, run.prices_vanished = plan.unchanged, len(plan.vanished)
    run.held_reasons, run.conflicts = plan.held_reasons, plan.conflicts
    run.egress_changes = plan.egress_changes
    if plan.held_reasons and keep_hand_edits:
        return _finish(run, RefreshStatus.HELD)
    try:
        with transaction.atomic():
            _apply(run, plan, keep_hand_edits=keep_hand_edits)
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


def refresh_run_approve(*, run_id: int) -> RefreshRun:
    """Apply a held run as staged: its checks were reviewed, hand-edited values give way."""
    with transaction.atomic():
        run = RefreshRun.objects.select_for_update().get(pk=run_id)
        if run.status != RefreshStatus.HELD:
            raise RefreshError(f"refresh run {run_id} is {run.status}, not held")
        plan = refresh_plan(run=run)
        return _apply_or_hold(run, plan, keep_hand_edits=False)


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
