"""Writes and orchestration for the cost side.

Services are keyword-only; they call the engine (``costapp.tco``) with plain numbers that the
selectors looked up, and hand work to Celery tasks where it can be spread across workers.

The run pipeline (docs: architecture.md, "How work travels"); no task ever waits on another:

- :func:`run_create` freezes the inputs (normalised document, catalog prices resolved), stores a
  ``queued`` run and publishes one block task per unit of work (:data:`BLOCK_KINDS`: the figures
  on the document's own values, the Monte Carlo blocks, the sizing blocks);
- :func:`run_execute` (the run task: a requeued run, or one with no units) marks the run
  ``running`` and publishes the block tasks of the units not stored yet;
- :func:`run_block_execute` (a block task) marks a queued run ``running`` when it is the first to
  start, computes its unit, keeps the results (compact numpy
  bytes, in Redis, or in-process on the row) and records a :class:`~costapp.models.RunBlock` (one
  row per unit: a redelivered task adds nothing), writes the progress; the task that lands the
  last unit goes on to the merge itself (no further message, no wait);
- :func:`run_merge` puts the units together, exactly, and :func:`run_finish` stores the result.

A worker that dies mid-run leaves its messages unacknowledged: the broker hands them out again
after its visibility timeout, and :func:`runs_requeue_stale` (beat) re-publishes the missing work
of runs that show no sign of life. Every step checks the run's state under a row lock first, so a
message delivered twice never doubles or corrupts a run.
"""

import copy
import hashlib
import json
import logging
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

from costapp import sizing_summary
from costapp.models import RunBlock, Scenario, SimulationRun
from costapp.selectors import (
    GPU_TABLE_WARNING,
    catalog_reference_warnings,
    engine_gpu_figures,
    run_charts,
    run_sizing_charts,
    scenario_catalog_refs,
)
from costapp.tco import (
    BLOCK_PATHS,
    CATEGORIES,
    CUMULATIVE_PATHS,
    ENGINE_VERSION,
    FieldError,
    PathCosts,
    Plan,
    ScenarioError,
    block_count,
    block_results_from_payload,
    block_results_to_payload,
    blocks_compute,
    blocks_merge,
    blocks_reduce,
    candidate_sizes,
    cost_curves,
    deterministic_costs,
    normalize,
    option_results,
    plan_build,
    simulate,
    simulate_normalized,
    summary_fields,
    sweep_block_results_from_payload,
    sweep_block_results_to_payload,
    sweep_blocks_compute,
    sweeps_bands,
    sweeps_merge,
)

logger = logging.getLogger(__name__)

Status = SimulationRun.Status

SIMULATE_MAX_PATHS = 1_000
"""Paths ``POST /api/v1/simulate/`` computes at once; more need a run on the workers."""
SIMULATE_MAX_SIZING_WORK = 1_000_000
"""Sizing candidates × paths ``POST /api/v1/simulate/`` computes at once."""


class BrokerUnavailable(Exception):
    """The task broker does not answer: no run can be queued."""


def scenario_simulate(*, document: Any, gpu_table_fallback: bool = False) -> dict[str, Any]:
    """The result document of a scenario document, with catalog references resolved and
    warnings about the quotes it relies on (demonstration data, drafts, expired ones).

    Computed in this process. With ``gpu_table_fallback`` (the command line's choice, never a web
    request), a catalog without GPUs yields to the GPU table shipped with the project, and the
    result's warnings say so. Raises ``ScenarioError`` for an invalid document.
    """
    gpus, source = engine_gpu_figures(table_fallback=gpu_table_fallback)
    catalog = scenario_catalog_refs(document)
    result = simulate(document, gpus, catalog)
    result["warnings"].extend(
        catalog_reference_warnings(document=document, refs=catalog, today=timezone.localdate())
    )
    if source == "table":
        result["warnings"].append(GPU_TABLE_WARNING)
    return result


# --- scenarios ----------------------------------------------------------------------------------


def scenario_document_check(*, document: Any) -> None:
    """Raise ``ScenarioError`` (paths within the document) unless ``document`` is a valid scenario
    with today's catalog: field checks and the checks that need the demand."""
    gpus, _source = engine_gpu_figures()
    normalized = normalize(document, gpus, scenario_catalog_refs(document))
    plan_build(normalized.document, gpus)


