"""The catalog as a scenario needs it: catalog rows -> engine inputs.

The engine (``costapp.tco``) never touches the database: the figures and catalog references a
scenario needs are looked up here and handed to it as plain numbers. This module is the seam:
catalog rows hold ``Decimal`` money, and the conversion to the engine's shapes (the TypedDicts
``GpuFigures``, ``OfferTerms``, ``DedicatedQuoteTerms``, ``PurchaseQuoteTerms``, ``EgressTier``
of ``costapp.tco``, floats) happens here and nowhere else.

A database error is never taken for "not in the catalog": it propagates. Only the command line
may choose the GPU table shipped with the project instead of the catalog, and the result says so.
"""

from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings
from django.db import DatabaseError, connection

from costapp.scenarios.documents import ScenarioDocument
from costapp.tco import (
    AssumptionFigure,
    CatalogRefs,
    DedicatedQuoteTerms,
    EgressTier,
    GpuFigures,
    OfferPrices,
    OfferRef,
    OfferStanding,
    OfferTerms,
    PriceStanding,
    PurchaseQuoteTerms,
    QuoteStanding,
    SourceStanding,
    TokenPriceTerms,
)
from hardware import selectors as catalog
from hardware.gpu_table import read_gpu_table
from hardware.hosted import selectors as market
from hardware.models import (
    DedicatedQuote,
    GpuModel,
    InstancePrice,
    PurchaseQuote,
)
from hardware.models import (
    EgressTier as EgressTierRow,
)

GPU_TABLE_WARNING = (
    "GPU figures come from the GPU table shipped with the project, not from the catalog "
    "(the catalog is not set up or holds no GPUs yet)."
)
"""The warning a result carries when the command line priced it from the shipped GPU table."""


class _HasGpuFigures(Protocol):
    """A catalog GPU row or a row of the shipped GPU table."""

    @property
    def memory_gb(self) -> Decimal | None: ...
    @property
    def memory_bandwidth_tb_s(self) -> Decimal | None: ...
    @property
    def bf16_dense_tflops(self) -> Decimal | None: ...
    @property
    def fp16_dense_tflops(self) -> Decimal | None: ...
    @property
    def fp8_dense_tflops(self) -> Decimal | None: ...
    @property
    def tf32_dense_tflops(self) -> Decimal | None: ...


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def gpu_figures_of(row: _HasGpuFigures) -> GpuFigures:
    """The engine's figures of one GPU row [GB, TB/s, TFLOPS], as floats."""
    return GpuFigures(
        memory_gb=_float(row.memory_gb),
        memory_bandwidth_tb_s=_float(row.memory_bandwidth_tb_s),
        bf16_dense_tflops=_float(row.bf16_dense_tflops),
        fp16_dense_tflops=_float(row.fp16_dense_tflops),
        fp8_dense_tflops=_float(row.fp8_dense_tflops),
        tf32_dense_tflops=_float(row.tf32_dense_tflops),
    )


def _database_is_set_up() -> bool:
    """False for an embedded SQLite file that does not exist yet (never creates it)."""
    if connection.vendor == "sqlite":
        name = str(connection.settings_dict["NAME"])
        if not name.startswith(("file:", ":memory:")) and not Path(name).exists():
            return False
    return True


def engine_gpu_figures(*, table_fallback: bool = False) -> tuple[dict[str, GpuFigures], str]:
    """The GPU figures per slug, and where they came from: ``"catalog"`` (the database) or
    ``"table"`` (the GPU table shipped with the project).

    The table is used only with ``table_fallback`` (the command line's choice, on a checkout
    whose database is missing, never migrated or holds no GPUs yet); otherwise a database error
    propagates, and is never taken for an empty catalog.
    """
    if _database_is_set_up():
        try:
            figures = {gpu.slug: gpu_figures_of(gpu) for gpu in GpuModel.objects.all()}
        except DatabaseError:
            if not table_fallback:
                raise
            figures = {}  # a database created but never migrated: the command line's choice
        if figures or not table_fallback:
            return figures, "catalog"
    elif not table_fallback:
        return {}, "catalog"
    return {row.slug: gpu_figures_of(row) for row in read_gpu_table()}, "table"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def egress_tiers_of(rows: Iterable[EgressTierRow]) -> list[EgressTier]:
    """A provider's egress tier rows as the engine's tiers, rising, the open-ended tier last."""
    ordered = sorted(rows, key=lambda t: (t.up_to_tb is None, t.up_to_tb or Decimal(0)))
    return [
        EgressTier(up_to_tb=_float(tier.up_to_tb), usd_per_gb=float(tier.usd_per_gb))
        for tier in ordered
    ]


