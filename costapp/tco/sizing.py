"""Sizing sweeps: the `sizing` section of scenario-format.md (version 1.1; ``api`` options, version
1.2, cannot be swept).

A sweep prices one option at many sizes (a committed cloud option's ``committed_gpus``, a
dedicated or on-prem option's ``servers``) and picks the ``best`` size by its objective: the NPV
on the document's own values, or the mean or 90th percentile of the NPV over the simulation's
paths, under a cap on the share of paths that leave work undone.

How a candidate is priced
-------------------------
Each candidate is the swept option re-sized (:func:`candidate_plans`: the option's own normalised
fields with only the swept field changed, so setup, upfront, staff and every other amount stay as
written) and costed by the calls that cost the option in a plain run
(:func:`costapp.tco.core.option_path_costs`), on the same futures: per block of paths the draws,
the demand bound and the cloud price trend are made once and shared by every candidate of every
sweep (common random numbers), and so are the busy GPU-hours per path and a committed rate's
renewal factor, which do not depend on the size. The monthly costs of all candidates of a block are assembled as a plain run assembles an
option's (the path-dependent categories added to the fixed ones in the same order), into one
``(candidates, paths, months)`` array whose totals, NPVs and shortfall flags are then taken in one
vectorised step each. So each candidate's figures are those of a plain run of the document with
that size written in, bit for bit, and the document's own size gives the option's own figures.

The candidates are looped over rather than broadcast along a fourth axis: broadcasting does the
same arithmetic per element (the figures must stay those of a plain run, operation for operation)
on ``(candidates, paths, months)`` temporaries far larger than the processor's cache, where one
candidate on one block (1 000 paths × ``H + 1`` months) fits in it. Measured on
bench/size-the-fleet-sweep.json (64 commitments, 10 000 paths), the committed formulas broadcast
over candidates took 0.54 to 0.58 s of CPU time against 0.29 to 0.34 s for this loop (same
machine, same load); the reductions, where a fourth axis costs nothing, run over all candidates
at once.

Splitting a sweep
-----------------
The simulated part works block by block like Monte Carlo (:mod:`.montecarlo`):
:func:`sweep_blocks_compute` prices any set of blocks, :func:`sweep_block_results_to_payload` and
:func:`sweep_block_results_from_payload` carry the per-path results between tasks as bytes,
exactly, and :func:`sweeps_merge` puts any grouping back together in block order and computes the
result entries, the same bit for bit as :func:`run` in one process.

Units: money in USD; sizes in GPUs (``committed_gpus``) or servers (``servers``).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from . import montecarlo, schema
from .cloud import CloudRates
from .core import (
    Futures,
    OptionPlan,
    Plan,
    _option_plan,
    gpu_option_path_costs,
    mix_option_plan,
    supply_bound,
    supply_on_paths,
)
from .finance import renewal_factor, single_term, trend_factor
from .load import LoadOnPaths
from .mix import mix_terms
from .payload import arrays_pack, arrays_unpack

Array = NDArray[np.float64]
Mask = NDArray[np.bool_]

TIE_RELATIVE_TOLERANCE = 1e-9
"""Objectives within this share of max(1, |lowest|) of the lowest tie (the smallest size wins)."""


# --------------------------------------------------------------------------------------------
# Validation (called from costapp.tco.validation while it walks a document)
# --------------------------------------------------------------------------------------------


class FieldChecker(Protocol):
    """The primitives of the document checker that the sweeps' checks use."""

    def error(self, path: str | None, message: str) -> object:
        """Record a problem at ``path``."""

    def keys(
        self,
        raw: Mapping[Any, Any],
        allowed: Collection[str],
        path: str | None,
        elsewhere: Mapping[str, str] | None = None,
    ) -> None:
        """Report every key of ``raw`` not in ``allowed`` as an unknown field."""

    def fields(
        self,
        raw: Mapping[Any, Any],
        table: Mapping[str, schema.FieldSpec],
        path: str | None,
        skip: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Check the scalar fields of ``table`` present in ``raw``."""

    def mapping(self, value: Any, path: str | None) -> Mapping[Any, Any] | None:
        """``value`` as an object, or None after recording that it is not one."""

    def sequence(self, value: Any, path: str) -> Sequence[Any] | None:
        """``value`` as a list, or None after recording that it is not one."""


SWEPT_FIELDS: Mapping[str, str] = {
    "committed": "committed_gpus",
    "dedicated": "servers",
    "on_prem": "servers",
    "mix": "layers",  # version 1.3: every layer's size, jointly
}
"""The field a sweep sets, by option kind (a cloud option's billing, else its type)."""


def _kind_of(option_type: object, billing: object = None) -> object:
    """A cloud option's billing (``committed``/``on_demand``/``spot``; missing or empty is the
    schema's default, ``on_demand``), else the option's type."""
    return (billing or "on_demand") if option_type == "cloud" else option_type


def _kind(option: Mapping[str, Any]) -> str:
    """:func:`_kind_of` a (normalised) option."""
    return str(_kind_of(option["type"], option.get("billing")))


def swept_field(option_type: object, billing: object = None) -> str | None:
    """The field a sweep sets on an option of this ``type`` and ``billing`` (``committed_gpus``
    for a committed cloud option, ``servers`` for a dedicated or on_prem one), or None when a
    sweep cannot size such an option. A missing or empty billing is the schema's default,
    ``on_demand``; any other type (missing, unknown) cannot be sized. The rule the engine checks
    ``sizing[i].option`` by (a swept committed option also needs an on-demand rate)."""
    kind = _kind_of(option_type, billing)
    return SWEPT_FIELDS.get(kind) if isinstance(kind, str) else None


def candidate_sizes(low: int, high: int, step: int) -> list[int]:
    """``low, low + step, …`` while ≤ ``high`` [GPUs or servers]."""
    return list(range(low, high + 1, step))


def sizing_normalize(
    checker: FieldChecker,
    value: Any,
    options: Sequence[Mapping[str, Any] | None],
    option_names: Sequence[str | None],
    simulation: Mapping[str, Any] | None,
) -> list[dict[str, Any]] | None:
    """Check and normalise ``sizing``; None when the document has no sweeps.

    ``options`` are the normalised options (None where one is invalid), ``option_names`` the names
    as given (None where not a valid name), ``simulation`` the normalised simulation. Problems are
    recorded on ``checker`` at ``sizing``, ``sizing[i]`` and ``sizing[i].<field>``; each
    normalised sweep has every field, the objective's default filled in.
    """
    if value is None:
        return None
    items = checker.sequence(value, "sizing")
    if items is None:
        return None
    if len(items) > schema.MAX_SWEEPS:
        checker.error("sizing", f"must have at most {schema.MAX_SWEEPS} sweeps, not {len(items)}")
        return None
    raw_paths = (simulation or {}).get("paths")
    paths: int | None = 0 if simulation is None else None
    if isinstance(raw_paths, int) and not isinstance(raw_paths, bool):
        paths = raw_paths
    sweeps: list[dict[str, Any]] = []
    work = 0
    for i, item in enumerate(items):
        path = f"sizing[{i}]"
        sweep = _sweep_normalize(checker, item, path, options, option_names, paths)
        if sweep is not None:
            sweeps.append(sweep)
            work += len(sweep_candidates(sweep))
    if paths is not None and work * max(paths, 1) > schema.MAX_SWEEP_WORK:
        checker.error(
            "sizing",
            f"the sweeps price {work * max(paths, 1):,} candidate-paths (candidates × "
            f"max(paths, 1), summed over the sweeps); at most {schema.MAX_SWEEP_WORK:,}",
        )
    return sweeps or None


def _sweep_normalize(
    checker: FieldChecker,
    item: Any,
    path: str,
    options: Sequence[Mapping[str, Any] | None],
    option_names: Sequence[str | None],
    paths: int | None,
) -> dict[str, Any] | None:
    """One sweep, normalised; None when it is invalid (the problems recorded)."""
    raw = checker.mapping(item, path)
    if raw is None:
        return None
    table = schema.SWEEP_FIELDS
    checker.keys(raw, table, path)
    v = checker.fields(raw, table, path)
    valid = _sweep_option(checker, v["option"], f"{path}.option", options, option_names)
    mix = _named_mix(v["option"], options, option_names)
    layers: list[dict[str, int]] | None = None
    low, high, step = v["min"], v["max"], v["step"]
    step = table["step"].default if step is None else step
    if mix is not None:
        for name in ("min", "max", "step"):
            if raw.get(name) is not None:
                checker.error(
                    f"{path}.{name}", "a mix is sized jointly: give layers, one range per layer"
                )
                valid = False
        layers = _sweep_layers(checker, v["layers"], f"{path}.layers", len(mix["layers"]))
        valid = valid and layers is not None
        low = high = step = 0
    else:
        if raw.get("layers") is not None and valid:
            checker.error(f"{path}.layers", "only a mix is sized by layers")
            valid = False
        for name in ("min", "max"):
            if v[name] is None:
                checker.error(f"{path}.{name}", "is required")
                valid = False
        if not _range_ok(checker, low, high, step, path):
            valid = False
    objective = v["objective"]
    if objective is None and paths is not None:
        objective = "mean_npv" if paths > 0 else "npv"
    elif objective in ("mean_npv", "p90_npv", "tail_npv") and paths == 0:
        checker.error(
            f"{path}.objective",
            f"{objective} needs a simulation (simulation.paths > 0); without one use npv",
        )
        valid = False
    probability = v["max_shortfall_probability"]
    probability = 0.0 if probability is None else probability
    values = (low, high, step, objective, probability)
    if not valid or not all(isinstance(x, int | float | str) for x in values):
        return None
    if layers is not None:
        return {
            "option": v["option"],
            "layers": layers,
            "objective": objective,
            "max_shortfall_probability": probability,
        }
    return {
        "option": v["option"],
        "min": low,
        "max": high,
        "step": step,
        "objective": objective,
        "max_shortfall_probability": probability,
    }


def _range_ok(checker: FieldChecker, low: Any, high: Any, step: Any, path: str) -> bool:
    """``min ≤ max`` and at most 1 000 candidates; False after recording a problem."""
    if isinstance(low, int) and isinstance(high, int) and high < low:
        checker.error(f"{path}.max", f"must be ≥ min ({low})")
        return False
    if isinstance(low, int) and isinstance(high, int) and isinstance(step, int):
        count = len(range(low, high + 1, step))
        if count > schema.MAX_SWEEP_CANDIDATES:
            checker.error(
                f"{path}.max",
                f"gives {count:,} candidates from min {low} by step {step}; at most "
                f"{schema.MAX_SWEEP_CANDIDATES:,} (raise step or narrow min … max)",
            )
            return False
    return True


def _named_mix(
    name: Any, options: Sequence[Mapping[str, Any] | None], option_names: Sequence[str | None]
) -> Mapping[str, Any] | None:
    """The normalised mix option ``name`` names, or None."""
    if not isinstance(name, str) or name not in option_names:
        return None
    option = options[option_names.index(name)]
    return option if option is not None and option["type"] == "mix" else None


def _sweep_layers(
    checker: FieldChecker, value: Any, path: str, count: int
) -> list[dict[str, int]] | None:
    """A mix's joint sizing (version 1.3): one ``{"min", "max", "step"}`` per layer, at most
    1 000 combinations; None after recording a problem."""
    if value is None:
        checker.error(path, f"is required to size a mix: one range per layer ({count})")
        return None
    items = checker.sequence(value, path)
    if items is None:
        return None
    if len(items) != count:
        checker.error(path, f"must have one entry per layer of the mix ({count}), not {len(items)}")
        return None
    layers: list[dict[str, int]] = []
    ok = True
    for j, item in enumerate(items):
        where = f"{path}[{j}]"
        raw = checker.mapping(item, where)
        if raw is None:
            ok = False
            continue
        table = schema.SWEEP_LAYER_FIELDS
        checker.keys(raw, table, where)
        v = checker.fields(raw, table, where)
        step = table["step"].default if v["step"] is None else v["step"]
        if not all(isinstance(x, int) for x in (v["min"], v["max"], step)):
            ok = False
            continue
        if not _range_ok(checker, v["min"], v["max"], step, where):
            ok = False
            continue
        layers.append({"min": v["min"], "max": v["max"], "step": step})
    if not ok:
        return None
    combinations = 1
    for layer in layers:
        combinations *= len(candidate_sizes(layer["min"], layer["max"], layer["step"]))
    if combinations > schema.MAX_SWEEP_CANDIDATES:
        checker.error(
            path,
            f"gives {combinations:,} combinations of the layers' sizes; at most "
            f"{schema.MAX_SWEEP_CANDIDATES:,} (raise a step or narrow a range)",
        )
        return None
    return layers


def sweep_candidates(sweep: Mapping[str, Any]) -> list[Any]:
    """A normalised sweep's candidates: sizes, or (a mix, version 1.3) every combination of its
    layers' sizes as tuples, the first layer's changing slowest."""
    if "layers" in sweep:
        ranges = [candidate_sizes(r["min"], r["max"], r["step"]) for r in sweep["layers"]]
        return [tuple(sizes) for sizes in itertools.product(*ranges)]
    return candidate_sizes(sweep["min"], sweep["max"], sweep["step"])


def _sweep_option(
    checker: FieldChecker,
    name: Any,
    path: str,
    options: Sequence[Mapping[str, Any] | None],
    option_names: Sequence[str | None],
) -> bool:
    """Check that ``name`` names an option a sweep can size; False when it does not."""
    if not isinstance(name, str):
        return False  # absent or not text: recorded by the field check
    if name not in option_names:
        if all(known is not None for known in option_names):
            checker.error(path, f'names no option: "{name}"')
        return False
    option = options[option_names.index(name)]
    if option is None:
        return False  # the option itself is invalid: its problems are recorded there
    kind = _kind(option)
    if kind == "mix":
        return True
    if swept_field(option["type"], option.get("billing")) is None:
        described = f"a cloud option with {kind} billing" if option["type"] == "cloud" else kind
        checker.error(
            path,
            f'names "{name}", {described}: a sweep sizes a committed cloud option '
            "(committed_gpus), a dedicated or an on_prem option (servers), or a mix (layers)",
        )
        return False
    if kind == "committed" and option.get("on_demand_usd_per_gpu_hour") is None:
        checker.error(
            path,
            f'names "{name}", a committed option without on_demand_usd_per_gpu_hour: a sweep '
            "bills the work beyond a smaller commitment at the on-demand rate; give one",
        )
        return False
    return True


# --------------------------------------------------------------------------------------------
# Sweeps and their candidates
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Sweep:
    """One normalised sweep, resolved against a plan."""

    option_index: int
    option_name: str
    field: str  # "committed_gpus", "servers" or (a mix) "layers"
    objective: str  # "npv", "mean_npv", "p90_npv" or "tail_npv"
    max_shortfall_probability: float  # [fraction]
    candidates: tuple[Any, ...]  # sizes, ascending [GPUs or servers]; a mix's: tuples of them


def plan_sweeps(plan: Plan) -> list[Sweep]:
    """The sweeps of a plan's normalised document, in order (empty without ``sizing``)."""
    sweeps: list[Sweep] = []
    names = plan.option_names
    for raw in plan.inputs.get("sizing") or ():
        index = names.index(str(raw["option"]))
        sweeps.append(
            Sweep(
                option_index=index,
                option_name=names[index],
                field=SWEPT_FIELDS[_kind(plan.inputs["options"][index])],
                objective=str(raw["objective"]),
                max_shortfall_probability=float(raw["max_shortfall_probability"]),
                candidates=tuple(sweep_candidates(raw)),
            )
        )
    return sweeps


def candidate_plans(plan: Plan, sweep: Sweep) -> list[OptionPlan]:
    """The swept option at each candidate size: its normalised fields with only ``sweep.field``
    changed, sized and priced as :func:`costapp.tco.core.plan_build` would price that document."""
    base = plan.options[sweep.option_index]
    option = plan.inputs["options"][sweep.option_index]
    egress_tb = float(plan.inputs["egress_tb_per_month"])
    if base.mix is not None:  # version 1.3: the layers at each combination of sizes
        assert base.supply is not None
        return [
            mix_option_plan(
                sweep.option_index,
                option,
                mix_terms(
                    option,
                    plan.inputs["options"],
                    plan.horizon_months,
                    plan.hours_per_month,
                    egress_tb,
                    sizes,
                ),
                base.busy_gpu_hours,
                base.peak_gpus,
                base.supply,
                base.goodput,
                base.warnings,
                base.load,
                plan.hours_per_month,
            )
            for sizes in sweep.candidates
        ]
    return [
        _option_plan(
            sweep.option_index,
            {**option, sweep.field: size},
            base.busy_gpu_hours,
            base.peak_gpus,
            plan.horizon_months,
            plan.hours_per_month,
            egress_tb,
            list(base.warnings),
            supply=base.supply,
            goodput=base.goodput,
            load=base.load,
        )
        for size in sweep.candidates
    ]


@dataclass(frozen=True, eq=False)
class CandidateCosts:
    """A sweep's candidates costed on ``n`` paths."""

    total_usd: Array | None  # (C, n) [USD]; None when not asked for
    npv_usd: Array  # (C, n) [USD]
    short: Mask  # (C, n) True where the candidate leaves work undone on the path


def shared_inputs(
    plan: Plan, option: OptionPlan, futures: Futures, n_paths: int
) -> tuple[Array, Array, Array | None]:
    """What every candidate of a sweep of ``option`` shares on these futures: ``busy_o`` and
    ``supply_o`` per path and month, ``(n, H + 1)`` [GPU-h/month], as
    :func:`costapp.tco.core.option_path_costs` makes them; and, for a committed option renewed
    within the horizon at a simulated price change, the committed rate's renewal factor
    ``(n, H + 1)`` (else None)."""
    busy, supply = supply_on_paths(option, futures.demand_multiplier, n_paths, plan.horizon_months)
    renewal = None
    rates = option.rates
    c = futures.cloud_price_change_per_year
    if (
        isinstance(rates, CloudRates)
        and rates.billing == "committed"
        and c is not None
        and not single_term(rates.term_months, plan.horizon_months)
    ):
        renewal = renewal_factor(c, rates.term_months, plan.horizon_months)
    return busy, supply, renewal


def candidate_path_costs(
    plan: Plan,
    option: OptionPlan,
    futures: Futures,
    busy_gpu_hours: Array,
    supply_gpu_hours: Array,
    *,
    cloud_trend: Array | None,
    bound: float,
    renewal: Array | None,
    load: LoadOnPaths | None = None,
    mix_cache: dict[tuple[Any, ...], Any] | None = None,
) -> tuple[dict[str, Array], Array]:
    """One candidate's path-dependent categories and shortfall, by the same calls
    :func:`costapp.tco.core.option_path_costs` makes, on the shared ``busy_o`` and ``supply_o``
    (``bound``: :func:`costapp.tco.core.supply_bound` of them)."""
    return gpu_option_path_costs(
        option,
        futures,
        busy_gpu_hours,
        supply_gpu_hours,
        plan.hours_per_month,
        plan.horizon_months,
        cloud_trend=cloud_trend,
        supply_bound=bound,
        renewal=renewal,
        load=load,
        mix_cache=mix_cache,
    )


def candidates_cost(
    plan: Plan,
    candidates: Sequence[OptionPlan],
    futures: Futures,
    n_paths: int,
    *,
    cloud_trend: Array | None = None,
    multiplier_bound: float = 1.0,
    totals: bool = True,
) -> CandidateCosts:
    """Price every candidate on the same ``n_paths`` futures [USD].

    What the candidates share (the busy GPU-hours per path, a committed rate's renewal factor) is
    computed once; each candidate's monthly cost is then assembled exactly as
    :func:`costapp.tco.core.plan_cost` assembles an option's, and totals (unless ``totals`` is
    False), NPVs and shortfall flags are taken over the whole ``(candidates, paths, months)``
    array at once. ``cloud_trend`` and ``multiplier_bound`` are those
    :func:`~costapp.tco.core.plan_cost` derives from ``futures``.
    """
    if not candidates:
        raise ValueError("a sweep has at least one candidate")
    horizon = plan.horizon_months
    # One candidate's months at a time, in a buffer that stays in cache: its total and NPV are
    # those of its row of the whole (candidates, paths, months) array (the same sum over each
    # path's months, the same matrix-vector product of each candidate's (paths, months) matrix).
    monthly = np.empty((n_paths, horizon + 1))
    total = np.empty((len(candidates), n_paths)) if totals else None
    npv = np.empty((len(candidates), n_paths))
    shortfall = np.empty((len(candidates), n_paths))
    busy, supply, renewal = shared_inputs(plan, candidates[0], futures, n_paths)
    bound = supply_bound(candidates[0], supply, multiplier_bound)
    load = (
        LoadOnPaths(candidates[0].load, futures.demand_multiplier, plan.hours_per_month)
        if candidates[0].load
        else None
    )
    mix_cache: dict[tuple[Any, ...], Any] | None = {} if candidates[0].mix is not None else None
    for c, option in enumerate(candidates):
        costs, option_shortfall = candidate_path_costs(
            plan,
            option,
            futures,
            busy,
            supply,
            cloud_trend=cloud_trend,
            bound=bound,
            renewal=renewal,
            load=load,
            mix_cache=mix_cache,
        )
        parts = list(costs.values())
        if parts:
            np.add(parts[0], option.fixed_usd, out=monthly)
            for usd in parts[1:]:
                monthly += usd
        else:
            monthly[...] = option.fixed_usd
        if total is not None:
            np.sum(monthly, axis=-1, out=total[c])
        np.matmul(monthly, plan.discount_factors, out=npv[c])
        shortfall[c] = option_shortfall
    return CandidateCosts(total_usd=total, npv_usd=npv, short=shortfall > 0.0)


# --------------------------------------------------------------------------------------------
# Simulated blocks: compute, carry, merge
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SweepBlockResults:
    """Per-path results of every sweep on a set of blocks, in ascending block order.

    Attributes
    ----------
    block_indices : the blocks, ascending, each once.
    block_paths : paths in each of those blocks.
    npv_usd : per sweep, ``(C, n)`` NPV per candidate and path [USD], ``n = sum(block_paths)``.
    short : per sweep, ``(C, n)`` True where the candidate leaves work undone on the path.
    """

    block_indices: tuple[int, ...]
    block_paths: tuple[int, ...]
    npv_usd: tuple[Array, ...]
    short: tuple[Mask, ...]


def block_futures(
    plan: Plan, simulation: Mapping[str, Any], block_index: int
) -> tuple[Futures, Array | None, float]:
    """One block's futures, with the cloud price trend and demand bound derived from them as
    :func:`costapp.tco.core.plan_cost` derives them (shared by every candidate)."""
    futures = montecarlo.block_futures(simulation, block_index)
    bound = 1.0
    if futures.demand_multiplier is not None:
        bound = float(np.max(np.abs(futures.demand_multiplier), initial=0.0))
    trend = None
    c = futures.cloud_price_change_per_year
    if c is not None and any(isinstance(o.rates, CloudRates) for o in plan.options):
        trend = trend_factor(c, plan.horizon_months)
    return futures, trend, bound


def sweep_blocks_compute(
    plan: Plan, block_indices: Iterable[int], *, sweeps: Sequence[Sweep] | None = None
) -> SweepBlockResults:
    """Price every sweep's candidates on the paths of the given blocks of the plan's simulation.

    ``block_indices`` may come in any order and must not repeat; the result is in ascending block
    order. Each block is priced on its own paths alone, so its numbers are the same whatever
    other blocks are computed with it.
    """
    simulation = plan.inputs.get("simulation") or {}
    paths = int(simulation.get("paths") or 0)
    indices = sorted(int(b) for b in block_indices)
    if len(set(indices)) != len(indices):
        raise ValueError(f"block indices repeat: {indices}")
    sizes = [montecarlo.block_size(paths, b) for b in indices]
    sweeps = plan_sweeps(plan) if sweeps is None else sweeps
    plans = [candidate_plans(plan, sweep) for sweep in sweeps]
    npv = [np.empty((len(sweep.candidates), sum(sizes))) for sweep in sweeps]
    short = [np.empty((len(sweep.candidates), sum(sizes)), dtype=bool) for sweep in sweeps]
    start = 0
    for b, n in zip(indices, sizes, strict=True):
        futures, trend, bound = block_futures(plan, simulation, b)
        for s, candidates in enumerate(plans):
            costs = candidates_cost(
                plan,
                candidates,
                futures,
                n,
                cloud_trend=trend,
                multiplier_bound=bound,
                totals=False,
            )
            npv[s][:, start : start + n] = costs.npv_usd
            short[s][:, start : start + n] = costs.short
        start += n
    return SweepBlockResults(
        block_indices=tuple(indices),
        block_paths=tuple(sizes),
        npv_usd=tuple(npv),
        short=tuple(short),
    )


def sweep_block_results_to_payload(results: SweepBlockResults) -> bytes:
    """:class:`SweepBlockResults` as bytes (``costapp.tco.payload``), exact to the bit: for the
    task queue's storage between a block task and the merge."""
    arrays: dict[str, Any] = {
        "block_indices": np.asarray(results.block_indices, dtype=np.int64),
        "block_paths": np.asarray(results.block_paths, dtype=np.int64),
        "sweeps": np.asarray(len(results.npv_usd), dtype=np.int64),
    }
    for s, (npv, short) in enumerate(zip(results.npv_usd, results.short, strict=True)):
        arrays[f"npv_usd_{s}"] = npv
        arrays[f"short_{s}"] = short
    return arrays_pack(arrays)


def sweep_block_results_from_payload(payload: bytes) -> SweepBlockResults:
    """The :class:`SweepBlockResults` of :func:`sweep_block_results_to_payload`'s bytes (its
    arrays are read-only views of them)."""
    arrays = arrays_unpack(payload)
    sweeps = int(arrays["sweeps"])
    return SweepBlockResults(
        block_indices=tuple(int(b) for b in arrays["block_indices"]),
        block_paths=tuple(int(n) for n in arrays["block_paths"]),
        npv_usd=tuple(arrays[f"npv_usd_{s}"] for s in range(sweeps)),
        short=tuple(arrays[f"short_{s}"] for s in range(sweeps)),
    )


def _merged(
    results: Sequence[SweepBlockResults], paths: int, n_sweeps: int
) -> tuple[list[Array], list[Mask]]:
    """Every sweep's ``(npv_usd, short)`` over the whole run, in block order."""
    pieces: list[tuple[int, int, SweepBlockResults, int]] = []
    for result in results:
        start = 0
        for b, n in zip(result.block_indices, result.block_paths, strict=True):
            pieces.append((b, n, result, start))
            start += n
    pieces.sort(key=lambda piece: piece[0])
    indices = [piece[0] for piece in pieces]
    count = montecarlo.block_count(paths)
    if indices != list(range(count)):
        raise ValueError(f"blocks must be 0 … {count - 1}, each once; got {indices}")
    sizes = [piece[1] for piece in pieces]
    if sizes != [montecarlo.block_size(paths, b) for b in indices]:
        raise ValueError(f"the blocks' paths {sizes} are not those of a run of {paths} paths")
    if any(len(r.npv_usd) != n_sweeps or len(r.short) != n_sweeps for r in results):
        raise ValueError(f"every block result must hold {n_sweeps} sweeps")
    if len(results) == 1:
        return list(results[0].npv_usd), list(results[0].short)
    npv = [
        np.concatenate([r.npv_usd[s][:, a : a + n] for _, n, r, a in pieces], axis=1)
        for s in range(n_sweeps)
    ]
    short = [
        np.concatenate([r.short[s][:, a : a + n] for _, n, r, a in pieces], axis=1)
        for s in range(n_sweeps)
    ]
    return npv, short


# --------------------------------------------------------------------------------------------
# The result entries
# --------------------------------------------------------------------------------------------


def best_index(objective_usd: Sequence[float], qualifies: Sequence[bool]) -> int | None:
    """Index of the best candidate: the lowest objective among those that qualify; values within
    1e-9 × max(1, |lowest|) of the lowest tie and the first (smallest size) wins; None when none
    qualifies."""
    values = [v for v, ok in zip(objective_usd, qualifies, strict=True) if ok]
    if not values:
        return None
    lowest = min(values)
    limit = lowest + TIE_RELATIVE_TOLERANCE * max(1.0, abs(lowest))
    for i, (value, ok) in enumerate(zip(objective_usd, qualifies, strict=True)):
        if ok and value <= limit:
            return i
    raise AssertionError("the lowest value qualifies")  # pragma: no cover


def sweeps_merge(plan: Plan, results: Sequence[SweepBlockResults] = ()) -> list[dict[str, Any]]:
    """The result's ``sizing`` entries, one per sweep in order.

    The figures on the document's own values are computed here (one path per candidate); with a
    simulation, ``results`` are the block results of the whole run (any grouping, any order),
    merged in block order, so every grouping gives the same entries bit for bit.
    """
    simulation = plan.inputs.get("simulation") or {}
    paths = int(simulation.get("paths") or 0)
    sweeps = plan_sweeps(plan)
    merged: tuple[list[Array], list[Mask]] | None = None
    if paths > 0:
        merged = _merged(results, paths, len(sweeps))
    entries: list[dict[str, Any]] = []
    for s, sweep in enumerate(sweeps):
        own = candidates_cost(plan, candidate_plans(plan, sweep), Futures(), 1)
        assert own.total_usd is not None
        feasible = [not bool(flag) for flag in own.short[:, 0]]
        entry: dict[str, Any] = {
            "option": sweep.option_name,
            "field": sweep.field,
            "objective": sweep.objective,
            "candidates": [_size_json(size) for size in sweep.candidates],
            "npv_usd": [float(v) for v in own.npv_usd[:, 0]],
            "total_usd": [float(v) for v in own.total_usd[:, 0]],
            "feasible": feasible,
        }
        qualifies = feasible
        if merged is not None:
            npv, short = merged[0][s], merged[1][s]
            tail = montecarlo.tail_npv(npv, montecarlo.tail_fraction(simulation))
            mean, p90 = montecarlo.npv_statistics(npv)
            probability = np.count_nonzero(short, axis=1) / paths
            entry["mean_npv_usd"] = [float(v) for v in mean]
            entry["p90_npv_usd"] = [float(v) for v in p90]
            entry["tail_npv_usd"] = [float(v) for v in tail]
            entry["shortfall_probability"] = [float(v) for v in probability]
            qualifies = [
                ok and bool(p <= sweep.max_shortfall_probability)
                for ok, p in zip(feasible, probability, strict=True)
            ]
        objective = entry[f"{sweep.objective}_usd"]
        best = best_index(objective, qualifies)
        entry["best"] = None if best is None else _size_json(sweep.candidates[best])
        entry["best_objective_usd"] = None if best is None else objective[best]
        entries.append(entry)
    return entries


def run(plan: Plan) -> list[dict[str, Any]]:
    """Every sweep of the plan in this process: the result's ``sizing`` entries."""
    simulation = plan.inputs.get("simulation") or {}
    paths = int(simulation.get("paths") or 0)
    if paths <= 0:
        return sweeps_merge(plan)
    blocks = sweep_blocks_compute(plan, range(montecarlo.block_count(paths)))
    return sweeps_merge(plan, [blocks])


# --------------------------------------------------------------------------------------------
# The spread of each candidate's NPV (for the charts; not part of the result document)
# --------------------------------------------------------------------------------------------


def npv_band(npv_usd: Array) -> tuple[Array, Array]:
    """The 10th and 90th percentiles of each row of ``npv_usd`` (candidates × paths) [USD], by
    the convention of the result's ``p90_npv_usd`` (:func:`costapp.tco.montecarlo.npv_statistics`:
    numpy's linear interpolation over all paths), so the P90 here equals it bit for bit."""
    if npv_usd.shape[-1] == 0:
        raise ValueError("no paths to summarise")
    p10, p90 = montecarlo.selected_linear_percentiles(npv_usd, (10.0, 90.0))
    return p10, p90


def sweeps_bands(
    plan: Plan, results: Sequence[SweepBlockResults] = ()
) -> list[dict[str, Any]] | None:
    """Per sweep, in order, the P10 and P90 of each candidate's NPV over the simulation's paths:
    ``{"option", "field", "candidates", "p10_npv_usd", "p90_npv_usd"}`` [USD]; None without a
    simulation or without sweeps.

    ``results`` are the block results of the whole run, in any grouping and order (as for
    :func:`sweeps_merge`): they are merged in block order, so every grouping gives the same
    bands bit for bit, and ``p90_npv_usd`` equals the result's ``sizing[i].p90_npv_usd``.
    """
    simulation = plan.inputs.get("simulation") or {}
    paths = int(simulation.get("paths") or 0)
    sweeps = plan_sweeps(plan)
    if paths <= 0 or not sweeps:
        return None
    npv, _short = _merged(results, paths, len(sweeps))
    bands: list[dict[str, Any]] = []
    for sweep, values in zip(sweeps, npv, strict=True):
        p10, p90 = npv_band(values)
        bands.append(
            {
                "option": sweep.option_name,
                "field": sweep.field,
                "candidates": [_size_json(size) for size in sweep.candidates],
                "p10_npv_usd": [float(v) for v in p10],
                "p90_npv_usd": [float(v) for v in p90],
            }
        )
    return bands


def _size_json(size: Any) -> Any:
    """A candidate as the result writes it: a whole number, or a mix's list of them."""
    return [int(v) for v in size] if isinstance(size, tuple) else int(size)