def scenario_create(
    *, owner: Any, name: str, document: Any, description: str = "", shared: bool = False
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
    if sizing_summary.own_size(result, sweep_index) == best:
        raise ValueError(f'"{option}" is at the best size, {best} {SIZE_UNITS[field]}, already')
    target[field] = best
    suffix = f" (at best size: {best:,} {SIZE_UNITS[field]})"
    limit = Scenario._meta.get_field("name").max_length or 200
    base = scenario.name
    if len(base) + len(suffix) > limit:  # a long name is cut short, the size kept
        base = base[: limit - len(suffix) - 1] + "…"
    name = base + suffix
    description = (
        f'A copy of "{scenario.name}" with "{option}" at {field} = {best}: the best size found '
        f"by sizing sweep {sweep_index + 1} ({sweep['objective']}) of run {run.pk}"
        + ("." if as_written else ", from the run's frozen inputs (the scenario changed since).")
    )
    return scenario_create(
        owner=owner, name=name, document=document, description=description, shared=False
    )


# --- the broker ---------------------------------------------------------------------------------


_REDIS_CLIENTS: dict[str, Any] = {}
"""Redis clients by use and URL, one per process (see :func:`_redis`)."""


def broker_check() -> None:
    """Raise :class:`BrokerUnavailable` unless the broker answers (in-process tasks always do)."""
    if not settings.REDIS_URL:
        return
    import redis

    key = f"check {settings.REDIS_URL}"
    client = _REDIS_CLIENTS.get(key)
    if client is None:  # one per process: a new client would connect and introduce itself
        client = _REDIS_CLIENTS[key] = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2
        )
    try:
        client.ping()
    except redis.RedisError as exc:
        raise BrokerUnavailable(
            "The task queue (Redis) does not answer, so no run can be started now; "
            "saved scenarios and results can still be read. Try again later."
        ) from exc


def _publish(task: Any, *args: Any) -> None:
    """Send a task message of the run pipeline to ``RUN_QUEUE`` (empty: the default queue), read
    now so that a changed setting counts (or, on the embedded default, run the task now, in this
    process)."""
    queue = settings.RUN_QUEUE
    task.apply_async(args=args, **({"queue": queue} if queue else {}))


# --- blocks: the units of work a run fans out ----------------------------------------------------


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
    results = blocks_compute(plan, inputs["simulation"], blocks)
    paths = int(inputs["simulation"].get("paths") or 0)
    results = blocks_reduce(results, paths, overwrite_input=True)
    return block_results_to_payload(results)


