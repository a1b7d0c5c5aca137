"""The run pipeline, the run's state machine (docs: architecture.md, "How work travels").

Services are keyword-only; they call the engine (``costapp.tco``) with the inputs the scenario's
catalog reads (:mod:`costapp.scenarios.catalog`) resolved, and hand work to Celery tasks,
published by name (:mod:`costapp.runs.store`), where it can be spread across workers. No task
ever waits on another:

- :func:`run_create` freezes the inputs (normalised document, catalog prices resolved), stores a
  ``queued`` run and publishes one block task per unit of work (:data:`BLOCK_KINDS`: the figures
  on the document's own values, the Monte Carlo blocks, the sizing blocks);
- :func:`run_execute` (the run task: a requeued run, or one with no units) marks the run
  ``running`` and publishes the block tasks of the units not stored yet;
- :func:`run_block_execute` (a block task) marks a queued run ``running`` when it is the first to
  start, computes its unit (:mod:`costapp.runs.blocks`), keeps the results (compact numpy
  bytes, in Redis, or in-process on the row) and records a :class:`~costapp.models.RunBlock` (one
  row per unit: a redelivered task adds nothing), writes the progress; the task that lands the
  last unit goes on to the merge itself (no further message, no wait);
- :func:`run_merge` puts the units together, exactly, and :func:`run_finish` stores the result.

A worker that dies mid-run leaves its messages unacknowledged: the broker hands them out again
after its visibility timeout (at once when only its pool process died), and
:func:`costapp.runs.requeue.runs_requeue_stale` (beat) re-publishes the missing work of runs that show no sign of life.
A merge holds a claim of its own (:mod:`costapp.runs.merging`), taken over at once when its
message comes back, or once its heartbeat stops. Every step checks the run's state under a row
lock first, so a message delivered twice never doubles or corrupts a run.
"""

import json
import logging
import math
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from costapp.faults import SERVICE_ERRORS
from costapp.models import RunBlock, RunRisk, Scenario, SimulationRun
from costapp.runs import store
from costapp.runs.blocks import (
    BLOCK_KINDS,
    montecarlo_risk,
    monthly_breakdown,
    run_units,
    sizing_bands,
)
from costapp.runs.chart_cache import run_charts, run_sizing_charts
from costapp.runs.followups import run_succeeded_send
from costapp.runs.merging import (
    block_pause_point,
    merge_claim,
    merge_heartbeat,
    merge_pause_point,
    merge_release,
)
from costapp.runs.store import (
    blocks_drop,
    broker_check,
    payload_keep,
    payloads_fetch,
)
from costapp.scenarios.catalog import catalog_reference_warnings, engine_gpu_figures
from costapp.scenarios.documents import NormalizedDocument, ScenarioDocument
from costapp.scenarios.services import document_sha256
from costapp.scenarios.sources import resolved_catalog_refs, run_sources, zero_cost_warnings
from costapp.tco import (
    ENGINE_VERSION,
    Plan,
    RiskFigures,
    ScenarioError,
    cost_curves,
    deterministic_costs,
    normalize,
    plan_build,
    simulate_normalized,
)

logger = logging.getLogger(__name__)

Status = SimulationRun.Status


def _with_simulation(
    document: ScenarioDocument, *, seed: int | None, paths: int | None
) -> ScenarioDocument:
    """The document with ``simulation.seed`` and ``simulation.paths`` set where given."""
    if seed is None and paths is None or not isinstance(document, dict):
        return document
    simulation = document.get("simulation")
    simulation = dict(simulation) if isinstance(simulation, dict) else {}
    if paths is not None:
        simulation["paths"] = paths
    if seed is not None:
        simulation["seed"] = seed
    return {**document, "simulation": simulation}


@dataclass(frozen=True)
class _Frozen:
    inputs: NormalizedDocument
    gpus: dict[str, Any]
    normalize_warnings: list[str]
    catalog_warnings: list[str]
    sources: list[dict]
    copied_from: SimulationRun | None


