"""Writes of scenarios, and pricing a document in this process.

Services are keyword-only; they call the engine (``costapp.tco``) with plain numbers that the
catalog reads (:mod:`costapp.scenarios.catalog`) looked up: a scenario created, updated,
duplicated, shared or copied at a sweep's best size is checked by the engine first; a small
document is priced at once (the command line, ``POST /api/v1/simulate/``, the claim pages).
"""

import copy
import hashlib
import json
import math
from typing import Any

from django.utils import timezone

from costapp.models import Scenario, SimulationRun
from costapp.reports import joint_sizing, sizing_summary
from costapp.scenarios.catalog import (
    GPU_TABLE_WARNING,
    catalog_reference_warnings,
    engine_gpu_figures,
)
from costapp.scenarios.documents import ScenarioDocument
from costapp.scenarios.sources import resolved_catalog_refs, run_sources, zero_cost_warnings
from costapp.tco import (
    CatalogRefs,
    FieldError,
    ScenarioError,
    normalize,
    plan_build,
    simulate,
)

Status = SimulationRun.Status


SIMULATE_MAX_PATHS = 1_000
"""Paths ``POST /api/v1/simulate/`` computes at once; more need a run on the workers."""
SIMULATE_MAX_SIZING_WORK = 1_000_000
"""Sizing candidates × paths ``POST /api/v1/simulate/`` computes at once."""


def scenario_simulate(
    *, document: ScenarioDocument, gpu_table_fallback: bool = False
) -> dict[str, Any]:
    """The result document of a scenario document, with catalog references resolved, their
    ``sources``, and warnings about the catalog figures it relies on (demonstration quotes,
    drafts, expired ones, stale or flagged prices) and the zeros that hide a cost.

    Computed in this process. With ``gpu_table_fallback`` (the command line's choice, never a web
    request), a catalog without GPUs yields to the GPU table shipped with the project, and the
    result's warnings say so. Raises ``ScenarioError`` for an invalid document.
    """
    gpus, source = engine_gpu_figures(table_fallback=gpu_table_fallback)
    # The shipped GPU table stands in for a catalog that is not set up: nothing to look up.
    catalog = resolved_catalog_refs(document, gpus) if source == "catalog" else CatalogRefs()
    result = simulate(document, gpus, catalog)
    today = timezone.localdate()
    result["warnings"].extend(
        catalog_reference_warnings(document=document, refs=catalog, today=today)
    )
    if source == "catalog":  # the shipped GPU table comes with no sourced figures
        result["warnings"].extend(zero_cost_warnings(document=document, inputs=result["inputs"]))
    result["sources"] = run_sources(
        document=document, refs=catalog, inputs=result["inputs"], today=today
    )
    if source == "table":
        result["warnings"].append(GPU_TABLE_WARNING)
    return result


# --- scenarios ----------------------------------------------------------------------------------


def scenario_document_check(*, document: ScenarioDocument) -> None:
    """Raise ``ScenarioError`` (paths within the document) unless ``document`` is a valid scenario
    with today's catalog: field checks and the checks that need the demand."""
    gpus, _source = engine_gpu_figures()
    normalized = normalize(document, gpus, resolved_catalog_refs(document, gpus))
    plan_build(normalized.document, gpus)


ESTIMATED_FIELDS = (
    "tokens_per_second_per_gpu",
    "prefill_tokens_per_second_per_gpu",
    "peak_hours_per_day",
)
"""The workload fields the engine fills with an estimate when they are left out (format 1.2 and
1.3): the builder shows each estimate where its field is empty."""


