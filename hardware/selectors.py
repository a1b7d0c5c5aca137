"""Reads from the catalog. Money leaves here as float (the engine's unit), never stored back."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import TypedDict

from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.utils import timezone

from hardware.confidence import PriceConfidence, price_confidence, with_confidence
from hardware.display.price_flags import flag_words
from hardware.models import (
    DedicatedQuote,
    EgressTier,
    GpuModel,
    InstanceOffer,
    InstancePrice,
    Provider,
    ProviderKind,
    PurchaseQuote,
    stale_before,
)
from hardware.sources.egress import tb_text, tier_order_problem


def _as_of_datetime(as_of: date | datetime | None) -> datetime | None:
    """A day means the end of that day (UTC); a naive datetime is taken as UTC."""
    if as_of is None:
        return None
    if not isinstance(as_of, datetime):
        as_of = datetime.combine(as_of, time.max)
    if timezone.is_naive(as_of):
        as_of = as_of.replace(tzinfo=UTC)
    return as_of


def current_prices(as_of: date | datetime | None = None) -> QuerySet[InstancePrice]:
    """The latest price row per (offer, region, billing), as the catalog stood at ``as_of``
    (a day: its end; default: now), unless it had vanished from its provider's feed by then.
    Sort and filter it like any queryset (``usd_per_gpu_hour`` is a stored column).
    """
    moment = _as_of_datetime(as_of)
    rows = InstancePrice.objects.all()
    newer = InstancePrice.objects.filter(
        offer=OuterRef("offer"),
        region=OuterRef("region"),
        billing=OuterRef("billing"),
        first_seen__gt=OuterRef("first_seen"),
    )
    if moment is not None:
        rows = rows.filter(first_seen__lte=moment).filter(
            Q(vanished_at__isnull=True) | Q(vanished_at__gt=moment)
        )
        newer = newer.filter(first_seen__lte=moment)
    else:
        rows = rows.filter(vanished_at__isnull=True)
    return rows.filter(~Exists(newer)).select_related(
        "offer", "offer__provider", "offer__gpu", "region"
    )


def current_prices_for_pages(as_of: date | datetime | None = None) -> QuerySet[InstancePrice]:
    """``current_prices`` with what a page marks on each row: ``egress_known`` (the provider
    has egress tiers in the catalog) and ``is_stale`` (stated before ``PRICE_STALE_DAYS``)."""
    return with_confidence(
        current_prices(as_of).annotate(
            egress_known=Exists(EgressTier.objects.filter(provider=OuterRef("offer__provider"))),
            is_stale=ExpressionWrapper(
                Q(stated_on__lt=stale_before()), output_field=BooleanField()
            ),
        )
    )


def providers_list() -> QuerySet[Provider]:
    """The providers by slug, each annotated with how many egress tiers the catalog holds
    (``egress_known`` reads it: no tiers means egress is unknown, not free). The order is given
    here: Django leaves ``Meta.ordering`` out of a query that groups, as the count does."""
    return Provider.objects.annotate(egress_tier_count=Count("egress_tiers")).order_by("slug", "pk")


def marketplace_providers() -> frozenset[str]:
    """The slugs of the providers that are marketplaces (their prices are hosts' listings)."""
    return frozenset(
        Provider.objects.filter(kind=ProviderKind.MARKETPLACE).values_list("slug", flat=True)
    )


def offer_confidences(*, provider: str, instance: str, region: str) -> dict[str, PriceConfidence]:
    """The confidence of each current price of one offer in one region, by billing
    (``hardware.confidence.price_confidence``)."""
    prices = with_confidence(current_prices()).filter(
        offer__provider__slug=provider, offer__instance_type=instance, region__code=region
    )
    return {price.billing: price_confidence(price) for price in prices}


def price_standing(price: InstancePrice, *, today: date | None = None) -> dict:
    """Where a price came from and whether it can be relied on: its amount [USD per
    instance-hour, float], its source and the date the source stated it, whether that is older
    than ``PRICE_STALE_DAYS`` (``stale``), its ``flag`` (``None``, or why the price looks wrong)
    and the zone it applies in."""
    return {
        "usd_per_hour": float(price.usd_per_hour),
        "source": price.source_name,
        "stated_on": price.stated_on,
        "stale": price.stated_on < stale_before(today),
        "flag": price.flag or None,
        "zone": price.zone,
    }


def cheapest_prices(*, gpu: str, as_of: date | datetime | None = None) -> list[dict]:
    """The cheapest current price per GPU-hour for a GPU, by provider and billing, with the
    offer and region behind each and whether it is flagged, stale or of an unconfirmed GPU
    variant (so a page or the API can say so). Sorted by ``usd_per_gpu_hour``."""
    best: dict[tuple[str, str], InstancePrice] = {}
    for price in (
        with_confidence(current_prices(as_of))
        .filter(offer__gpu__slug=gpu)
        .order_by("usd_per_gpu_hour", "offer__instance_type", "region__code")
    ):
        best.setdefault((price.offer.provider.slug, price.billing), price)
    return [
        {
            "provider": provider,
            "billing": billing,
            "instance": price.offer.instance_type,
            "region": price.region.code,
            "usd_per_gpu_hour": price.usd_per_gpu_hour,
            "gpu_confirmed": price.offer.gpu_confirmed,
            "price": price,
            **price_standing(price),
        }
        for (provider, billing), price in sorted(
            best.items(), key=lambda item: (item[1].usd_per_gpu_hour, item[0])
        )
    ]


@dataclass(frozen=True)
class Headline:
    """The price a page headlines for a GPU model: the cheapest unflagged one (``price``; None
    when every price is flagged), never a flagged one. ``flagged`` is the cheapest flagged price
    below it, set beside it with why (with no unflagged price: the cheapest flagged one), and
    ``flagged_below`` how many flagged prices are below it (all of them, with none unflagged)."""

    gpu: GpuModel
    price: InstancePrice | None
    flagged: InstancePrice | None
    flagged_below: int

    @property
    def flag_reason(self) -> str:
        """Why ``flagged`` is flagged, in words (``hardware.display.price_flags.flag_words``)."""
        return flag_words(self.flagged.flag) if self.flagged is not None else ""


def headline_of(gpu: GpuModel, prices: Iterable[InstancePrice]) -> Headline:
    """The headline of ``gpu`` from its prices, cheapest per GPU-hour first: the first
    unflagged one, and the flagged ones strictly cheaper than it."""
    flagged: list[InstancePrice] = []
    for price in prices:
        if not price.flag:
            below = [f for f in flagged if f.usd_per_gpu_hour < price.usd_per_gpu_hour]
            return Headline(gpu, price, below[0] if below else None, len(below))
        flagged.append(price)
    return Headline(gpu, None, flagged[0] if flagged else None, len(flagged))


CHEAPEST_ORDER = (
    "usd_per_gpu_hour",
    "offer__provider__slug",
    "offer__instance_type",
    "region__code",
    "billing",
    "pk",
)


def gpu_headline(*, gpu: GpuModel, as_of: date | datetime | None = None) -> Headline:
    """The headline of ``gpu``'s cheapest page: over every current price of the GPU in any
    billing, the cheapest unflagged one and the flagged ones below it (``headline_of``)."""
    prices = with_confidence(current_prices(as_of)).filter(offer__gpu=gpu)
    return headline_of(gpu, prices.order_by(*CHEAPEST_ORDER))


def price_headlines(*, billing: str = "on_demand") -> list[Headline]:
    """Per GPU model with a current price in one billing (default on-demand), by vendor and
    name: the cheapest current unflagged price per GPU-hour, with the offer, region and source
    behind it, and the cheapest flagged price below it (``headline_of``)."""
    rows = (
        with_confidence(current_prices())
        .filter(billing=billing)
        .order_by("offer__gpu__vendor", "offer__gpu__name", "offer__gpu_id", *CHEAPEST_ORDER)
    )
    by_gpu: dict[int, list[InstancePrice]] = {}
    for row in rows:
        by_gpu.setdefault(row.offer.gpu_id, []).append(row)
    return [headline_of(prices[0].offer.gpu, prices) for prices in by_gpu.values()]


def cheapest_current_prices(*, billing: str = "on_demand") -> list[InstancePrice]:
    """Per GPU model, by vendor and name, the cheapest current price per GPU-hour in one billing
    (default on-demand) that is not flagged: the ``price`` of each of ``price_headlines``."""
    return [line.price for line in price_headlines(billing=billing) if line.price is not None]


def latest_price_changes(*, limit: int = 10) -> QuerySet[InstancePrice]:
    """The newest price rows that replaced an earlier price of the same offer, region and
    billing (a load adds a row only when the price changes), the latest stated first; each with
    the price it replaced (``previous_usd_per_gpu_hour``)."""
    earlier = InstancePrice.objects.filter(
        offer=OuterRef("offer"),
        region=OuterRef("region"),
        billing=OuterRef("billing"),
        first_seen__lt=OuterRef("first_seen"),
    ).order_by("-first_seen")
    return (
        with_confidence(InstancePrice.objects.filter(Exists(earlier)))
        .annotate(previous_usd_per_gpu_hour=Subquery(earlier.values("usd_per_gpu_hour")[:1]))
        .select_related("offer", "offer__provider", "offer__gpu", "region")
        .order_by("-stated_on", "-first_seen", "pk")[:limit]
    )


def offer_price_history(*, offer_id: int) -> tuple[InstanceOffer, list[InstancePrice]] | None:
    """An offer and every price it has had, per region and billing in the order their sources
    stated them (then loaded them); None when there is no such offer."""
    offer = InstanceOffer.objects.select_related("provider", "gpu").filter(pk=offer_id).first()
    if offer is None:
        return None
    prices = list(
        InstancePrice.objects.filter(offer=offer)
        .select_related("region")
        .order_by("region__code", "billing", "stated_on", "first_seen")
    )
    return offer, prices


def quote_is_expired(quote: DedicatedQuote | PurchaseQuote, *, today: date) -> bool:
    """True when a quote is marked expired or its validity date has passed."""
    if quote.status == "expired":
        return True
    return quote.valid_until is not None and quote.valid_until < today


class QuoteLists(TypedDict):
    """Dedicated-server and purchase quotes, each with whether it has expired."""

    dedicated: list[tuple[DedicatedQuote, bool]]
    purchase: list[tuple[PurchaseQuote, bool]]


def quotes_list(*, today: date) -> QuoteLists:
    """Dedicated-server and purchase quotes, each with whether it has expired."""
    dedicated = DedicatedQuote.objects.select_related("gpu")
    purchase = PurchaseQuote.objects.select_related("gpu")
    return {
        "dedicated": [(q, quote_is_expired(q, today=today)) for q in dedicated],
        "purchase": [(q, quote_is_expired(q, today=today)) for q in purchase],
    }


def cheapest_price_rows(
    *, gpu: GpuModel, as_of: date | datetime | None = None
) -> list[InstancePrice]:
    """Per (provider, billing), the current price of ``gpu`` with the lowest USD per GPU-hour at
    ``as_of`` (default now); ties go to the first offer and region by name. Sorted by provider,
    then billing."""
    day = as_of.date() if isinstance(as_of, datetime) else as_of
    rows = (
        with_confidence(current_prices(as_of), today=day)
        .filter(offer__gpu=gpu)
        .order_by(
            "offer__provider__slug",
            "billing",
            "usd_per_gpu_hour",
            "offer__instance_type",
            "region__code",
            "pk",
        )
    )
    cheapest: dict[tuple[int, str], InstancePrice] = {}
    for row in rows:
        cheapest.setdefault((row.offer.provider_id, row.billing), row)
    return list(cheapest.values())


def gpu_models_list() -> QuerySet[GpuModel]:
    """The GPU models of the catalog, by vendor and name."""
    return GpuModel.objects.order_by("vendor", "name", "slug")


def gpu_names() -> dict[str, str]:
    """Each GPU model's name by its slug (how the pages say a slug a warning names)."""
    return dict(GpuModel.objects.values_list("slug", "name"))


def provider_names() -> dict[str, str]:
    """Each provider's display name by its slug (how the pages say a provider a warning names)."""
    return dict(Provider.objects.values_list("slug", "name"))


def egress_tier_standing() -> dict[str, dict]:
    """Per provider slug with egress tiers in the catalog: how many tiers (``tiers``), the latest
    date their source stated them (``stated_on``, ``None`` when unknown) and that source."""
    found: dict[str, dict] = {}
    for tier in EgressTier.objects.select_related("provider").order_by("provider__slug", "pk"):
        entry = found.setdefault(
            tier.provider.slug, {"tiers": 0, "stated_on": None, "source": tier.source}
        )
        entry["tiers"] += 1
        if tier.stated_on is not None and (
            entry["stated_on"] is None or tier.stated_on > entry["stated_on"]
        ):
            entry["stated_on"] = tier.stated_on
            entry["source"] = tier.source
    return found


def _bound_order(up_to_tb: Decimal | None) -> tuple[bool, Decimal]:
    return (up_to_tb is None, Decimal(0) if up_to_tb is None else up_to_tb)


def egress_tiers_problem(
    *,
    provider: Provider,
    adding: Sequence[Decimal | None] = (),
    excluding: EgressTier | None = None,
) -> str:
    """Why the provider's egress tiers would break the format's rule (bounds strictly
    increasing, the last tier and only the last without limit: ``tier_order_problem``) with
    tiers up to ``adding`` stored beside them and ``excluding`` gone; ``""`` when they would keep
    it (no tiers at all keep it: egress unknown)."""
    stored = EgressTier.objects.filter(provider=provider)
    if excluding is not None and excluding.pk is not None:
        stored = stored.exclude(pk=excluding.pk)
    bounds = sorted([*stored.values_list("up_to_tb", flat=True), *adding], key=_bound_order)
    found = tier_order_problem(bounds)
    if found is None:
        return ""
    shown = ", ".join("no limit" if b is None else f"up to {tb_text(b)} TB" for b in bounds)
    return f"{provider.slug}'s tiers would be {shown}: {found[1]}."
