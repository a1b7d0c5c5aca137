"""One option's charges month by month, on the document's own values or on one simulated path:
what a forward plan in a cost and usage format is made of.

- The cost categories of the option (``CATEGORIES``), each ``(H + 1,)`` [USD/month], exactly the
  breakdown :func:`.core.plan_cost` gives on that path, so their sum over the months is the
  option's ``total_usd`` on it.
- The price of a GPU-hour in each month where the charge is hourly (rented compute at the trended
  rate and spot's overhead; a commitment's overflow at the trended on-demand rate), and the
  on-demand price of the same hour where the option knows it (the list price of the work).
- A committed cloud option's commitment: its GPU-hours held each month (``C × hours``), the hours
  of them the work uses (``supply_o − over(C)``, as :mod:`.risk` counts them), and the committed
  charge (``C × hours × rate`` at the renewed rate), months ``1 … H``.

A path is named by its position in the run (block ``path // BLOCK_PATHS``, then its place in the
block): its draws are :func:`.montecarlo.block_draws` of that block, so the same document and seed
give the same path. :func:`percentile_path` finds the path whose total is the order statistic at
rank ``round((N − 1) × q)`` of the option's totals (the nearest rank to the percentile the
result's ``p50_usd``/``p90_usd`` interpolate at).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .cloud import CloudRates, committed_base_usd
from .core import CATEGORIES, Futures, OptionPlan, PathDemand, Plan, plan_cost
from .dedicated import DedicatedRates
from .finance import trend_factor
from .montecarlo import BLOCK_PATHS, DISTRIBUTIONS, block_count, block_draws
from .on_prem import OnPremRates
from .risk import _option_used

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class CommitmentMonths:
    """A committed cloud option's commitment, month by month (``(H + 1,)``, month 0 zero)."""

    committed_gpus: int
    term_months: int
    held_gpu_hours: Array  # C × hours in months 1 … H [GPU-h/month]
    used_gpu_hours: Array  # of those, the hours the work uses [GPU-h/month]
    committed_usd: Array  # the committed charge at the renewed rate [USD/month]


@dataclass(frozen=True, eq=False)
class OptionCharges:
    """One option's charges on one path (or the document's own values)."""

    name: str
    type: str
    billing: str | None  # a cloud option's billing, else None
    horizon_months: int
    categories: dict[str, Array]  # category -> (H + 1,) [USD/month], every category
    total_usd: float  # the sum of every category over months 0 … H [USD]
    hourly_usd: Array | None  # the price of a compute GPU-hour per month [USD/GPU-h]
    list_usd: Array | None  # the on-demand price of that GPU-hour per month, where known
    burst_usd_per_gpu_hour: float | None  # dedicated and on-prem: work beyond the servers
    bridge_usd_per_gpu_hour: float | None  # on-prem: work before the servers serve
    lead_time_months: int  # on-prem: months before service; 0 elsewhere
    commitment: CommitmentMonths | None


def path_futures(simulation: dict[str, object], path: int) -> Futures:
    """The futures of one path of a run, as a one-path :class:`Futures`."""
    paths = int(str(simulation.get("paths") or 0))
    if not 0 <= path < paths:
        raise ValueError(f"path {path} is outside a run of {paths} paths")
    block, place = divmod(path, BLOCK_PATHS)
    values = block_draws(simulation, block)
    return Futures(
        **{
            name: values[name][place : place + 1] if name in values else None
            for name in DISTRIBUTIONS
        }
    )


def _alone(plan: Plan, index: int) -> Plan:
    """The plan of one of its options alone (its costs are the same numbers)."""
    return dataclasses.replace(plan, options=(plan.options[index],), baseline_index=0)