def workload_estimates(*, document: ScenarioDocument) -> dict[int, dict[str, Any]]:
    """Per workload index, the values the engine writes into ``inputs`` for the fields of
    :data:`ESTIMATED_FIELDS` the document leaves out; nothing for a document the engine rejects."""
    workloads = document.get("workloads") if isinstance(document, dict) else None
    if not isinstance(workloads, list):
        return {}
    gpus, _source = engine_gpu_figures()
    try:
        normalized = normalize(document, gpus, resolved_catalog_refs(document, gpus))
    except ScenarioError:
        return {}
    found: dict[int, dict[str, Any]] = {}
    for index, (given, filled) in enumerate(
        zip(workloads, normalized.document["workloads"], strict=False)
    ):
        if not isinstance(given, dict):
            continue
        values = {
            name: filled[name]
            for name in ESTIMATED_FIELDS
            if given.get(name) is None and filled.get(name) is not None
        }
        if values:
            found[index] = values
    return found


def scenario_create(
    *,
    owner: Any,
    name: str,
    document: ScenarioDocument,
    description: str = "",
    shared: bool = False,
) -> Scenario:
    """A new scenario of ``owner``; ``ScenarioError`` for an invalid document (nothing stored)."""
    scenario_document_check(document=document)
    return Scenario.objects.create(
        owner=owner, name=name, description=description, shared=shared, document=document
    )


def scenario_update(*, scenario: Scenario, **fields: Any) -> Scenario:
    """Change ``name``, ``description``, ``shared`` or ``document`` of a scenario; a new document is
    checked first (``ScenarioError``, nothing changed). Its runs keep the inputs they froze."""
    allowed = {"name", "description", "shared", "document"}
    unknown = set(fields) - allowed
    if unknown:
        raise TypeError(f"cannot update {sorted(unknown)}")
    if "document" in fields:
        scenario_document_check(document=fields["document"])
    for name, value in fields.items():
        setattr(scenario, name, value)
    scenario.save()
    return scenario


def scenario_duplicate(*, scenario: Scenario, owner: Any) -> Scenario:
    """A private copy of ``scenario`` owned by ``owner``, named "Copy of NAME" (the scenario and
    its document's ``name``), with the same description and otherwise the same document; no runs.
    The document was checked when it was saved and is copied as it is."""
    name = f"Copy of {scenario.name}"[: Scenario._meta.get_field("name").max_length]
    document = scenario.document
    if isinstance(document, dict):
        document = {**document, "name": name}
    return Scenario.objects.create(
        owner=owner, name=name, description=scenario.description, shared=False, document=document
    )


SIZE_UNITS = {"committed_gpus": "committed GPUs", "servers": "servers"}


def scenario_copy_at_size(*, run: SimulationRun, sweep_index: int, owner: Any) -> Scenario:
    """A new private scenario of ``owner``: the run's scenario with the option of sizing sweep
    ``sweep_index`` at the sweep's ``best`` size (its ``committed_gpus`` or ``servers``).

    The copy starts from the scenario's document as written when it is still the one the run
    priced (catalog references kept), else from the run's frozen inputs, which the best size was
    found for. The document is checked like any new scenario's (``ScenarioError``, nothing
    stored). ``ValueError`` when the run has no such sweep, or the sweep no best size, or the best
    size is the scenario's own already."""
    result = run.result
    sweeps = (result or {}).get("sizing") or []
    if run.status != Status.SUCCEEDED or not 0 <= sweep_index < len(sweeps):
        raise ValueError(f"run {run.pk} has no sizing sweep {sweep_index + 1}")
    sweep = sweeps[sweep_index]
    best, field, option = sweep["best"], sweep["field"], sweep["option"]
    if best is None:
        raise ValueError(
            f'sizing sweep {sweep_index + 1} ("{option}") found no size that qualifies'
        )
    scenario = run.scenario
    as_written = document_sha256(scenario.document) == run.document_sha256
    document = copy.deepcopy(scenario.document if as_written else run.inputs)
    target = next(
        (
            o
            for o in document.get("options") or []
            if isinstance(o, dict) and o.get("name") == option
        ),
        None,
    )
    if target is None:
        raise ValueError(f'the scenario has no option "{option}"')
    if field == "layers":  # format 1.3: a mix at its best combination, every layer's size
        if joint_sizing.own_sizes(result, sweep_index) == list(best):
            raise ValueError(f'"{option}" is at its best sizes, {best}, already')
        target["layers"] = [
            {"option": entry if isinstance(entry, str) else entry["option"], "size": size}
            for entry, size in zip(target["layers"], best, strict=True)
        ]
        suffix = f" (at best sizes: {', '.join(f'{size:,}' for size in best)})"
        field_words = "its layers' sizes"
    else:
        if sizing_summary.own_size(result, sweep_index) == best:
            raise ValueError(f'"{option}" is at the best size, {best} {SIZE_UNITS[field]}, already')
        target[field] = best
        suffix = f" (at best size: {best:,} {SIZE_UNITS[field]})"
        field_words = field
    limit = Scenario._meta.get_field("name").max_length or 200
    base = scenario.name
    if len(base) + len(suffix) > limit:  # a long name is cut short, the size kept
        base = base[: limit - len(suffix) - 1] + "…"
    name = base + suffix
    description = (
        f'A copy of "{scenario.name}" with "{option}" at {field_words} = {best}: the best found '
        f"by sizing sweep {sweep_index + 1} ({sweep['objective']}) of run {run.pk}"
        + ("." if as_written else ", from the run's frozen inputs (the scenario changed since).")
    )
    return scenario_create(
        owner=owner, name=name, document=document, description=description, shared=False
    )


