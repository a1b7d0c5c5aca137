"""Saved scenarios' references to catalog slugs, for ``hardware.references`` (registered in
``costapp.apps.CostappConfig.ready``): a provider is named by ``options[].offer.provider`` and
``options[].egress_provider``, a GPU model by ``workloads[].gpu`` and ``options[].gpu``."""

from collections.abc import Iterator
from typing import Any

from django.db.models import Model

from hardware.models import GpuModel, Provider
from hardware.references import References

from .models import Scenario


def _items(document: Any, key: str) -> Iterator[dict[str, Any]]:
    entries = document.get(key) if isinstance(document, dict) else None
    if isinstance(entries, list):
        yield from (entry for entry in entries if isinstance(entry, dict))


def provider_slugs(document: Any) -> set[str]:
    """The provider slugs ``document`` names."""
    slugs = set()
    for option in _items(document, "options"):
        offer = option.get("offer")
        if isinstance(offer, dict) and isinstance(offer.get("provider"), str):
            slugs.add(offer["provider"])
        if isinstance(option.get("egress_provider"), str):
            slugs.add(option["egress_provider"])
    return slugs


def gpu_slugs(document: Any) -> set[str]:
    """The GPU model slugs ``document`` names."""
    return {
        entry["gpu"]
        for key in ("workloads", "options")
        for entry in _items(document, key)
        if isinstance(entry.get("gpu"), str)
    }


SLUGS_OF = {Provider: provider_slugs, GpuModel: gpu_slugs}


def scenarios_referring(model: type[Model], slug: str) -> References | None:
    """The saved scenarios whose documents name ``model``'s ``slug``; ``None`` for a model no
    document names."""
    slugs_of = SLUGS_OF.get(model)
    if slugs_of is None:
        return None
    ids = tuple(
        pk
        for pk, document in Scenario.objects.order_by("pk").values_list("pk", "document")
        if slug in slugs_of(document)
    )
    return References("saved scenario", len(ids), ids)
