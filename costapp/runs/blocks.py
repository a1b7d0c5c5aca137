"""The units of work a run fans out: one :class:`BlockKind` per sort of block task
(the figures on the document's own values, the Monte Carlo blocks, the sizing blocks), each
splitting a run's work into units, computing one unit into bytes and handing the merged payloads
to the engine (:data:`BLOCK_KINDS`).
"""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings

from costapp.tco import (
    BLOCK_PATHS,
    CATEGORIES,
    CUMULATIVE_PATHS,
    PathCosts,
    Plan,
    RiskFigures,
    block_count,
    block_results_from_payload,
    block_results_to_payload,
    blocks_compute,
    blocks_merge,
    blocks_reduce,
    blocks_risk,
    cost_curves,
    deterministic_costs,
    option_results,
    summary_fields,
    sweep_block_results_from_payload,
    sweep_block_results_to_payload,
    sweep_blocks_compute,
    sweep_candidates,
    sweeps_bands,
    sweeps_merge,
    tail_fraction,
)


@dataclass(frozen=True)
class BlockKind:
    """One sort of block task the pipeline fans out and merges.

    ``units(inputs)`` splits a run's work into tasks (each a list of block indices; none when the
    document asks for no such work); ``compute(plan, inputs, blocks)`` does one task's work and
    returns its results as bytes; ``runner(payloads)`` turns the payloads of every unit, in unit
    order, into the callable the engine takes as its ``engine_keyword`` argument of
    :func:`~costapp.tco.engine.simulate_normalized`, so the merged result is computed by the same
    code as a run in one process.
    """

    engine_keyword: str
    units: Callable[[Mapping[str, Any]], list[list[int]]]
    compute: Callable[[Plan, Mapping[str, Any], list[int]], bytes]
    runner: Callable[[Sequence[bytes]], Callable[..., Any]]