def document_sha256(document: ScenarioDocument) -> str:
    """A hash of a scenario document's content (key order kept)."""
    return hashlib.sha256(json.dumps(document, allow_nan=False).encode("utf-8")).hexdigest()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _at_once_problems(document: ScenarioDocument) -> list[FieldError]:
    """What makes a document too large to compute at once, read from the document as written
    (anything malformed is left to validation, which names it)."""
    if not isinstance(document, dict):
        return []
    simulation = document.get("simulation")
    paths = _number(simulation.get("paths")) if isinstance(simulation, dict) else None
    problems: list[FieldError] = []
    if paths is not None and paths > SIMULATE_MAX_PATHS:
        problems.append(
            FieldError(
                "simulation.paths",
                f"at most {SIMULATE_MAX_PATHS:,} paths here, got {paths:,.0f}; "
                "save the scenario and start a run for more",
            )
        )
    sweeps = document.get("sizing")
    if isinstance(sweeps, list):
        work = 0.0
        for sweep in sweeps:
            if not isinstance(sweep, dict):
                continue
            layers = sweep.get("layers")
            ranges: list[Any] = layers if isinstance(layers, list) else [sweep]
            count = 1.0
            for entry in ranges:  # a mix's joint sizing (format 1.3): every combination
                if not isinstance(entry, dict):
                    count = 0.0
                    break
                low, high = _number(entry.get("min")), _number(entry.get("max"))
                step = _number(entry.get("step", 1))
                if low is None or high is None or step is None or step < 1 or high < low:
                    count = 0.0
                    break
                count *= math.floor((high - low) / step) + 1
            work += count * max(paths or 0.0, 1.0)
        if work > SIMULATE_MAX_SIZING_WORK:
            problems.append(
                FieldError(
                    "sizing",
                    f"at most {SIMULATE_MAX_SIZING_WORK:,} candidate-paths here, got "
                    f"{work:,.0f}; save the scenario and start a run for more",
                )
            )
    return problems


def simulate_at_once(*, document: ScenarioDocument) -> dict[str, Any]:
    """The result of a small scenario document computed in this process (the API's
    ``simulate/``). ``ScenarioError`` for an invalid document, or one asking more than
    :data:`SIMULATE_MAX_PATHS` paths or :data:`SIMULATE_MAX_SIZING_WORK` sizing candidate-paths."""
    problems = _at_once_problems(document)
    if problems:
        try:
            scenario_document_check(document=document)
        except ScenarioError as exc:  # every problem at once, the document's first
            named = {error.field for error in exc.errors}
            problems = exc.errors + [p for p in problems if p.field not in named]
        raise ScenarioError(problems)
    return scenario_simulate(document=document)
