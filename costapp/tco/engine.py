"""The engine's entry point: a scenario document in, the result document out.

``simulate`` = ``normalize`` → :func:`~costapp.tco.core.plan_build` → :func:`~costapp.tco.core.plan_cost`
(one path, every category) → the figures of docs/scenario-format.md ("The result document"), plus
the Monte Carlo fields when the document asks for paths.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from . import montecarlo, sizing
from . import results as rs
from .core import (
    CATEGORIES,
    Futures,
    OptionPlan,
    PathCosts,
    Plan,
    capacity_done,
    plan_build,
    plan_cost,
    supply_on_paths,
)
from .errors import FieldError, ScenarioError
from .load import LoadOnPaths
from .mix import mix_layers_result, mix_service, mix_utilization
from .types import GpuTable
from .validation import normalize

ENGINE_VERSION = "1.3.0"

BREAK_EVEN_GRID_POINTS = 4096
"""Samples of ``s`` in ``[0, s_cap]`` used to bracket the smallest break-even scale."""
BREAK_EVEN_SUBDIVISIONS = 32
"""Points per refinement step of a bracket."""
BREAK_EVEN_RELATIVE_TOLERANCE = 1e-12
"""Bracket width, relative to ``s``, at which the refinement stops (the contract asks 1e-9)."""

DETERMINISTIC_FIGURES = frozenset(
    {
        "monthly_usd",
        "cumulative_usd",
        "breakdown_usd",
        "total_usd",
        "npv_usd",
        "busy_gpu_hours",
        "average_utilization",
        "usd_per_busy_gpu_hour",
        "shortfall_gpu_hours",
        "savings_vs_baseline_pct",
        "break_even_month",
        "break_even_utilization",
        "all_in_usd_per_million_tokens",
        "goodput",
    }
)
"""The figures of an option without a simulation (the others come from the Monte Carlo paths)."""

MonteCarloRunner = Callable[[Plan, Mapping[str, Any]], dict[str, dict[str, Any]]]
"""Computes the uncertainty fields per option name; :func:`montecarlo.run` does it in this
process, and the Django side can spread the blocks across workers with the same result."""

SizingRunner = Callable[[Plan], list[dict[str, Any]]]
"""Computes the result's ``sizing`` entries (version 1.1); :func:`sizing.run` does it in this
process, and the Django side can spread the simulated blocks across workers with the same result
(:func:`sizing.sweep_blocks_compute`, :func:`sizing.sweeps_merge`)."""


OptionsRunner = Callable[[Plan], list[dict[str, Any]]]
"""Computes the deterministic figures of every option (the result's ``options`` before the Monte
Carlo fields join them); :func:`deterministic_options` does it in this process, and the Django side
can compute it on a worker beside the Monte Carlo blocks with the same result."""


def deterministic_costs(plan: Plan) -> PathCosts:
    """The one-path costing of the document's own values, with every category [USD]."""
    return plan_cost(plan, Futures(), 1, categories=True)


def deterministic_options(plan: Plan) -> list[dict[str, Any]]:
    """Per option, the figures of the result document on the document's own values (no paths)."""
    return option_results(plan, deterministic_costs(plan))


def simulate(
    document: Any,
    gpus: GpuTable,
    catalog: Any = None,
    *,
    monte_carlo: MonteCarloRunner = montecarlo.run,
    sizing_runner: SizingRunner = sizing.run,
    options_runner: OptionsRunner = deterministic_options,
) -> dict[str, Any]:
    """The result document of a scenario document [USD, GPU-h, months].

    Validates and normalises ``document`` (raising ``ScenarioError`` when it is invalid), then
    computes every option's costs and figures.
    """
    normalized = normalize(document, gpus, catalog)
    return simulate_normalized(
        normalized.document,
        gpus,
        normalized.warnings,
        monte_carlo=monte_carlo,
        sizing_runner=sizing_runner,
        options_runner=options_runner,
    )


def simulate_normalized(
    inputs: Mapping[str, Any],
    gpus: GpuTable,
    warnings: Iterable[str] = (),
    *,
    monte_carlo: MonteCarloRunner = montecarlo.run,
    sizing_runner: SizingRunner = sizing.run,
    options_runner: OptionsRunner = deterministic_options,
    plan: Plan | None = None,
) -> dict[str, Any]:
    """The result document of an already normalised scenario; ``warnings`` are normalisation's.
    ``plan`` is ``plan_build(inputs, gpus)`` when the caller has built it already (a worker
    keeps a run's plan for its units and its merge); it is built here otherwise.

    Raises ``ScenarioError`` when a figure of the result would not be a finite number (values
    valid one by one whose products leave the range of a float): the result never holds NaN or
    an infinity.
    """
    with np.errstate(all="ignore"):  # non-finite figures are reported below, not warned about
        if plan is None:
            plan = plan_build(inputs, gpus)
        result = _result(plan, warnings, monte_carlo, sizing_runner, options_runner)
    finite_figures_check(result)
    return result