def provider_egress_tiers(provider: str) -> list[EgressTier] | None:
    """A provider's egress tiers in rising order, the open-ended tier last; ``None`` when the
    catalog has none for it (its egress price is unknown)."""
    tiers = egress_tiers_of(EgressTierRow.objects.filter(provider__slug=provider))
    return tiers or None


def price_standing_of(price: InstancePrice, *, today: date | None = None) -> PriceStanding:
    """Where a price came from and whether it can be relied on: its amount, its source, the date
    the source stated it, whether that is older than ``PRICE_STALE_DAYS``, its flag (``None``:
    none) and its zone."""
    standing = catalog.price_standing(price, today=today)
    return PriceStanding(
        usd_per_hour=standing["usd_per_hour"],
        source=standing["source"],
        stated_on=standing["stated_on"],
        stale=standing["stale"],
        flag=standing["flag"],
        zone=standing["zone"],
    )


def offer_terms(*, provider: str, instance: str, region: str) -> OfferTerms | None:
    """What a scenario's reference to a cloud offer means today, or ``None`` when the offer has
    no current price in that region; ``standing`` says what the warnings need (GPU variant
    confirmed, egress price known, each price's source, stated date, staleness and flag)."""
    prices = list(
        catalog.current_prices().filter(
            offer__provider__slug=provider,
            offer__instance_type=instance,
            region__code=region,
        )
    )
    if not prices:
        return None
    offer = prices[0].offer
    by_billing: dict[str, float] = {p.billing: float(p.usd_per_gpu_hour) for p in prices}
    tiers = provider_egress_tiers(provider)
    return OfferTerms(
        gpu=offer.gpu.slug,
        gpu_count=int(offer.gpu_count),
        usd_per_gpu_hour=OfferPrices(**by_billing),  # type: ignore[typeddict-item]
        egress_tiers=tiers,
        standing=OfferStanding(
            provider=provider,
            instance=instance,
            region=region,
            gpu_confirmed=offer.gpu_confirmed,
            gpu_evidence=offer.gpu_evidence,
            egress_known=tiers is not None,
            egress_note=offer.provider.egress_note,
            prices={p.billing: price_standing_of(p) for p in prices},
        ),
    )


def offer_price_then(
    *, provider: str, instance: str, region: str, billing: str, moment: datetime
) -> float | None:
    """An offer's price of a GPU-hour for ``billing`` as the catalog stood at ``moment`` (a
    run's creation, say) [USD/GPU-h]; None when it had none then."""
    price = (
        catalog.current_prices(as_of=moment)
        .filter(
            offer__provider__slug=provider,
            offer__instance_type=instance,
            region__code=region,
            billing=billing,
        )
        .first()
    )
    return None if price is None else float(price.usd_per_gpu_hour)


def _standing(quote: DedicatedQuote | PurchaseQuote) -> QuoteStanding:
    return QuoteStanding(
        vendor=quote.vendor,
        reference=quote.reference,
        status=quote.status,
        valid_until=quote.valid_until,
        is_demo=quote.is_demo,
    )