def _inputs_freeze(
    *, scenario: Scenario, seed: int | None, paths: int | None, reprice: bool
) -> _Frozen:
    """The run's inputs: the last run's, when the scenario's document is unchanged since and no
    repricing is asked; otherwise the document normalised against today's catalog."""
    last = scenario.runs.exclude(inputs=None).order_by("-created", "-id").first()
    if (
        last is not None
        and not reprice
        and last.document_sha256 == document_sha256(scenario.document)
    ):
        inputs = _with_simulation(last.inputs, seed=seed, paths=paths)
        normalized = normalize(inputs, last.gpus)
        plan = plan_build(normalized.document, last.gpus)
        return _Frozen(
            inputs=normalized.document,
            gpus=plan.gpus,
            normalize_warnings=list(last.normalize_warnings),
            catalog_warnings=list(last.catalog_warnings),
            sources=list(last.sources),
            copied_from=last,
        )
    gpus, _source = engine_gpu_figures()
    document = _with_simulation(scenario.document, seed=seed, paths=paths)
    refs = resolved_catalog_refs(document, gpus)
    normalized = normalize(document, gpus, refs)
    plan = plan_build(normalized.document, gpus)
    today = timezone.localdate()
    return _Frozen(
        inputs=normalized.document,
        gpus=plan.gpus,
        normalize_warnings=list(normalized.warnings),
        catalog_warnings=catalog_reference_warnings(document=document, refs=refs, today=today)
        + zero_cost_warnings(document=document, inputs=plan.inputs),
        sources=run_sources(document=document, refs=refs, inputs=normalized.document, today=today),
        copied_from=None,
    )


def _simulation_settings(inputs: Mapping[str, Any]) -> tuple[int, int]:
    simulation = inputs.get("simulation") or {}
    return int(simulation.get("seed") or 0), int(simulation.get("paths") or 0)


def run_create(
    *,
    scenario: Scenario,
    seed: int | None = None,
    paths: int | None = None,
    reprice: bool = False,
    off_request: bool = False,
) -> SimulationRun:
    """Queue a run of ``scenario`` and return it.

    ``seed`` and ``paths`` replace the simulation's own; ``reprice`` resolves catalog references
    at today's prices instead of copying the last run's frozen inputs (which are copied only while
    the scenario's document is the one they were frozen from). Raises :class:`BrokerUnavailable`
    (nothing stored) when the broker does not answer, ``ScenarioError`` (paths within the
    document; nothing stored) for an invalid document. Any other engine failure while freezing the
    inputs stores the run ``failed`` with the message. The run's tasks are published when the
    transaction that stores it commits (this call's own, or the caller's around it); a broker
    that refuses them then leaves the run ``failed`` with its error and raises
    :class:`BrokerUnavailable` out of that commit. ``off_request``: on the embedded default they
    run in the process's background thread, not the caller's (:func:`store.units_publish`).
    """
    broker_check()
    try:
        frozen = _inputs_freeze(scenario=scenario, seed=seed, paths=paths, reprice=reprice)
    except ScenarioError:
        raise
    except SERVICE_ERRORS:
        raise
    except Exception as exc:  # an engine failure is the run's outcome, not the request's
        logger.exception("freezing the inputs of scenario %s failed", scenario.pk)
        now = timezone.now()
        return SimulationRun.objects.create(
            scenario=scenario,
            status=Status.FAILED,
            seed=seed or 0,
            paths=paths or 0,
            document_sha256=document_sha256(scenario.document),
            error=f"the engine failed on these inputs: {type(exc).__name__}: {exc}",
            engine_version=ENGINE_VERSION,
            started=now,
            finished=now,
        )
    run_seed, run_paths = _simulation_settings(frozen.inputs)
    with transaction.atomic():
        run = _run_store(scenario, frozen, seed=run_seed, paths=run_paths)
        transaction.on_commit(partial(store.units_publish, run.pk, off_request=off_request))
    run.refresh_from_db()
    return run


def _run_store(scenario: Scenario, frozen: _Frozen, *, seed: int, paths: int) -> SimulationRun:
    return SimulationRun.objects.create(
        scenario=scenario,
        seed=seed,
        paths=paths,
        document_sha256=document_sha256(scenario.document),
        inputs=frozen.inputs,
        gpus=frozen.gpus,
        normalize_warnings=frozen.normalize_warnings,
        catalog_warnings=frozen.catalog_warnings,
        sources=frozen.sources,
        inputs_copied_from=frozen.copied_from,
        engine_version=ENGINE_VERSION,
        units=run_units(inputs=frozen.inputs),
    )


def _locked(run_id: int, *fields: str) -> SimulationRun | None:
    """The run, its row locked until the transaction ends; only ``fields`` (and the id) loaded
    when given, so a step that changes little reads little."""
    runs = SimulationRun.objects.select_for_update().filter(pk=run_id)
    if fields:
        runs = runs.only(*fields)
    return runs.first()