def _result(
    plan: Plan,
    warnings: Iterable[str],
    monte_carlo: MonteCarloRunner,
    sizing_runner: SizingRunner,
    options_runner: OptionsRunner,
) -> dict[str, Any]:
    options = options_runner(plan)
    feasible = [option["feasible"] for option in options]
    cheapest = rs.cheapest_index([option["npv_usd"] for option in options], feasible)
    all_warnings = list(warnings) + [
        f"{option['name']}: {text}" for option in options for text in option["warnings"]
    ]
    simulation = plan.inputs.get("simulation")
    if simulation and int(simulation.get("paths") or 0) > 0:
        figures = monte_carlo(plan, simulation)
        for option in options:
            option.update(figures[option["name"]])
    result: dict[str, Any] = {
        "name": plan.inputs["name"],
        "cheapest": None if cheapest is None else plan.options[cheapest].name,
        "baseline": plan.options[plan.baseline_index].name,
        "options": options,
        "inputs": plan.inputs,
        "gpus": plan.gpus,
        "warnings": all_warnings,
        "engine_version": ENGINE_VERSION,
        # version 1.2: the catalog figures a reference supplied; the engine alone has none (the
        # Django side, which resolved the references, fills it in)
        "sources": [],
    }
    if simulation and int(simulation.get("paths") or 0) > 0:
        result["simulation"] = simulation
    if plan.inputs.get("sizing"):
        result["sizing"] = sizing_runner(plan)
    return result


