"""Figures of the result document derived from monthly costs: payback, savings, utilization.

Pure formulas of docs/scenario-format.md ("The result document") on numpy arrays; months index
``0 … H`` for money and ``1 … H`` for demand.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def cumulative_usd(monthly_usd: Array) -> Array:
    """Running sum of ``monthly_usd`` over the last axis [USD]."""
    return np.cumsum(monthly_usd, axis=-1)


EQUAL_TOLERANCE = 1e-9
"""Two money figures within ``1e-9 × max(1, |reference|)`` of each other count as equal."""


def equal_tolerance_usd(reference_usd: float) -> float:
    """``1e-9 × max(1, |reference_usd|)`` [USD]: a smaller gap is float noise."""
    return EQUAL_TOLERANCE * max(1.0, abs(float(reference_usd)))


def break_even_month(cumulative: Array, baseline_cumulative: Array) -> float | None:
    """Simple payback [months] on nominal cumulative cost, both arrays ``(H + 1,)`` [USD].

    With ``d[k] = cumulative[k] − baseline_cumulative[k]``: 0 if ``d[k] ≤ 0`` for every ``k``; None
    if ``d[H] > 0``; else ``k + d[k] / (d[k] − d[k + 1])`` for the last ``k`` with ``d[k] > 0``.
    ``d[k] > 0`` means more than ``1e-9 × max(1, |baseline_cumulative[H]|)``: a smaller gap is
    float noise and counts as 0.
    """
    baseline = np.asarray(baseline_cumulative, dtype=np.float64)
    d = np.asarray(cumulative, dtype=np.float64) - baseline
    positive = np.flatnonzero(d > equal_tolerance_usd(baseline[-1]))
    if positive.size == 0:
        return 0.0
    if positive[-1] == d.size - 1:
        return None
    k = int(positive[-1])
    return float(k + d[k] / (d[k] - d[k + 1]))


def savings_vs_baseline_pct(total_usd: float, baseline_total_usd: float) -> float | None:
    """``100 × (1 − total / baseline total)`` [%]; None when the baseline costs 0."""
    if baseline_total_usd == 0.0:
        return None
    return float(100.0 * (1.0 - total_usd / baseline_total_usd))


def usd_per_busy_gpu_hour(total_usd: float, busy_gpu_hours: float) -> float | None:
    """``total_usd / busy_gpu_hours`` [USD/GPU-h]; None when there is no work."""
    if busy_gpu_hours <= 0.0:
        return None
    return float(total_usd / busy_gpu_hours)


def average_utilization(
    busy_gpu_hours: Array,
    peak_gpus: Array,
    hours_per_month: float,
    capacity_gpu_hours_per_month: float | None,
    in_service: NDArray[np.bool_],
    scaling: str | None,
    supply_gpu_hours: Array | None = None,
    done_gpu_hours: Array | None = None,
) -> Array:
    """Average utilization [dimensionless] over the last (month) axis of ``busy_gpu_hours``.

    Elastic on-demand and spot: ``Σ busy_o / Σ supply_o`` (version 1.2; 1 where ``Σ supply_o``
    is 0, and 1 when ``supply_gpu_hours`` is None: no resident GPUs, ``supply_o = busy_o``). Fixed on-demand and spot: ``Σ busy_o / (Σ peak_o × hours)``.
    Fixed capacity (``capacity_gpu_hours_per_month`` given): ``Σ done(C) / (capacity × months
    in service)`` over the months in service, ``done_gpu_hours`` (version 1.3), or ``min(busy_o,
    capacity)`` when it is None (version 1.2's rule, the same where the load is flat and all work). 0 where there is no capacity.
    ``busy_gpu_hours`` is ``(..., H)``; ``peak_gpus`` and ``in_service`` are ``(H,)``.
    """
    busy = np.asarray(busy_gpu_hours, dtype=np.float64)
    lead_shape = busy.shape[:-1]
    if capacity_gpu_hours_per_month is None:
        if scaling == "fixed":
            fleet = float(np.sum(peak_gpus)) * hours_per_month
            if fleet <= 0.0:
                return np.zeros(lead_shape)
            return np.asarray(busy.sum(axis=-1) / fleet, dtype=np.float64)
        if supply_gpu_hours is None:
            return np.ones(lead_shape)
        supplied = np.asarray(supply_gpu_hours, dtype=np.float64).sum(axis=-1)
        used = busy.sum(axis=-1)
        safe = np.where(supplied > 0.0, supplied, 1.0)
        return np.asarray(np.where(supplied > 0.0, used / safe, 1.0), dtype=np.float64)
    months = int(np.count_nonzero(in_service))
    if capacity_gpu_hours_per_month <= 0.0 or months == 0:
        return np.zeros(lead_shape)
    # version 1.3: done(C) from the busiest hours where given; version 1.2's min(busy_o,
    # capacity) where the load is flat and all work
    done = (
        np.minimum(busy, capacity_gpu_hours_per_month) if done_gpu_hours is None else done_gpu_hours
    )
    used = np.where(in_service, done, 0.0)
    return np.asarray(used.sum(axis=-1) / (capacity_gpu_hours_per_month * months), dtype=np.float64)


def demand_scale_cap(
    busy_gpu_hours: Array,
    capacity_gpu_hours_per_month: float,
    in_service: NDArray[np.bool_],
) -> float | None:
    """``s_cap = min over months in service with work of capacity / busy_o[m]`` [dimensionless].

    The largest scale of demand at which no month in service exceeds the capacity; None when no
    month in service has work.
    """
    busy = np.asarray(busy_gpu_hours, dtype=np.float64)
    working = in_service & (busy > 0.0)
    if not np.any(working):
        return None
    return float(np.min(capacity_gpu_hours_per_month / busy[working]))


def cheapest_index(npv_usd: Sequence[float], feasible: Sequence[bool]) -> int | None:
    """The feasible option with the lowest NPV, the first on a tie (version 1.3: NPVs within
    ``1e-9 × max(1, |lowest|)`` of the lowest tie); None when none is feasible."""
    values = [npv for npv, ok in zip(npv_usd, feasible, strict=True) if ok]
    if not values:
        return None
    limit = min(values) + equal_tolerance_usd(min(values))
    for index, (npv, ok) in enumerate(zip(npv_usd, feasible, strict=True)):
        if ok and npv <= limit:
            return index
    # no number to compare (a NaN, which the result's check then reports): the first feasible
    return next(index for index, ok in enumerate(feasible) if ok)


def first_root(s: Array, gap: Array) -> tuple[float, float] | float | None:
    """The first zero of ``gap`` sampled at increasing ``s`` (``s[0]`` excluded as a root).

    Returns the exact ``s[i]`` where ``gap`` is 0, a bracket ``(s[i − 1], s[i])`` where it changes
    sign, or None when it does neither.
    """
    zero = gap[1:] == 0.0
    change = (gap[:-1] != 0.0) & (np.sign(gap[1:]) * np.sign(gap[:-1]) < 0.0)
    hits = np.flatnonzero(zero | change)
    if hits.size == 0:
        return None
    i = int(hits[0]) + 1
    if gap[i] == 0.0:
        return float(s[i])
    return float(s[i - 1]), float(s[i])


def all_in_usd_per_million_tokens(total_usd: float, tokens: float) -> float | None:
    """``total_usd / (tokens / 1e6)`` [USD per 1e6 generated tokens] (version 1.2); None when
    the scenario serves no tokens."""
    if not tokens > 0.0:
        return None
    return float(total_usd / (tokens / 1e6))