def run_fail(*, run_id: int, error: str) -> bool:
    """End an active run ``failed`` with ``error``; False if it had already ended."""
    with transaction.atomic():
        run = _locked(run_id)
        if run is None or run.status not in SimulationRun.ACTIVE:
            return False
        run.status = Status.FAILED
        run.error = error
        run.finished = timezone.now()
        run.save(update_fields=["status", "error", "finished"])
        blocks_drop(run)
    logger.warning("run %s failed: %s", run_id, error)
    return True


def run_cancel(*, run: SimulationRun) -> bool:
    """End a queued or running run ``cancelled``; False (nothing changed) if it had ended."""
    with transaction.atomic():
        locked = _locked(run.pk)
        if locked is None or locked.status not in SimulationRun.ACTIVE:
            return False
        locked.status = Status.CANCELLED
        locked.finished = timezone.now()
        locked.save(update_fields=["status", "finished"])
        blocks_drop(locked)
    run.refresh_from_db()
    logger.info("run %s cancelled", run.pk)
    return True


def _run_start(run_id: int) -> bool:
    """Mark a queued run running (its first attempt starts); False when it was not queued. One
    conditional UPDATE, so of two units starting together only one counts the attempt."""
    from django.db.models import F
    from django.db.models.functions import Coalesce

    now = timezone.now()
    return bool(
        SimulationRun.objects.filter(pk=run_id, status=Status.QUEUED).update(
            status=Status.RUNNING,
            attempts=F("attempts") + 1,
            started=Coalesce(F("started"), now),
            heartbeat=now,
        )
    )


def run_execute(*, run_id: int) -> None:
    """The run task: mark the run running and publish the block tasks it still lacks (all of
    them the first time; after a worker died, those whose results are not stored)."""
    with transaction.atomic():
        run = _locked(run_id)
        if run is None or run.status not in SimulationRun.ACTIVE:
            logger.info("run %s: nothing to do (ended or gone)", run_id)
            return
        now = timezone.now()
        run.status = Status.RUNNING
        run.attempts += 1
        run.started = run.started or now
        run.heartbeat = now
        run.save(update_fields=["status", "attempts", "started", "heartbeat"])
        done = set(run.blocks.values_list("kind", "unit"))
    units = run.units
    missing = [(kind, unit) for kind, unit, _blocks in units if (kind, unit) not in done]
    logger.info(
        "run %s: attempt %s, %s of %s block tasks to publish",
        run_id,
        run.attempts,
        len(missing),
        len(units),
    )

    if not missing:
        store.publish(store.RUN_MERGE_TASK, run_id)
        return
    for kind, unit in missing:
        store.publish(store.RUN_BLOCK_TASK, run_id, kind, unit)


@dataclass(frozen=True)
class _RunWork:
    """What a worker process needs of a run to compute its units: read and planned once per
    process, not once per unit (a run's inputs never change once it is created)."""

    inputs: NormalizedDocument
    units: dict[tuple[str, int], list[int]]
    plan: Plan


_RUN_WORK: "OrderedDict[tuple[int, datetime], _RunWork]" = OrderedDict()
RUN_WORK_KEPT = 4
"""How many runs' work a process keeps (the runs it took units of last)."""


def _run_work(run_id: int, created: datetime) -> _RunWork:
    """The run's inputs, units and plan, from this process's memory when it computed a unit of
    the same run before. The key holds the run's creation time beside its id, so a database
    whose ids start again (tests) never gets another run's plan."""
    key = (run_id, created)
    work = _RUN_WORK.get(key)
    if work is not None:
        _RUN_WORK.move_to_end(key)
        return work
    run = SimulationRun.objects.only("inputs", "gpus", "units").get(pk=run_id)
    work = _RunWork(
        inputs=run.inputs,
        units={(k, u): blocks for k, u, blocks in run.units},
        plan=plan_build(run.inputs, run.gpus),
    )
    _RUN_WORK[key] = work
    while len(_RUN_WORK) > RUN_WORK_KEPT:
        _RUN_WORK.popitem(last=False)
    return work