def percentile_path(plan: Plan, simulation: dict[str, object], index: int, q: float) -> int:
    """The path whose total for option ``index`` is the order statistic at rank
    ``round((N − 1) × q)`` of its totals over the run's ``N`` paths (ties to the first path)."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"a percentile is between 0 and 1, got {q}")
    paths = int(str(simulation.get("paths") or 0))
    if paths <= 0:
        raise ValueError("the run has no simulated paths")
    alone = _alone(plan, index)
    totals = np.empty(paths)
    for block in range(block_count(paths)):
        values = block_draws(simulation, block)
        n = min(BLOCK_PATHS, paths - block * BLOCK_PATHS)
        futures = Futures(**{name: values.get(name) for name in DISTRIBUTIONS})
        costs = plan_cost(alone, futures, n)
        totals[block * BLOCK_PATHS : block * BLOCK_PATHS + n] = costs.total_usd[0]
    order = np.argsort(totals, kind="stable")
    rank = int(np.floor((paths - 1) * q + 0.5))
    return int(order[rank])


def _one(values: Array) -> Array:
    """A ``(H + 1,)`` row of a ``(H + 1,)`` or ``(1, H + 1)`` array."""
    array = np.asarray(values, dtype=np.float64)
    return array.reshape(-1) if array.ndim == 1 else array[0]


def _first(values: Array | None, default: float) -> float:
    return default if values is None else float(values[0])


def option_charges(plan: Plan, index: int, futures: Futures | None = None) -> OptionCharges:
    """Option ``index``'s charges on ``futures`` (one path; the document's own values when
    None)."""
    futures = futures or Futures()
    alone = _alone(plan, index)
    costs = plan_cost(alone, futures, 1, categories=True)
    assert costs.breakdown_usd is not None
    categories = {name: costs.breakdown_usd[0, c, 0].copy() for c, name in enumerate(CATEGORIES)}
    option: OptionPlan = plan.options[index]
    rates = option.rates
    horizon = plan.horizon_months
    hours = plan.hours_per_month
    hourly: Array | None = None
    listed: Array | None = None
    commitment: CommitmentMonths | None = None
    billing: str | None = None
    if isinstance(rates, CloudRates):
        billing = rates.billing
        c = _first(futures.cloud_price_change_per_year, rates.price_change_per_year)
        k = _one(trend_factor(c, horizon))
        if rates.billing == "committed" and rates.committed_gpus > 0:
            base = _one(
                committed_base_usd(
                    rates.committed_gpus,
                    hours,
                    rates.usd_per_gpu_hour,
                    c,
                    rates.term_months,
                    horizon,
                )
            )
            multiplier = futures.demand_multiplier
            bound = 1.0 if multiplier is None else float(np.max(np.abs(multiplier), initial=0.0))
            demand = PathDemand(multiplier, 1, horizon, bound)
            used = _one(
                np.broadcast_to(_option_used(option, rates, demand, hours), (1, horizon + 1))
            )
            held = np.full(horizon + 1, rates.committed_gpus * hours)
            held[0] = 0.0
            used = np.clip(used, 0.0, held)
            commitment = CommitmentMonths(rates.committed_gpus, rates.term_months, held, used, base)
            if rates.on_demand_usd_per_gpu_hour is not None:
                hourly = rates.on_demand_usd_per_gpu_hour * k
                listed = hourly
        elif rates.billing == "committed":
            if rates.on_demand_usd_per_gpu_hour is not None:
                hourly = rates.on_demand_usd_per_gpu_hour * k
                listed = hourly
        else:
            overhead = 0.0
            if rates.billing == "spot":
                overhead = _first(futures.interruption_overhead, rates.interruption_overhead)
            hourly = rates.usd_per_gpu_hour * k * (1.0 + overhead)
            listed = hourly if rates.billing == "on_demand" else None
    burst = bridge = None
    lead = 0
    if isinstance(rates, DedicatedRates):
        burst = rates.burst_usd_per_gpu_hour
    if isinstance(rates, OnPremRates):
        burst = rates.burst_usd_per_gpu_hour
        bridge = rates.bridge_usd_per_gpu_hour
        lead = rates.lead_time_months
    return OptionCharges(
        name=option.name,
        type=option.type,
        billing=billing,
        horizon_months=horizon,
        categories=categories,
        total_usd=float(costs.total_usd[0, 0]),
        hourly_usd=hourly,
        list_usd=listed,
        burst_usd_per_gpu_hour=burst,
        bridge_usd_per_gpu_hour=bridge,
        lead_time_months=lead,
        commitment=commitment,
    )
