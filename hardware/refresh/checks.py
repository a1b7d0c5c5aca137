"""The checks of a price refresh: what the staged rows of a run would do to the catalog now.

``refresh_plan`` compares a run's staged rows with the provider's current prices in the feed's
scope (the billing models the format states; for regional formats, only the regions the feed
lists) and says why the run must be held for review:

- more than ``PRICE_REFRESH_MAX_VANISHED_SHARE`` of those current prices would vanish;
- a price would move by more than ``PRICE_REFRESH_MAX_PRICE_FACTOR`` up or down;
- a value edited by hand (``hardware.hand_edits``) would change or vanish;
- the feed would add more new offers than ``PRICE_REFRESH_MAX_NEW_SHARE`` of the provider's
  current offers, or more than ``PRICE_REFRESH_MAX_NEW_OFFERS``;
- a rejected row of the feed names no current price while the feed would end some.

A row the parser rejected never ends its offer's current price: ``rejected_rows`` ties each
rejected row to the offer (and region) it was about, and the plan keeps those prices, listing
row, reason and the price kept (``RefreshRun.prices_kept``). ``catalog_sha256`` fingerprints the
provider's current prices and egress tiers the plan was made against, so an approval can tell
that the catalog moved since.
"""

import hashlib
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from django.conf import settings

from hardware.hand_edits import hand_edited_ids
from hardware.models import EgressTier, InstancePrice, RefreshRun
from hardware.selectors import current_prices
from hardware.services import price_spread
from hardware.sources.common import ParseReport, PriceRow, SourceError, read_csv
from hardware.sources.egress import EgressTierRow
from hardware.sources.registry import PRICE_SOURCES

# Reasons a parser gives for rows that are outside what the catalog keeps by design (another
# product, OS, tenancy, unit, ...): such a row was never a price of the catalog and keeps none.
OUT_OF_SCOPE_REASONS = frozenset(
    {
        "not an instance", "capacity reservation", "not Linux", "pre-installed software",
        "not a GPU instance", "unknown GPU family", "unknown location", "not a virtual machine",
        "not USD", "dev/test price", "low priority", "unit", "tiered price", "commitment",
        "unknown usage type", "unknown GPU part", "unknown GPU name", "duplicate SKU",
        "GPU variant not settled", "not a GPU or egress price", "other egress origin",
        "not a known GPU instance", "not part of a GPU machine type", "unknown price type",
        "unknown term", "no pay-as-you-go price",
        # egress tier rows: they are about no instance price
        "tiers out of order", "duplicate egress origin", "no provider", "unknown provider",
    }
)  # fmt: skip
KEEP_DETAIL = 300
WORD = re.compile(r"[^\s:,;()'\"]+")


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
    kept: list[dict] = field(default_factory=list)
    new_offers: int = 0
    catalog_sha256: str = ""


def rejected_rows(*, source: str, pages: list, report: ParseReport) -> list[dict]:
    """The feed's rejected rows that may be about a price of the catalog, each with its line,
    reason and detail and, where the feed says, the instance type and region it was about.

    SkyPilot rows are read again from the file by line; other formats' rows are tied to an offer
    later, by the instance types their detail names (``refresh_plan``). Rows rejected as out of
    the catalog's scope by design are left out; rows a large feed only counted are listed once
    per reason, tied to nothing.
    """
    raw_by_line: dict[int, dict] = {}
    if PRICE_SOURCES[source].csv_feed and pages and isinstance(pages[0], Path | bytes):
        try:
            raw_by_line = dict(read_csv(pages[0], ())[1])
        except SourceError:
            raw_by_line = {}
    rows: list[dict] = []
    for rejection in report.rejections:
        raw = raw_by_line.get(rejection.line_no)
        if raw is None and (
            rejection.reason in OUT_OF_SCOPE_REASONS or rejection.reason.endswith(" tenancy")
        ):
            continue
        instance_type = region = None
        if raw is not None:
            instance_type = (raw.get("InstanceType") or "").strip() or None
            region = (raw.get("Region") or "").strip() or None
        rows.append(
            {
                "line": rejection.line_no,
                "reason": rejection.reason,
                "detail": rejection.detail[:KEEP_DETAIL],
                "instance_type": instance_type,
                "region": region,
                "kept": [],
            }
        )
    for reason, count in sorted(report.dropped_by_reason.items()):
        if reason in OUT_OF_SCOPE_REASONS or reason.endswith(" tenancy"):
            continue
        rows.append(
            {
                "line": None,
                "reason": reason,
                "detail": f"{count} more row(s) rejected for this reason (not listed)",
                "instance_type": None,
                "region": None,
                "kept": [],
            }
        )
    return rows


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


def catalog_fingerprint(prices: list[InstancePrice], tiers: list[EgressTier]) -> str:
    """SHA-256 of a provider's current prices and egress tiers: any price added, changed,
    vanished or edited, and any tier changed, gives another one."""
    digest = hashlib.sha256()
    for price in sorted(prices, key=lambda p: p.pk):
        spread = "|".join("" if v is None else str(v) for v in price_spread(price))
        digest.update(f"p{price.pk}|{price.usd_per_hour}|{spread}\n".encode())
    for tier in sorted(tiers, key=lambda t: t.pk):
        digest.update(f"t{tier.pk}|{tier.up_to_tb}|{tier.usd_per_gb}\n".encode())
    return digest.hexdigest()


