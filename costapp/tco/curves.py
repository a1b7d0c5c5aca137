"""Cost against utilization: every option priced at a range of demand scales.

The contract's break-even utilization (docs: scenario-format.md, "The result document") scales
every ``busy`` of every workload by one factor ``s`` (needs, fits and capacity unchanged) and
prices the options again. This module does the same on a grid of ``s``, reusing the plan and
``plan_cost`` with ``Futures(demand_multiplier=s)``, so a chart can show each option's total cost
against its average utilization and mark where it meets the baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import results as rs
from .core import Futures, OptionPlan, Plan, plan_build, plan_cost
from .engine import break_even_scale, utilization_at
from .types import GpuTable

CURVE_POINTS = 41
"""Evenly spaced scales from 0 to the largest scale shown (break-even scales and 1 are added)."""


def _utilization(plan: Plan, option: OptionPlan, scales: np.ndarray) -> np.ndarray:
    """Average utilization [dimensionless] of ``option`` at each demand scale, shape ``(S,)``."""
    return utilization_at(plan, option, scales)


def _scale_cap(option: OptionPlan) -> float | None:
    """``s_cap`` of an option with capacity and work [dimensionless]; None otherwise."""
    capacity = option.capacity_gpu_hours_per_month
    if capacity is None or capacity <= 0.0 or float(option.busy_gpu_hours.sum()) <= 0.0:
        return None
    return rs.demand_scale_cap(option.busy_gpu_hours, capacity, option.in_service)


def plan_cost_curves(plan: Plan, *, points: int = CURVE_POINTS) -> dict[str, Any]:
    """Every option's total cost [USD] and average utilization [dimensionless] at demand scales
    ``s`` from 0 to ``max(1, largest s_cap)`` (``s = 1`` is the scenario's own demand).

    The grid is ``points`` evenly spaced scales plus 1 and each option's break-even scale, sorted.
    Returns a JSON-ready dict::

        {"baseline": name, "scale": [s, ...],
         "options": [{"name", "type", "has_capacity", "scale_cap",
                      "total_usd": [...], "average_utilization": [...], "feasible": [...],
                      "break_even": None | {"scale", "average_utilization", "total_usd",
                                            "baseline_total_usd"}}, ...]}

    ``average_utilization`` is that of the result document (1 for elastic on-demand and spot);
    ``feasible`` is False where the option leaves work undone at that scale.
    """
    if points < 2:
        raise ValueError("points must be at least 2")
    caps = [_scale_cap(option) for option in plan.options]
    s_max = max([1.0, *(cap for cap in caps if cap is not None)])
    scales_be = [break_even_scale(plan, index) for index in range(len(plan.options))]
    grid = np.linspace(0.0, s_max, points)
    extra = [1.0, *(s for s in scales_be if s is not None)]
    scales = np.unique(np.concatenate([grid, np.asarray(extra, dtype=np.float64)]))
    costs = plan_cost(plan, Futures(demand_multiplier=scales), len(scales))
    baseline = plan.baseline_index
    options: list[dict[str, Any]] = []
    for o, option in enumerate(plan.options):
        utilization = _utilization(plan, option, scales)
        break_even: dict[str, float] | None = None
        s_be = scales_be[o]
        if s_be is not None:
            at = int(np.flatnonzero(scales == s_be)[0])
            break_even = {
                "scale": float(s_be),
                "average_utilization": float(utilization[at]),
                "total_usd": float(costs.total_usd[o, at]),
                "baseline_total_usd": float(costs.total_usd[baseline, at]),
            }
        options.append(
            {
                "name": option.name,
                "type": option.type,
                "has_capacity": option.capacity_gpu_hours_per_month is not None,
                "scale_cap": caps[o],
                "total_usd": [float(v) for v in costs.total_usd[o]],
                "average_utilization": [float(v) for v in utilization],
                "feasible": [not bool(v > 0.0) for v in costs.shortfall_gpu_hours[o]],
                "break_even": break_even,
            }
        )
    return {
        "baseline": plan.options[baseline].name,
        "scale": [float(s) for s in scales],
        "options": options,
    }


def cost_curves(
    inputs: Mapping[str, Any],
    gpus: GpuTable,
    *,
    points: int = CURVE_POINTS,
) -> dict[str, Any]:
    """:func:`plan_cost_curves` of a normalised scenario (a result document's ``inputs`` and
    ``gpus``), so the curves can be computed from a stored result alone."""
    return plan_cost_curves(plan_build(inputs, gpus), points=points)