def _montecarlo_runner(payloads: Sequence[bytes]) -> Callable[..., Any]:
    results = [block_results_from_payload(payload) for payload in payloads]

    def run(plan: Plan, simulation: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        return summary_fields(plan, blocks_merge(results))

    return run


SIZING_CANDIDATES_PER_BLOCK = 20
"""How many blocks of paths a sizing task takes: ``RUN_BLOCKS_PER_TASK`` × this / the sweeps'
candidates in all (at least one). Measured on ``bench/size-the-fleet-sweep.json`` (one thread):
one block of 1 000 paths × 64 candidates × 36 months costs 30-40 ms of CPU, so a task takes 3
blocks (about 0.1 s), enough to make the fixed cost of a task (the run's row, Redis, the payload)
small, and still several tasks to share between workers."""


def _sizing_candidates(inputs: Mapping[str, Any]) -> int:
    return sum(
        len(candidate_sizes(int(s["min"]), int(s["max"]), int(s["step"])))
        for s in inputs.get("sizing") or []
    )


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


def _sizing_bands(plan: Plan, payloads: Sequence[bytes]) -> list[dict[str, Any]] | None:
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
            "monthly_breakdown_usd": _monthly_breakdown(plan, costs),
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


# --- where block results wait for the merge ----------------------------------------------------
#
# With a broker (Redis), block results travel through Redis: a few MB per run for moments, much
# faster to write and read than database rows; the RunBlock row (empty payload) is the record
# that the unit is done. In-process (no Redis), the payload is kept on the row itself.

BLOCK_PAYLOAD_TTL_S = 86_400
"""How long a block result waits in Redis for its merge [s]."""


def _redis() -> Any:
    """The client of ``REDIS_URL``, one per process (and URL): its pool keeps the connections, so
    a step does not connect and introduce itself to Redis again (milliseconds every time)."""
    import redis

    client = _REDIS_CLIENTS.get(settings.REDIS_URL)
    if client is None:
        client = _REDIS_CLIENTS[settings.REDIS_URL] = redis.Redis.from_url(settings.REDIS_URL)
    return client


def _payload_key(run_id: int, kind: str, unit: int) -> str:
    return f"costapp:run:{run_id}:{kind}:{unit}"


def _payload_keep(*, run_id: int, kind: str, unit: int, payload: bytes) -> bytes:
    """Keep a block result until the merge; what the RunBlock row itself holds."""
    if not settings.REDIS_URL:
        return payload
    _redis().set(_payload_key(run_id, kind, unit), payload, ex=BLOCK_PAYLOAD_TTL_S)
    return b""


def _payloads_fetch(
    *, run_id: int, rows: list[tuple[str, int, bytes | memoryview]]
) -> dict[tuple[str, int], bytes | None]:
    """The block results of a run's rows; ``None`` where Redis no longer holds one."""
    kept: dict[tuple[str, int], bytes | None] = {
        (kind, unit): bytes(payload) for kind, unit, payload in rows
    }
    elsewhere = [key for key, payload in kept.items() if not payload]
    if elsewhere:
        values = _redis().mget([_payload_key(run_id, kind, unit) for kind, unit in elsewhere])
        kept.update(zip(elsewhere, values, strict=True))
    return kept


def _blocks_drop(run: SimulationRun) -> None:
    """Forget a run's block results (rows and, with Redis, their payloads)."""
    if settings.REDIS_URL:
        keys = [_payload_key(run.pk, kind, unit) for kind, unit, _blocks in run.units]
        if keys:
            _redis().delete(*keys)
    run.blocks.all().delete()


# --- runs ---------------------------------------------------------------------------------------


def document_sha256(document: Any) -> str:
    """A hash of a scenario document's content (key order kept)."""
    return hashlib.sha256(json.dumps(document, allow_nan=False).encode("utf-8")).hexdigest()


def _with_simulation(document: Any, *, seed: int | None, paths: int | None) -> Any:
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
    inputs: dict[str, Any]
    gpus: dict[str, Any]
    normalize_warnings: list[str]
    catalog_warnings: list[str]
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
            copied_from=last,
        )
    gpus, _source = engine_gpu_figures()
    document = _with_simulation(scenario.document, seed=seed, paths=paths)
    refs = scenario_catalog_refs(document)
    normalized = normalize(document, gpus, refs)
    plan = plan_build(normalized.document, gpus)
    return _Frozen(
        inputs=normalized.document,
        gpus=plan.gpus,
        normalize_warnings=list(normalized.warnings),
        catalog_warnings=catalog_reference_warnings(
            document=document, refs=refs, today=timezone.localdate()
        ),
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
) -> SimulationRun:
    """Queue a run of ``scenario`` and return it.

    ``seed`` and ``paths`` replace the simulation's own; ``reprice`` resolves catalog references
    at today's prices instead of copying the last run's frozen inputs (which are copied only while
    the scenario's document is the one they were frozen from). Raises :class:`BrokerUnavailable`
    (nothing stored) when the broker does not answer, ``ScenarioError`` (paths within the
    document; nothing stored) for an invalid document. Any other engine failure while freezing the
    inputs stores the run ``failed`` with the message. Call it outside a transaction: the task is
    published as soon as the run is stored.
    """
    broker_check()
    try:
        frozen = _inputs_freeze(scenario=scenario, seed=seed, paths=paths, reprice=reprice)
    except ScenarioError:
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
    run = SimulationRun.objects.create(
        scenario=scenario,
        seed=run_seed,
        paths=run_paths,
        document_sha256=document_sha256(scenario.document),
        inputs=frozen.inputs,
        gpus=frozen.gpus,
        normalize_warnings=frozen.normalize_warnings,
        catalog_warnings=frozen.catalog_warnings,
        inputs_copied_from=frozen.copied_from,
        engine_version=ENGINE_VERSION,
        units=run_units(inputs=frozen.inputs),
    )
    try:
        _units_publish(run)
    except KombuOperationalError as exc:
        run.delete()
        raise BrokerUnavailable(
            "The task queue (Redis) did not take the run, so it was not started; try again later."
        ) from exc
    run.refresh_from_db()
    return run


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
        _blocks_drop(run)
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
        _blocks_drop(locked)
    run.refresh_from_db()
    logger.info("run %s cancelled", run.pk)
    return True


def _units_publish(run: SimulationRun) -> None:
    """Publish a new run's block tasks, all of them, at once: the first to start marks the run
    running (:func:`_run_start`), so the run spends no extra hop in a run task before its work
    begins. A run with no units gets its run task, which merges it."""
    from costapp.tasks import run_block_task, run_execute_task

    if not run.units:
        _publish(run_execute_task, run.pk)
        return
    for kind, unit, _blocks in run.units:
        _publish(run_block_task, run.pk, kind, unit)


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
    from costapp.tasks import run_block_task, run_merge_task

    if not missing:
        _publish(run_merge_task, run_id)
        return
    for kind, unit in missing:
        _publish(run_block_task, run_id, kind, unit)