def _kept_keys(
    run: RefreshRun, by_key: dict[tuple[str, str, str], InstancePrice]
) -> tuple[dict[tuple[str, str, str], list[dict]], list[dict]]:
    """The current prices in scope each rejected row keeps, and the rows tied to none."""
    by_instance: dict[str, list[tuple[str, str, str]]] = {}
    for key in by_key:
        by_instance.setdefault(key[0], []).append(key)
    keeps: dict[tuple[str, str, str], list[dict]] = {}
    untied: list[dict] = []
    for row in run.prices_kept:
        keys: list[tuple[str, str, str]] = []
        if row["instance_type"] is not None:
            keys = [
                k
                for k in by_instance.get(row["instance_type"], [])
                if row["region"] is None or k[1] == row["region"]
            ]
        else:
            words = set(WORD.findall(row["detail"]))
            for instance_type in words & by_instance.keys():
                candidates = by_instance[instance_type]
                regions = words & {k[1] for k in candidates}
                keys += [k for k in candidates if not regions or k[1] in regions]
            if not keys:
                untied.append(row)
        for key in keys:
            keeps.setdefault(key, []).append(row)
    return keeps, untied


def refresh_plan(*, run: RefreshRun, billings: frozenset[str], regional: bool) -> RefreshPlan:
    """Compare the run's staged rows with the provider's current prices in the feed's scope."""
    plan = RefreshPlan()
    rows = staged_rows(run=run)
    provider_prices = list(current_prices().filter(offer__provider__slug=run.provider))
    tiers = list(EgressTier.objects.filter(provider__slug=run.provider))
    plan.catalog_sha256 = catalog_fingerprint(provider_prices, tiers)
    current = [p for p in provider_prices if p.billing in billings]
    if regional:
        regions = {row.region for row in rows}
        current = [p for p in current if p.region.code in regions]
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
    keeps, untied = _kept_keys(run, by_key)
    missing = [(key, price) for key, price in by_key.items() if key not in seen]
    plan.vanished = [price for key, price in missing if key not in keeps]
    plan.changes += [_change("vanished", k, p, None) for k, p in missing if k not in keeps]
    plan.kept = _kept_listing(run, keeps, {k for k, _ in missing}, by_key)
    _plan_egress(run, plan, factor, tiers)
    _plan_hand_edits(plan, changed)
    _plan_holds(plan, rows, provider_prices, factor, untied)
    return plan


def _kept_listing(
    run: RefreshRun,
    keeps: dict[tuple[str, str, str], list[dict]],
    missing: set[tuple[str, str, str]],
    by_key: dict[tuple[str, str, str], InstancePrice],
) -> list[dict]:
    """The run's rejected rows, each with the current prices it keeps (those the feed states
    no other row for)."""
    listing = [{**row, "kept": []} for row in run.prices_kept]
    index = {id(row): n for n, row in enumerate(run.prices_kept)}
    for key, rows in keeps.items():
        if key not in missing:
            continue
        price = by_key[key]
        for row in rows:
            listing[index[id(row)]]["kept"].append(
                {
                    "instance_type": key[0],
                    "region": key[1],
                    "billing": key[2],
                    "price_id": price.pk,
                    "usd_per_hour": str(price.usd_per_hour),
                }
            )
    return listing


def _plan_hand_edits(plan: RefreshPlan, changed: list[tuple[PriceRow, InstancePrice]]) -> None:
    hand = hand_edited_ids(
        model=InstancePrice, ids=[p.pk for _, p in changed] + [p.pk for p in plan.vanished]
    )
    hand_conflicts = [_conflict("edited by hand", p, row) for row, p in changed if p.pk in hand]
    hand_conflicts += [_conflict("edited by hand", p, None) for p in plan.vanished if p.pk in hand]
    plan.conflicts = hand_conflicts + plan.conflicts
    if hand_conflicts:
        plan.held_reasons.insert(
            0,
            f"{len(hand_conflicts)} price(s) edited by hand would change or vanish (see conflicts)",
        )


def _plan_holds(
    plan: RefreshPlan,
    rows: list[PriceRow],
    provider_prices: list[InstancePrice],
    factor: Decimal,
    untied: list[dict],
) -> None:
    moves = sum(
        1 for c in plan.conflicts if c["why"] == "moves more than allowed" and "price_id" in c
    )
    if moves:
        plan.held_reasons.insert(
            0, f"{moves} price(s) would move by more than a factor of {factor} (see conflicts)"
        )
    share = Decimal(str(settings.PRICE_REFRESH_MAX_VANISHED_SHARE))
    if plan.in_scope and Decimal(len(plan.vanished)) > share * plan.in_scope:
        plan.held_reasons.append(
            f"{len(plan.vanished)} of the provider's {plan.in_scope} current price(s) in this "
            f"feed's scope would vanish (more than {share:%})"
        )
    offers = {p.offer.instance_type for p in provider_prices}
    plan.new_offers = len({row.instance_type for row in rows} - offers)
    new_share = Decimal(str(settings.PRICE_REFRESH_MAX_NEW_SHARE))
    new_most = int(settings.PRICE_REFRESH_MAX_NEW_OFFERS)
    if plan.new_offers > new_most or (offers and plan.new_offers > new_share * len(offers)):
        plan.held_reasons.append(
            f"{plan.new_offers} new offer(s) would be added beside the provider's {len(offers)} "
            f"current one(s) (more than {new_share:%} of them, or more than {new_most})"
        )
    if untied and plan.vanished:
        plan.held_reasons.append(
            f"{len(untied)} rejected row(s) name no current price, and the feed would end "
            f"{len(plan.vanished)}: they may be those prices (see prices_kept)"
        )


def _plan_egress(
    run: RefreshRun, plan: RefreshPlan, factor: Decimal, stored_tiers: list[EgressTier]
) -> None:
    """The feed's egress tiers against the provider's stored ones, under the same checks."""
    tiers = staged_egress_tiers(run=run)
    if not tiers:
        return  # the feed states no egress tiers: the stored ones stay
    stored = {t.up_to_tb: t for t in stored_tiers}
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
