"""The offer picker's offers: the current prices of a GPU in a billing, first those that fit the
option, then the others, each group by price.

An offer fits the option when its provider's egress pricing is known (else the egress is
counted as 0) and one instance holds the GPUs the workloads need together: a training run its
``cluster_gpus`` and a model (training or serving) the GPUs that hold it in memory on this GPU
(the engine's ``costapp.tco.fit_gpus``). Work that needs more GPUs than any offer has in one
instance spans instances; the offers with the most GPUs per instance then fit it. A steady
workload's GPUs need not share an instance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Max, Q, QuerySet

from costapp.builder.forms import WorkloadFormSet
from costapp.scenarios.catalog import gpu_figures_of
from costapp.tco import fit_gpus
from hardware import selectors as catalog
from hardware.models import GpuModel, InstancePrice

OFFER_BILLINGS = {
    "on_demand": ["on_demand"],
    "spot": ["spot"],
    "committed": ["commit_1y", "commit_3y", "commit_5y"],
}
"""The catalog billings an option's billing can take its price from."""

OFFERS_SHOWN = 25
"""How many offers the picker lists."""


@dataclass(frozen=True)
class InstanceNeed:
    """The GPUs one instance must hold for the option's workloads (``gpus``, 1 when any will do),
    why in words ("workload 2 “Fine-tune” runs on 8 at once"), and the most GPUs any current
    offer has in one instance (``largest``, None without offers) when the work needs more."""

    gpus: int
    why: str
    wanted: int
    largest: int | None = None


def picker_workloads(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The workloads of the builder's form data (``workloads-…`` fields), as the form reads
    them: rows removed, left empty or not yet valid are left out."""
    formset = WorkloadFormSet(data, prefix="workloads")
    found = []
    for form in formset.forms:
        if form.is_removed() or form.is_blank() or not form.is_valid():
            continue
        found.append(form.workload())
    return found


def _workload_need(workload: Mapping[str, Any], figures: Any) -> tuple[int, str]:
    """The GPUs one workload needs together on the GPU of ``figures``, and the verb saying how."""
    held = 0
    how = ""
    if figures is not None and workload.get("type") in ("training", "inference"):
        held = int(fit_gpus(workload, figures))
        how = (
            "holds its model on"
            if workload["type"] == "inference"
            else "holds its model and its optimizer state on"
        )
    cluster = workload.get("cluster_gpus")
    if workload.get("type") == "training" and isinstance(cluster, int | float) and cluster > held:
        held, how = math.ceil(cluster), "runs on"
    return held, how


def instance_need(workloads: list[dict[str, Any]], gpu: str) -> InstanceNeed:
    """What one instance of ``gpu`` must hold for ``workloads`` (the most any of them needs)."""
    row = GpuModel.objects.filter(slug=gpu).first()
    figures = gpu_figures_of(row) if row is not None else None
    best = InstanceNeed(gpus=1, why="", wanted=1)
    for number, workload in enumerate(workloads, start=1):
        held, how = _workload_need(workload, figures)
        if held > best.gpus:
            name = workload.get("name") or "(unnamed)"
            best = InstanceNeed(
                gpus=held, why=f"workload {number} “{name}” {how} {held} at once", wanted=held
            )
    return best


def picker_offers(
    *, gpu: str, billing: str, need: InstanceNeed, limit: int = OFFERS_SHOWN
) -> tuple[list[InstancePrice], InstanceNeed]:
    """The current prices of ``gpu`` for an option billed ``billing``: those that fit (egress
    pricing known, at least ``need.gpus`` GPUs per instance, or the most any offer has) first,
    then the others, each group cheapest per GPU-hour first; each row marked ``fits`` and
    ``gpus_fit``. Returns them with the need as applied (``largest`` set when it was capped)."""
    rows: QuerySet[InstancePrice] = catalog.current_prices_for_pages().filter(
        offer__gpu__slug=gpu, billing__in=OFFER_BILLINGS.get(billing, ["on_demand"])
    )
    largest = rows.aggregate(most=Max("offer__gpu_count"))["most"]
    if largest is not None and need.gpus > largest:
        need = InstanceNeed(gpus=largest, why=need.why, wanted=need.wanted, largest=largest)
    fitted = rows.annotate(
        gpus_fit=ExpressionWrapper(Q(offer__gpu_count__gte=need.gpus), output_field=BooleanField()),
        fits=ExpressionWrapper(
            Q(offer__gpu_count__gte=need.gpus) & Q(egress_known=True), output_field=BooleanField()
        ),
    ).order_by(
        "-fits",
        "usd_per_gpu_hour",
        "offer__provider__slug",
        "offer__instance_type",
        "region__code",
        "billing",
    )
    return list(fitted[:limit]), need