def run_block_execute(*, run_id: int, kind: str, unit: int, task_id: str | None = None) -> None:
    """A block task: compute one unit of a running run (unless already stored), store it, write
    the progress; the task that lands the last unit merges the run (:func:`run_merge`, the merge
    claimed under ``task_id``, the task's own id), at once, in the same task: nothing is left to
    wait for."""
    runs = SimulationRun.objects.filter(pk=run_id).values_list("status", "created")
    row = runs.first()
    if row is not None and row[0] == Status.QUEUED:
        _run_start(run_id)  # this unit starts the run, or another one just did
        row = runs.first()
    if row is None or row[0] != Status.RUNNING:
        logger.info("run %s %s unit %s: skipped (run not running)", run_id, kind, unit)
        return
    payload: bytes | None = None
    try:
        work = _run_work(run_id, row[1])
        if not RunBlock.objects.filter(run_id=run_id, kind=kind, unit=unit).exists():
            payload = BLOCK_KINDS[kind].compute(work.plan, work.inputs, work.units[(kind, unit)])
    except SERVICE_ERRORS:
        raise  # a service is down, the unit is not wrong: the task tries again
    except Exception as exc:
        run_fail(run_id=run_id, error=f"{kind} unit {unit} failed: {type(exc).__name__}: {exc}")
        return
    # kept before the run's row is locked: no Redis round trip while the lock is held
    kept = (
        None
        if payload is None
        else payload_keep(run_id=run_id, kind=kind, unit=unit, payload=payload)
    )
    with transaction.atomic():
        locked = _locked(run_id, "status", "progress", "heartbeat")
        if locked is None or locked.status != Status.RUNNING:
            logger.info("run %s %s unit %s: dropped (run ended)", run_id, kind, unit)
            return
        block_pause_point(run_id)
        if kept is not None:
            RunBlock.objects.bulk_create(
                [RunBlock(run_id=run_id, kind=kind, unit=unit, payload=kept)],
                ignore_conflicts=True,
            )
        done = RunBlock.objects.filter(run_id=run_id).count()
        total = len(work.units)
        locked.progress = max(locked.progress, min(99, math.floor(100 * done / max(1, total))))
        locked.heartbeat = timezone.now()
        locked.save(update_fields=["progress", "heartbeat"])
        complete = done >= total
    logger.info("run %s %s unit %s: stored, %s of %s", run_id, kind, unit, done, total)
    if complete:
        run_merge(run_id=run_id, owner=task_id)


def _units_redo(*, run_id: int, units: list[tuple[str, int]]) -> None:
    """Compute again units whose results were lost (Redis restarted without them): forget their
    rows, release the merge, publish their block tasks (the last to land merges again)."""
    from django.db.models import Q

    with transaction.atomic():
        run = _locked(run_id)
        if run is None or run.status != Status.RUNNING:
            return
        lost = Q(pk__in=[])
        for kind, unit in units:
            lost |= Q(kind=kind, unit=unit)
        run.blocks.filter(lost).delete()
        run.merge_started, run.merge_owner = None, ""
        run.save(update_fields=["merge_started", "merge_owner"])
    logger.warning(
        "run %s: %s block results lost before the merge, computed again", run_id, len(units)
    )
    for kind, unit in units:
        store.publish(store.RUN_BLOCK_TASK, run_id, kind, unit)


MERGE_FIELDS = (
    "status",
    "created",
    "units",
    "normalize_warnings",
    "catalog_warnings",
    "sources",
)
"""What the merge reads of a run's row (not its result fields; its inputs and plan come from
:func:`_run_work`, already in memory when this process computed one of its units)."""


def run_merge(*, run_id: int, owner: str | None = None) -> None:
    """Put a running run's blocks together and finish it (once): the merge task, or the block
    task that landed the last unit. ``owner`` names the claim (the task's id, so that the same
    message delivered again takes its own claim over at once); a call of its own without one."""
    run = SimulationRun.objects.filter(pk=run_id).only(*MERGE_FIELDS).first()
    if run is None or run.status != Status.RUNNING:
        logger.info("run %s: merge skipped (run not running)", run_id)
        return
    units = run.units
    rows = list(run.blocks.values_list("kind", "unit", "payload"))
    stored_units = {(kind, unit) for kind, unit, _payload in rows}
    if any((kind, unit) not in stored_units for kind, unit, _blocks in units):
        logger.info(
            "run %s: merge waits, %s of %s units stored", run_id, len(stored_units), len(units)
        )
        return
    owner = owner or uuid.uuid4().hex
    if not merge_claim(run_id, owner):
        return
    try:
        with merge_heartbeat(run_id, owner):
            _merged(run, rows, owner)
    except SERVICE_ERRORS:
        merge_release(run_id, owner)
        raise  # a service is down, the run is not wrong: the task tries again


