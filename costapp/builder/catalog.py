"""The builder's catalog pickers: the offers, quotes, egress providers, hosted models' token prices
and sourced assumptions a scenario's options may reference, as choices.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from hardware import selectors as catalog
from hardware.display.figures import plain_number
from hardware.hosted import selectors as market
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
    token_prices: list[tuple[str, str]] = field(default_factory=list)
    assumptions: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """By the field they fill (``on_prem.colo_usd_per_kw_month``, ``option.gpu_mtbf_hours``)."""


def token_price_value(provider: Any, model: Any) -> str:
    """The token price picker's value of a ``token_price`` reference (its JSON, keys in order)."""
    return json.dumps({"provider": provider, "model": model}, ensure_ascii=False)


def _day(stated_on: str | None) -> str:
    return f"stated {stated_on}" if stated_on else "date unknown"


def token_price_choices() -> list[tuple[str, str]]:
    """Every current token price as a picker's choice: provider, model, both prices, the source's
    day and its flags."""
    found = []
    for row in market.current_token_prices():
        terms = market.token_price_terms(row.provider, row.model)
        if terms is None:
            continue
        flags = " · STALE" if "stale" in terms.flags else ""
        flags += f" · flagged: {terms.flag}" if terms.flag else ""
        found.append(
            (
                token_price_value(row.provider, row.model),
                f"{row.provider} · {row.model}: {_money(terms.usd_per_million_output_tokens)} "
                f"USD per million output tokens, {_money(terms.usd_per_million_input_tokens)} "
                f"input ({_day(terms.stated_on)}){flags}",
            )
        )
    return found


def _unit_value(terms: market.AssumptionTerms) -> str:
    if terms.unit.upper().startswith("USD"):
        return f"${plain_number(terms.value)} {terms.unit[3:].strip()}".strip()
    return f"{plain_number(terms.value)} {terms.unit}"


def assumption_choices() -> dict[str, list[tuple[str, str]]]:
    """The sourced figures the builder offers beside each field they fill, labelled with their
    value, source, day and confidence ("$184.06 per kW-month · CBRE … · stated 2024-12-31 · high
    confidence"). The staff cost is one choice: the staff rule over the two rows it needs."""
    found: dict[str, list[tuple[str, str]]] = {}
    rows = list(market.current_assumptions())
    keys = {row.key for row in rows}
    for row in rows:
        terms = market.assumption_terms(row)
        if terms.key in market.STAFF_KEYS:
            continue
        stale = " · STALE" if terms.flags else ""
        found.setdefault(terms.applies_to, []).append(
            (
                terms.key,
                f"{_unit_value(terms)} · {terms.source} · {_day(terms.stated_on)} · "
                f"{terms.confidence} confidence{stale}",
            )
        )
    if set(market.STAFF_KEYS) <= keys:
        cost = market.assumption_value(market.ENGINEER_COST_KEY)
        ratio = market.assumption_value(market.SERVERS_PER_ENGINEER_KEY)
        if cost is not None and ratio is not None:
            found.setdefault(market.STAFF_FIELD, []).append(
                (
                    market.ENGINEER_COST_KEY,
                    f"Staff rule: servers × ${cost.value:,.0f} per engineer-year / 12 / "
                    f"{plain_number(ratio.value)} servers per engineer ({cost.source}; {ratio.source})",
                )
            )
    return found


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
    return CatalogChoices(
        gpus, egress, dedicated, purchase, token_price_choices(), assumption_choices()
    )
