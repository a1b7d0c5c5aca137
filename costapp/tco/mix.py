"""The ``mix`` option (scenario-format.md, version 1.3): own some servers, commit to some GPUs,
rent the rest, as one plan.

The layers serve the mix's load from the bottom up: with ``C_j`` layer ``j``'s GPUs that month
(its committed GPUs; servers × GPUs per server in service, 0 before an on-prem lead time ends) and
``K_j = C_1 + … + C_j``, layer ``j`` serves ``served_j = over*(K_{j−1}) − over*(K_j)`` GPU-hours
and ``rest`` serves ``over*(K_last)`` (counted above the tolerance of a fixed capacity of
``K_last × hours_per_month``), where ``over*`` judges every workload's unit against ``K_last``
(:class:`~costapp.tco.load.LoadOnPaths`). Each layer costs what its option costs alone at its
size in the mix, less what the layers above it and ``rest`` now do: a committed layer its upfront
and committed GPUs at the renewed rate (its support on that compute), a dedicated layer its setup
and fees, an on-prem layer its capex or financing, colo, support, staff, residual and its power at
``u = min(1, served_j × busy_o / (supply_o × C_j × hours))`` in service; ``rest`` pays ``served ×
rate × k[m]`` (× ``1 + interruption_overhead`` on spot) with its support; the mix's own egress
once. A layer of size 0 costs nothing. Money in USD, work in GPU-hours of the mix's GPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from .cloud import CloudRates, cloud_rates, committed_base_usd, paths_column, upfront_usd
from .dedicated import DedicatedRates, dedicated_fixed_costs, dedicated_rates
from .demand import counted_over
from .egress import cloud_egress_usd
from .finance import every_month, trend_factor
from .load import LoadOnPaths, WorkloadLoad
from .on_prem import (
    OnPremRates,
    first_service_month,
    in_service_months,
    on_prem_fixed_costs,
    on_prem_rates,
    power_usd,
)


class PathValues(Protocol):
    """The simulated values a mix's costs read (:class:`costapp.tco.core.Futures`): each None
    (the document's own) or one value per path."""

    @property
    def cloud_price_change_per_year(self) -> Array | None: ...

    @property
    def usd_per_kwh_multiplier(self) -> Array | None: ...

    @property
    def interruption_overhead(self) -> Array | None: ...


class OwnValues:
    """:class:`PathValues` of the document's own values: none simulated."""

    cloud_price_change_per_year = None
    usd_per_kwh_multiplier = None
    interruption_overhead = None


Array = NDArray[np.float64]
Mask = NDArray[np.bool_]

MemberRates = CloudRates | DedicatedRates | OnPremRates


@dataclass(frozen=True, eq=False)
class MixLayer:
    """One layer of a mix at its size in the mix."""

    name: str
    kind: str  # "committed", "dedicated" or "on_prem"
    size: int  # committed GPUs or servers
    gpus: int  # the size in GPUs
    capacity_gpus: Array  # C_j [GPUs] per month 0 … H (0 before service and in month 0)
    rates: MemberRates
    fixed_costs: dict[str, Array]  # its path-independent categories in the mix [USD/month]


@dataclass(frozen=True, eq=False)
class MixRest:
    """The mix's ``rest``: an elastic on-demand or spot cloud option."""

    name: str
    rates: CloudRates


@dataclass(frozen=True, eq=False)
class MixTerms:
    """What a mix holds, path-independent: its layers at their sizes, ``rest`` and egress."""

    layers: tuple[MixLayer, ...]
    rest: MixRest | None
    egress_usd_per_month: float  # the mix's own egress [USD/month]
    total_capacity_gpus: Array  # K_last per month 0 … H [GPUs]
    provisioned_gpus: int  # K_last after every lead time [GPUs]
    bounds: tuple[Array, ...] = ()  # K_0 = 0, K_1, …, K_last per month 0 … H [GPUs]
    bound_keys: tuple[bytes, ...] = ()  # their bytes, as keys of what candidates share


def member_kind(option: Mapping[str, Any]) -> str:
    """A cloud option's billing, else its type."""
    return str(option["billing"]) if option["type"] == "cloud" else str(option["type"])


def size_field(option: Mapping[str, Any]) -> str:
    """The field a layer's size sets: ``committed_gpus`` or ``servers``."""
    return "committed_gpus" if option["type"] == "cloud" else "servers"


def mix_terms(
    mix: Mapping[str, Any],
    options: Sequence[Mapping[str, Any]],
    horizon: int,
    hours: float,
    egress_tb_per_month: float,
    sizes: Sequence[int] | None = None,
) -> MixTerms:
    """The layers of ``mix`` at their sizes (``sizes`` when given, a sizing candidate; else each
    layer's ``size``), from the normalised ``options`` (their own sizes filled)."""
    by_name = {str(o["name"]): o for o in options}
    layers: list[MixLayer] = []
    total = np.zeros(horizon + 1)
    provisioned = 0
    for j, entry in enumerate(mix["layers"]):
        member = by_name[str(entry["option"])]
        size = int(entry["size"]) if sizes is None else int(sizes[j])
        at_size = {**member, size_field(member): size}
        kind = member_kind(member)
        rates: MemberRates
        months = np.arange(horizon + 1) >= 1
        if kind == "committed":
            rates = cloud_rates(at_size, 0.0)
            gpus = rates.committed_gpus
            fixed = (
                {"upfront": upfront_usd(rates.upfront_usd, rates.term_months, horizon)}
                if size > 0
                else {}
            )
        elif kind == "dedicated":
            rates = dedicated_rates(at_size, 0.0)
            gpus = rates.servers * rates.gpus_per_server
            fixed = dedicated_fixed_costs(rates, horizon) if size > 0 else {}
            fixed.pop("egress", None)
        else:
            rates = on_prem_rates(at_size, 0.0)
            gpus = rates.servers * rates.gpus_per_server
            months = in_service_months(rates.lead_time_months, horizon)
            fixed = on_prem_fixed_costs(rates, horizon) if size > 0 else {}
            fixed.pop("egress", None)
        capacity = np.where(months, float(gpus), 0.0)
        total = total + capacity
        provisioned += gpus
        layers.append(MixLayer(str(member["name"]), kind, size, gpus, capacity, rates, fixed))
    rest = None
    if mix.get("rest") is not None:
        member = by_name[str(mix["rest"])]
        rest = MixRest(str(member["name"]), cloud_rates(member, 0.0))
    egress = cloud_egress_usd(
        egress_tb_per_month,
        None if mix.get("egress_usd_per_gb") is None else float(mix["egress_usd_per_gb"]),
        mix.get("egress_tiers"),
    )
    bounds = [np.zeros(horizon + 1)]
    for layer in layers:
        bounds.append(bounds[-1] + layer.capacity_gpus)
    return MixTerms(
        tuple(layers),
        rest,
        egress,
        total,
        provisioned,
        tuple(bounds),
        tuple(bound.tobytes() for bound in bounds),
    )


def mix_fixed_costs(terms: MixTerms, horizon: int) -> dict[str, Array]:
    """The mix's path-independent categories [USD/month]: its layers' summed, then its egress."""
    costs: dict[str, Array] = {}
    for layer in terms.layers:
        for name, usd in layer.fixed_costs.items():
            costs[name] = costs[name] + usd if name in costs else usd.copy()
    costs["egress"] = every_month(terms.egress_usd_per_month, horizon)
    return costs


@dataclass(frozen=True, eq=False)
class MixService:
    """What each layer and ``rest`` serve on some paths [GPU-h/month], ``(P, H + 1)``."""

    served: tuple[Array | None, ...]  # per layer (None: not asked for)
    rest: Array  # counted: above the tolerance of K_last × hours


MixCache = dict[tuple[Any, ...], Any]
"""What the candidates of a joint sizing share on one block of paths: ``over`` at each capacity,
each layer's costs at its size and band, ``rest``'s at each total capacity. Every entry is what
the same call computes without the cache, so a candidate's figures are those of the mix priced
alone at those sizes, bit for bit."""


def mix_service(
    terms: MixTerms,
    load: LoadOnPaths,
    supply: Array,
    hours: float,
    cache: MixCache | None = None,
    bands: Sequence[int] | None = None,
) -> MixService:
    """Each layer's band of the load and ``rest``'s hours on the paths of ``load``; ``bands``:
    the layers whose band is asked for (every layer when None; the others' are None)."""
    cache = {} if cache is None else cache
    limit = terms.total_capacity_gpus
    limit_bytes = terms.bound_keys[-1]
    limit_key = cache.get(("mask", limit_bytes))
    if limit_key is None:  # over* depends on K_last only through the units left out
        limit_key = load.mask_key(limit)
        cache[("mask", limit_bytes)] = limit_key
    flat_key = ("flat", limit_key)
    if flat_key not in cache:
        cache[flat_key] = load.all_flat() and all(
            unit <= 0.0 or bool(np.all(unit <= limit[1:])) for unit in load.active_units
        )
    flat = cache[flat_key]

    def over(capacity: Array, capacity_key: bytes) -> Array:
        key = ("over", capacity_key, limit_key)
        found = cache.get(key)
        if found is None:
            if flat:  # every load flat and no unit above K_last: version 1.2's rule
                found = np.maximum(supply - capacity * hours, 0.0)
            else:
                found = load.over(capacity, limit)
            cache[key] = found
        return found

    served: list[Array | None] = []
    keys = terms.bound_keys
    for j in range(len(terms.layers)):
        if bands is not None and j not in bands:
            served.append(None)
            continue
        key = ("served", keys[j], keys[j + 1], limit_key)
        band = cache.get(key)
        if band is None:
            below = supply if j == 0 else over(terms.bounds[j], keys[j])
            band = below - over(terms.bounds[j + 1], keys[j + 1])
            cache[key] = band
        served.append(band)
    rest_key = ("rest", limit_bytes)
    rest = cache.get(rest_key)
    if rest is None:
        rest = counted_over(over(limit, limit_bytes), limit * hours)
        cache[rest_key] = rest
    return MixService(tuple(served), rest)


def mix_member_costs(
    terms: MixTerms,
    futures: PathValues,
    busy: Array,
    supply: Array,
    hours: float,
    horizon: int,
    load: LoadOnPaths,
    cloud_trend: Array | None,
    cache: MixCache | None = None,
) -> tuple[list[dict[str, Array]], dict[str, Array], MixService]:
    """Each layer's and ``rest``'s path-dependent categories [USD/month] and the service.

    ``cache``: shared by calls on the same paths (``futures``, ``busy``, ``supply``, ``load``),
    as a joint sizing's candidates are on one block."""
    cache = {} if cache is None else cache
    owned = [
        j
        for j, layer in enumerate(terms.layers)
        if layer.size > 0 and isinstance(layer.rates, OnPremRates)
    ]
    service = mix_service(terms, load, supply, hours, cache, owned)
    parts: list[dict[str, Array]] = []
    keys = terms.bound_keys
    for j, (layer, served) in enumerate(zip(terms.layers, service.served, strict=True)):
        if layer.size <= 0:
            parts.append({})
            continue
        band = (keys[j], keys[j + 1], cache[("mask", keys[-1])])
        key = ("layer", j, layer.size, *(band if isinstance(layer.rates, OnPremRates) else ()))
        costs = cache.get(key)
        if costs is None:
            costs = _layer_costs(layer, served, futures, busy, supply, hours, horizon)
            cache[key] = costs
        parts.append(costs)
    rest_parts: dict[str, Array] = {}
    if terms.rest is not None:
        key = ("rest costs", keys[-1])
        found = cache.get(key)
        if found is None:
            found = rest_costs(terms.rest, service.rest, futures, horizon, cloud_trend)
            cache[key] = found
        rest_parts = found
    return parts, rest_parts, service


def committed_usd(rates: CloudRates, c: Any, hours: float, horizon: int) -> Array:
    """A commitment's GPUs paid every hour at the renewed rate [USD/month]
    (``cloud.committed_base_usd``), the path's cloud price change ``c`` [1/year] replacing the
    option's own where the path draws one (``None``: the option's)."""
    return committed_base_usd(
        rates.committed_gpus,
        hours,
        rates.usd_per_gpu_hour,
        rates.price_change_per_year if c is None else c,
        rates.term_months,
        horizon,
    )


def _layer_costs(
    layer: MixLayer,
    served: Array | None,
    futures: PathValues,
    busy: Array,
    supply: Array,
    hours: float,
    horizon: int,
) -> dict[str, Array]:
    """One held layer's path-dependent categories [USD/month]: a commitment's GPUs at the
    renewed rate (and its support on them), an owned layer's power at the load it serves."""
    costs: dict[str, Array] = {}
    rates = layer.rates
    if isinstance(rates, CloudRates):
        compute = committed_usd(rates, futures.cloud_price_change_per_year, hours, horizon)
        costs["compute"] = compute
        if rates.support_fraction != 0.0:
            costs["support"] = rates.support_fraction * compute
    elif isinstance(rates, OnPremRates):
        assert served is not None  # an owned layer's band is always asked for
        held = layer.capacity_gpus * hours
        denominator = supply * held
        safe = np.where(denominator > 0.0, denominator, 1.0)
        u = np.where(denominator > 0.0, np.minimum(1.0, served * busy / safe), 0.0)
        usd_per_kwh: Any = rates.usd_per_kwh
        if futures.usd_per_kwh_multiplier is not None:
            usd_per_kwh = rates.usd_per_kwh * futures.usd_per_kwh_multiplier
        power = power_usd(
            rates.servers,
            rates.server_kw,
            rates.idle_power_fraction,
            u,
            rates.pue,
            hours,
            usd_per_kwh,
        )
        power = np.array(np.broadcast_to(power, np.broadcast_shapes(power.shape, u.shape)))
        power[..., : first_service_month(rates.lead_time_months)] = 0.0
        costs["power"] = power
    return costs


def rest_costs(
    rest: MixRest,
    hours_served: Array,
    futures: PathValues,
    horizon: int,
    cloud_trend: Array | None,
) -> dict[str, Array]:
    """``rest``'s categories [USD/month]: ``served × rate × k[m]`` (× ``1 +
    interruption_overhead`` on spot), and its support on that compute."""
    rates = rest.rates
    c = futures.cloud_price_change_per_year
    if c is None:
        k = trend_factor(rates.price_change_per_year, horizon)
    else:
        k = trend_factor(c, horizon) if cloud_trend is None else cloud_trend
    compute = hours_served * rates.usd_per_gpu_hour * k
    if rates.billing == "spot":
        overhead = (
            rates.interruption_overhead
            if futures.interruption_overhead is None
            else futures.interruption_overhead
        )
        compute = compute * (1.0 + paths_column(overhead))
    costs = {"compute": compute}
    if rates.support_fraction != 0.0:
        costs["support"] = rates.support_fraction * compute
    return costs


def mix_path_costs(
    terms: MixTerms,
    futures: PathValues,
    busy: Array | None,
    supply: Array,
    hours: float,
    horizon: int,
    load: LoadOnPaths | None,
    cloud_trend: Array | None,
    cache: MixCache | None = None,
) -> tuple[dict[str, Array], Array]:
    """A mix's path-dependent categories [USD/month] and shortfall per path [GPU-h]: what
    neither the layers nor ``rest`` serve. ``cache``: see :func:`mix_member_costs`."""
    if busy is None or load is None:
        raise ValueError("a mix's costs need busy_o and its load")
    parts, rest, service = mix_member_costs(
        terms, futures, busy, supply, hours, horizon, load, cloud_trend, cache
    )
    costs: dict[str, Array] = {}
    for part in (*parts, rest):
        for name, usd in part.items():
            costs[name] = costs[name] + usd if name in costs else usd
    n_paths = supply.shape[0]
    if terms.rest is None:
        key = ("shortfall", terms.bound_keys[-1])
        found = None if cache is None else cache.get(key)
        shortfall = (
            np.broadcast_to(service.rest, supply.shape).sum(axis=-1) if found is None else found
        )
        if cache is not None:
            cache[key] = shortfall
    else:
        shortfall = np.zeros(n_paths)
    return costs, shortfall


def mix_layers_result(
    terms: MixTerms,
    loads: Sequence[WorkloadLoad],
    busy: Array,
    supply: Array,
    hours: float,
    horizon: int,
) -> list[dict[str, Any]]:
    """The result's ``layers`` of a mix on the document's own values (``busy`` and ``supply``
    one row, months ``0 … H``): per layer, then ``rest``, its name, role, GPUs, served GPU-hours
    and part of the total [USD]."""
    load = LoadOnPaths(loads, None, hours)
    cache: MixCache = {}
    parts, rest, _ = mix_member_costs(
        terms, OwnValues(), busy, supply, hours, horizon, load, None, cache
    )
    service = mix_service(terms, load, supply, hours, cache)
    rows: list[dict[str, Any]] = []
    for layer, part, served in zip(terms.layers, parts, service.served, strict=True):
        assert served is not None
        total = sum(float(np.sum(usd)) for usd in layer.fixed_costs.values())
        total += sum(float(np.sum(usd)) for usd in part.values())
        rows.append(
            {
                "name": layer.name,
                "role": "layer",
                "provisioned_gpus": int(layer.gpus),
                "served_gpu_hours": float(np.sum(served[0, 1:])),
                "total_usd": total,
            }
        )
    if terms.rest is not None:
        rows.append(
            {
                "name": terms.rest.name,
                "role": "rest",
                "provisioned_gpus": None,
                "served_gpu_hours": float(np.sum(np.broadcast_to(service.rest, supply.shape)[0])),
                "total_usd": sum(float(np.sum(usd)) for usd in rest.values()),
            }
        )
    return rows


def mix_utilization(
    terms: MixTerms,
    loads: Sequence[WorkloadLoad],
    multiplier: Array | None,
    busy: Array,
    supply: Array,
    hours: float,
) -> Array:
    """``Σ_m Σ_j served_j × busy_o / supply_o`` over ``Σ_m K_last × hours_per_month`` (0 where
    that is 0) [dimensionless], per row of ``busy`` and ``supply`` (``(S, H + 1)``, at the demand
    scales of ``multiplier``, or one row at the document's own demand when it is None)."""
    load = LoadOnPaths(loads, multiplier, hours)
    service = mix_service(terms, load, supply, hours)
    safe = np.where(supply > 0.0, supply, 1.0)
    share = np.where(supply > 0.0, busy / safe, 0.0)
    used = np.zeros(supply.shape[0])
    for served in service.served:
        assert served is not None
        used = used + np.sum((served * share)[:, 1:], axis=-1)
    held = float(np.sum(terms.total_capacity_gpus[1:])) * hours
    return np.asarray(np.where(held > 0.0, used / (held if held > 0.0 else 1.0), 0.0))
