"""Shared cloud capacity rented by the hour: on-demand, spot and committed billing.

Every cost is an array over months ``0 … H`` (last axis, length ``H + 1``), with a leading path
axis ``P`` where it depends on the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .demand import counted_over, excess_gpu_hours, within_capacity
from .egress import cloud_egress_usd
from .finance import every_month, renewal_factor, single_term, term_starts, trend_factor

Array = NDArray[np.float64]


@dataclass(frozen=True)
class CloudRates:
    """Prices of one cloud option, path-independent parts resolved."""

    billing: str  # "on_demand", "spot" or "committed"
    scaling: str  # "elastic" or "fixed" (on-demand and spot)
    usd_per_gpu_hour: float  # [USD/GPU-h] on-demand, spot or committed rate
    price_change_per_year: float  # c [1/year]
    support_fraction: float  # share of compute + egress [dimensionless]
    egress_usd_per_month: float  # [USD/month], months 1 … H
    interruption_overhead: float = 0.0  # spot only [dimensionless]
    committed_gpus: int = 0  # [GPUs]
    term_months: int = 1  # [months]
    upfront_usd: float = 0.0  # [USD per term]
    on_demand_usd_per_gpu_hour: float | None = None  # [USD/GPU-h] overflow beyond the commitment


def cloud_rates(option: Mapping[str, Any], egress_tb_per_month: float) -> CloudRates:
    """The rates of a normalised cloud option (``committed_gpus`` and ``term_months`` filled).

    Every field is read as normalisation wrote it: the defaults live in :mod:`.schema` only.
    """
    billing = str(option["billing"])
    egress = cloud_egress_usd(
        egress_tb_per_month,
        _optional_float(option.get("egress_usd_per_gb")),
        option.get("egress_tiers"),
    )
    common: dict[str, Any] = {
        "billing": billing,
        "usd_per_gpu_hour": float(option["usd_per_gpu_hour"]),
        "price_change_per_year": float(option["price_change_per_year"]),
        "support_fraction": float(option["support_fraction"]),
        "egress_usd_per_month": egress,
    }
    if billing == "committed":
        return CloudRates(
            scaling="fixed",
            committed_gpus=int(option["committed_gpus"]),
            term_months=int(option["term_months"]),
            upfront_usd=float(option["upfront_usd"]),
            on_demand_usd_per_gpu_hour=_optional_float(option.get("on_demand_usd_per_gpu_hour")),
            **common,
        )
    return CloudRates(
        scaling=str(option["scaling"]),
        interruption_overhead=float(option["interruption_overhead"]) if billing == "spot" else 0.0,
        **common,
    )


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def paths_column(value: ArrayLike) -> Array:
    """A scalar or a ``(P,)`` array as something that broadcasts against ``(P, H + 1)``."""
    array = np.asarray(value, dtype=np.float64)
    return array[:, np.newaxis] if array.ndim == 1 else array


def rented_compute_usd(
    busy_gpu_hours: Array,
    peak_gpus: Array,
    hours_per_month: float,
    usd_per_gpu_hour: float,
    trend: Array,
    scaling: str,
    overhead: ArrayLike = 0.0,
) -> Array:
    """On-demand or spot compute [USD/month]: ``billed × rate × k[m] × (1 + overhead)``.

    ``billed`` is the busy GPU-hours (elastic) or, for a fleet kept running, ``peak_o × hours``
    plus any work beyond it, billed at the same rate (a fixed fleet tops up on demand).
    ``busy_gpu_hours`` is ``(P, H + 1)``, ``peak_gpus`` ``(H + 1,)``, ``trend`` ``k[m]``.
    """
    if scaling == "fixed":
        billed = np.maximum(peak_gpus * hours_per_month, busy_gpu_hours)
    else:
        billed = busy_gpu_hours
    compute = billed * usd_per_gpu_hour * trend
    if np.ndim(overhead) == 0 and float(np.asarray(overhead)) == 0.0:
        return compute  # × (1 + 0) changes nothing
    return compute * (1.0 + paths_column(overhead))


def committed_base_usd(
    committed_gpus: int,
    hours_per_month: float,
    usd_per_gpu_hour: float,
    price_change_per_year: ArrayLike,
    term_months: int,
    horizon_months: int,
    *,
    renewal: Array | None = None,
) -> Array:
    """Committed GPUs paid every hour of months ``1 … H`` at the renewed rate [USD/month].

    ``committed_gpus × hours × rate × (1 + c) ** (T(m) / 12)``; shape ``(H + 1,)`` or ``(P, H + 1)``.
    With a single term the factor is exactly 1 whatever ``c``, and the result is ``(H + 1,)``.
    ``renewal``: the factor :func:`renewal_factor` gives for this ``c`` and term, when the caller
    has it already (a sizing sweep shares it among its commitments).
    """
    base = committed_gpus * hours_per_month * usd_per_gpu_hour
    if single_term(term_months, horizon_months):
        return base * every_month(1.0, horizon_months)
    factor = (
        renewal_factor(price_change_per_year, term_months, horizon_months)
        if renewal is None
        else renewal
    )
    # base × factor × every_month(1.0): × 1 leaves months 1 … H as they are, so only month 0 is
    # multiplied (by 0), in place in the fresh product.
    usd: Array = np.multiply(base, factor)
    usd[..., 0] *= 0.0
    return usd


def upfront_usd(upfront_usd_per_term: float, term_months: int, horizon_months: int) -> Array:
    """Upfront payments at the start of each term, months ``0, term, 2·term … < H`` [USD]; ``(H + 1,)``."""
    return upfront_usd_per_term * term_starts(term_months, horizon_months)


def support_usd(support_fraction: float, compute_usd: Array, egress_usd: Array) -> Array:
    """``support[m] = support_fraction × (compute[m] + egress[m])`` [USD/month]."""
    return support_fraction * (compute_usd + egress_usd)


def cloud_fixed_costs(rates: CloudRates, horizon_months: int) -> dict[str, Array]:
    """The categories that never depend on the path [USD/month], each ``(H + 1,)``.

    ``upfront`` (committed billing) and ``egress``.
    """
    costs: dict[str, Array] = {}
    if rates.billing == "committed":
        costs["upfront"] = upfront_usd(rates.upfront_usd, rates.term_months, horizon_months)
    costs["egress"] = every_month(rates.egress_usd_per_month, horizon_months)
    return costs


def cloud_path_costs(
    rates: CloudRates,
    busy_gpu_hours: Array,
    peak_gpus: Array,
    hours_per_month: float,
    horizon_months: int,
    price_change_per_year: ArrayLike | None = None,
    interruption_overhead: ArrayLike | None = None,
    *,
    trend: Array | None = None,
    busy_bound_gpu_hours: float | None = None,
    renewal: Array | None = None,
    over_gpu_hours: Array | None = None,
) -> tuple[dict[str, Array], Array]:
    """The categories that may depend on the path [USD/month] and shortfall per path [GPU-h].

    ``over_gpu_hours`` (version 1.3): a commitment's ``over(committed_gpus)`` [GPU-h/month]
    ``(P, H + 1)`` where the busiest hours make it differ from version 1.2's rule; None takes
    ``busy_gpu_hours`` (``supply_o``) beyond the commitment, as version 1.2 did.

    ``compute``, and ``support`` unless ``support_fraction`` is 0 (then support is nothing).
    ``busy_gpu_hours``: ``(P, H + 1)`` with month 0 zero; ``peak_gpus``: ``(H + 1,)``.
    ``price_change_per_year`` / ``interruption_overhead``: ``(P,)`` per-path replacements, or None
    for the option's own values. ``trend``, ``k[m]`` for the ``c`` in use when the
    caller has it already (``(H + 1,)`` or ``(P, H + 1)``); ``busy_bound_gpu_hours``, an upper
    bound of ``|busy_gpu_hours|`` [GPU-h/month] (computed when None) that skips the overflow of
    a commitment when it cannot exceed it; ``renewal``, the committed rate's renewal factor for the
    ``c`` in use when the caller has it already (see :func:`committed_base_usd`).
    """
    c = rates.price_change_per_year if price_change_per_year is None else price_change_per_year
    n_paths = busy_gpu_hours.shape[0]
    shortfall = np.zeros(n_paths)
    costs: dict[str, Array] = {}
    if rates.billing == "committed":
        capacity = rates.committed_gpus * hours_per_month
        compute = committed_base_usd(
            rates.committed_gpus,
            hours_per_month,
            rates.usd_per_gpu_hour,
            c,
            rates.term_months,
            horizon_months,
            renewal=renewal,
        )
        if busy_bound_gpu_hours is None and over_gpu_hours is None:
            busy_bound_gpu_hours = float(np.max(np.abs(busy_gpu_hours), initial=0.0))
        if over_gpu_hours is not None or not commitment_holds(
            rates, float(busy_bound_gpu_hours or 0.0), hours_per_month
        ):
            if over_gpu_hours is None:
                overflow = excess_gpu_hours(busy_gpu_hours, capacity)  # beyond the commitment
            else:
                overflow = counted_over(over_gpu_hours, capacity)
            if rates.on_demand_usd_per_gpu_hour is None:
                shortfall = overflow.sum(axis=-1)
            else:
                k = trend_factor(c, horizon_months) if trend is None else trend
                compute = compute + overflow * rates.on_demand_usd_per_gpu_hour * k
    else:
        overhead: ArrayLike = 0.0
        if rates.billing == "spot":
            overhead = (
                rates.interruption_overhead
                if interruption_overhead is None
                else interruption_overhead
            )
        compute = rented_compute_usd(
            busy_gpu_hours,
            peak_gpus,
            hours_per_month,
            rates.usd_per_gpu_hour,
            trend_factor(c, horizon_months) if trend is None else trend,
            rates.scaling,
            overhead,
        )
    costs["compute"] = compute
    if rates.support_fraction != 0.0:
        egress = every_month(rates.egress_usd_per_month, horizon_months)
        costs["support"] = support_usd(rates.support_fraction, compute, egress)
    return costs, shortfall


def commitment_holds(
    rates: CloudRates, busy_bound_gpu_hours: float, hours_per_month: float
) -> bool:
    """True for committed billing when work bounded by ``busy_bound_gpu_hours`` [GPU-h/month]
    never exceeds the commitment: :func:`cloud_path_costs` then reads nothing of the work but
    its number of paths."""
    return rates.billing == "committed" and within_capacity(
        busy_bound_gpu_hours, rates.committed_gpus * hours_per_month
    )
