"""Whole servers rented by the month at a flat fee, with optional burst beyond them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .demand import counted_over, excess_gpu_hours, within_capacity
from .egress import overage_egress_usd
from .finance import at_month, every_month

Array = NDArray[np.float64]


@dataclass(frozen=True)
class DedicatedRates:
    """Prices and size of one dedicated option."""

    servers: int  # [servers]
    gpus_per_server: int  # [GPUs/server]
    usd_per_server_month: float  # [USD/server/month]
    setup_usd: float  # [USD], month 0
    egress_usd_per_month: float  # [USD/month] beyond the included volume
    burst_usd_per_gpu_hour: float | None  # [USD/GPU-h] for work beyond the servers, None: shortfall


def dedicated_rates(option: Mapping[str, Any], egress_tb_per_month: float) -> DedicatedRates:
    """The rates of a normalised dedicated option (``servers`` filled)."""
    burst = option.get("burst_usd_per_gpu_hour")
    return DedicatedRates(
        servers=int(option["servers"]),
        gpus_per_server=int(option["gpus_per_server"]),
        usd_per_server_month=float(option["usd_per_server_month"]),
        setup_usd=float(option["setup_usd"]),
        egress_usd_per_month=overage_egress_usd(
            egress_tb_per_month,
            float(option["included_egress_tb"]),
            float(option["overage_usd_per_tb"]),
        ),
        burst_usd_per_gpu_hour=None if burst is None else float(burst),
    )


def capacity_gpu_hours(servers: int, gpus_per_server: int, hours_per_month: float) -> float:
    """``servers × gpus_per_server × hours_per_month`` [GPU-h/month]."""
    return servers * gpus_per_server * hours_per_month


def burst_or_shortfall(
    excess_gpu_hours_: Array, burst_usd_per_gpu_hour: float | None
) -> tuple[Array | None, Array]:
    """Excess work billed at the burst rate [USD/month], or counted as shortfall [GPU-h per path]."""
    if burst_usd_per_gpu_hour is None:
        return None, excess_gpu_hours_.sum(axis=-1)
    return excess_gpu_hours_ * burst_usd_per_gpu_hour, np.zeros(excess_gpu_hours_.shape[:-1])


def dedicated_fixed_costs(rates: DedicatedRates, horizon_months: int) -> dict[str, Array]:
    """The categories that never depend on the path [USD/month], each ``(H + 1,)``.

    ``compute`` (the servers' monthly fee), ``egress`` and ``setup`` (month 0).
    """
    return {
        "compute": every_month(rates.servers * rates.usd_per_server_month, horizon_months),
        "egress": every_month(rates.egress_usd_per_month, horizon_months),
        "setup": at_month(rates.setup_usd, 0, horizon_months),
    }


def dedicated_path_costs(
    rates: DedicatedRates,
    busy_gpu_hours: Array,
    hours_per_month: float,
    *,
    busy_bound_gpu_hours: float | None = None,
    over_gpu_hours: Array | None = None,
) -> tuple[dict[str, Array], Array]:
    """``burst`` [USD/month] when there is work beyond the servers and a burst rate, and
    shortfall per path [GPU-h].

    ``over_gpu_hours`` (version 1.3): ``over(servers × gpus_per_server)`` [GPU-h/month] where
    the busiest hours make it differ from version 1.2's rule; None takes ``busy_gpu_hours``
    (``supply_o``) beyond the servers, as version 1.2 did.

    ``busy_gpu_hours``: ``(P, H + 1)``; ``busy_bound_gpu_hours``: an upper bound of its absolute
    values [GPU-h/month] (computed when None); within capacity there is neither burst nor
    shortfall, and nothing is computed over paths and months.
    """
    capacity = capacity_gpu_hours(rates.servers, rates.gpus_per_server, hours_per_month)
    if over_gpu_hours is not None:
        burst, shortfall = burst_or_shortfall(
            counted_over(over_gpu_hours, capacity), rates.burst_usd_per_gpu_hour
        )
        return ({} if burst is None else {"burst": burst}), shortfall
    if busy_bound_gpu_hours is None:
        busy_bound_gpu_hours = float(np.max(np.abs(busy_gpu_hours), initial=0.0))
    if servers_hold(rates, busy_bound_gpu_hours, hours_per_month):
        return {}, np.zeros(busy_gpu_hours.shape[:-1])
    burst, shortfall = burst_or_shortfall(
        excess_gpu_hours(busy_gpu_hours, capacity), rates.burst_usd_per_gpu_hour
    )
    return ({} if burst is None else {"burst": burst}), shortfall


def servers_hold(
    rates: DedicatedRates, busy_bound_gpu_hours: float, hours_per_month: float
) -> bool:
    """True when work bounded by ``busy_bound_gpu_hours`` [GPU-h/month] never exceeds the
    servers: :func:`dedicated_path_costs` then reads nothing of the work but its shape."""
    capacity = capacity_gpu_hours(rates.servers, rates.gpus_per_server, hours_per_month)
    return within_capacity(busy_bound_gpu_hours, capacity)