@dataclass(frozen=True)
class _RunWork:
    """What a worker process needs of a run to compute its units: read and planned once per
    process, not once per unit (a run's inputs never change once it is created)."""

    inputs: Mapping[str, Any]
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


def run_block_execute(*, run_id: int, kind: str, unit: int) -> None:
    """A block task: compute one unit of a running run (unless already stored), store it, write
    the progress; the task that lands the last unit merges the run (:func:`run_merge`), at once,
    in the same task: nothing is left to wait for."""
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
    except Exception as exc:
        run_fail(run_id=run_id, error=f"{kind} unit {unit} failed: {type(exc).__name__}: {exc}")
        return
    with transaction.atomic():
        locked = _locked(run_id, "status", "progress", "heartbeat")
        if locked is None or locked.status != Status.RUNNING:
            logger.info("run %s %s unit %s: dropped (run ended)", run_id, kind, unit)
            return
        if payload is not None:
            kept = _payload_keep(run_id=run_id, kind=kind, unit=unit, payload=payload)
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
        run_merge(run_id=run_id)


def _monthly_breakdown(plan: Plan, costs: PathCosts) -> dict[str, dict[str, list[float]]]:
    """Per option and category, the monthly cost of the one-path costing ``costs`` [USD]."""
    assert costs.breakdown_usd is not None
    return {
        option.name: {
            category: costs.breakdown_usd[o, c, 0].tolist() for c, category in enumerate(CATEGORIES)
        }
        for o, option in enumerate(plan.options)
    }


def _merge_claim(run_id: int) -> bool:
    """Claim a running run's merge: False when another merge started less than a task's time
    limit ago (it is under way; a dead merger's message comes back after the visibility timeout,
    later than that, and may then claim it). One conditional UPDATE: the database takes the row
    lock for that statement, so two claims never both succeed."""
    from django.db.models import Q

    now = timezone.now()
    recent = now - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    claimed = (
        SimulationRun.objects.filter(pk=run_id, status=Status.RUNNING)
        .filter(Q(merge_started=None) | Q(merge_started__lte=recent))
        .update(merge_started=now, heartbeat=now)
    )
    if not claimed:
        logger.info("run %s: merge skipped (run not running, or a merge is under way)", run_id)
    return bool(claimed)


def _units_redo(*, run_id: int, units: list[tuple[str, int]]) -> None:
    """Compute again units whose results were lost (Redis restarted without them): forget their
    rows, release the merge, publish their block tasks (the last to land merges again)."""
    from django.db.models import Q

    from costapp.tasks import run_block_task

    with transaction.atomic():
        run = _locked(run_id)
        if run is None or run.status != Status.RUNNING:
            return
        lost = Q(pk__in=[])
        for kind, unit in units:
            lost |= Q(kind=kind, unit=unit)
        run.blocks.filter(lost).delete()
        run.merge_started = None
        run.save(update_fields=["merge_started"])
    logger.warning(
        "run %s: %s block results lost before the merge, computed again", run_id, len(units)
    )
    for kind, unit in units:
        _publish(run_block_task, run_id, kind, unit)


MERGE_FIELDS = ("status", "created", "units", "normalize_warnings", "catalog_warnings")
"""What the merge reads of a run's row (not its result fields; its inputs and plan come from
:func:`_run_work`, already in memory when this process computed one of its units)."""


def run_merge(*, run_id: int) -> None:
    """Put a running run's blocks together and finish it (once): the merge task, or the block
    task that landed the last unit."""
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
    if not _merge_claim(run_id):
        return
    stored = _payloads_fetch(run_id=run_id, rows=rows)
    lost = [key for key, payload in stored.items() if payload is None]
    if lost:
        _units_redo(run_id=run_id, units=lost)
        return
    held = {key: payload for key, payload in stored.items() if payload is not None}
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
        if payloads["deterministic"]:
            parts = json.loads(payloads["deterministic"][0])
            monthly, curves = parts["monthly_breakdown_usd"], parts["cost_curves"]
        else:
            monthly = _monthly_breakdown(plan, deterministic_costs(plan))
            curves = cost_curves(result["inputs"], result["gpus"])
        bands = None
        if payloads["sizing"]:
            bands = _sizing_bands(plan, payloads["sizing"])
        json.dumps(result, allow_nan=False)
        json.dumps(curves, allow_nan=False)
        json.dumps(bands, allow_nan=False)
    except Exception as exc:
        run_fail(run_id=run_id, error=f"the engine failed: {type(exc).__name__}: {exc}")
        return
    run_finish(
        run_id=run_id,
        result=result,
        monthly_breakdown_usd=monthly,
        curves=curves,
        sizing_bands=bands,
    )