CUMULATIVE_BLOCKS = -(-CUMULATIVE_PATHS // BLOCK_PATHS)
"""The first blocks, whose paths also keep their months (for the fan charts). They go in tasks of
their own; a task holding all of them takes the percentiles of their months itself
(:func:`~costapp.tco.blocks_reduce`), so 3 numbers per option and month travel to
the merge instead of 10 000, and that work is spread over the workers instead of left to it."""


def _montecarlo_units(inputs: Mapping[str, Any]) -> list[list[int]]:
    simulation = inputs.get("simulation") or {}
    paths = int(simulation.get("paths") or 0)
    blocks = list(range(block_count(paths)))
    per_task = max(1, int(settings.RUN_BLOCKS_PER_TASK))
    heavy, light = blocks[:CUMULATIVE_BLOCKS], blocks[CUMULATIVE_BLOCKS:]
    return [heavy[i : i + per_task] for i in range(0, len(heavy), per_task)] + [
        light[i : i + per_task] for i in range(0, len(light), per_task)
    ]


def _montecarlo_compute(plan: Plan, inputs: Mapping[str, Any], blocks: list[int]) -> bytes:
    results = blocks_compute(plan, inputs["simulation"], blocks, risk=True)
    paths = int(inputs["simulation"].get("paths") or 0)
    results = blocks_reduce(results, paths, overwrite_input=True)
    return block_results_to_payload(results)


def _montecarlo_runner(payloads: Sequence[bytes]) -> Callable[..., Any]:
    results = [block_results_from_payload(payload) for payload in payloads]

    def run(plan: Plan, simulation: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        simulation = plan.inputs.get("simulation") or {}
        return summary_fields(plan, blocks_merge(results, tail_fraction=tail_fraction(simulation)))

    return run


def montecarlo_risk(plan: Plan, payloads: Sequence[bytes]) -> RiskFigures | None:
    """The run's risk figures (:mod:`costapp.tco.risk`) from its Monte Carlo units' payloads
    (all of them, in unit order); None without them, or when a unit was computed without the
    risk figures (a run started before they existed)."""
    if not payloads:
        return None
    return blocks_risk(plan, [block_results_from_payload(payload) for payload in payloads])


SIZING_CANDIDATES_PER_BLOCK = 20
"""How many blocks of paths a sizing task takes: ``RUN_BLOCKS_PER_TASK`` × this / the sweeps'
candidates in all (at least one). Measured on ``bench/size-the-fleet-sweep.json`` (one thread):
one block of 1 000 paths × 64 candidates × 36 months costs 30-40 ms of CPU, so a task takes 3
blocks (about 0.1 s), enough to make the fixed cost of a task (the run's row, Redis, the payload)
small, and still several tasks to share between workers."""


def _sizing_candidates(inputs: Mapping[str, Any]) -> int:
    return sum(len(sweep_candidates(s)) for s in inputs.get("sizing") or [])


def _sizing_units(inputs: Mapping[str, Any]) -> list[list[int]]:
    """The sweeps' blocks of paths, in tasks of about equal work; none without a sweep or a
    simulation (the sweeps on the document's own values are then priced by the merge)."""
    simulation = inputs.get("simulation") or {}
    paths = int(simulation.get("paths") or 0)
    candidates = _sizing_candidates(inputs)
    if paths <= 0 or candidates <= 0:
        return []
    blocks = list(range(block_count(paths)))
    per_task = max(1, int(settings.RUN_BLOCKS_PER_TASK) * SIZING_CANDIDATES_PER_BLOCK // candidates)
    return [blocks[i : i + per_task] for i in range(0, len(blocks), per_task)]


def _sizing_compute(plan: Plan, inputs: Mapping[str, Any], blocks: list[int]) -> bytes:
    return sweep_block_results_to_payload(sweep_blocks_compute(plan, blocks))


def _sizing_runner(payloads: Sequence[bytes]) -> Callable[..., Any]:
    results = [sweep_block_results_from_payload(payload) for payload in payloads]

    def run(plan: Plan) -> list[dict[str, Any]]:
        return sweeps_merge(plan, results)

    return run


def sizing_bands(plan: Plan, payloads: Sequence[bytes]) -> list[dict[str, Any]] | None:
    """The P10 and P90 of every sweep candidate's NPV from the sizing units' payloads (all of
    them, in unit order); None when the run has no sweep blocks (no sweeps, or no paths)."""
    if not payloads:
        return None
    return sweeps_bands(plan, [sweep_block_results_from_payload(payload) for payload in payloads])


def _deterministic_units(inputs: Mapping[str, Any]) -> list[list[int]]:
    """One task beside the blocks of a simulation; without one, the merge computes it."""
    simulation = inputs.get("simulation") or {}
    return [[0]] if int(simulation.get("paths") or 0) > 0 else []


def _deterministic_parts(plan: Plan) -> dict[str, Any]:
    """What a run's result holds on the document's own values: the options' figures (before the
    Monte Carlo fields join them), the monthly categories of ``monthly.csv`` and the cost curves,
    from one costing."""
    with np.errstate(all="ignore"):  # non-finite figures are reported by the merge
        costs = deterministic_costs(plan)
        return {
            "options": option_results(plan, costs),
            "monthly_breakdown_usd": monthly_breakdown(plan, costs),
            "cost_curves": cost_curves(plan.inputs, plan.gpus),
        }


def _deterministic_compute(plan: Plan, inputs: Mapping[str, Any], blocks: list[int]) -> bytes:
    # JSON keeps every float exactly (shortest repr) and non-finite ones as NaN / Infinity, so
    # the merge's checks see what the engine would have computed in one process.
    return json.dumps(_deterministic_parts(plan)).encode("utf-8")


def _deterministic_runner(payloads: Sequence[bytes]) -> Callable[..., Any]:
    (payload,) = payloads
    options = json.loads(payload)["options"]

    def run(plan: Plan) -> list[dict[str, Any]]:
        return options

    return run


BLOCK_KINDS: dict[str, BlockKind] = {
    "deterministic": BlockKind(
        engine_keyword="options_runner",
        units=_deterministic_units,
        compute=_deterministic_compute,
        runner=_deterministic_runner,
    ),
    "montecarlo": BlockKind(
        engine_keyword="monte_carlo",
        units=_montecarlo_units,
        compute=_montecarlo_compute,
        runner=_montecarlo_runner,
    ),
    "sizing": BlockKind(
        engine_keyword="sizing_runner",
        units=_sizing_units,
        compute=_sizing_compute,
        runner=_sizing_runner,
    ),
}
"""The block kinds of the pipeline, by name. A kind joins by adding an entry: the run task fans
its units out with the others, the progress counts them, and the merge hands their runner to the
engine. ``deterministic`` (one task, first: a run with a simulation) computes the figures on the
document's own values beside the blocks instead of leaving them to the merge. ``sizing`` spreads the sweeps' candidates over the workers block by block of paths (every
sweep priced on each block, sharing its futures); a kind with no units (a sweep without a
simulation) is left to the engine's own runner in the merge."""


def run_units(*, inputs: Mapping[str, Any]) -> list[list[Any]]:
    """Every block task of a run: ``[kind, unit, block indices]``, in a fixed order. A run keeps
    this list from its creation, so workers configured differently still agree on it."""
    return [
        [kind, unit, blocks]
        for kind, spec in BLOCK_KINDS.items()
        for unit, blocks in enumerate(spec.units(inputs))
    ]


def monthly_breakdown(plan: Plan, costs: PathCosts) -> dict[str, dict[str, list[float]]]:
    """Per option and category, the monthly cost of the one-path costing ``costs`` [USD]."""
    assert costs.breakdown_usd is not None
    return {
        option.name: {
            category: costs.breakdown_usd[o, c, 0].tolist() for c, category in enumerate(CATEGORIES)
        }
        for o, option in enumerate(plan.options)
    }