def dedicated_quote_terms(*, quote_id: int) -> DedicatedQuoteTerms | None:
    """The engine's terms of a dedicated-server quote (USD per server), or ``None``."""
    quote = DedicatedQuote.objects.select_related("gpu").filter(pk=quote_id).first()
    if quote is None:
        return None
    return DedicatedQuoteTerms(
        gpu=quote.gpu.slug,
        gpus_per_server=int(quote.gpus_per_server),
        usd_per_server_month=float(quote.usd_per_server_month),
        setup_usd=float(quote.setup_usd),
        included_egress_tb=float(quote.included_egress_tb),
        overage_usd_per_tb=float(quote.overage_usd_per_tb),
        term_months=quote.term_months,
        standing=_standing(quote),
    )


def purchase_quote_terms(*, quote_id: int) -> PurchaseQuoteTerms | None:
    """The engine's terms of a purchase quote (USD and kW per server), or ``None``."""
    quote = PurchaseQuote.objects.select_related("gpu").filter(pk=quote_id).first()
    if quote is None:
        return None
    return PurchaseQuoteTerms(
        gpu=quote.gpu.slug,
        gpus_per_server=int(quote.gpus_per_server),
        capex_usd_per_server=float(quote.capex_usd_per_server),
        server_kw=float(quote.server_kw),
        lead_time_months=int(quote.lead_time_months),
        support_fraction_per_year=float(quote.support_fraction_per_year),
        standing=_standing(quote),
    )


def token_price_entry(provider: str, model: str) -> TokenPriceTerms | None:
    """The engine's terms of a hosted model's current published prices, with their standing
    (source, stated day, ``stale`` and ``flagged``); ``None`` when the catalog has no such row."""
    terms = market.token_price_terms(provider, model)
    if terms is None:
        return None
    return TokenPriceTerms(
        usd_per_million_tokens=terms.usd_per_million_output_tokens,
        usd_per_million_input_tokens=terms.usd_per_million_input_tokens,
        standing=SourceStanding(
            source=terms.source,
            stated_on=terms.stated_on,
            flags=list(terms.flags),
            note=terms.flag,
        ),
    )


def _assumption_standing(terms: market.AssumptionTerms) -> SourceStanding:
    return SourceStanding(
        source=terms.source,
        stated_on=terms.stated_on,
        flags=list(terms.flags),
        note=f"{terms.confidence} confidence",
    )


def assumption_entry(key: str, paths: dict[str, float | None]) -> AssumptionFigure | None:
    """The engine's figure of ``{"assumption": key}`` with its standing; ``None`` for an unknown
    key. ``paths``: the staff fields that reference it, each with its option's servers (``None``
    while unknown): a row of the staff rule (``hardware.hosted.selectors``) gives each option its own
    figure (``by_path``), and 0 where the servers are not known yet."""
    terms = market.assumption_value(key)
    if terms is None:
        return None
    entry = AssumptionFigure(
        field=terms.field, value=terms.value, standing=_assumption_standing(terms)
    )
    if key in market.STAFF_KEYS:
        entry["value"] = 0.0
        by_path: dict[str, float] = {}
        standing_by_path: dict[str, SourceStanding] = {}
        for path, servers in paths.items():
            staff = None if servers is None else market.staff_usd_per_month(servers)
            if staff is not None:
                by_path[path] = staff.value
                standing_by_path[path] = _assumption_standing(staff)
        entry["by_path"] = by_path
        entry["standing"]["by_path"] = standing_by_path
    return entry


