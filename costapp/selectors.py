"""Reads for the cost side: catalog rows -> engine inputs.

The engine (``costapp.tco``) never touches the database: the figures and catalog references a
scenario needs are looked up here and handed to it as plain numbers.
"""

from datetime import date
from pathlib import Path
from typing import Any

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
    """Plain sentences about quotes a scenario relies on that may not hold: demonstration data,
    a draft, a quote marked expired or one past its validity date."""
    options = document.get("options") if isinstance(document, dict) else None
    if not isinstance(options, list):
        return []
    quotes = {"dedicated": refs.dedicated_quotes, "on_prem": refs.purchase_quotes}
    warnings: list[str] = []
    for option in options:
        if not isinstance(option, dict) or not _is_int(option.get("quote")):
            continue
        terms = quotes.get(option.get("type"), {}).get(option["quote"])
        standing = (terms or {}).get("standing")
        if not standing:
            continue
        kind = "dedicated-server" if option.get("type") == "dedicated" else "purchase"
        subject = (
            f'Option "{option.get("name")}" uses {kind} quote {standing["reference"]} '
            f"from {standing['vendor']}, which"
        )
        if standing["is_demo"]:
            warnings.append(f"{subject} is demonstration data, not a quote anyone received.")
        if standing["status"] == "draft":
            warnings.append(f"{subject} is still a draft.")
        if standing["status"] == "expired":
            warnings.append(f"{subject} is marked expired.")
        elif standing["valid_until"] is not None and standing["valid_until"] < today:
            warnings.append(f"{subject} was valid until {standing['valid_until'].isoformat()}.")
    return warnings


def scenarios_visible(*, user: Any) -> Any:
    """The scenarios ``user`` may read: their own and the shared ones, newest first."""
    from django.db.models import Q

    from costapp.models import Scenario

    return Scenario.objects.filter(Q(owner=user) | Q(shared=True)).select_related("owner")


def runs_visible(*, user: Any) -> Any:
    """The runs ``user`` may read: those of the scenarios they may read, newest first."""
    from django.db.models import Q

    from costapp.models import SimulationRun

    return (
        SimulationRun.objects.filter(Q(scenario__owner=user) | Q(scenario__shared=True))
        .select_related("scenario")
        .order_by("-created", "-id")
    )
