"""What a finance lead reads before signing, beyond the result document: per path, computed in
the run's Monte Carlo blocks with the costs themselves, merged exactly, and stored with the run
(never in the contract's result).

- **Which option has cost least so far**, month by month: on each path and month, the option whose
  nominal cumulative cost to that month is the lowest among the options without shortfall on that
  path (ties to the first in order, as ``probability_cheapest``); a path with no such option
  counts for none. Counts per option and month add up exactly over blocks.
- **Committed GPU-hours that go unused**: for every committed cloud option with GPUs, and every
  committed layer of a ``mix`` held at a size above 0, per path, the committed GPU-hours of months
  ``1 … H`` that serve no ``supply_o`` hour: ``Σ_m (C × hours_per_month − used[m])``, where
  ``used`` is ``supply_o − over(C)`` for an option alone (the hours within the commitment, as its
  overflow is counted) and the hours the layer serves for a mix's layer. What they cost: each
  month's unused share of the commitment's charges that month, ``unused[m] / (C × hours) ×
  (committed[m] + upfront[m]) × (1 + support_fraction)``, where ``committed[m]`` is the committed
  GPUs at the renewed rate and ``upfront[m]`` a term's upfront spread evenly over the months of
  that term within the horizon.
- **The totals**, each option's ``total_usd`` on every path, sorted, so that the chance an
  option's total exceeds a budget typed later is counted exactly (:func:`budget_exceedance`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .cloud import CloudRates
from .core import (
    Futures,
    OptionPlan,
    PathCosts,
    PathDemand,
    Plan,
    capacity_over,
)
from .demand import counted_over, excess_gpu_hours
from .finance import term_starts
from .mix import MixLayer, MixTerms, committed_usd, mix_service
from .payload import arrays_pack, arrays_unpack

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Commitment:
    """One commitment of a plan whose unused hours are counted."""

    option: int  # index in the plan's options
    layer: int | None  # index of the layer in the option's mix, None for an option alone
    option_name: str
    layer_name: str | None
    committed_gpus: int


def plan_commitments(plan: Plan) -> list[Commitment]:
    """Every committed cloud option with GPUs and every committed layer of a mix at a size above
    0, in the plan's order (a mix's layers in their order)."""
    found: list[Commitment] = []
    for o, option in enumerate(plan.options):
        rates = option.rates
        if isinstance(rates, CloudRates) and rates.billing == "committed":
            if rates.committed_gpus > 0:
                found.append(Commitment(o, None, option.name, None, rates.committed_gpus))
        elif isinstance(rates, MixTerms):
            for j, layer in enumerate(rates.layers):
                if layer.kind == "committed" and layer.size > 0:
                    found.append(Commitment(o, j, option.name, layer.name, layer.gpus))
    return found


def spread_upfront(upfront_usd_per_term: float, term_months: int, horizon_months: int) -> Array:
    """Each term's upfront spread evenly over that term's months within ``1 … H`` [USD/month],
    ``(H + 1,)`` with month 0 zero."""
    spread = np.zeros(horizon_months + 1)
    if upfront_usd_per_term == 0.0:
        return spread
    starts = np.flatnonzero(term_starts(term_months, horizon_months))
    for start in starts:
        last = min(int(start) + term_months, horizon_months)
        spread[int(start) + 1 : last + 1] = upfront_usd_per_term / (last - int(start))
    return spread


def _commitment_charges(
    rates: CloudRates, futures: Futures, hours: float, horizon: int
) -> tuple[Array, float]:
    """The commitment's charges per month, ``(committed[m] + upfront[m]) × (1 + support)``
    (``(H + 1,)`` or ``(P, H + 1)``) [USD/month], and its GPU-hours per month."""
    base = committed_usd(rates, futures.cloud_price_change_per_year, hours, horizon)
    charges = base + spread_upfront(rates.upfront_usd, rates.term_months, horizon)
    return charges * (1.0 + rates.support_fraction), rates.committed_gpus * hours


def option_used(option: OptionPlan, rates: CloudRates, demand: PathDemand, hours: float) -> Array:
    """A committed option's ``supply_o − over(C)`` on the paths [GPU-h/month]."""
    supply = demand.supply(option)
    capacity = rates.committed_gpus * hours
    load = demand.load(option, hours)
    over = None
    if load is not None:
        over = capacity_over(option.load, None, float(rates.committed_gpus), hours, on_paths=load)
    over = excess_gpu_hours(supply, capacity) if over is None else counted_over(over, capacity)
    return np.asarray(supply - over)


def layer_used(
    option: OptionPlan, terms: MixTerms, j: int, demand: PathDemand, hours: float
) -> Array:
    """The hours a mix's layer ``j`` serves on the paths [GPU-h/month]."""
    load = demand.load(option, hours)
    assert load is not None  # a mix has workloads
    service = mix_service(terms, load, demand.supply(option), hours, bands=[j])
    served = service.served[j]
    assert served is not None
    return served