def scenario_catalog_refs(
    document: ScenarioDocument, *, servers: dict[int, int] | None = None
) -> CatalogRefs:
    """Look up every catalog reference a scenario document makes (``offer``, ``quote``,
    ``egress_provider``, ``token_price`` and ``{"assumption": KEY}``); references that are
    malformed or not found are left out, and the engine's validation reports them with their
    path. ``servers``: the servers of on-prem options the document leaves to sizing, by index
    (for the staff rule). A database error propagates."""
    offers: dict[OfferRef, OfferTerms] = {}
    dedicated: dict[int, DedicatedQuoteTerms] = {}
    purchase: dict[int, PurchaseQuoteTerms] = {}
    egress: dict[str, list[EgressTier]] = {}
    token_prices: dict[tuple[str, str], TokenPriceTerms] = {}
    assumption_paths: dict[str, dict[str, float | None]] = {}
    options = document.get("options") if isinstance(document, dict) else None
    if not isinstance(options, list) or not _database_is_set_up():
        return CatalogRefs()
    for index, option in enumerate(options):
        if not isinstance(option, dict):
            continue
        offer = option.get("offer")
        if isinstance(offer, dict):
            provider, instance, region = (
                offer.get("provider"),
                offer.get("instance"),
                offer.get("region"),
            )
            if (
                isinstance(provider, str)
                and isinstance(instance, str)
                and isinstance(region, str)
                and (provider, instance, region) not in offers
            ):
                found = offer_terms(provider=provider, instance=instance, region=region)
                if found is not None:
                    offers[(provider, instance, region)] = found
        quote = option.get("quote")
        if isinstance(quote, int) and not isinstance(quote, bool):
            if option.get("type") == "dedicated" and quote not in dedicated:
                dedicated_found = dedicated_quote_terms(quote_id=quote)
                if dedicated_found is not None:
                    dedicated[quote] = dedicated_found
            elif option.get("type") == "on_prem" and quote not in purchase:
                purchase_found = purchase_quote_terms(quote_id=quote)
                if purchase_found is not None:
                    purchase[quote] = purchase_found
        egress_provider = option.get("egress_provider")
        if isinstance(egress_provider, str) and egress_provider not in egress:
            tiers = provider_egress_tiers(egress_provider)
            if tiers is not None:
                egress[egress_provider] = tiers
        token_price = option.get("token_price")
        if isinstance(token_price, dict):
            seller, model = token_price.get("provider"), token_price.get("model")
            if (
                isinstance(seller, str)
                and isinstance(model, str)
                and (seller, model) not in token_prices
            ):
                price = token_price_entry(seller, model)
                if price is not None:
                    token_prices[(seller, model)] = price
        own_servers = option.get("servers")
        sized = (servers or {}).get(index)
        for name, value in option.items():
            if isinstance(value, dict) and isinstance(value.get("assumption"), str):
                count = own_servers if _is_int(own_servers) else sized
                assumption_paths.setdefault(value["assumption"], {})[f"options[{index}].{name}"] = (
                    float(count) if count is not None else None
                )
    assumptions: dict[str, AssumptionFigure] = {}
    for key, paths in assumption_paths.items():
        figure = assumption_entry(key, paths)
        if figure is not None:
            assumptions[key] = figure
    return CatalogRefs(
        offers=offers,
        dedicated_quotes=dedicated,
        purchase_quotes=purchase,
        egress_providers=egress,
        token_prices=token_prices,
        assumptions=assumptions,
    )


def staff_needs_sizing(document: ScenarioDocument) -> bool:
    """Whether an on-prem option leaves ``servers`` to sizing and takes its staff cost from the
    staff rule (whose figure depends on the servers)."""
    options = document.get("options") if isinstance(document, dict) else None
    for option in options if isinstance(options, list) else []:
        if not isinstance(option, dict) or _is_int(option.get("servers")):
            continue
        staff = option.get("staff_usd_per_month")
        if isinstance(staff, dict) and staff.get("assumption") in market.STAFF_KEYS:
            return True
    return False


def catalog_reference_warnings(
    *, document: ScenarioDocument, refs: CatalogRefs, today: date
) -> list[str]:
    """Plain sentences about catalog figures a scenario relies on that may not hold: quotes that
    are demonstration data, drafts, marked expired or past their validity date; cloud prices
    that are stale (stated longer ago than ``PRICE_STALE_DAYS``) or flagged as looking wrong;
    offers whose GPU variant is not confirmed; and egress sent through an offer whose provider's
    egress price the catalog does not know (counted as 0)."""
    options = document.get("options") if isinstance(document, dict) else None
    if not isinstance(options, list):
        return []
    warnings: list[str] = []
    for option in options:
        if not isinstance(option, dict):
            continue
        if option.get("type") == "cloud" and isinstance(option.get("offer"), dict):
            warnings.extend(_offer_warnings(document, option, refs))
        if _is_int(option.get("quote")):
            warnings.extend(_quote_warnings(option, refs, today))
    return warnings


