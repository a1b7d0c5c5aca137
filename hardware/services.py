"""Writes to the catalog. Every service is keyword-only and idempotent.

Price loads follow "validate, stage, apply": sources are parsed into plain rows (``sources/``),
checked against what is stored, and applied in one short transaction.
"""

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from hardware.geography import region_geography
from hardware.gpu_table import GpuRow
from hardware.hand_edits import hand_edited_ids
from hardware.models import (
    DedicatedQuote,
    EgressTier,
    GpuModel,
    InstanceOffer,
    InstancePrice,
    Provider,
    ProviderKind,
    PurchaseQuote,
    Region,
)
from hardware.selectors import current_prices
from hardware.sources.common import PriceRow, Rejection
from hardware.sources.egress import EgressTierRow
from hardware.sources.seed import read_demo_quotes, read_providers

SQL_BATCH = 500
# Offer fields a load keeps up to date from the source (the GPU and its count are refused instead).
OFFER_DETAILS = ("vcpus", "memory_gib", "host", "gpu_confirmed", "gpu_evidence")


@dataclass
class LoadCounts:
    """What a load did: rows created, updated and left as they were."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    kept: list[str] = field(default_factory=list)  # values edited by hand, left as they are


@dataclass
class PriceLoadCounts:
    """What a price load did: new price rows, prices seen again, and rows it refused."""

    created: int = 0
    unchanged: int = 0
    offers_created: int = 0
    regions_created: int = 0
    rejections: list[Rejection] = field(default_factory=list)


@transaction.atomic
def gpu_models_load(*, rows: list[GpuRow]) -> LoadCounts:
    """Create or update one ``GpuModel`` per row; a row equal to the stored one is left alone."""
    counts = LoadCounts()
    existing = {gpu.slug: gpu for gpu in GpuModel.objects.all()}
    for row in rows:
        values = asdict(row)
        gpu = existing.get(row.slug)
        if gpu is None:
            GpuModel.objects.create(**values)
            counts.created += 1
            continue
        changed = [name for name, value in values.items() if getattr(gpu, name) != value]
        if changed:
            for name in changed:
                setattr(gpu, name, values[name])
            gpu.full_clean()
            gpu.save(update_fields=changed)
            counts.updated += 1
        else:
            counts.unchanged += 1
    return counts


def providers_ensure(*, slugs: Iterable[str]) -> dict[str, Provider]:
    """The providers named by ``slugs``, created when missing: those of
    ``hardware/data/providers.csv`` with its name, kind, website and egress note; any other slug
    (a feed's new cloud) named by its slug with the kind ``settings.PRICE_REFRESH_PROVIDER_KINDS``
    gives it (default ``gpu-cloud``).

    An existing provider is left as it is (its name may have been edited by hand).
    """
    wanted = set(slugs)
    existing = {p.slug: p for p in Provider.objects.filter(slug__in=wanted)}
    missing = wanted - existing.keys()
    known = read_providers() if missing else {}
    for slug in sorted(missing):
        row = known.get(slug)
        if row is not None:
            existing[slug] = Provider.objects.create(
                slug=slug,
                name=row.name,
                kind=row.kind,
                website=row.website,
                egress_note=row.egress_note,
            )
            continue
        kind = settings.PRICE_REFRESH_PROVIDER_KINDS.get(slug, ProviderKind.GPU_CLOUD)
        if kind not in ProviderKind.values:
            raise ValueError(f"PRICE_REFRESH_PROVIDER_KINDS: {slug}={kind} is not a provider kind")
        existing[slug] = Provider.objects.create(slug=slug, name=slug, kind=kind)
    return existing


def price_spread(row: PriceRow | InstancePrice) -> tuple:
    """What besides the amount makes a price a new one: its zone and the spread across zones."""
    return (
        row.zone,
        row.zone_count,
        row.zone_min_usd_per_hour,
        row.zone_median_usd_per_hour,
        row.zone_max_usd_per_hour,
    )


@transaction.atomic
def instance_prices_load(
    *,
    rows: list[PriceRow],
    source_name: str,
    source_sha256: str,
    observed_at: datetime,
    stated_on: date | None = None,
    keep_hand_edits: bool = True,
) -> PriceLoadCounts:
    """Apply observed prices: a new or changed price (or zone, or spread across zones) adds a row
    with ``first_seen = last_seen = observed_at`` and ``stated_on`` (when the source stated it).

    ``stated_on`` is the feed's publication or effective date (a row's own ``stated_on`` comes
    first); a feed that states none is taken as stating its prices the day they were observed
    (``observed_at``'s date).

    A price equal to the current one from another file moves its ``last_seen`` (and its
    ``stated_on`` to the later date); from the very file the catalog already holds (same
    SHA-256), it changes nothing, so reloading a snapshot never makes it look recent. Older rows
    are never changed, so the history of a price stays as it was seen. A current price its
    source stated later than this source states the row (a refreshed price, when the shipped
    files are loaded again) is never replaced: the row is refused, naming both. Offers and
    regions are created as needed; a row whose GPU or GPU count differs from its stored offer is refused
    (its per-GPU price would be wrong). With ``keep_hand_edits`` a current price edited by hand
    is not replaced: the row is refused, naming both values (``hardware.hand_edits``).
    """
    counts = PriceLoadCounts()
    if not rows:
        return counts
    feed_stated_on = stated_on or timezone.localdate(observed_at)
    providers = providers_ensure(slugs={row.provider for row in rows})
    gpus = {gpu.slug: gpu for gpu in GpuModel.objects.all()}
    regions = _regions_ensure(rows, providers, counts)
    offers = _offers_ensure(rows, providers, gpus, counts)

    latest = {
        (price.offer_id, price.region_id, price.billing): price
        for price in current_prices().filter(offer__provider__in=list(providers.values()))
    }

    hand = (
        hand_edited_ids(model=InstancePrice, ids=[p.pk for p in latest.values()])
        if keep_hand_edits
        else set()
    )
    new_prices: list[InstancePrice] = []
    seen_again: list[InstancePrice] = []
    done: set[tuple[int, int, str]] = set()
    for row in rows:
        offer = offers.get((row.provider, row.instance_type))
        if offer is None:
            continue  # refused in _offers_ensure
        if (offer.gpu.slug, offer.gpu_count) != (row.gpu_slug, row.gpu_count):
            counts.rejections.append(
                Rejection(
                    source_name, row.line_no, "offer differs from the catalog",
                    f"{row.instance_type} is {row.gpu_count}x {row.gpu_slug} here but "
                    f"{offer.gpu_count}x {offer.gpu.slug} in the catalog",
                )
            )  # fmt: skip
            continue
        region = regions[(row.provider, row.region)]
        key = (offer.pk, region.pk, row.billing)
        if key in done:
            counts.rejections.append(
                Rejection(source_name, row.line_no, "duplicate price", f"{key} twice in one load")
            )
            continue
        done.add(key)
        stated_on = row.stated_on or feed_stated_on
        current = latest.get(key)
        if (
            current
            and current.usd_per_hour == row.usd_per_hour
            and price_spread(current) == price_spread(row)
        ):
            if current.source_sha256 != source_sha256 and current.last_seen < observed_at:
                current.last_seen = observed_at
                current.stated_on = max(current.stated_on, stated_on)
                seen_again.append(current)
            counts.unchanged += 1
            continue
        if current and current.stated_on > stated_on:
            counts.rejections.append(
                Rejection(
                    source_name, row.line_no, "a price stated later is kept",
                    f"{row.instance_type} {row.region} {row.billing}: catalog "
                    f"{current.usd_per_hour} stated {current.stated_on:%Y-%m-%d} by "
                    f"{current.source_name}, this source {row.usd_per_hour} stated "
                    f"{stated_on:%Y-%m-%d}",
                )
            )  # fmt: skip
            continue
        if current and current.pk in hand:
            counts.rejections.append(
                Rejection(
                    source_name, row.line_no, "hand-edited price kept",
                    f"{row.instance_type} {row.region} {row.billing}: catalog "
                    f"{current.usd_per_hour} (edited by hand), feed {row.usd_per_hour}",
                )
            )  # fmt: skip
            continue
        if current and current.first_seen >= observed_at:
            counts.rejections.append(
                Rejection(
                    source_name, row.line_no, "older than the stored price",
                    f"observed {observed_at:%Y-%m-%d %H:%M} but the stored price is from "
                    f"{current.first_seen:%Y-%m-%d %H:%M}",
                )
            )  # fmt: skip
            continue
        price = InstancePrice(
            offer=offer,
            region=region,
            billing=row.billing,
            usd_per_hour=row.usd_per_hour,
            zone=row.zone,
            zone_count=row.zone_count,
            zone_min_usd_per_hour=row.zone_min_usd_per_hour,
            zone_median_usd_per_hour=row.zone_median_usd_per_hour,
            zone_max_usd_per_hour=row.zone_max_usd_per_hour,
            stated_on=stated_on,
            first_seen=observed_at,
            last_seen=observed_at,
            source_name=source_name,
            source_sha256=source_sha256,
            flag=row.note if row.is_suspect else "",
            note="" if row.is_suspect else row.note,
        )
        price.derive_usd_per_gpu_hour()
        new_prices.append(price)
    if new_prices:
        bulk_create_with_history(
            new_prices,
            InstancePrice,
            batch_size=SQL_BATCH,
            default_change_reason=f"loaded from {source_name}",
        )
    counts.created = len(new_prices)
    InstancePrice.objects.bulk_update(seen_again, ["last_seen", "stated_on"], batch_size=SQL_BATCH)
    return counts


def _regions_ensure(
    rows: list[PriceRow], providers: dict[str, Provider], counts: PriceLoadCounts
) -> dict[tuple[str, str], Region]:
    """The regions of ``rows`` by (provider slug, code), missing ones created."""

    def stored() -> dict[tuple[str, str], Region]:
        queryset = Region.objects.filter(provider__in=list(providers.values()))
        return {(r.provider.slug, r.code): r for r in queryset.select_related("provider")}

    regions = stored()
    missing = sorted({(row.provider, row.region) for row in rows} - regions.keys())
    if missing:
        Region.objects.bulk_create(
            [
                Region(provider=providers[slug], code=code, geography=region_geography(code) or "")
                for slug, code in missing
            ],
            batch_size=SQL_BATCH,
        )
        counts.regions_created = len(missing)
        regions = stored()
    return regions


def _offers_ensure(
    rows: list[PriceRow],
    providers: dict[str, Provider],
    gpus: dict[str, GpuModel],
    counts: PriceLoadCounts,
) -> dict[tuple[str, str], InstanceOffer]:
    """The offers of ``rows``: missing ones created; host, vCPUs and RAM kept up to date."""

    def stored() -> dict[tuple[str, str], InstanceOffer]:
        queryset = InstanceOffer.objects.filter(provider__in=list(providers.values()))
        return {
            (o.provider.slug, o.instance_type): o
            for o in queryset.select_related("provider", "gpu")
        }

    offers = stored()
    to_create: dict[tuple[str, str], InstanceOffer] = {}
    to_update: dict[tuple[str, str], InstanceOffer] = {}
    for row in rows:
        key = (row.provider, row.instance_type)
        if key in to_create or key in to_update:
            continue
        offer = offers.get(key)
        if offer is None:
            to_create[key] = InstanceOffer(
                provider=providers[row.provider],
                instance_type=row.instance_type,
                gpu=gpus[row.gpu_slug],
                gpu_count=row.gpu_count,
                vcpus=row.vcpus,
                memory_gib=row.memory_gib,
                host=row.host,
                gpu_confirmed=row.gpu_confirmed,
                gpu_evidence=row.gpu_evidence,
            )
        elif [getattr(offer, name) for name in OFFER_DETAILS] != [
            getattr(row, name) for name in OFFER_DETAILS
        ]:
            for name in OFFER_DETAILS:
                setattr(offer, name, getattr(row, name))
            to_update[key] = offer
    if to_create:
        InstanceOffer.objects.bulk_create(list(to_create.values()), batch_size=SQL_BATCH)
        counts.offers_created = len(to_create)
    if to_update:
        InstanceOffer.objects.bulk_update(
            list(to_update.values()), list(OFFER_DETAILS), batch_size=SQL_BATCH
        )
    if to_create:
        offers = stored()
    return offers


@transaction.atomic
def egress_tiers_load(
    *,
    rows: list[EgressTierRow],
    source_name: str,
    stated_on: date | None = None,
    keep_hand_edits: bool = True,
) -> LoadCounts:
    """Make each provider's stored egress tiers those of ``rows``, stated by their source on
    ``stated_on``; each change is kept in the tiers' history with ``source_name`` as the reason.
    Tiers equal to the stored ones are left.

    A provider one of whose tiers was edited by hand (``hardware.hand_edits``) and would change
    or go keeps all its tiers as they are; ``counts.kept`` says so with both values. Without
    ``keep_hand_edits`` (a reviewed refresh) the feed's tiers replace them too.
    """
    counts = LoadCounts()
    by_provider: dict[str, list[EgressTierRow]] = {}
    for row in rows:
        by_provider.setdefault(row.provider, []).append(row)
    providers = providers_ensure(slugs=by_provider)
    for slug, tiers in by_provider.items():
        provider = providers[slug]
        stored = {t.up_to_tb: t for t in EgressTier.objects.filter(provider=provider)}
        wanted = {row.up_to_tb for row in tiers}
        hand = (
            hand_edited_ids(model=EgressTier, ids=[t.pk for t in stored.values()])
            if keep_hand_edits
            else set()
        )
        by_bound = {row.up_to_tb: row for row in tiers}
        kept = [
            f"{slug} egress tier up to {bound or 'no limit'} TB: catalog {tier.usd_per_gb} "
            f"USD/GB (edited by hand), file "
            + (f"{by_bound[bound].usd_per_gb} USD/GB" if bound in by_bound else "no such tier")
            for bound, tier in stored.items()
            if tier.pk in hand
            and (bound not in by_bound or by_bound[bound].usd_per_gb != tier.usd_per_gb)
        ]
        if kept:
            counts.kept += kept
            continue
        for bound, old_tier in stored.items():
            if bound not in wanted:
                old_tier._change_reason = f"not in {source_name}"
                old_tier.delete()
                counts.deleted += 1
        for row in tiers:
            values = {
                "usd_per_gb": row.usd_per_gb,
                "scope": row.scope,
                "source": row.source,
                "stated_on": stated_on,
            }
            tier = stored.get(row.up_to_tb)
            if tier is None:
                tier = EgressTier(provider=provider, up_to_tb=row.up_to_tb, **values)
                counts.created += 1
            elif any(getattr(tier, k) != v for k, v in values.items()):
                for k, v in values.items():
                    setattr(tier, k, v)
                counts.updated += 1
            else:
                counts.unchanged += 1
                continue
            tier._change_reason = f"loaded from {source_name}"
            tier.full_clean()
            tier.save()
    return counts


DEMO_NOTE = "Demonstration data: illustrative public figures, not a quote anyone received."


@transaction.atomic
def demo_quotes_load() -> LoadCounts:
    """Create the demonstration quotes (``hardware/data/demo_*_quotes.csv``) missing by
    (vendor, reference); existing ones are left as they are, so hand edits survive a reload.
    """
    counts = LoadCounts()
    gpus = {gpu.slug: gpu for gpu in GpuModel.objects.all()}
    dedicated, purchase = read_demo_quotes()
    for model, specs in ((DedicatedQuote, dedicated), (PurchaseQuote, purchase)):
        for spec in specs:
            values = {**spec, "gpu": gpus[spec["gpu"]], "notes": DEMO_NOTE, "is_demo": True}
            if model.objects.filter(vendor=spec["vendor"], reference=spec["reference"]).exists():
                counts.unchanged += 1
                continue
            quote = model(**values)
            quote.full_clean()
            quote._change_reason = "demo data"
            quote.save()
            counts.created += 1
    return counts
