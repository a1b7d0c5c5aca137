"""Celery tasks of the run pipeline: thin, idempotent, each takes ids and calls a service.

Nothing imports this module: the pipeline publishes its tasks by name (:mod:`costapp.runs.store`),
and the Celery app registers them (``include`` in :mod:`costapp.celery`, and
:class:`costapp.apps.CostappConfig` for the web processes). Every task acknowledges its message
only when it has finished (``acks_late``), so a message a dead worker held is delivered again;
the services make a second delivery harmless.

A database or broker error (``costapp.faults.SERVICE_ERRORS``: the service is down, not the run
wrong) is retried: each wait is drawn at random up to a bound that doubles from 1 s to
:data:`RETRY_BACKOFF_MAX_S` (so the block tasks of a run do not all come back at once), for
:data:`RETRY_MAX` tries after the first (a few minutes in all): an outage that short costs a run
time, never its result. The pipeline lets those errors through instead of failing the run.
"""

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings

from costapp.faults import SERVICE_ERRORS, lock_not_taken
from costapp.runs import pipeline, requeue, store

RETRY_MAX = 12
"""Tries after the first when the database or the broker is down."""
RETRY_BACKOFF_MAX_S = 60
"""The longest wait between two tries [s] (1, 2, 4, … s before that, with jitter)."""

RETRIED: dict[str, Any] = {
    "autoretry_for": SERVICE_ERRORS,
    "retry_backoff": 1,
    "retry_backoff_max": RETRY_BACKOFF_MAX_S,
    "retry_jitter": True,
    "max_retries": RETRY_MAX,
}
"""The retry options of every task of the pipeline."""

LOCK_RETRY_S = (0.5, 2.0)
"""The wait before a task tries again a lock it could not take, drawn in this range [s]."""
LOCK_RETRY_MAX = 40
"""Tries after the first of a task that meets locks it cannot take (each spends
``WORKER_LOCK_TIMEOUT_S`` waiting: minutes in all, past the frozen session's end)."""


def _locks_retried(task: Any, step: Callable[[], None]) -> None:
    """Run ``step``; a lock not taken in time is tried again soon (:data:`LOCK_RETRY_S`)."""
    try:
        step()
    except SERVICE_ERRORS as exc:
        if not lock_not_taken(exc):
            raise
        wait = random.uniform(*LOCK_RETRY_S)  # noqa: S311 (spreading retries, not a secret)
        raise task.retry(exc=exc, countdown=wait, max_retries=LOCK_RETRY_MAX) from exc


@shared_task(name=store.RUN_EXECUTE_TASK, bind=True, acks_late=True, ignore_result=True, **RETRIED)
def run_execute_task(self: Any, run_id: int) -> None:
    """Start (or restart) a run: publish the block tasks it still lacks."""
    _locks_retried(self, lambda: pipeline.run_execute(run_id=run_id))


@shared_task(name=store.RUN_BLOCK_TASK, bind=True, acks_late=True, ignore_result=True, **RETRIED)
def run_block_task(self: Any, run_id: int, kind: str, unit: int) -> None:
    """Compute and store one unit of blocks of a run (and merge it when it lands the last one:
    the claim is the task's id, so the same message delivered again takes it over at once)."""
    _locks_retried(
        self,
        lambda: pipeline.run_block_execute(
            run_id=run_id, kind=kind, unit=unit, task_id=self.request.id
        ),
    )


@shared_task(name=store.RUN_MERGE_TASK, bind=True, acks_late=True, ignore_result=True, **RETRIED)
def run_merge_task(self: Any, run_id: int) -> None:
    """Merge a run's stored blocks into its result (the claim under the task's id)."""
    _locks_retried(self, lambda: pipeline.run_merge(run_id=run_id, owner=self.request.id))


@shared_task(name=store.RUNS_REQUEUE_STALE_TASK, acks_late=True, ignore_result=True)
def runs_requeue_stale_task() -> None:
    """Beat: requeue the runs that show no sign of life (their worker died), and the units kept
    but never recorded (their worker froze); beat sends it again every ``RUN_STALE_CHECK_S``, so
    a failure is not retried."""
    requeue.runs_requeue_stale(stale_after=timedelta(seconds=settings.RUN_STALE_AFTER_S))
    requeue.units_requeue_unrecorded()