def _used_billings(document: dict, option: dict) -> list[str]:
    """The billings whose offer price a cloud option takes (none given explicitly)."""
    billing = option.get("billing") or "on_demand"
    used = []
    if option.get("usd_per_gpu_hour") is None:
        if billing == "committed":
            term = option.get("term_months") or document.get("horizon_months") or 36
            key = {12: "commit_1y", 36: "commit_3y", 60: "commit_5y"}.get(term)
            if key:
                used.append(key)
        elif billing in ("on_demand", "spot"):
            used.append(billing)
    if billing == "committed" and option.get("on_demand_usd_per_gpu_hour") is None:
        used.append("on_demand")
    return used


def _offer_warnings(document: dict, option: dict, refs: CatalogRefs) -> list[str]:
    offer = option["offer"]
    key = (offer.get("provider"), offer.get("instance"), offer.get("region"))
    entry = refs.offers.get(key)
    if entry is None or "standing" not in entry:
        return []
    standing = entry["standing"]
    name = option.get("name")
    what = f"{standing['provider']} {standing['instance']} in {standing['region']}"
    warnings = []
    if not standing["gpu_confirmed"]:
        warnings.append(
            f'Option "{name}" uses {what}, whose GPU is filed as {entry["gpu"]} but its variant '
            f"is not confirmed: {standing['gpu_evidence']}"
        )
    for billing in _used_billings(document, option):
        price = standing["prices"].get(billing)
        if price is None:
            continue
        label = billing.replace("_", "-")
        stated = f"as stated by {price['source']} on {price['stated_on'].isoformat()}"
        if price["stale"]:
            warnings.append(
                f'Option "{name}" uses the {label} price of {what} {stated}, more than '
                f"{settings.PRICE_STALE_DAYS} days ago: it may no longer hold."
            )
        if price["flag"]:
            warnings.append(
                f'Option "{name}" uses the {label} price of {what}, which is flagged as '
                f"looking wrong: {price['flag']}."
            )
    egress_given = any(
        option.get(field) is not None
        for field in ("egress_usd_per_gb", "egress_tiers", "egress_provider")
    )
    egress_tb = document.get("egress_tb_per_month") or 0
    if not standing["egress_known"] and not egress_given and _positive(egress_tb):
        warnings.append(
            f'Option "{name}" sends {egress_tb} TB of egress a month through '
            f"{standing['provider']}, whose egress price is unknown (no egress tiers in the "
            "catalog): its egress cost is counted as 0. Give egress_usd_per_gb or egress_tiers."
        )
    return warnings


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _quote_warnings(option: dict, refs: CatalogRefs, today: date) -> list[str]:
    terms: DedicatedQuoteTerms | PurchaseQuoteTerms | None = None
    if option.get("type") == "dedicated":
        terms = refs.dedicated_quotes.get(option["quote"])
    elif option.get("type") == "on_prem":
        terms = refs.purchase_quotes.get(option["quote"])
    if terms is None or "standing" not in terms:
        return []
    standing = terms["standing"]
    kind = "dedicated-server" if option.get("type") == "dedicated" else "purchase"
    subject = (
        f'Option "{option.get("name")}" uses {kind} quote {standing["reference"]} '
        f"from {standing['vendor']}, which"
    )
    warnings = []
    if standing["is_demo"]:
        warnings.append(f"{subject} is demonstration data, not a quote anyone received.")
    if standing["status"] == "draft":
        warnings.append(f"{subject} is still a draft.")
    if standing["status"] == "expired":
        warnings.append(f"{subject} is marked expired.")
    elif standing["valid_until"] is not None and standing["valid_until"] < today:
        warnings.append(f"{subject} was valid until {standing['valid_until'].isoformat()}.")
    return warnings
