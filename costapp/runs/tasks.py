"""Celery tasks of the run pipeline: thin, idempotent, each takes ids and calls a service.

Nothing imports this module: the pipeline publishes its tasks by name (:mod:`costapp.runs.store`),
and the Celery app registers them (``include`` in :mod:`costapp.celery`, and
:class:`costapp.apps.CostappConfig` for the web processes). Every task acknowledges its message
only when it has finished (``acks_late``), so a message a dead worker held is delivered again;
the services make a second delivery harmless.
"""

from datetime import timedelta

from celery import shared_task
from django.conf import settings

from costapp.runs import pipeline, store


@shared_task(name=store.RUN_EXECUTE_TASK, acks_late=True, ignore_result=True)
def run_execute_task(run_id: int) -> None:
    """Start (or restart) a run: publish the block tasks it still lacks."""
    pipeline.run_execute(run_id=run_id)


@shared_task(name=store.RUN_BLOCK_TASK, acks_late=True, ignore_result=True)
def run_block_task(run_id: int, kind: str, unit: int) -> None:
    """Compute and store one unit of blocks of a run."""
    pipeline.run_block_execute(run_id=run_id, kind=kind, unit=unit)


@shared_task(name=store.RUN_MERGE_TASK, acks_late=True, ignore_result=True)
def run_merge_task(run_id: int) -> None:
    """Merge a run's stored blocks into its result."""
    pipeline.run_merge(run_id=run_id)


@shared_task(name=store.RUNS_REQUEUE_STALE_TASK, acks_late=True, ignore_result=True)
def runs_requeue_stale_task() -> None:
    """Beat: requeue the runs that show no sign of life (their worker died)."""
    pipeline.runs_requeue_stale(stale_after=timedelta(seconds=settings.RUN_STALE_AFTER_S))