def _merged(
    run: SimulationRun, rows: list[tuple[str, int, bytes | memoryview]], owner: str
) -> None:
    """The claimed merge of ``run``: its stored blocks fetched, the result computed, the run
    finished (or failed, or its lost blocks computed again)."""
    run_id, units = run.pk, run.units
    stored = payloads_fetch(run_id=run_id, rows=rows)
    lost = [key for key, payload in stored.items() if payload is None]
    if lost:
        _units_redo(run_id=run_id, units=lost)
        return
    held = {key: payload for key, payload in stored.items() if payload is not None}
    merge_pause_point(run_id)
    try:
        work = _run_work(run_id, run.created)
        payloads = {
            name: [held[(kind, unit)] for kind, unit, _b in units if kind == name]
            for name in BLOCK_KINDS
        }
        runners = {
            spec.engine_keyword: spec.runner(payloads[name])
            for name, spec in BLOCK_KINDS.items()
            if payloads[name]
        }
        plan = work.plan
        result = simulate_normalized(
            work.inputs, plan.gpus, run.normalize_warnings, plan=plan, **runners
        )
        del runners  # the decoded sweep blocks: the bands decode their own
        result["warnings"].extend(run.catalog_warnings)
        result["sources"] = list(run.sources)
        if payloads["deterministic"]:
            parts = json.loads(payloads["deterministic"][0])
            monthly, curves = parts["monthly_breakdown_usd"], parts["cost_curves"]
        else:
            monthly = monthly_breakdown(plan, deterministic_costs(plan))
            curves = cost_curves(result["inputs"], result["gpus"])
        bands = None
        if payloads["sizing"]:
            bands = sizing_bands(plan, payloads["sizing"])
        risk = montecarlo_risk(plan, payloads["montecarlo"])
        json.dumps(result, allow_nan=False)
        json.dumps(curves, allow_nan=False)
        json.dumps(bands, allow_nan=False)
        if risk is not None:
            json.dumps(risk.figures, allow_nan=False)
    except SERVICE_ERRORS:
        raise
    except Exception as exc:
        run_fail(run_id=run_id, error=f"the engine failed: {type(exc).__name__}: {exc}")
        return
    run_finish(
        run_id=run_id,
        result=result,
        monthly_breakdown_usd=monthly,
        curves=curves,
        sizing_bands=bands,
        risk=risk,
        owner=owner,
    )


def run_finish(
    *,
    run_id: int,
    result: dict[str, Any],
    monthly_breakdown_usd: dict[str, Any],
    curves: dict[str, Any] | None = None,
    sizing_bands: list[dict[str, Any]] | None = None,
    risk: RiskFigures | None = None,
    owner: str | None = None,
) -> bool:
    """Store the result of a running run and mark it succeeded; False (nothing changed) when the
    run is no longer running (cancelled, or already finished by a redelivered merge) or, with
    ``owner``, when that merge no longer holds the claim (another took it over).
    ``sizing_bands`` (:func:`costapp.tco.sweeps_bands`) are kept beside the result, never
    in it: the result document's fields are the contract's; so are the ``risk`` figures
    (:class:`~costapp.models.RunRisk`), written in the same transaction."""
    runs = SimulationRun.objects.filter(pk=run_id, status=Status.RUNNING)
    if owner is not None:
        runs = runs.filter(merge_owner=owner)
    with transaction.atomic():
        # one conditional UPDATE (it locks the row): a run cancelled or finished meanwhile is
        # left as it is
        finished = runs.update(
            result=result,
            monthly_breakdown_usd=monthly_breakdown_usd,
            cost_curves=curves,
            sizing_bands=sizing_bands,
            engine_version=str(result.get("engine_version", ENGINE_VERSION)),
            status=Status.SUCCEEDED,
            progress=100,
            finished=timezone.now(),
        )
        if not finished:
            logger.info("run %s: not finished by this merge (ended, or taken over)", run_id)
            return False
        if risk is not None:
            RunRisk.objects.update_or_create(
                run_id=run_id,
                defaults={
                    "figures": risk.figures,
                    "sorted_totals": risk.totals_payload(),
                },
            )
        run = SimulationRun.objects.only("units").get(pk=run_id)
        blocks_drop(run)
    logger.info("run %s succeeded", run_id)
    _run_charts_build(run)
    run_succeeded_send(run_id)
    return True


def _run_charts_build(run: SimulationRun) -> None:
    """Build a just-finished run's charts into the cache (``costapp.runs.chart_cache.run_charts``), so
    that the first view of its page does not wait for them. The run has succeeded whatever
    happens here: a failure is logged, and the page builds the charts again (and shows the
    error)."""
    try:
        run_charts(run=run)
        run_sizing_charts(run=run)
    except Exception:
        logger.exception("run %s: its charts could not be built", run.pk)