def _non_finite(value: Any) -> bool:
    """True when ``value`` is or holds a float that is NaN or an infinity."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        items: Iterable[Any] = value.values()
    elif isinstance(value, list | tuple):
        items = value
    else:
        return False
    isfinite = math.isfinite
    for item in items:  # a loop, not any() over a generator: results hold thousands of floats
        if type(item) is float:
            if not isfinite(item):
                return True
        elif _non_finite(item):
            return True
    return False


def finite_figures_check(result: Mapping[str, Any]) -> None:
    """Raise ``ScenarioError`` naming every option (``options[i]``) with a figure that is not a
    finite number, and the figures at fault."""
    errors: list[FieldError] = []
    for index, option in enumerate(result["options"]):
        bad = [name for name, value in option.items() if _non_finite(value)]
        if not bad:
            continue
        verb = "is not a finite number" if len(bad) == 1 else "are not finite numbers"
        check = "its prices and sizes"
        if any(name not in DETERMINISTIC_FIGURES for name in bad):
            check += ", and the simulation's distributions"
        errors.append(
            FieldError(
                f"options[{index}]",
                f"its figures are too large (or too small) to compute with: {', '.join(bad)} "
                f"{verb} (check {check})",
            )
        )
    if not errors and _non_finite(result):  # never expected: validation keeps inputs finite
        errors.append(FieldError(None, "the result holds a figure that is not a finite number"))
    if errors:
        raise ScenarioError(errors)


def option_results(plan: Plan, costs: PathCosts) -> list[dict[str, Any]]:
    """Per option, the figures of the result document, from a one-path deterministic costing."""
    assert costs.breakdown_usd is not None
    baseline = plan.baseline_index
    monthly_all = costs.monthly_usd[:, 0, :]
    cumulative_all = rs.cumulative_usd(monthly_all)
    baseline_total = float(costs.total_usd[baseline, 0])
    tokens = 0.0 if plan.tokens_per_month is None else float(plan.tokens_per_month.sum())
    out: list[dict[str, Any]] = []
    for o, option in enumerate(plan.options):
        total = float(costs.total_usd[o, 0])
        busy = float(option.busy_gpu_hours.sum())
        shortfall = float(costs.shortfall_gpu_hours[o, 0])
        warnings = list(option.warnings)
        if shortfall > 0.0:
            warnings.append(
                f"{shortfall:,.0f} GPU-hours of work are not done (shortfall): "
                "this option is infeasible."
            )
        out.append(
            {
                "name": option.name,
                "type": option.type,
                "gpu": option.gpu,
                "monthly_usd": _floats(monthly_all[o]),
                "cumulative_usd": _floats(cumulative_all[o]),
                "breakdown_usd": {
                    name: float(costs.breakdown_usd[o, c, 0].sum())
                    for c, name in enumerate(CATEGORIES)
                },
                "total_usd": total,
                "npv_usd": float(costs.npv_usd[o, 0]),
                "busy_gpu_hours": busy,
                "provisioned_gpus": int(option.provisioned_gpus),
                "average_utilization": float(utilization_at(plan, option)),
                "usd_per_busy_gpu_hour": rs.usd_per_busy_gpu_hour(total, busy),
                "shortfall_gpu_hours": shortfall,
                "feasible": not shortfall > 0.0,
                "savings_vs_baseline_pct": rs.savings_vs_baseline_pct(total, baseline_total),
                "break_even_month": rs.break_even_month(
                    cumulative_all[o], cumulative_all[baseline]
                ),
                "break_even_utilization": break_even_utilization(plan, o, total),
                "all_in_usd_per_million_tokens": rs.all_in_usd_per_million_tokens(total, tokens),
                "goodput": option.goodput,
                "warnings": warnings,
            }
        )
        if option.mix is not None:  # version 1.3
            busy_row, supply_row = supply_on_paths(option, None, 1, plan.horizon_months)
            out[-1]["layers"] = mix_layers_result(
                option.mix,
                option.load,
                busy_row,
                supply_row,
                plan.hours_per_month,
                plan.horizon_months,
            )
    return out


def _floats(values: np.ndarray) -> list[float]:
    return [float(v) for v in values]


def utilization_at(plan: Plan, option: OptionPlan, scales: np.ndarray | None = None) -> np.ndarray:
    """The option's average utilization [dimensionless] at the document's own demand, or at each
    demand scale of ``scales`` ``(S,)`` (then shape ``(S,)``): ``busy_o`` and, for elastic
    on-demand and spot with resident GPUs, ``supply_o`` scaled workload by workload."""
    if scales is None:
        busy = option.busy_gpu_hours
        supply = None
        if option.supply is not None and option.supply.has_resident:
            supply = option.supply.months
    else:
        busy = scales[:, np.newaxis] * option.busy_gpu_hours[np.newaxis, :]
        supply = None
        if option.supply is not None and option.supply.has_resident:
            supply = supply_on_paths(option, scales, len(scales), plan.horizon_months)[1][:, 1:]
    if option.mix is not None:
        rows = 1 if scales is None else len(scales)
        busy_rows, supply_rows = supply_on_paths(option, scales, rows, plan.horizon_months)
        value = mix_utilization(
            option.mix, option.load, scales, busy_rows, supply_rows, plan.hours_per_month
        )
        return value if scales is not None else np.asarray(value[0])
    done = capacity_done(plan, option, scales)
    if done is not None and scales is None:
        done = done[0]
    return rs.average_utilization(
        busy,
        option.peak_gpus,
        plan.hours_per_month,
        option.capacity_gpu_hours_per_month,
        option.in_service,
        option.scaling,
        supply,
        done,
    )


def break_even_utilization(plan: Plan, index: int, total_usd: float | None = None) -> float | None:
    """This option's average utilization [dimensionless] at its break-even demand scale.

    See :func:`break_even_scale`; None where that scale does not exist.
    """
    scale = break_even_scale(plan, index, total_usd)
    if scale is None:
        return None
    option = plan.options[index]
    # only options with a fixed capacity have a break-even scale: their utilization takes
    # done(C) at that scale (version 1.3; busy_o where the load is flat and all work)
    done = capacity_done(plan, option, np.array([scale]))
    return float(
        rs.average_utilization(
            scale * option.busy_gpu_hours,
            option.peak_gpus,
            plan.hours_per_month,
            option.capacity_gpu_hours_per_month,
            option.in_service,
            option.scaling,
            None,
            None if done is None else done[0],
        )
    )


def break_even_scale(plan: Plan, index: int, total_usd: float | None = None) -> float | None:
    """The smallest demand scale ``s`` [dimensionless], ``0 < s ≤ s_cap``, at which this option's
    ``total_usd`` equals the baseline's.

    Scaling every busy by ``s`` is ``Futures(demand_multiplier=s)``; the gap is sampled on a grid
    of ``s`` (one vectorized ``plan_cost``), the first sign change bracketed, and the bracket
    refined by subdivision to well below 1e-9 relative in ``s``. On the grid, totals within
    ``1e-9 × max(1, |total_usd|)`` count as equal (``total_usd``: this option's own total at
    ``s = 1``, computed when not given). None for the baseline, for on-demand and spot options,
    without work or capacity, or when no such ``s`` exists: that includes totals equal on a whole
    interval starting at 0 (there is no smallest ``s``) and totals that meet only as ``s`` → 0.
    """
    option = plan.options[index]
    capacity = option.capacity_gpu_hours_per_month
    if option.mix is not None:  # version 1.3: a mix has no break-even utilization
        return None
    if index == plan.baseline_index or capacity is None or capacity <= 0.0:
        return None
    if float(option.busy_gpu_hours.sum()) <= 0.0:
        return None
    s_cap = rs.demand_scale_cap(option.busy_gpu_hours, capacity, option.in_service)
    if s_cap is None:
        return None
    pair = dataclasses.replace(plan, options=(option, plan.options[plan.baseline_index]))

    def gap(scales: np.ndarray) -> np.ndarray:
        costs = plan_cost(pair, Futures(demand_multiplier=scales), len(scales))
        return np.asarray(costs.total_usd[0] - costs.total_usd[1], dtype=np.float64)

    if total_usd is None:
        total_usd = float(plan_cost(pair, Futures(), 1).total_usd[0, 0])
    tolerance = rs.equal_tolerance_usd(total_usd)
    grid = s_cap * np.linspace(0.0, 1.0, BREAK_EVEN_GRID_POINTS + 1)
    grid_gap = gap(grid)
    grid_gap[np.abs(grid_gap) <= tolerance] = 0.0
    if grid_gap[0] == 0.0 and grid_gap[1] == 0.0:
        return None  # equal on a whole interval starting at 0: no smallest s
    found = rs.first_root(grid, grid_gap)
    if found is None or not isinstance(found, tuple):
        return found
    low, high = found
    while high - low > BREAK_EVEN_RELATIVE_TOLERANCE * high:
        points = np.linspace(low, high, BREAK_EVEN_SUBDIVISIONS + 1)
        inner = rs.first_root(points, gap(points))
        if inner is None:  # float noise at the bracket's ends: keep the bracket
            break
        if not isinstance(inner, tuple):
            return inner
        low, high = inner
    ends = gap(np.array([low, high]))
    if ends[1] == ends[0]:
        return low
    # the gap is linear within so small a bracket
    scale = low - ends[0] * (high - low) / (ends[1] - ends[0])
    return float(min(max(scale, low), high))


def mix_months(inputs: Mapping[str, Any], gpus: GpuTable) -> dict[str, dict[str, Any]]:
    """Per ``mix`` option of a normalised document (format 1.3), on its own values, month by month
    (``1 … H``): what each layer and ``rest`` serve [GPU-h, the mix's supply hours] and each
    layer's capacity [GPU-h]: ``{name: {"layers": [{"name", "role", "served_gpu_hours",
    "capacity_gpu_hours"}], "supply_gpu_hours"}}`` (``capacity_gpu_hours`` None for ``rest``).
    The figures a run page draws beside the result's ``layers``."""
    with np.errstate(all="ignore"):
        plan = plan_build(inputs, gpus)
        out: dict[str, dict[str, Any]] = {}
        hours, horizon = plan.hours_per_month, plan.horizon_months
        for option in plan.options:
            if option.mix is None:
                continue
            busy, supply = supply_on_paths(option, None, 1, horizon)
            service = mix_service(option.mix, LoadOnPaths(option.load, None, hours), supply, hours)
            rows: list[dict[str, Any]] = []
            for layer, served in zip(option.mix.layers, service.served, strict=True):
                assert served is not None
                rows.append(
                    {
                        "name": layer.name,
                        "role": "layer",
                        "served_gpu_hours": _floats(served[0, 1:]),
                        "capacity_gpu_hours": _floats(layer.capacity_gpus[1:] * hours),
                    }
                )
            if option.mix.rest is not None:
                rest = np.broadcast_to(service.rest, supply.shape)[0, 1:]
                rows.append(
                    {
                        "name": option.mix.rest.name,
                        "role": "rest",
                        "served_gpu_hours": _floats(rest),
                        "capacity_gpu_hours": None,
                    }
                )
            out[option.name] = {"layers": rows, "supply_gpu_hours": _floats(supply[0, 1:])}
        return out
