"""Writes and orchestration for the cost side.

Services are keyword-only; they call the engine (``costapp.tco``) with plain numbers that the
selectors looked up, and hand work to Celery tasks where it can be spread across workers.
"""

from collections.abc import Mapping
from typing import Any

from celery import group
from django.utils import timezone

from costapp.selectors import (
    GPU_TABLE_WARNING,
    catalog_reference_warnings,
    engine_gpu_figures,
    scenario_catalog_refs,
)
from costapp.tco import (
    Plan,
    block_count,
    block_results_from_payload,
    block_results_to_payload,
    blocks_compute,
    blocks_merge,
    plan_build,
    simulate,
    summary_fields,
)

BLOCKS_PER_TASK = 10
"""Monte Carlo blocks (of 1 000 paths) one worker task computes."""
SPLIT_TIMEOUT_S = 600


def montecarlo_blocks_compute(
    *, inputs: Mapping[str, Any], gpus: Mapping[str, Any], block_indices: list[int]
) -> dict[str, Any]:
    """Cost some Monte Carlo blocks of a normalised scenario; the JSON payload of the results."""
    plan = plan_build(inputs, gpus)
    results = blocks_compute(plan, inputs["simulation"], block_indices)
    return block_results_to_payload(results)


def _split_monte_carlo(blocks_per_task: int):
    """A Monte Carlo runner that spreads the blocks over Celery tasks and merges them exactly."""
    from costapp.tasks import montecarlo_blocks

    def run(plan: Plan, simulation: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        blocks = list(range(block_count(int(simulation["paths"]))))
        chunks = [blocks[i : i + blocks_per_task] for i in range(0, len(blocks), blocks_per_task)]
        job = group(
            montecarlo_blocks.s(inputs=plan.inputs, gpus=plan.gpus, block_indices=chunk)
            for chunk in chunks
        ).apply_async()
        payloads = job.get(timeout=SPLIT_TIMEOUT_S)
        summary = blocks_merge([block_results_from_payload(payload) for payload in payloads])
        return summary_fields(plan, summary)

    return run


def scenario_simulate(
    *,
    document: Any,
    split: bool = False,
    blocks_per_task: int = BLOCKS_PER_TASK,
    gpu_table_fallback: bool = False,
) -> dict[str, Any]:
    """The result document of a scenario document, with catalog references resolved and
    warnings about the quotes it relies on (demonstration data, drafts, expired ones).

    With ``split``, the Monte Carlo blocks are computed by Celery tasks (real workers when a
    broker is configured, in-process otherwise) and merged; the result is the same bit for bit.
    With ``gpu_table_fallback`` (the command line's choice, never a web request), a catalog
    without GPUs yields to the GPU table shipped with the project, and the result's warnings say
    so. Raises ``ScenarioError`` for an invalid document.
    """
    gpus, source = engine_gpu_figures(table_fallback=gpu_table_fallback)
    catalog = scenario_catalog_refs(document)
    if split:
        result = simulate(document, gpus, catalog, monte_carlo=_split_monte_carlo(blocks_per_task))
    else:
        result = simulate(document, gpus, catalog)
    result["warnings"].extend(
        catalog_reference_warnings(document=document, refs=catalog, today=timezone.localdate())
    )
    if source == "table":
        result["warnings"].append(GPU_TABLE_WARNING)
    return result
