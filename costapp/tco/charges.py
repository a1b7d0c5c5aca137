"""One option's charges month by month, on the document's own values or on one simulated path:
what a forward plan in a cost and usage format is made of.

- The cost categories of the option (``CATEGORIES``), each ``(H + 1,)`` [USD/month], exactly the
  breakdown :func:`.core.plan_cost` gives on that path, so their sum over the months is the
  option's ``total_usd`` on it.
- The compute billed by the hour and the price of such a GPU-hour in each month (rented compute
  at the trended rate and spot's overhead; a commitment's overflow at the trended on-demand
  rate; a mix's ``rest``), and the on-demand price of the same hour where it is known (the list
  price of the work): on-demand its own, a commitment's overflow its on-demand rate, spot the
  on-demand price the caller gives for it (the document states none), trended alike.
- Each commitment: a committed cloud option's, and each committed layer's of a ``mix`` held
  above 0: its GPU-hours held each month (``C × hours``), the hours of them the work uses
  (``supply_o − over(C)`` for an option alone, the hours the layer serves in a mix, as
  :mod:`.risk` counts them), the committed charge (``C × hours × rate`` at the renewed rate),
  months ``1 … H``, and its upfront payments at each term's start.

A path is named by its position in the run (block ``path // BLOCK_PATHS``, then its place in the
block): its draws are :func:`.montecarlo.block_draws` of that block, so the same document and seed
give the same path. :func:`percentile_path` finds the path whose total is the order statistic at
rank ``round((N − 1) × q)`` of the option's totals (the nearest rank to the percentile the
result's ``p50_usd``/``p90_usd`` interpolate at).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .cloud import CloudRates
from .core import CATEGORIES, Futures, OptionPlan, PathDemand, Plan, plan_cost
from .dedicated import DedicatedRates
from .finance import trend_factor
from .mix import MixTerms, committed_usd, mix_service, rest_costs
from .montecarlo import BLOCK_PATHS, DISTRIBUTIONS, block_count, block_draws
from .on_prem import OnPremRates
from .risk import layer_used, option_used

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class CommitmentMonths:
    """A commitment, month by month (``(H + 1,)``, month 0 zero but for its upfront): a
    committed cloud option's, or one committed layer's of a ``mix``."""

    name: str  # the option's name, or the layer's (the member option it holds)
    layer: int | None  # the layer's index in the mix; None for a committed option alone
    committed_gpus: int
    term_months: int
    held_gpu_hours: Array  # C × hours in months 1 … H [GPU-h/month]
    used_gpu_hours: Array  # of those, the hours the work uses [GPU-h/month]
    committed_usd: Array  # the committed charge at the renewed rate [USD/month]
    upfront_usd: Array  # its upfront payments, at each term's start [USD/month]
    list_usd: Array | None  # the on-demand price of a GPU-hour per month, where known


@dataclass(frozen=True, eq=False)
class OptionCharges:
    """One option's charges on one path (or the document's own values).

    The ``compute`` category is, month by month, its commitments' ``committed_usd``, then
    ``hourly_compute_usd`` (the GPU-hours billed by the hour: on-demand or spot work, a
    commitment's overflow, a mix's ``rest``) at ``hourly_usd`` a GPU-hour, then what is left
    (servers rented by the month: a dedicated option, a mix's dedicated layer)."""

    name: str
    type: str
    billing: str | None  # a cloud option's billing (a mix's: its rest's), else None
    horizon_months: int
    categories: dict[str, Array]  # category -> (H + 1,) [USD/month], every category
    total_usd: float  # the sum of every category over months 0 … H [USD]
    hourly_usd: Array | None  # the price of a compute GPU-hour billed by the hour [USD/GPU-h]
    list_usd: Array | None  # the on-demand price of that GPU-hour per month, where known
    hourly_compute_usd: Array  # the compute billed by the hour [USD/month]
    rest: str | None  # a mix's rest: the option its hours are rented as
    burst_usd_per_gpu_hour: float | None  # dedicated and on-prem: work beyond the servers
    bridge_usd_per_gpu_hour: float | None  # on-prem: work before the servers serve
    lead_time_months: int  # on-prem: months before service; 0 elsewhere
    commitments: tuple[CommitmentMonths, ...]


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


def _demand(plan: Plan, futures: Futures) -> PathDemand:
    multiplier = futures.demand_multiplier
    bound = 1.0 if multiplier is None else float(np.max(np.abs(multiplier), initial=0.0))
    return PathDemand(multiplier, 1, plan.horizon_months, bound)


def _trend(rates: CloudRates, futures: Futures, horizon: int) -> Array:
    c = _first(futures.cloud_price_change_per_year, rates.price_change_per_year)
    return _one(trend_factor(c, horizon))


def _commitment(
    name: str,
    layer: int | None,
    rates: CloudRates,
    used: Array,
    upfront: Array,
    futures: Futures,
    plan: Plan,
) -> CommitmentMonths:
    """A commitment's months, ``used`` the hours the work uses of it [GPU-h/month]."""
    horizon, hours = plan.horizon_months, plan.hours_per_month
    c = _first(futures.cloud_price_change_per_year, rates.price_change_per_year)
    base = _one(committed_usd(rates, c, hours, horizon))
    held = np.full(horizon + 1, rates.committed_gpus * hours)
    held[0] = 0.0
    used = np.clip(_one(np.broadcast_to(used, (1, horizon + 1))), 0.0, held)
    od = rates.on_demand_usd_per_gpu_hour
    listed = None if od is None else od * _trend(rates, futures, horizon)
    return CommitmentMonths(
        name, layer, rates.committed_gpus, rates.term_months, held, used, base, upfront, listed
    )


def _rented(
    rates: CloudRates, futures: Futures, horizon: int, on_demand: float | None
) -> tuple[Array, Array | None]:
    """A rented GPU-hour's price per month, and its on-demand price where known: on-demand
    its own, spot ``on_demand`` (the on-demand price of the same work) [USD/GPU-h]."""
    k = _trend(rates, futures, horizon)
    overhead = 0.0
    if rates.billing == "spot":
        overhead = _first(futures.interruption_overhead, rates.interruption_overhead)
    hourly = rates.usd_per_gpu_hour * k * (1.0 + overhead)
    if rates.billing == "on_demand":
        return hourly, hourly
    return hourly, None if on_demand is None else on_demand * k


def option_charges(
    plan: Plan,
    index: int,
    futures: Futures | None = None,
    on_demand_usd_per_gpu_hour: Mapping[str, float] | None = None,
) -> OptionCharges:
    """Option ``index``'s charges on ``futures`` (one path; the document's own values when
    None). ``on_demand_usd_per_gpu_hour``: by option name, the on-demand price of a GPU-hour of
    the spot options (alone, or a mix's ``rest``), which the document does not state
    [USD/GPU-h]; a spot option not in it has no list price here."""
    futures = futures or Futures()
    on_demand = on_demand_usd_per_gpu_hour or {}
    alone = _alone(plan, index)
    costs = plan_cost(alone, futures, 1, categories=True)
    assert costs.breakdown_usd is not None
    categories = {name: costs.breakdown_usd[0, c, 0].copy() for c, name in enumerate(CATEGORIES)}
    option: OptionPlan = plan.options[index]
    rates = option.rates
    horizon = plan.horizon_months
    hourly: Array | None = None
    listed: Array | None = None
    by_hour = np.zeros(horizon + 1)
    commitments: list[CommitmentMonths] = []
    billing: str | None = None
    if isinstance(rates, CloudRates):
        billing = rates.billing
        if rates.billing == "committed":
            if rates.committed_gpus > 0:
                used = option_used(option, rates, _demand(plan, futures), plan.hours_per_month)
                commitments.append(
                    _commitment(
                        option.name, None, rates, used, categories["upfront"], futures, plan
                    )
                )
            if rates.on_demand_usd_per_gpu_hour is not None:  # the overflow's price
                hourly = listed = rates.on_demand_usd_per_gpu_hour * _trend(rates, futures, horizon)
        else:
            hourly, listed = _rented(rates, futures, horizon, on_demand.get(option.name))
        by_hour = categories["compute"] - sum(
            (c.committed_usd for c in commitments), np.zeros(horizon + 1)
        )
    elif isinstance(rates, MixTerms):
        commitments, by_hour = _mix_charges(plan, option, rates, futures)
        if rates.rest is not None:
            billing = rates.rest.rates.billing
            hourly, listed = _rented(
                rates.rest.rates, futures, horizon, on_demand.get(rates.rest.name)
            )
    burst = bridge = None
    lead = 0
    if isinstance(rates, DedicatedRates):
        burst = rates.burst_usd_per_gpu_hour
    if isinstance(rates, OnPremRates):
        burst = rates.burst_usd_per_gpu_hour
        bridge = rates.bridge_usd_per_gpu_hour
        lead = rates.lead_time_months
    if hourly is None:
        by_hour = np.zeros(horizon + 1)
    return OptionCharges(
        name=option.name,
        type=option.type,
        billing=billing,
        horizon_months=horizon,
        categories=categories,
        total_usd=float(costs.total_usd[0, 0]),
        hourly_usd=hourly,
        list_usd=listed,
        hourly_compute_usd=by_hour,
        rest=rates.rest.name if isinstance(rates, MixTerms) and rates.rest is not None else None,
        burst_usd_per_gpu_hour=burst,
        bridge_usd_per_gpu_hour=bridge,
        lead_time_months=lead,
        commitments=tuple(commitments),
    )


def _mix_charges(
    plan: Plan, option: OptionPlan, terms: MixTerms, futures: Futures
) -> tuple[list[CommitmentMonths], Array]:
    """A mix's committed layers held above 0, and ``rest``'s compute [USD/month]."""
    horizon, hours = plan.horizon_months, plan.hours_per_month
    demand = _demand(plan, futures)
    commitments = []
    for j, layer in enumerate(terms.layers):
        if layer.kind != "committed" or layer.size <= 0:
            continue
        assert isinstance(layer.rates, CloudRates)
        used = layer_used(option, terms, j, demand, hours)
        upfront = layer.fixed_costs.get("upfront", np.zeros(horizon + 1))
        commitments.append(_commitment(layer.name, j, layer.rates, used, upfront, futures, plan))
    if terms.rest is None:
        return commitments, np.zeros(horizon + 1)
    load = demand.load(option, hours)
    assert load is not None  # a mix has workloads
    service = mix_service(terms, load, demand.supply(option), hours, bands=[])
    rest = rest_costs(terms.rest, service.rest, futures, horizon, None)["compute"]
    return commitments, _one(np.broadcast_to(rest, (1, horizon + 1)))
