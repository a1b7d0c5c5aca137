"""The run pipeline's broker and block store: the broker check, publishing a task of the
pipeline by its name (nothing imports the task module) and a new run's tasks on its commit
(:func:`units_publish`; on the embedded default, a run the request does not wait for in the
process's background thread), and where block results wait for the merge (Redis with a broker,
the ``RunBlock`` row in-process).
"""

import logging
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from costapp.celery import app as celery_app
from costapp.faults import BROKER_ERRORS
from costapp.models import RunBlock, SimulationRun
from costapp.runs.background import in_background

logger = logging.getLogger(__name__)


class BrokerUnavailable(Exception):
    """The task broker does not answer: no run can be queued."""


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


RUN_EXECUTE_TASK = "costapp.run_execute"
"""The run task: publishes the block tasks a run still lacks
(:func:`~costapp.runs.pipeline.run_execute`)."""
RUN_BLOCK_TASK = "costapp.run_block"
"""A block task: one unit of a run (:func:`~costapp.runs.pipeline.run_block_execute`)."""
RUN_MERGE_TASK = "costapp.run_merge"
"""The merge task, for a restarted run whose units are all stored
(:func:`~costapp.runs.pipeline.run_merge`)."""
RUNS_REQUEUE_STALE_TASK = "costapp.runs_requeue_stale"
"""Beat's task: the runs with no sign of life requeued
(:func:`~costapp.runs.requeue.runs_requeue_stale`)."""


def tasks_in_process() -> bool:
    """Whether tasks run in this process, as they are published (the embedded default)."""
    return bool(celery_app.conf.task_always_eager)


def publish(task_name: str, *args: Any) -> None:
    """Send a task message of the run pipeline, by the task's name, to ``RUN_QUEUE`` (empty: the
    default queue), read now so that a changed setting counts (or, on the embedded default, run
    the task now, in this process: the app registers the tasks at start, and a registered task's
    signature applies through the task itself)."""
    queue = settings.RUN_QUEUE
    options = {"queue": queue} if queue else {}
    celery_app.signature(task_name, args=args, **options).apply_async()


def units_publish(run_id: int, *, off_request: bool = False) -> None:
    """Publish a new run's block tasks, all of them, at once, once the run is committed (the
    first block to start marks the run running, so the run spends no extra hop in a run task
    before its work begins); a run with no units gets its run task, which merges it. A broker
    that refuses a message leaves the run ``failed`` with the broker's error (a message already
    sent finds the run ended) and raises :class:`BrokerUnavailable`.

    ``off_request``: on the embedded default (tasks in this process, and
    ``TASKS_IN_BACKGROUND``), the tasks run in the process's background thread
    (:mod:`costapp.runs.background`) instead of the caller's, so the request that started the run
    does not wait for it; an error there ends the run ``failed`` with it. With a broker it
    changes nothing."""
    if off_request and tasks_in_process() and settings.TASKS_IN_BACKGROUND:
        in_background(partial(_units_run_here, run_id))
        return
    units = SimulationRun.objects.values_list("units", flat=True).get(pk=run_id)
    try:
        if not units:
            publish(RUN_EXECUTE_TASK, run_id)
        for kind, unit, _blocks in units:
            publish(RUN_BLOCK_TASK, run_id, kind, unit)
    except BROKER_ERRORS as exc:
        _run_failed(
            run_id, f"The task queue (Redis) refused the run's tasks: {type(exc).__name__}: {exc}"
        )
        raise BrokerUnavailable(
            "The task queue (Redis) did not take the run, so it was not started; try again later."
        ) from exc


def _units_run_here(run_id: int) -> None:
    """A run's tasks run in this thread, as they are published; an error that escapes them (one
    the pipeline did not end the run with) ends the run ``failed`` with it."""
    try:
        units_publish(run_id)
    except Exception as exc:
        _run_failed(run_id, f"The run's tasks failed in this process: {type(exc).__name__}: {exc}")
        raise


def _run_failed(run_id: int, error: str) -> None:
    """End the run ``failed`` with ``error`` if it is still active, its blocks dropped."""
    ended = SimulationRun.objects.filter(pk=run_id, status__in=SimulationRun.ACTIVE).update(
        status=SimulationRun.Status.FAILED, error=error, finished=timezone.now()
    )
    if ended:
        RunBlock.objects.filter(run_id=run_id).delete()
    logger.warning("run %s failed: %s", run_id, error)


# --- blocks: the units of work a run fans out ----------------------------------------------------


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


def payload_keep(*, run_id: int, kind: str, unit: int, payload: bytes) -> bytes:
    """Keep a block result until the merge; what the RunBlock row itself holds."""
    if not settings.REDIS_URL:
        return payload
    _redis().set(_payload_key(run_id, kind, unit), payload, ex=BLOCK_PAYLOAD_TTL_S)
    return b""


def payloads_waiting_s(*, run_id: int, units: list[tuple[str, int]]) -> list[float | None]:
    """For each unit, how long ago its result was last kept [s] (its remaining lifetime tells),
    None where Redis holds none (or without Redis)."""
    if not settings.REDIS_URL or not units:
        return []
    pipe = _redis().pipeline(transaction=False)
    for kind, unit in units:
        pipe.ttl(_payload_key(run_id, kind, unit))
    return [None if ttl < 0 else float(BLOCK_PAYLOAD_TTL_S - ttl) for ttl in pipe.execute()]


def payloads_touch(*, run_id: int, units: list[tuple[str, int]]) -> None:
    """Start the units' results' lifetime again, as if kept now."""
    pipe = _redis().pipeline(transaction=False)
    for kind, unit in units:
        pipe.expire(_payload_key(run_id, kind, unit), BLOCK_PAYLOAD_TTL_S)
    pipe.execute()


def payloads_fetch(
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


def blocks_drop(run: SimulationRun) -> None:
    """Forget a run's block results: the rows now, and with Redis their payloads once the
    transaction commits (never a Redis round trip while the caller holds the run's row; a
    payload Redis does not drop then expires after ``BLOCK_PAYLOAD_TTL_S``)."""
    run.blocks.all().delete()
    if settings.REDIS_URL:
        keys = [_payload_key(run.pk, kind, unit) for kind, unit, _blocks in run.units]
        if keys:
            transaction.on_commit(lambda: _redis().delete(*keys), robust=True)
