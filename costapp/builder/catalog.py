"""The builder's catalog pickers: the offers, quotes and egress providers a scenario's options may
reference, as choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from hardware import selectors as catalog
from hardware.models import stale_before

if TYPE_CHECKING:
    pass


@dataclass
class CatalogChoices:
    """What the builder's pickers offer, each labelled with its price's date and flags."""

    gpus: list[tuple[str, str]] = field(default_factory=list)
    egress_providers: list[tuple[str, str]] = field(default_factory=list)
    dedicated_quotes: list[tuple[str, str]] = field(default_factory=list)
    purchase_quotes: list[tuple[str, str]] = field(default_factory=list)


def _money(value: Any) -> str:
    return f"{float(value):,.4g}" if float(value) < 100 else f"{float(value):,.0f}"


def _quote_label(quote: Any, expired: bool, price: str) -> str:
    flags = []
    if expired:
        flags.append("EXPIRED")
    if quote.status == "draft":
        flags.append("draft")
    if quote.is_demo:
        flags.append("demonstration data")
    valid = f"valid until {quote.valid_until.isoformat()}" if quote.valid_until else "no end date"
    text = (
        f"#{quote.pk} {quote.vendor} {quote.reference}: {quote.gpus_per_server}× "
        f"{quote.gpu.slug}, {price} ({valid}, {quote.get_status_display()})"
    )
    return text + (" · " + ", ".join(flags) if flags else "")


def catalog_choices(*, today: date) -> CatalogChoices:
    """The pickers' choices from the catalog: GPU models with today's cheapest on-demand price
    ("as stated by SOURCE on DATE", stale and unconfirmed-variant flags), providers with their
    egress tiers' date or "egress pricing unknown", and quotes with their validity and flags."""
    cheapest = {price.offer.gpu.slug: price for price in catalog.cheapest_current_prices()}
    stale_cutoff = stale_before(today)
    gpus = []
    for gpu in catalog.gpu_models_list():
        label = f"{gpu.name} ({gpu.slug}"
        if gpu.memory_gb is not None:
            label += f", {gpu.memory_gb.normalize():f} GB"
        label += ")"
        price = cheapest.get(gpu.slug)
        if price is not None:
            label += (
                f" · from {_money(price.usd_per_gpu_hour)} USD/GPU-h on-demand, as stated by "
                f"{price.source_name} on {price.stated_on.isoformat()}"
            )
            if price.stated_on < stale_cutoff:
                label += " · STALE"
            if not price.offer.gpu_confirmed:
                label += " · GPU variant unconfirmed"
        gpus.append((gpu.slug, label))
    egress = []
    tiers = catalog.egress_tier_standing()
    for provider in catalog.providers_list():
        known = tiers.get(provider.slug)
        if known is None:
            label = f"{provider.name} ({provider.slug}) · egress pricing unknown"
        else:
            stated = known["stated_on"].isoformat() if known["stated_on"] else "an unknown date"
            label = (
                f"{provider.name} ({provider.slug}) · {known['tiers']} egress tiers, as stated by "
                f"{known['source'] or 'the catalog'} on {stated}"
            )
        egress.append((provider.slug, label))
    quotes = catalog.quotes_list(today=today)
    dedicated = [
        (
            str(q.pk),
            _quote_label(q, expired, f"{_money(q.usd_per_server_month)} USD per server-month"),
        )
        for q, expired in quotes["dedicated"]
    ]
    purchase = [
        (str(q.pk), _quote_label(q, expired, f"{_money(q.capex_usd_per_server)} USD per server"))
        for q, expired in quotes["purchase"]
    ]
    return CatalogChoices(gpus, egress, dedicated, purchase)
