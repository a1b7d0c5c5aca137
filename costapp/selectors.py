"""Reads for the cost side: catalog rows -> engine inputs.

The engine (``costapp.tco``) never touches the database: the figures and catalog references a
scenario needs are looked up here and handed to it as plain numbers.
"""

from datetime import date
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection

from costapp.tco.validation import CatalogRefs
from hardware import selectors as catalog

GpuFiguresBySlug = dict[str, dict[str, float | None]]


def _database_is_set_up() -> bool:
    """False for an embedded SQLite file that does not exist yet (never creates it)."""
    if connection.vendor == "sqlite":
        name = str(connection.settings_dict["NAME"])
        if not name.startswith(("file:", ":memory:")) and not Path(name).exists():
            return False
    return True


def engine_gpu_figures() -> tuple[GpuFiguresBySlug, str]:
    """The GPU figures per slug, and where they came from: ``"catalog"`` (the database) or
    ``"table"`` (the GPU table shipped with the project, when the database is not set up)."""
    if _database_is_set_up():
        try:
            figures = catalog.gpu_figures()
        except DatabaseError:
            figures = {}
        if figures:
            return figures, "catalog"
    return catalog.gpu_figures_from_table(), "table"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def scenario_catalog_refs(document: Any) -> CatalogRefs:
    """Look up every catalog reference a scenario document makes (``offer``, ``quote``,
    ``egress_provider``); references that are malformed or not found are left out, and the
    engine's validation reports them with their path."""
    offers: dict[tuple[str, str, str], Any] = {}
    dedicated: dict[int, Any] = {}
    purchase: dict[int, Any] = {}
    egress: dict[str, Any] = {}
    options = document.get("options") if isinstance(document, dict) else None
    if not isinstance(options, list) or not _database_is_set_up():
        return CatalogRefs()
    try:
        for option in options:
            if not isinstance(option, dict):
                continue
            offer = option.get("offer")
            if isinstance(offer, dict):
                key = (offer.get("provider"), offer.get("instance"), offer.get("region"))
                if all(isinstance(part, str) for part in key) and key not in offers:
                    found = catalog.offer_reference_resolve(
                        provider=key[0], instance=key[1], region=key[2]
                    )
                    if found is not None:
                        offers[key] = found  # type: ignore[index]
            quote = option.get("quote")
            if _is_int(quote):
                if option.get("type") == "dedicated" and quote not in dedicated:
                    found = catalog.dedicated_quote_terms(quote_id=quote)
                    if found is not None:
                        dedicated[quote] = found
                elif option.get("type") == "on_prem" and quote not in purchase:
                    found = catalog.purchase_quote_terms(quote_id=quote)
                    if found is not None:
                        purchase[quote] = found
            provider = option.get("egress_provider")
            if isinstance(provider, str) and provider not in egress:
                tiers = catalog.egress_tiers_for_provider(provider=provider)
                if tiers is not None:
                    egress[provider] = tiers
    except DatabaseError:
        return CatalogRefs()
    return CatalogRefs(
        offers=offers, dedicated_quotes=dedicated, purchase_quotes=purchase, egress_providers=egress
    )


def catalog_reference_warnings(*, document: Any, refs: CatalogRefs, today: date) -> list[str]:
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
            key = {12: "commit_1y", 36: "commit_3y"}.get(term)
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
    entry = refs.offers.get(key)  # type: ignore[arg-type]
    standing = (entry or {}).get("standing")
    if not standing:
        return []
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
    quotes = {"dedicated": refs.dedicated_quotes, "on_prem": refs.purchase_quotes}
    terms = quotes.get(option.get("type"), {}).get(option["quote"])  # type: ignore[call-overload]
    standing = (terms or {}).get("standing")
    if not standing:
        return []
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