def commitments_unused(
    plan: Plan, futures: Futures, n_paths: int, commitments: Sequence[Commitment]
) -> tuple[Array, Array]:
    """Per commitment and path, its unused committed GPU-hours and what they cost: two ``(K,
    P)`` arrays [GPU-h, USD]."""
    hours = plan.hours_per_month
    horizon = plan.horizon_months
    multiplier_bound = 1.0
    if futures.demand_multiplier is not None:
        multiplier_bound = float(np.max(np.abs(futures.demand_multiplier), initial=0.0))
    demand = PathDemand(futures.demand_multiplier, n_paths, horizon, multiplier_bound)
    unused_hours = np.zeros((len(commitments), n_paths))
    unused_usd = np.zeros((len(commitments), n_paths))
    for k, commitment in enumerate(commitments):
        option = plan.options[commitment.option]
        rates = option.rates
        if commitment.layer is None:
            assert isinstance(rates, CloudRates)
            used = option_used(option, rates, demand, hours)
            cloud = rates
        else:
            assert isinstance(rates, MixTerms)
            layer: MixLayer = rates.layers[commitment.layer]
            assert isinstance(layer.rates, CloudRates)
            used = layer_used(option, rates, commitment.layer, demand, hours)
            cloud = layer.rates
        charges, held = _commitment_charges(cloud, futures, hours, horizon)
        unused = np.maximum(held - np.broadcast_to(used, (n_paths, horizon + 1)), 0.0)
        unused[:, 0] = 0.0
        unused_hours[k] = unused.sum(axis=-1)
        unused_usd[k] = (unused / held * charges).sum(axis=-1)
    return unused_hours, unused_usd


def leader_counts(costs: PathCosts) -> NDArray[np.int64]:
    """(O, H + 1): on how many paths each option has the lowest nominal cumulative cost to each
    month among the options without shortfall on the path (ties to the first option)."""
    monthly = costs.monthly_usd  # (O, P, H + 1)
    n_options, _paths, months = monthly.shape
    feasible = ~(costs.shortfall_gpu_hours > 0.0)  # (O, P)
    cumulative = np.cumsum(monthly, axis=-1)
    if not feasible.all():
        cumulative[~feasible] = np.inf
    # argmin over the options, the first on a tie: one pass per option over contiguous rows
    best = cumulative[0].copy()
    winner = np.zeros(best.shape, dtype=np.intp)  # (P, H + 1)
    lower = np.empty(best.shape, dtype=bool)
    for o in range(1, n_options):
        np.less(cumulative[o], best, out=lower)
        np.copyto(best, cumulative[o], where=lower)
        winner[lower] = o
    cells = winner * months + np.arange(months)
    counted = np.asarray(feasible.any(axis=0))  # (P,)
    if not counted.all():
        cells = cells[counted]
    counts = np.bincount(cells.ravel(), minlength=n_options * months)
    return counts.reshape(n_options, months).astype(np.int64)


@dataclass(frozen=True, eq=False)
class RiskFigures:
    """The risk figures of a whole run: ``figures`` as JSON, the sorted totals apart."""

    figures: dict[str, Any]
    sorted_total_usd: Array  # (O, paths), each row ascending [USD]

    def totals_payload(self) -> bytes:
        """The sorted totals as bytes, exact (:func:`sorted_totals_from_payload` reads them)."""
        return arrays_pack({"sorted_total_usd": self.sorted_total_usd})


def sorted_totals_from_payload(payload: bytes) -> Array:
    """The sorted totals of :meth:`RiskFigures.totals_payload`'s bytes, (O, paths) [USD]."""
    return np.asarray(arrays_unpack(bytes(payload))["sorted_total_usd"], dtype=np.float64)


def risk_figures(
    plan: Plan,
    paths: int,
    total_usd: Array,
    leaders: NDArray[np.int64],
    unused_hours: Array,
    unused_usd: Array,
) -> RiskFigures:
    """The run's figures from its merged arrays: ``total_usd`` (O, paths) and the unused
    figures (K, paths) in path order, ``leaders`` (O, H + 1) summed over every block."""
    commitments = plan_commitments(plan)
    rows = []
    for k, commitment in enumerate(commitments):
        option = plan.options[commitment.option]
        months = plan.horizon_months
        held = commitment.committed_gpus * plan.hours_per_month * months
        hours = unused_hours[k]
        usd = unused_usd[k]
        hours_p90 = np.percentile(hours, 90.0)
        usd_p90 = np.percentile(usd, 90.0)
        rows.append(
            {
                "option": commitment.option_name,
                "layer": commitment.layer_name,
                "committed_gpus": commitment.committed_gpus,
                "committed_gpu_hours": float(held),
                "unused_gpu_hours_mean": float(np.sum(hours) / paths),
                "unused_gpu_hours_p90": float(hours_p90),
                "unused_usd_mean": float(np.sum(usd) / paths),
                "unused_usd_p90": float(usd_p90),
                "type": option.type,
            }
        )
    figures = {
        "paths": paths,
        "options": plan.option_names,
        "cheapest_so_far": {
            name: (leaders[o] / paths).tolist() for o, name in enumerate(plan.option_names)
        },
        "commitments": rows,
    }
    ordered = np.sort(total_usd, axis=-1)
    return RiskFigures(figures, ordered)


def budget_exceedance(sorted_total_usd: Array, budget_usd: float) -> list[float]:
    """Per option, the share of paths whose total exceeds ``budget_usd`` [fraction]."""
    paths = sorted_total_usd.shape[-1]
    if paths == 0:
        return [0.0] * sorted_total_usd.shape[0]
    return [
        float(paths - np.searchsorted(row, budget_usd, side="right")) / paths
        for row in sorted_total_usd
    ]
