"""A price refresh that applied prices starts the budget watch's repricing once its transaction
commits (the task by its name; on the embedded default it runs in this process)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_save

from costapp.celery import app as celery_app
from hardware.models import RefreshRun, RefreshStatus

WATCH_REPRICE_TASK = "costapp.watch_reprice"
APPLIED = (RefreshStatus.APPLIED, RefreshStatus.APPROVED)


def refresh_finished(sender: Any, instance: RefreshRun, **kwargs: Any) -> None:
    """On a refresh run saved as applied or approved: reprice every watch after the commit."""
    if instance.status not in APPLIED or instance.finished_at is None:
        return
    refresh_id = instance.pk
    transaction.on_commit(
        lambda: celery_app.signature(WATCH_REPRICE_TASK, args=(refresh_id,)).apply_async()
    )


def signals_connect() -> None:
    post_save.connect(refresh_finished, sender=RefreshRun, dispatch_uid="watch-refresh-finished")
