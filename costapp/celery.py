"""The Celery app.

With ``REDIS_URL`` set, tasks go to Redis and real workers run them; with nothing set, tasks run
in-process (``task_always_eager``) so the embedded default needs no server.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "costapp.settings")

app = Celery("costapp", include=["costapp.runs.tasks", "costapp.watch.tasks"])
"""The tasks of the run pipeline live in ``costapp.runs.tasks`` (imported by nothing, published
by name): ``include`` has a worker register them; the apps' ``<app>.tasks`` modules
(``hardware.tasks``) are found by ``autodiscover_tasks``."""
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def db_connections_tidy(sender: Any = None, **_kwargs: Any) -> None:
    """Around each task on a worker, close the database connections that are too old
    (``CONN_MAX_AGE``) or broken, as Django does around a request, and keep the others for the
    next task: a new PostgreSQL connection costs milliseconds, more than a small block task's
    bookkeeping. Celery's own handler would close every connection after every task; the
    setting ``CELERY_DB_REUSE_MAX`` keeps it from doing so. An in-process (eager) task runs
    inside its caller's connection and transaction: left alone."""
    if sender is not None and getattr(sender.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()
