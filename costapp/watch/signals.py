"""A price refresh that applied prices starts the budget watch's repricing once its transaction
commits, and a run that succeeded settles at once the events waiting on it (beat's pass would
within a minute); the tasks by their names (on the embedded default they run in this process)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_save

from costapp.celery import app as celery_app
from costapp.models import WatchEvent
from costapp.runs.followups import run_succeeded
from hardware.models import RefreshRun, RefreshStatus

WATCH_REPRICE_TASK = "costapp.watch_reprice"
WATCH_SETTLE_TASK = "costapp.watch_settle"
APPLIED = (RefreshStatus.APPLIED, RefreshStatus.APPROVED)


def refresh_finished(sender: Any, instance: RefreshRun, **kwargs: Any) -> None:
    """On a refresh run saved as applied or approved: reprice every watch after the commit."""
    if instance.status not in APPLIED or instance.finished_at is None:
        return
    refresh_id = instance.pk
    transaction.on_commit(
        lambda: celery_app.signature(WATCH_REPRICE_TASK, args=(refresh_id,)).apply_async()
    )


def run_finished(sender: Any, run_id: int, **kwargs: Any) -> None:
    """On a run that succeeded: settle the watch events priced by it, if any."""
    waiting = WatchEvent.objects.filter(new_run_id=run_id, status=WatchEvent.Status.PRICING)
    if waiting.exists():
        celery_app.signature(WATCH_SETTLE_TASK).apply_async()


def signals_connect() -> None:
    post_save.connect(refresh_finished, sender=RefreshRun, dispatch_uid="watch-refresh-finished")
    run_succeeded.connect(run_finished, dispatch_uid="watch-run-succeeded")
