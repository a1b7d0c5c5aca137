"""Celery tasks: thin, idempotent, each takes ids and calls a service.

Every task acknowledges its message only when it has finished (``acks_late``), so a message a
dead worker held is delivered again; the services make a second delivery harmless.
"""

from datetime import timedelta

from celery import shared_task
from django.conf import settings

from costapp import services


@shared_task(name="costapp.run_execute", acks_late=True, ignore_result=True)
def run_execute_task(run_id: int) -> None:
    """Start (or restart) a run: publish the block tasks it still lacks."""
    services.run_execute(run_id=run_id)


@shared_task(name="costapp.run_block", acks_late=True, ignore_result=True)
def run_block_task(run_id: int, kind: str, unit: int) -> None:
    """Compute and store one unit of blocks of a run."""
    services.run_block_execute(run_id=run_id, kind=kind, unit=unit)


@shared_task(name="costapp.run_merge", acks_late=True, ignore_result=True)
def run_merge_task(run_id: int) -> None:
    """Merge a run's stored blocks into its result."""
    services.run_merge(run_id=run_id)


@shared_task(name="costapp.runs_requeue_stale", acks_late=True, ignore_result=True)
def runs_requeue_stale_task() -> None:
    """Beat: requeue the runs that show no sign of life (their worker died)."""
    services.runs_requeue_stale(stale_after=timedelta(seconds=settings.RUN_STALE_AFTER_S))