def run_finish(
    *,
    run_id: int,
    result: dict[str, Any],
    monthly_breakdown_usd: dict[str, Any],
    curves: dict[str, Any] | None = None,
    sizing_bands: list[dict[str, Any]] | None = None,
) -> bool:
    """Store the result of a running run and mark it succeeded; False (nothing changed) when the
    run is no longer running (cancelled, or already finished by a redelivered merge).
    ``sizing_bands`` (:func:`costapp.tco.sweeps_bands`) are kept beside the result, never
    in it: the result document's fields are the contract's."""
    with transaction.atomic():
        # one conditional UPDATE (it locks the row): a run cancelled or finished meanwhile is
        # left as it is
        finished = SimulationRun.objects.filter(pk=run_id, status=Status.RUNNING).update(
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
            return False
        run = SimulationRun.objects.only("units").get(pk=run_id)
        _blocks_drop(run)
    logger.info("run %s succeeded", run_id)
    _run_charts_build(run)
    return True


def _run_charts_build(run: SimulationRun) -> None:
    """Build a just-finished run's charts into the cache (``costapp.selectors.run_charts``), so
    that the first view of its page does not wait for them. The run has succeeded whatever
    happens here: a failure is logged, and the page builds the charts again (and shows the
    error)."""
    try:
        run_charts(run=run)
        run_sizing_charts(run=run)
    except Exception:
        logger.exception("run %s: its charts could not be built", run.pk)


def runs_requeue_stale(*, stale_after: timedelta) -> list[int]:
    """Re-publish the run task of every queued or running run with no sign of life (started, a
    block landing) for ``stale_after``: its worker died, or its messages were lost. The run task
    publishes only the work not yet stored, and every step drops what is already done, so a run
    that can still finish is never harmed; nothing is marked failed here. The ids requeued."""
    cutoff = timezone.now() - stale_after
    requeued: list[int] = []
    from django.db.models import Q

    from costapp.tasks import run_execute_task

    candidates = SimulationRun.objects.filter(status__in=SimulationRun.ACTIVE).filter(
        Q(heartbeat__lt=cutoff) | Q(heartbeat=None, created__lt=cutoff)
    )
    for run_id in candidates.values_list("pk", flat=True):
        with transaction.atomic():
            run = _locked(run_id)
            if run is None or run.status not in SimulationRun.ACTIVE:
                continue
            run.heartbeat = timezone.now()
            run.save(update_fields=["heartbeat"])
        logger.warning("run %s shows no sign of life: requeued", run_id)
        _publish(run_execute_task, run_id)
        requeued.append(run_id)
    return requeued


def run_monthly_rows(*, run: SimulationRun) -> list[list[Any]]:
    """The rows of a succeeded run's ``monthly.csv`` (docs/api.md): per option and month 0 … H,
    the categories, ``total_usd`` and ``cumulative_usd`` [USD]."""
    assert run.result is not None and run.monthly_breakdown_usd is not None
    rows: list[list[Any]] = []
    for option in run.result["options"]:
        categories = run.monthly_breakdown_usd[option["name"]]
        for month, (total, cumulative) in enumerate(
            zip(option["monthly_usd"], option["cumulative_usd"], strict=True)
        ):
            rows.append(
                [option["name"], month]
                + [categories[name][month] for name in CATEGORIES]
                + [total, cumulative]
            )
    return rows


MONTHLY_CSV_COLUMNS = ["option", "month", *CATEGORIES, "total_usd", "cumulative_usd"]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _at_once_problems(document: Any) -> list[FieldError]:
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
            low, high = _number(sweep.get("min")), _number(sweep.get("max"))
            step = _number(sweep.get("step", 1))
            if low is None or high is None or step is None or step < 1 or high < low:
                continue
            work += (math.floor((high - low) / step) + 1) * max(paths or 0.0, 1.0)
        if work > SIMULATE_MAX_SIZING_WORK:
            problems.append(
                FieldError(
                    "sizing",
                    f"at most {SIMULATE_MAX_SIZING_WORK:,} candidate-paths here, got "
                    f"{work:,.0f}; save the scenario and start a run for more",
                )
            )
    return problems


def simulate_at_once(*, document: Any) -> dict[str, Any]:
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
