"""The deterministic core: a path-independent :class:`Plan` and its costs on ``P`` paths at once.

``plan_build`` turns a normalised scenario into everything that does not depend on the path
(demand per option, capacity sized from the document's own demand, rates, egress, discount
factors). ``plan_cost`` prices the plan on ``P`` futures with numpy broadcasting over paths and
months. The deterministic result is ``P = 1`` with every :class:`Futures` field None.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import demand as dm
from . import schema
from .cloud import CloudRates, cloud_fixed_costs, cloud_path_costs, cloud_rates, commitment_holds
from .dedicated import (
    DedicatedRates,
    dedicated_fixed_costs,
    dedicated_path_costs,
    dedicated_rates,
    servers_hold,
)
from .errors import FieldError, ScenarioError
from .finance import CEIL_TOLERANCE, ceil_tolerant, discount_factors, trend_factor
from .hosted import ApiRates, api_path_costs, api_rates
from .load import LoadOnPaths, WorkloadLoad, done_gpu_hours, load_holds
from .mix import MixTerms, mix_fixed_costs, mix_path_costs, mix_terms, size_field
from .on_prem import OnPremRates, on_prem_fixed_costs, on_prem_path_costs, on_prem_rates
from .types import GpuFigures, GpuTable

Array = NDArray[np.float64]

CATEGORIES: tuple[str, ...] = (
    "compute",
    "egress",
    "support",
    "setup",
    "upfront",
    "capex",
    "financing",
    "power",
    "colo",
    "staff",
    "residual",
    "bridge",
    "burst",
)
CATEGORY_INDEX: dict[str, int] = {name: i for i, name in enumerate(CATEGORIES)}


@dataclass(frozen=True, eq=False)
class Futures:
    """Per-path values; each None (= the document's own value) or a float64 array of shape (P,)."""

    demand_multiplier: Array | None = None
    """Multiplies every busy [dimensionless, ≥ 0]; needs, fits and capacity unchanged."""
    cloud_price_change_per_year: Array | None = None
    """Replaces every cloud option's ``c`` [1/year]."""
    usd_per_kwh_multiplier: Array | None = None
    """Multiplies every on-prem ``usd_per_kwh`` [dimensionless]."""
    interruption_overhead: Array | None = None
    """Replaces every spot option's overhead [dimensionless]."""
    api_price_change_per_year: Array | None = None
    """Replaces every ``api`` option's ``c`` [1/year] (version 1.2)."""


Rates = CloudRates | DedicatedRates | OnPremRates | ApiRates | MixTerms


@dataclass(frozen=True, eq=False)
class OptionPlan:
    """One option's path-independent demand, capacity and rates."""

    index: int
    name: str
    type: str  # "cloud", "dedicated", "on_prem", "api"
    billing: str | None  # cloud: "on_demand", "spot", "committed"
    scaling: str | None  # cloud on-demand and spot: "elastic", "fixed"
    gpu: str | None  # None for api
    busy_gpu_hours: Array  # busy_o, months 1 … H, shape (H,) [GPU-h/month]
    peak_gpus: Array  # peak_o, months 1 … H, shape (H,) [GPUs]
    provisioned_gpus: int  # [GPUs]
    capacity_gpu_hours_per_month: float | None  # [GPU-h/month]; None for on-demand and spot
    in_service: NDArray[np.bool_]  # months 1 … H in service, shape (H,)
    rates: Rates
    busy_with_month_zero: Array  # busy_o, months 0 … H (month 0 zero), shape (H + 1,) [GPU-h/month]
    peak_with_month_zero: Array  # peak_o, months 0 … H (month 0 zero), shape (H + 1,) [GPUs]
    busy_abs_max_gpu_hours: float  # max |busy_o| over the months [GPU-h/month]
    trend: Array | None  # cloud: k[m] at the option's own c, shape (H + 1,); else None
    fixed_costs: dict[str, Array]  # categories that never depend on the path, (H + 1,) [USD/month]
    fixed_usd: Array  # their sum, in that order, shape (H + 1,) [USD/month]
    warnings: tuple[str, ...] = ()
    supply: Supply | None = None  # version 1.2: supply_o; None for api
    goodput: float | None = None  # version 1.2: the result's goodput figure; None without training
    load: tuple[WorkloadLoad, ...] = ()  # version 1.3: each workload's load (the busiest hours)
    mix: MixTerms | None = None  # version 1.3: a mix's layers (also its rates); None otherwise


@dataclass(frozen=True, eq=False)
class Supply:
    """``supply_o`` of one option (version 1.2): the GPU-hours it must provide, the work or the
    resident replicas where they are more, workload by workload.

    ``free`` is the summed ``busy × r / (t × g)`` of the workloads without resident GPUs, and
    ``busy`` / ``resident`` those of the workloads with them (their ``busy × r / (t × g)`` and
    ``resident(O) × hours_per_month``), each ``(H + 1,)`` with month 0 zero [GPU-h/month]. On a
    path with demand multiplier ``x``: ``supply_o = x × free + Σ max(x × busy, resident)``; without
    resident GPUs that is ``x × busy_o``, as in version 1.1.
    """

    free: Array
    busy: tuple[Array, ...]
    resident: tuple[Array, ...]
    months: Array  # supply_o at the document's own demand, months 1 … H, (H,) [GPU-h/month]
    # version 1.3: an inference workload's replicas may lie between its off-peak and its peak
    # traffic, where supply_o is the area of its load (costapp.tco.load), not the sum above
    area: tuple[WorkloadLoad, ...] = ()
    area_hours: float = 0.0  # hours_per_month, with ``area``

    @property
    def has_resident(self) -> bool:
        """True when some workload holds resident GPUs on the option."""
        return bool(self.busy)


def supply_on_paths(
    option: OptionPlan, multiplier: Array | None, n_paths: int, horizon_months: int
) -> tuple[Array, Array]:
    """``busy_o`` and ``supply_o`` per path and month, each broadcastable to ``(P, H + 1)``
    [GPU-h/month]; ``multiplier``: the demand multiplier ``(P,)`` or None (the document's own)."""
    busy = busy_on_paths(option, multiplier, n_paths, horizon_months)
    supply = resident_supply_on_paths(option, multiplier, n_paths, horizon_months)
    return busy, busy if supply is None else supply


def busy_on_paths(
    option: OptionPlan, multiplier: Array | None, n_paths: int, horizon_months: int
) -> Array:
    """``busy_o`` per path and month, broadcastable to ``(P, H + 1)`` [GPU-h/month]."""
    busy = option.busy_with_month_zero[np.newaxis, :]
    if multiplier is not None:
        busy = multiplier[:, np.newaxis] * busy
    return np.broadcast_to(busy, (n_paths, horizon_months + 1))


def resident_supply_on_paths(
    option: OptionPlan, multiplier: Array | None, n_paths: int, horizon_months: int
) -> Array | None:
    """``supply_o`` per path and month, broadcastable to ``(P, H + 1)`` [GPU-h/month], where some
    workload holds resident GPUs on the option; None where none does (``supply_o`` is then
    ``busy_o``)."""
    supply_parts = option.supply
    if supply_parts is None or not supply_parts.has_resident:
        return None
    if supply_parts.area:  # version 1.3: the area of each workload's load
        load = LoadOnPaths(supply_parts.area, multiplier, supply_parts.area_hours)
        return np.broadcast_to(load.supply(), (n_paths, horizon_months + 1))
    if multiplier is None:
        supply = supply_parts.free[np.newaxis, :]
        for work, resident in zip(supply_parts.busy, supply_parts.resident, strict=True):
            supply = supply + np.maximum(work, resident)
        return np.broadcast_to(supply, (n_paths, horizon_months + 1))
    x = multiplier[:, np.newaxis]
    supply = np.multiply(x, supply_parts.free)  # fresh (P, H + 1) arrays, updated in place
    part = np.empty_like(supply)
    for work, resident in zip(supply_parts.busy, supply_parts.resident, strict=True):
        np.multiply(x, work, out=part)
        np.maximum(part, resident, out=part)
        supply += part
    return supply


SupplyKey = tuple[bytes, tuple[bytes, ...], tuple[bytes, ...]]


class PathDemand:
    """``busy_o``, ``supply_o`` and a bound of ``|supply_o|`` of a plan's options on one set of
    futures, each computed once for all the options whose demand has the same numbers (options
    on the same GPU with the same throughput and failure figures), and only when asked for: the
    same numbers in give the same numbers out, so sharing them changes no result. The arrays are
    read, never written."""

    def __init__(
        self, multiplier: Array | None, n_paths: int, horizon_months: int, multiplier_bound: float
    ) -> None:
        self.multiplier = multiplier
        self.n_paths = n_paths
        self.horizon_months = horizon_months
        self.multiplier_bound = multiplier_bound
        self._busy: dict[bytes, Array] = {}
        self._supply: dict[SupplyKey, Array] = {}
        self._bound: dict[SupplyKey, float] = {}
        self._load: dict[int, tuple[tuple[WorkloadLoad, ...], LoadOnPaths]] = {}
        # The largest multiplier, where every multiplier is a finite number >= 0 (see bound).
        self._top: Array | None = None
        if multiplier is not None and multiplier.size:
            top = float(np.max(multiplier))
            if math.isfinite(top) and float(np.min(multiplier)) >= 0.0:
                self._top = np.array([top])

    def load(self, option: OptionPlan, hours_per_month: float) -> LoadOnPaths | None:
        """The option's workloads on the paths (version 1.3), shared by the options whose
        loads are the same objects; None without workloads of its own."""
        if not option.load:
            return None
        key = id(option.load)
        found = self._load.get(key)
        if found is None or found[0] is not option.load:
            found = (option.load, LoadOnPaths(option.load, self.multiplier, hours_per_month))
            self._load[key] = found
        return found[1]

    def busy(self, option: OptionPlan) -> Array:
        """``busy_o`` on the paths: :func:`busy_on_paths`."""
        key = option.busy_with_month_zero.tobytes()
        busy = self._busy.get(key)
        if busy is None:
            busy = busy_on_paths(option, self.multiplier, self.n_paths, self.horizon_months)
            self._busy[key] = busy
        return busy

    def supply(self, option: OptionPlan) -> Array:
        """``supply_o`` on the paths: :func:`supply_on_paths`."""
        parts = option.supply
        if parts is None or not parts.has_resident:
            return self.busy(option)
        key = _supply_key(parts)
        supply = self._supply.get(key)
        if supply is None:
            supply = resident_supply_on_paths(
                option, self.multiplier, self.n_paths, self.horizon_months
            )
            assert supply is not None
            self._supply[key] = supply
        return supply

    def bound(self, option: OptionPlan) -> float:
        """:func:`supply_bound` of ``supply_o`` on the paths [GPU-h/month].

        With resident GPUs, where the multipliers and the workloads' parts of ``supply_o`` are
        all numbers >= 0, ``supply_o`` grows with the multiplier month by month (each product,
        maximum and sum rounds the larger operand to no less), so its largest value is that of
        the path with the largest multiplier: the maximum of that one row, computed by the same
        operations, is the maximum over every path bit for bit, without the whole array."""
        parts = option.supply
        if parts is None or not parts.has_resident:
            return self.multiplier_bound * option.busy_abs_max_gpu_hours
        key = _supply_key(parts)
        bound = self._bound.get(key)
        if bound is None:
            arrays = (parts.free, *parts.busy, *parts.resident)
            if self._top is not None and all(bool(np.all(a >= 0.0)) for a in arrays):
                top = resident_supply_on_paths(option, self._top, 1, self.horizon_months)
                assert top is not None
                bound = float(np.max(np.abs(top), initial=0.0))
            else:
                bound = supply_bound(option, self.supply(option), self.multiplier_bound)
            self._bound[key] = bound
        return bound


def _supply_key(parts: Supply) -> SupplyKey:
    """The numbers ``supply_o`` on the paths is made of, as a key."""
    return (
        parts.free.tobytes(),
        tuple(work.tobytes() for work in parts.busy),
        tuple(resident.tobytes() for resident in parts.resident),
    )


def reads_supply(rates: Rates, supply_bound_gpu_hours: float, hours_per_month: float) -> bool:
    """False where an option's path costs read of ``supply_o`` only its bound and its shape:
    dedicated servers or a cloud commitment that ``supply_o`` cannot exceed (as
    :func:`~costapp.tco.dedicated.dedicated_path_costs` and
    :func:`~costapp.tco.cloud.cloud_path_costs` judge it)."""
    if isinstance(rates, DedicatedRates):
        return not servers_hold(rates, supply_bound_gpu_hours, hours_per_month)
    if isinstance(rates, CloudRates):
        return not commitment_holds(rates, supply_bound_gpu_hours, hours_per_month)
    return True


@dataclass(frozen=True, eq=False)
class Plan:
    """Everything independent of the path, for every option of a scenario."""

    options: tuple[OptionPlan, ...]
    horizon_months: int  # H
    hours_per_month: float  # [h/month]
    discount_factors: Array  # (1 + r) ** (−m / 12), shape (H + 1,)
    baseline_index: int
    inputs: dict[str, Any]  # the normalised document with committed_gpus and servers filled
    gpus: dict[str, GpuFigures]  # figures used, by GPU slug
    tokens_per_month: Array | None = None  # version 1.2: generated tokens, months 1 … H, (H,)

    @property
    def option_names(self) -> list[str]:
        """Names of the options, in scenario order."""
        return [option.name for option in self.options]

    @property
    def option_types(self) -> list[str]:
        """Types of the options (``cloud``, ``dedicated``, ``on_prem``), in scenario order."""
        return [option.type for option in self.options]


@dataclass(frozen=True, eq=False)
class PathCosts:
    """Costs of every option on every path."""

    monthly_usd: Array  # (O, P, H + 1), month 0 … H [USD]
    total_usd: Array  # (O, P) [USD]
    npv_usd: Array  # (O, P) [USD]
    shortfall_gpu_hours: Array  # (O, P) [GPU-h]
    breakdown_usd: Array | None  # (O, 13, P, H + 1) by category in CATEGORIES order [USD]


def _scenario_error(field_path: str, message: str) -> ScenarioError:
    return ScenarioError([FieldError(field_path, message)])


TOO_LARGE_MESSAGE = (
    "its figures are too large (or too small) to compute with: a cost, size or rate is not a "
    "finite number (check its prices, sizes and financing)"
)
"""The problem reported at an option whose costs leave the range of a float."""


def _check_demands_finite(demands: Iterable[dm.WorkloadDemand]) -> None:
    """Demand beyond any float (a huge growth over many months, a denormal rate) is an error at
    the workload, never a result holding infinities."""
    errors = [
        FieldError(
            f"workloads[{index}]",
            "its demand is too large to compute: the GPU-hours or GPUs it needs are not finite "
            "numbers (check its size, growth and rates)",
        )
        for index, demand in enumerate(demands)
        if not (
            np.all(np.isfinite(demand.busy_gpu_hours)) and np.all(np.isfinite(demand.need_gpus))
        )
    ]
    if errors:
        raise ScenarioError(errors)


def _workload_gpu(workload: Mapping[str, Any]) -> str:
    return str(workload["gpu"])


def plan_build(inputs: Mapping[str, Any], gpus: GpuTable) -> Plan:
    """Build the path-independent plan of a normalised scenario.

    Fills the derived defaults (``committed_gpus`` = max ``peak_o``; ``servers`` =
    ``ceil(max peak_o / gpus_per_server)``) into a copy of ``inputs`` kept as ``Plan.inputs``, and
    raises ``ScenarioError`` for demand-stage errors (a committed option whose work exceeds its
    commitment with no on-demand rate).
    """
    document: dict[str, Any] = copy.deepcopy(dict(inputs))
    horizon = int(document["horizon_months"])
    hours = float(document["hours_per_month"])
    egress_tb = float(document["egress_tb_per_month"])
    workloads = list(document["workloads"])
    demands = [dm.workload_demand(w, gpus[_workload_gpu(w)], horizon, hours) for w in workloads]
    _check_demands_finite(demands)
    used_slugs = [_workload_gpu(w) for w in workloads] + [
        str(o["gpu"]) for o in document["options"] if o.get("gpu") is not None
    ]
    tokens = dm.sum_over(
        [
            dm.tokens_per_month(w, d.growth if d.growth is not None else np.zeros(horizon), hours)
            for w, d in zip(workloads, demands, strict=True)
        ],
        horizon,
    )
    errors: list[FieldError] = []
    options: list[OptionPlan] = []
    mixes: list[int] = []
    for index, option in enumerate(document["options"]):
        if option["type"] == "api":
            options.append(_api_plan(index, option, workloads, demands, horizon, hours))
            continue
        if option["type"] == "mix":  # version 1.3: built once its members are
            mixes.append(index)
            continue
        built = _gpu_option_parts(index, option, workloads, demands, gpus, hours, horizon, errors)
        if built is None:
            continue
        busy, peak, supply, goodput, option_warnings, loads = built
        try:
            plan = _option_plan(
                index,
                option,
                busy,
                peak,
                horizon,
                hours,
                egress_tb,
                option_warnings,
                supply=supply,
                goodput=goodput,
                load=loads,
            )
        except ScenarioError:
            raise
        except (ArithmeticError, ValueError):  # a figure beyond any float (int(inf), exp overflow)
            raise _scenario_error(f"options[{index}]", TOO_LARGE_MESSAGE) from None
        options.append(plan)
    for index in mixes:
        option = document["options"][index]
        built = _gpu_option_parts(index, option, workloads, demands, gpus, hours, horizon, errors)
        if built is None or errors:
            continue
        busy, peak, supply, goodput, option_warnings, loads = built
        try:
            options.append(
                _mix_plan(
                    index, option, document, busy, peak, supply, goodput, option_warnings, loads
                )
            )
        except (ArithmeticError, ValueError):
            raise _scenario_error(f"options[{index}]", TOO_LARGE_MESSAGE) from None
    options.sort(key=lambda plan: plan.index)
    if errors:
        raise ScenarioError(errors)
    baseline_name = document.get("baseline") or document["options"][0]["name"]
    baseline_index = [o.name for o in options].index(baseline_name)
    return Plan(
        options=tuple(options),
        horizon_months=horizon,
        hours_per_month=hours,
        discount_factors=discount_factors(float(document["discount_rate"]), horizon),
        baseline_index=baseline_index,
        inputs=document,
        gpus={slug: GpuFigures(**gpus[slug]) for slug in dict.fromkeys(used_slugs)},
        tokens_per_month=tokens,
    )


def _mix_plan(
    index: int,
    option: dict[str, Any],
    document: Mapping[str, Any],
    busy: Array,
    peak: Array,
    supply: Supply,
    goodput: float | None,
    warnings: list[str],
    loads: tuple[WorkloadLoad, ...],
) -> OptionPlan:
    """The plan of a ``mix`` option (version 1.3): its own work on its GPU, its layers at their
    sizes in the mix (each layer's ``size`` filled in from its option where the mix gives none)."""
    horizon = int(document["horizon_months"])
    hours = float(document["hours_per_month"])
    by_name = {str(o["name"]): o for o in document["options"]}
    for entry in option["layers"]:
        if entry.get("size") is None:
            member = by_name[str(entry["option"])]
            entry["size"] = int(member[size_field(member)])
    terms = mix_terms(
        option, document["options"], horizon, hours, float(document["egress_tb_per_month"])
    )
    return mix_option_plan(
        index, option, terms, busy, peak, supply, goodput, warnings, loads, hours
    )


def mix_option_plan(
    index: int,
    option: Mapping[str, Any],
    terms: MixTerms,
    busy: Array,
    peak: Array,
    supply: Supply,
    goodput: float | None,
    warnings: Iterable[str],
    loads: tuple[WorkloadLoad, ...],
    hours: float,
) -> OptionPlan:
    """A mix's :class:`OptionPlan` with ``terms`` (its layers at their sizes)."""
    horizon = len(busy)
    fixed_costs = mix_fixed_costs(terms, horizon)
    return OptionPlan(
        index=index,
        name=str(option["name"]),
        type="mix",
        billing=None,
        scaling=None,
        gpu=str(option["gpu"]),
        busy_gpu_hours=busy,
        peak_gpus=peak,
        provisioned_gpus=int(terms.provisioned_gpus),
        capacity_gpu_hours_per_month=terms.provisioned_gpus * hours,
        in_service=np.ones(horizon, dtype=bool),
        rates=terms,
        busy_with_month_zero=_with_month_zero(busy),
        peak_with_month_zero=_with_month_zero(peak),
        busy_abs_max_gpu_hours=float(np.max(np.abs(busy), initial=0.0)),
        trend=None,
        fixed_costs=fixed_costs,
        fixed_usd=_sum_months(fixed_costs.values(), horizon),
        warnings=tuple(warnings),
        supply=supply,
        goodput=goodput,
        load=loads,
        mix=terms,
    )


def _api_plan(
    index: int,
    option: Mapping[str, Any],
    workloads: list[Mapping[str, Any]],
    demands: list[dm.WorkloadDemand],
    horizon: int,
    hours: float,
) -> OptionPlan:
    """The plan of an ``api`` option (version 1.2): no GPU, no capacity, no work of its own."""
    rates = api_rates(option, workloads, demands, hours)
    zeros = np.zeros(horizon)
    return OptionPlan(
        index=index,
        name=str(option["name"]),
        type="api",
        billing=None,
        scaling=None,
        gpu=None,
        busy_gpu_hours=zeros,
        peak_gpus=zeros,
        provisioned_gpus=0,
        capacity_gpu_hours_per_month=None,
        in_service=np.ones(horizon, dtype=bool),
        rates=rates,
        busy_with_month_zero=_with_month_zero(zeros),
        peak_with_month_zero=_with_month_zero(zeros),
        busy_abs_max_gpu_hours=0.0,
        trend=None,
        fixed_costs={},
        fixed_usd=np.zeros(horizon + 1),
        warnings=(),
        supply=None,
        goodput=None,
    )


GOODPUT_FLOOR = 0.1
"""A training workload's ``g[m]`` below this in an active month is an error (version 1.2)."""


def _gpu_option_parts(
    index: int,
    option: Mapping[str, Any],
    workloads: list[Mapping[str, Any]],
    demands: list[dm.WorkloadDemand],
    gpus: GpuTable,
    hours: float,
    horizon: int,
    errors: list[FieldError],
) -> tuple[Array, Array, Supply, float | None, list[str], tuple[WorkloadLoad, ...]] | None:
    """``busy_o``, ``peak_o``, ``supply_o`` and the goodput figure of a GPU option; None (with
    the problems added to ``errors``) where a training workload's goodput falls below 0.1."""
    option_gpu = str(option["gpu"])
    throughput = float(option["throughput_factor"])
    mtbf = option.get("gpu_mtbf_hours")
    busy_parts: list[Array] = []
    peak_parts: list[Array] = []
    free_parts: list[Array] = []
    resident_busy: list[Array] = []
    resident_hours: list[Array] = []
    supply_parts: list[Array] = []
    training_work = 0.0
    training_stretched = 0.0
    failed = False
    option_warnings: list[str] = []
    loads: list[WorkloadLoad] = []
    area = False
    for w, (workload, demand) in enumerate(zip(workloads, demands, strict=True)):
        try:
            ratio = dm.speed_ratio(
                workload,
                _workload_gpu(workload),
                gpus[_workload_gpu(workload)],
                option_gpu,
                gpus[option_gpu],
            )
            if demand.prefill_busy_gpu_hours is not None and workload_gpu_differs(
                workload, option_gpu
            ):
                # version 1.3: prefill converts with the steady work's ratio (an error where
                # either GPU has neither a bf16 nor an fp16 figure), decode with the bandwidth
                # ratio; the converted demand is read at r = 1
                prefill = dm.speed_ratio(
                    {"type": "steady", "name": workload["name"]},
                    _workload_gpu(workload),
                    gpus[_workload_gpu(workload)],
                    option_gpu,
                    gpus[option_gpu],
                )
                demand = dm.converted_demand(demand, ratio.ratio, prefill.ratio)
                ratio = dm.SpeedRatio(1.0, ratio.warning)
        except ValueError as exc:
            raise _scenario_error(f"options[{index}].gpu", str(exc)) from None
        if ratio.warning is not None:
            option_warnings.append(ratio.warning)
        fit = dm.fit_gpus(workload, gpus[option_gpu])
        goodput: Array | None = None
        if (
            workload["type"] == "training"
            and mtbf is not None
            and (
                float(workload["checkpoint_hours"]) > 0.0 or float(workload["restart_hours"]) > 0.0
            )
        ):
            running = dm.training_gpus_running(demand.need_gpus, ratio.ratio, throughput, fit)
            found = dm.training_goodput(
                running,
                float(mtbf),
                float(workload["checkpoint_hours"]),
                float(workload["restart_hours"]),
                demand.active,
            )
            low = demand.active & ~(found.goodput >= GOODPUT_FLOOR)
            if bool(np.any(low)):
                m = int(np.argmax(low))
                errors.append(
                    FieldError(
                        f"workloads[{w}]",
                        f"goodput below 0.1 on option {option['name']} in month {m + 1}: "
                        f"{found.goodput[m]:.3g} of each hour does work (a failure every "
                        f"{found.failure_hours[m]:.3g} hours on {found.gpus[m]:.0f} GPUs, "
                        f"checkpoints every {found.interval_hours[m]:.3g} hours); shorten "
                        "checkpoint_hours or restart_hours, or give a larger gpu_mtbf_hours",
                    )
                )
                failed = True
                continue
            goodput = found.goodput
        work = dm.option_busy_contribution(demand, ratio.ratio, throughput, goodput)
        busy_parts.append(work)
        resident = dm.resident_gpus(workload, fit)
        load = _workload_load(workload, demand, work, ratio.ratio, throughput, fit, resident, hours)
        loads.append(load)
        if load.kind == "inference" and resident > 0.0 and not load.statically_flat(hours):
            area = True
        peak_parts.append(
            dm.option_peak_contribution(
                demand,
                ratio.ratio,
                throughput,
                fit,
                resident,
                None
                if goodput is None
                else dm.option_goodput_peak(demand, ratio.ratio, throughput, goodput, hours),
            )
        )
        if workload["type"] == "training":
            plain = dm.option_busy_contribution(demand, ratio.ratio, throughput)
            training_work += float(plain.sum())
            training_stretched += float(work.sum())
        if resident > 0.0:
            held = np.where(demand.active, resident * hours, 0.0)
            resident_busy.append(work)
            resident_hours.append(held)
            supply_parts.append(np.maximum(work, held))
        else:
            free_parts.append(work)
            supply_parts.append(work)
    if failed:
        return None
    busy = dm.sum_over(busy_parts, horizon)
    peak = dm.sum_over(peak_parts, horizon)
    supply_months = dm.sum_over(supply_parts, horizon) if resident_busy else busy
    if not (
        np.all(np.isfinite(busy))
        and np.all(np.isfinite(peak))
        and np.all(np.isfinite(supply_months))
    ):
        raise _scenario_error(
            f"options[{index}]",
            "the work it must do is too large to compute: the GPU-hours or GPUs it needs "
            "are not finite numbers (check its throughput_factor and GPU)",
        )
    supply = Supply(
        free=_with_month_zero(dm.sum_over(free_parts, horizon)),
        busy=tuple(_with_month_zero(part) for part in resident_busy),
        resident=tuple(_with_month_zero(part) for part in resident_hours),
        months=supply_months,
        area=tuple(loads) if area else (),
        area_hours=hours,
    )
    if area:  # version 1.3: the area of each workload's load
        supply = dataclasses.replace(supply, months=LoadOnPaths(loads, None, hours).supply()[0, 1:])
    goodput_figure: float | None = None
    if training_work > 0.0:
        goodput_figure = (
            1.0 if training_stretched == training_work else training_work / training_stretched
        )
    return busy, peak, supply, goodput_figure, option_warnings, tuple(loads)


def workload_gpu_differs(workload: Mapping[str, Any], option_gpu: str) -> bool:
    """True when the workload is measured on another GPU than the option's."""
    return _workload_gpu(workload) != option_gpu


def _workload_load(
    workload: Mapping[str, Any],
    demand: dm.WorkloadDemand,
    work: Array,
    ratio: float,
    throughput: float,
    fit: float,
    resident: float,
    hours: float,
) -> WorkloadLoad:
    """One workload's load on an option (version 1.3, the busiest hours): its work ``busy × r /
    (t × g)`` and the unit, replicas and busiest hours that shape it."""
    kind = str(workload["type"])
    active = _with_month_zero(demand.active.astype(np.float64)) > 0.0
    if kind == "training":
        cluster = float(workload.get("cluster_gpus") or 0)
        unit = max(float(ceil_tolerant(cluster * ratio / throughput)), fit)
        return WorkloadLoad(kind, _with_month_zero(work), unit, active)
    if kind == "inference":
        busiest = float(workload["peak_hours_per_day"]) * hours / 24.0
        return WorkloadLoad(
            kind,
            _with_month_zero(work),
            fit,
            active,
            peak_to_average=float(workload["peak_to_average"]),
            peak_hours=busiest,
            resident=resident,
        )
    return WorkloadLoad(kind, _with_month_zero(work), 0.0, active)


def _option_plan(
    index: int,
    option: dict[str, Any],
    busy: Array,
    peak: Array,
    horizon: int,
    hours: float,
    egress_tb: float,
    warnings: list[str],
    *,
    supply: Supply | None = None,
    goodput: float | None = None,
    load: tuple[WorkloadLoad, ...] = (),
) -> OptionPlan:
    """Size and price one option; fills ``committed_gpus``, ``term_months``, ``servers`` in ``option``.

    ``supply``: ``supply_o`` (version 1.2), ``busy_o`` workload by workload when None (no resident
    GPUs); ``goodput``: the option's goodput figure."""
    if supply is None:
        supply = Supply(free=_with_month_zero(busy), busy=(), resident=(), months=busy)
    max_peak_gpus = int(round(float(peak.max())))
    kind = option["type"]
    rates: CloudRates | DedicatedRates | OnPremRates
    capacity: float | None = None
    in_service = np.ones(horizon, dtype=bool)
    if kind == "cloud":
        if option.get("billing") == "committed":
            if option.get("committed_gpus") is None:
                option["committed_gpus"] = max_peak_gpus
            if option.get("term_months") is None:
                option["term_months"] = horizon
        rates = cloud_rates(option, egress_tb)
        provisioned = max_peak_gpus
        if rates.billing == "committed":
            provisioned = rates.committed_gpus
            capacity = provisioned * hours
            _check_commitment(index, rates, supply.months, capacity, load, hours)
    elif kind in ("dedicated", "on_prem"):
        if option.get("servers") is None:
            per_server = int(option["gpus_per_server"])
            option["servers"] = int(ceil_tolerant(max_peak_gpus / per_server))
        rates = (
            dedicated_rates(option, egress_tb)
            if kind == "dedicated"
            else on_prem_rates(option, egress_tb)
        )
        provisioned = rates.servers * rates.gpus_per_server
        capacity = provisioned * hours
        if isinstance(rates, OnPremRates):
            in_service = np.arange(1, horizon + 1) > rates.lead_time_months
    else:
        raise ValueError(f"unknown option type {kind!r}")
    fixed_costs = _fixed_costs(rates, horizon)
    return OptionPlan(
        index=index,
        name=str(option["name"]),
        type=kind,
        billing=rates.billing if isinstance(rates, CloudRates) else None,
        scaling=rates.scaling
        if isinstance(rates, CloudRates) and rates.billing != "committed"
        else None,
        gpu=str(option["gpu"]),
        busy_gpu_hours=busy,
        peak_gpus=peak,
        provisioned_gpus=int(provisioned),
        capacity_gpu_hours_per_month=capacity,
        in_service=in_service,
        rates=rates,
        busy_with_month_zero=_with_month_zero(busy),
        peak_with_month_zero=_with_month_zero(peak),
        busy_abs_max_gpu_hours=float(np.max(np.abs(busy), initial=0.0)),
        trend=trend_factor(rates.price_change_per_year, horizon)
        if isinstance(rates, CloudRates)
        else None,
        fixed_costs=fixed_costs,
        fixed_usd=_sum_months(fixed_costs.values(), horizon),
        warnings=tuple(warnings),
        supply=supply,
        goodput=goodput,
        load=load,
    )


def _fixed_costs(
    rates: CloudRates | DedicatedRates | OnPremRates, horizon: int
) -> dict[str, Array]:
    """An option's categories that never depend on the path [USD/month], each ``(H + 1,)``."""
    if isinstance(rates, CloudRates):
        return cloud_fixed_costs(rates, horizon)
    if isinstance(rates, DedicatedRates):
        return dedicated_fixed_costs(rates, horizon)
    return on_prem_fixed_costs(rates, horizon)


def _sum_months(months: Iterable[Array], horizon: int) -> Array:
    """Sum of ``(H + 1,)`` month arrays in the order given, zeros when there are none [USD/month]."""
    total = np.zeros(horizon + 1)
    for array in months:
        total += array
    return total


def _check_commitment(
    index: int,
    rates: CloudRates,
    supply: Array,
    capacity: float,
    load: tuple[WorkloadLoad, ...] = (),
    hours: float = 730.0,
) -> None:
    """Work beyond the commitment, ``over(committed_gpus)`` (version 1.3; version 1.2 ``supply_o``
    beyond it), needs an on-demand rate: else a demand-stage ScenarioError at ``committed_gpus``
    (resident replicas count)."""
    if rates.on_demand_usd_per_gpu_hour is not None:
        return
    beyond = capacity_over(load, None, float(rates.committed_gpus), hours)
    if beyond is None:
        over = dm.excess_gpu_hours(supply, capacity)
    else:
        over = dm.counted_over(beyond[0, 1:], capacity)
    overflow = over > 0.0
    if bool(np.any(overflow)):
        month = int(np.argmax(overflow)) + 1
        raise _scenario_error(
            f"options[{index}].committed_gpus",
            f"the GPU-hours it cannot serve ({over[month - 1]:.6g} in month {month}, at its "
            f"busiest hours, work and resident replicas) exceed the commitment of "
            f"{rates.committed_gpus} GPUs; give an on_demand_usd_per_gpu_hour for the overflow "
            "or commit to more GPUs",
        )


def capacity_over(
    loads: tuple[WorkloadLoad, ...],
    multiplier: Array | None,
    capacity_gpus: float,
    hours: float,
    on_paths: LoadOnPaths | None = None,
) -> Array | None:
    """``over(C)`` [GPU-h/month] on the paths of ``multiplier`` (months ``0 … H``), or None where
    version 1.2's rule gives it (every load flat, no unit above ``C``): the caller then takes
    ``supply_o`` beyond ``C × hours_per_month`` as version 1.2 did, bit for bit."""
    if not loads:
        return None
    load = LoadOnPaths(loads, multiplier, hours) if on_paths is None else on_paths
    if load.flat(capacity_gpus):
        return None
    return load.over(capacity_gpus)


def _with_month_zero(months: Array) -> Array:
    """Prepend month 0 (zero) to an array over months ``1 … H`` (last axis)."""
    pad = [(0, 0)] * (months.ndim - 1) + [(1, 0)]
    return np.pad(months, pad)


def _check_paths(name: str, value: Array | None, n_paths: int) -> Array | None:
    if value is None:
        return None
    array = np.asarray(value, dtype=np.float64)
    if array.shape != (n_paths,):
        raise ValueError(f"Futures.{name} has shape {array.shape}, expected ({n_paths},)")
    return array


def option_path_costs(
    option: OptionPlan,
    futures: Futures,
    n_paths: int,
    hours_per_month: float,
    horizon_months: int,
    *,
    cloud_trend: Array | None = None,
    multiplier_bound: float = 1.0,
    demand: PathDemand | None = None,
) -> tuple[dict[str, Array], Array]:
    """One option's categories that may depend on the path [USD/month, broadcastable to
    (P, H + 1)] and its shortfall (P,) [GPU-h]; the others are ``option.fixed_costs``.

    ``cloud_trend``: ``k[m]`` at the simulated ``c`` (``(P, H + 1)``), shared by the cloud
    options; None uses the option's own ``option.trend``. ``multiplier_bound``: an upper bound
    of ``|futures.demand_multiplier|`` [dimensionless] (1 without one). ``demand``: the
    :class:`PathDemand` of these futures shared by the plan's options (made here when None).
    """
    if isinstance(option.rates, ApiRates):
        return api_path_costs(
            option.rates,
            n_paths,
            horizon_months,
            futures.demand_multiplier,
            futures.api_price_change_per_year,
        )
    if demand is None:
        demand = PathDemand(futures.demand_multiplier, n_paths, horizon_months, multiplier_bound)
    bound = demand.bound(option)
    if reads_supply(option.rates, bound, hours_per_month):
        supply = demand.supply(option)
    else:  # never read (reads_supply): NaN would show in the costs if it were
        supply = np.broadcast_to(np.nan, (n_paths, horizon_months + 1))
    # Only the on-prem load (and a mix's) takes busy_o: the other types need not compute it.
    busy = demand.busy(option) if isinstance(option.rates, OnPremRates | MixTerms) else None
    return gpu_option_path_costs(
        option,
        futures,
        busy,
        supply,
        hours_per_month,
        horizon_months,
        cloud_trend=cloud_trend,
        supply_bound=bound,
        load=demand.load(option, hours_per_month),
    )


def supply_bound(option: OptionPlan, supply: Array, multiplier_bound: float) -> float:
    """An upper bound of ``|supply_o|`` over the paths and months [GPU-h/month]: the multiplier's
    bound times ``max |busy_o|`` without resident GPUs (where the two are equal), else the
    largest value itself."""
    if option.supply is None or not option.supply.has_resident:
        return multiplier_bound * option.busy_abs_max_gpu_hours
    return float(np.max(np.abs(supply), initial=0.0))


def gpu_option_path_costs(
    option: OptionPlan,
    futures: Futures,
    busy: Array | None,
    supply: Array,
    hours_per_month: float,
    horizon_months: int,
    *,
    cloud_trend: Array | None,
    supply_bound: float,
    renewal: Array | None = None,
    load: LoadOnPaths | None = None,
    mix_cache: dict[tuple[Any, ...], Any] | None = None,
) -> tuple[dict[str, Array], Array]:
    """A GPU option's path-dependent categories and shortfall on ``busy_o`` and ``supply_o``
    ``(P, H + 1)``: every cost takes ``supply_o``, the on-prem load ``u[m]`` takes ``busy_o``
    (which may be None for the other types). ``load``: the option's workloads on these paths
    (version 1.3), from which a fixed capacity's ``over(C)`` is taken where the busiest hours
    make it differ from version 1.2's rule. ``mix_cache``: what a mix's candidates share on these
    paths (:func:`costapp.tco.mix.mix_member_costs`)."""
    if option.mix is not None:
        return mix_path_costs(
            option.mix,
            futures,
            busy,
            supply,
            hours_per_month,
            horizon_months,
            load,
            cloud_trend,
            mix_cache,
        )
    over = None
    capacity_gpus = fixed_capacity_gpus(option.rates)
    if (
        load is not None
        and capacity_gpus is not None
        and not within_capacity_hours(option, load, capacity_gpus, supply_bound, hours_per_month)
    ):
        over = capacity_over(option.load, None, capacity_gpus, hours_per_month, on_paths=load)
    if isinstance(option.rates, CloudRates):
        return cloud_path_costs(
            option.rates,
            supply,
            option.peak_with_month_zero,
            hours_per_month,
            horizon_months,
            futures.cloud_price_change_per_year,
            futures.interruption_overhead,
            trend=option.trend if cloud_trend is None else cloud_trend,
            busy_bound_gpu_hours=supply_bound,
            renewal=renewal,
            over_gpu_hours=over,
        )
    if isinstance(option.rates, DedicatedRates):
        return dedicated_path_costs(
            option.rates,
            supply,
            hours_per_month,
            busy_bound_gpu_hours=supply_bound,
            over_gpu_hours=over,
        )
    assert isinstance(option.rates, OnPremRates)
    if busy is None:
        raise ValueError("an on-prem option's load needs busy_o")
    return on_prem_path_costs(
        option.rates,
        busy,
        hours_per_month,
        horizon_months,
        futures.usd_per_kwh_multiplier,
        busy_bound_gpu_hours=supply_bound,
        supply_gpu_hours=supply,
        over_gpu_hours=over,
    )


def fixed_capacity_gpus(rates: Rates) -> float | None:
    """A fixed capacity's ``C`` in service [GPUs]: committed GPUs, or servers × GPUs per server;
    None for on-demand, spot and api."""
    if isinstance(rates, CloudRates):
        return float(rates.committed_gpus) if rates.billing == "committed" else None
    if isinstance(rates, DedicatedRates | OnPremRates):
        return float(rates.servers * rates.gpus_per_server)
    return None


def within_capacity_hours(
    option: OptionPlan,
    load: LoadOnPaths,
    capacity_gpus: float,
    supply_bound_gpu_hours: float,
    hours_per_month: float,
) -> bool:
    """True when ``over(C)`` is nothing on every path, judged without it: the version 1.2 rule
    holds (every load flat, no unit above ``C``) and ``supply_o`` stays within ``C × hours``, or
    the load at the largest multiplier never rises above ``C`` (:func:`~costapp.tco.load.load_holds`)."""
    capacity = capacity_gpus * hours_per_month
    tolerance = CEIL_TOLERANCE * max(1.0, abs(capacity))
    if load.flat(capacity_gpus):
        return True  # the callee judges supply_o against the capacity as version 1.2 did
    multiplier = load.multiplier
    top = None if multiplier is None else float(np.max(multiplier, initial=0.0))
    if multiplier is not None and not (
        math.isfinite(top or 0.0) and float(np.min(multiplier, initial=0.0)) >= 0.0
    ):
        return False
    return load_holds(option.load, top, capacity_gpus, hours_per_month, tolerance)


def plan_cost(plan: Plan, futures: Futures, n_paths: int, *, categories: bool = False) -> PathCosts:
    """Price every option of ``plan`` on ``n_paths`` futures at once [USD, GPU-h].

    Vectorized over paths and months; loops only over options and categories. An option's
    monthly cost is its path-independent costs (summed once, in :func:`plan_build`) plus those
    that depend on the path; with ``categories`` each category is kept apart as well.
    """
    futures = Futures(
        **{
            name: _check_paths(name, getattr(futures, name), n_paths)
            for name in schema.SIMULATED_QUANTITIES
        }
    )
    horizon = plan.horizon_months
    n_options = len(plan.options)
    shape = (n_paths, horizon + 1)
    monthly = np.empty((n_options, *shape))
    shortfall = np.empty((n_options, n_paths))
    breakdown = np.zeros((n_options, len(CATEGORIES), *shape)) if categories else None
    multiplier_bound = 1.0
    if futures.demand_multiplier is not None:
        multiplier_bound = float(np.max(np.abs(futures.demand_multiplier), initial=0.0))
    cloud_trend = None
    c = futures.cloud_price_change_per_year
    if c is not None and any(isinstance(o.rates, CloudRates) for o in plan.options):
        cloud_trend = trend_factor(c, horizon)  # once for every cloud option
    demand = PathDemand(futures.demand_multiplier, n_paths, horizon, multiplier_bound)
    for o, option in enumerate(plan.options):
        costs, option_shortfall = option_path_costs(
            option,
            futures,
            n_paths,
            plan.hours_per_month,
            horizon,
            cloud_trend=cloud_trend,
            multiplier_bound=multiplier_bound,
            demand=demand,
        )
        parts = list(costs.values())
        if parts:
            np.add(parts[0], option.fixed_usd, out=monthly[o])
            for usd in parts[1:]:
                monthly[o] += usd
        else:
            monthly[o] = option.fixed_usd
        if breakdown is not None:
            for name, usd in (*option.fixed_costs.items(), *costs.items()):
                breakdown[o, CATEGORY_INDEX[name]] += usd
        shortfall[o] = option_shortfall
    return PathCosts(
        monthly_usd=monthly,
        total_usd=monthly.sum(axis=-1),
        npv_usd=monthly @ plan.discount_factors,
        shortfall_gpu_hours=shortfall,
        breakdown_usd=breakdown,
    )


def capacity_done(plan: Plan, option: OptionPlan, scales: Array | None) -> Array | None:
    """``done(C)`` of a fixed-capacity option [GPU-h/month], months ``1 … H``, one row per demand
    scale of ``scales`` ``(S,)`` (one row at the document's own demand when None); None where it
    is version 1.2's ``min(busy_o, capacity)`` (every load flat, no unit above ``C``, no idle
    replicas)."""
    capacity_gpus = fixed_capacity_gpus(option.rates)
    if capacity_gpus is None or not option.load:
        return None
    hours = plan.hours_per_month
    rows = 1 if scales is None else len(scales)
    over = capacity_over(option.load, scales, capacity_gpus, hours)
    busy, supply = supply_on_paths(option, scales, rows, plan.horizon_months)
    if over is None:
        if option.supply is None or not option.supply.has_resident:
            return None
        over = np.maximum(supply - capacity_gpus * hours, 0.0)
    return np.asarray(done_gpu_hours(busy, supply, over)[:, 1:], dtype=np.float64)
