"""Servers bought and hosted: capex or financing, power, colocation, support, staff, resale.

Months ``m > lead_time_months`` are in service; before that the work is bought at a bridge price
or is shortfall.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .cloud import paths_column
from .dedicated import burst_or_shortfall, capacity_gpu_hours
from .demand import counted_over, excess_gpu_hours, within_capacity
from .finance import at_month, every_month, financing_schedule_usd
from .load import done_gpu_hours

Array = NDArray[np.float64]


@dataclass(frozen=True)
class OnPremRates:
    """Prices, size and running costs of one on-prem option."""

    servers: int  # [servers]
    gpus_per_server: int  # [GPUs/server]
    capex_usd_per_server: float  # [USD/server]
    server_kw: float  # [kW/server] at full load
    lead_time_months: int  # [months] before service
    bridge_usd_per_gpu_hour: float | None  # [USD/GPU-h] before service, None: shortfall
    burst_usd_per_gpu_hour: float | None  # [USD/GPU-h] beyond the servers, None: shortfall
    idle_power_fraction: float  # [dimensionless]
    pue: float  # [dimensionless]
    usd_per_kwh: float  # [USD/kWh]
    colo_usd_per_kw_month: float  # [USD/kW/month]
    support_fraction_per_year: float  # share of capex per year [1/year]
    staff_usd_per_month: float  # [USD/month]
    residual_fraction: float  # resale share of capex at month H [dimensionless]
    egress_usd_per_month: float  # [USD/month]
    financing_apr: float | None = None  # [1/year]
    financing_term_months: float | None = None  # [months]

    @property
    def capex_usd(self) -> float:
        """``C = servers × capex_usd_per_server`` [USD]."""
        return self.servers * self.capex_usd_per_server


def on_prem_rates(option: Mapping[str, Any], egress_tb_per_month: float) -> OnPremRates:
    """The rates of a normalised on-prem option (``servers`` filled); defaults live in :mod:`.schema`."""

    def optional(key: str) -> float | None:
        value = option.get(key)
        return None if value is None else float(value)

    financing = option.get("financing")
    return OnPremRates(
        servers=int(option["servers"]),
        gpus_per_server=int(option["gpus_per_server"]),
        capex_usd_per_server=float(option["capex_usd_per_server"]),
        server_kw=float(option["server_kw"]),
        lead_time_months=int(option["lead_time_months"]),
        bridge_usd_per_gpu_hour=optional("bridge_usd_per_gpu_hour"),
        burst_usd_per_gpu_hour=optional("burst_usd_per_gpu_hour"),
        idle_power_fraction=float(option["idle_power_fraction"]),
        pue=float(option["pue"]),
        usd_per_kwh=float(option["usd_per_kwh"]),
        colo_usd_per_kw_month=float(option["colo_usd_per_kw_month"]),
        support_fraction_per_year=float(option["support_fraction_per_year"]),
        staff_usd_per_month=float(option["staff_usd_per_month"]),
        residual_fraction=float(option["residual_fraction"]),
        egress_usd_per_month=egress_tb_per_month * float(option["egress_usd_per_tb"]),
        financing_apr=None if not financing else float(financing["apr"]),
        financing_term_months=None if not financing else float(financing["term_months"]),
    )


def in_service_months(lead_time_months: int, horizon_months: int) -> NDArray[np.bool_]:
    """Months ``m > lead_time_months`` among ``0 … H`` (month 0 never); shape ``(H + 1,)``."""
    months = np.arange(horizon_months + 1)
    return (months >= 1) & (months > lead_time_months)


def before_service_months(lead_time_months: int, horizon_months: int) -> NDArray[np.bool_]:
    """Months ``1 … lead_time_months``; shape ``(H + 1,)``."""
    months = np.arange(horizon_months + 1)
    return (months >= 1) & (months <= lead_time_months)


def load_fraction(busy_gpu_hours: Array, capacity: float) -> Array:
    """``u[m] = min(1, busy_o[m] / capacity)`` [dimensionless]; 0 without capacity."""
    if capacity <= 0.0:
        return np.zeros_like(busy_gpu_hours)
    load = np.divide(busy_gpu_hours, capacity)
    return np.minimum(load, 1.0, out=load)


def power_usd(
    servers: int,
    server_kw: float,
    idle_power_fraction: float,
    load: Array,
    pue: float,
    hours_per_month: float,
    usd_per_kwh: ArrayLike,
) -> Array:
    """``servers × kW × (idle + (1 − idle) × u) × pue × hours × usd_per_kwh`` [USD/month].

    Evaluated left to right as written, in one new array updated in place.
    """
    usd = np.multiply(1.0 - idle_power_fraction, load)
    usd += idle_power_fraction
    usd *= servers * server_kw  # the draw [kW]
    usd *= pue
    usd *= hours_per_month
    return np.multiply(usd, paths_column(usd_per_kwh))  # may add the path axis


def capex_schedule_usd(rates: OnPremRates, horizon_months: int) -> tuple[str, Array]:
    """The purchase as cash flows [USD]: ``("capex", C at month 0)`` or ``("financing", level payments)``."""
    if rates.financing_apr is None or rates.financing_term_months is None:
        return "capex", at_month(rates.capex_usd, 0, horizon_months)
    return "financing", financing_schedule_usd(
        rates.capex_usd, rates.financing_apr, rates.financing_term_months, horizon_months
    )


def on_prem_fixed_costs(rates: OnPremRates, horizon_months: int) -> dict[str, Array]:
    """The categories that never depend on the path [USD/month], each ``(H + 1,)``.

    ``capex`` or ``financing``, then ``colo`` and ``support`` (in service), ``staff``,
    ``egress`` and ``residual`` (month H, negative), in that order.
    """
    in_service = in_service_months(rates.lead_time_months, horizon_months)
    capital = rates.capex_usd
    category, schedule = capex_schedule_usd(rates, horizon_months)
    return {
        category: schedule,
        "colo": np.where(
            in_service, rates.servers * rates.server_kw * rates.colo_usd_per_kw_month, 0.0
        ),
        "support": np.where(in_service, capital * rates.support_fraction_per_year / 12.0, 0.0),
        "staff": every_month(rates.staff_usd_per_month, horizon_months),
        "egress": every_month(rates.egress_usd_per_month, horizon_months),
        "residual": at_month(-capital * rates.residual_fraction, horizon_months, horizon_months),
    }


def on_prem_path_costs(
    rates: OnPremRates,
    busy_gpu_hours: Array,
    hours_per_month: float,
    horizon_months: int,
    usd_per_kwh_multiplier: ArrayLike | None = None,
    *,
    busy_bound_gpu_hours: float | None = None,
    supply_gpu_hours: Array | None = None,
    over_gpu_hours: Array | None = None,
) -> tuple[dict[str, Array], Array]:
    """The categories that depend on the path [USD/month] and shortfall per path [GPU-h].

    ``over_gpu_hours`` (version 1.3): ``over(servers × gpus_per_server)`` [GPU-h/month] where
    the busiest hours make it differ from version 1.2's rule (None: ``supply_o`` beyond the
    servers); the burst and shortfall in service take it, and the load ``u[m] = min(1, done(C)
    / capacity)`` its ``done``. Without it, where ``supply_o`` holds idle replicas beyond the
    servers, ``over`` is version 1.2's ``supply_o − capacity`` and the load its ``done`` too.

    ``supply_gpu_hours`` (version 1.2): ``supply_o`` ``(P, H + 1)``, what the bridge, the burst
    and the shortfall take (``busy_gpu_hours`` when None); the load ``u[m]`` takes ``busy_o``, and
    ``busy_bound_gpu_hours`` then bounds ``|supply_o|``.

    ``power`` (in service); ``bridge`` before service when there is a lead time and a bridge
    rate; ``burst`` when work may exceed the servers and there is a burst rate.
    ``busy_gpu_hours``: ``(P, H + 1)`` with month 0 zero; ``usd_per_kwh_multiplier``: ``(P,)``
    or None; ``busy_bound_gpu_hours``, an upper bound of ``|busy_gpu_hours|``
    [GPU-h/month] (computed when None) that skips the burst when it cannot exceed capacity.
    """
    capacity = capacity_gpu_hours(rates.servers, rates.gpus_per_server, hours_per_month)
    # The months out of service are 0 … lead_time_months (in_service_months), those before
    # service 1 … lead_time_months (before_service_months): the prefix up to ``start``.
    start = first_service_month(rates.lead_time_months)
    usd_per_kwh: ArrayLike = rates.usd_per_kwh
    if usd_per_kwh_multiplier is not None:
        usd_per_kwh = rates.usd_per_kwh * np.asarray(usd_per_kwh_multiplier, dtype=np.float64)
    supply = busy_gpu_hours if supply_gpu_hours is None else supply_gpu_hours
    if busy_bound_gpu_hours is None:
        busy_bound_gpu_hours = float(np.max(np.abs(supply), initial=0.0))
    if (
        over_gpu_hours is None
        and supply is not busy_gpu_hours
        and not within_capacity(busy_bound_gpu_hours, capacity)
    ):
        over_gpu_hours = np.maximum(supply - capacity, 0.0)  # idle replicas beyond the servers
    work = busy_gpu_hours
    if over_gpu_hours is not None:
        work = done_gpu_hours(busy_gpu_hours, supply, over_gpu_hours)
    power = power_usd(
        rates.servers,
        rates.server_kw,
        rates.idle_power_fraction,
        load_fraction(work, capacity),
        rates.pue,
        hours_per_month,
        usd_per_kwh,
    )
    power[..., :start] = 0.0  # no power before service (a fresh array)
    costs: dict[str, Array] = {"power": power}
    shortfall = np.zeros(busy_gpu_hours.shape[:-1])
    if start > 1 and horizon_months >= 1:  # some month before service
        before = before_service_months(rates.lead_time_months, horizon_months)
        if rates.bridge_usd_per_gpu_hour is None:
            shortfall = shortfall + np.where(before, supply, 0.0).sum(axis=-1)
        else:
            costs["bridge"] = bridge_usd(supply, start, rates.bridge_usd_per_gpu_hour)
    if over_gpu_hours is not None:
        excess = np.array(counted_over(over_gpu_hours, capacity), dtype=np.float64)
        excess[..., :start] = 0.0  # in service only
        burst, burst_shortfall = burst_or_shortfall(excess, rates.burst_usd_per_gpu_hour)
        if burst is not None:
            costs["burst"] = burst
        shortfall = shortfall + burst_shortfall
    elif not within_capacity(busy_bound_gpu_hours, capacity):
        excess = excess_gpu_hours(supply, capacity)  # a fresh array
        excess[..., :start] = 0.0  # in service only
        burst, burst_shortfall = burst_or_shortfall(excess, rates.burst_usd_per_gpu_hour)
        if burst is not None:
            costs["burst"] = burst
        shortfall = shortfall + burst_shortfall
    return costs, shortfall


def first_service_month(lead_time_months: int) -> int:
    """The first month in service, ``max(1, lead_time_months + 1)``: months ``0 … H`` before it
    are those :func:`in_service_months` leaves out."""
    return max(1, int(lead_time_months) + 1)


def bridge_usd(supply_gpu_hours: Array, start: int, usd_per_gpu_hour: float) -> Array:
    """``where(before service, supply_o, 0) × bridge rate`` [USD/month], the months before
    service being ``1 … start − 1``: the months outside them hold ``0 × rate``, the others
    ``supply_o × rate``, as the product of the whole masked array would."""
    usd = np.full(supply_gpu_hours.shape, 0.0 * usd_per_gpu_hour)
    np.multiply(supply_gpu_hours[..., 1:start], usd_per_gpu_hour, out=usd[..., 1:start])
    return usd
