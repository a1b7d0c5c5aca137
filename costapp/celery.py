"""The Celery app.

With ``REDIS_URL`` set, tasks go to Redis and real workers run them; with nothing set, tasks run
in-process (``task_always_eager``) so the embedded default needs no server.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import celeryd_init, task_postrun, task_prerun
from django.db.backends.signals import connection_created
from django.dispatch import receiver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "costapp.settings")

app = Celery("costapp", include=["costapp.runs.tasks", "costapp.ask.tasks", "costapp.watch.tasks"])
"""The tasks of the run pipeline live in ``costapp.runs.tasks``, Ask's step in
``costapp.ask.tasks``, the budget watch's in ``costapp.watch.tasks`` (imported by nothing,
published by name): ``include`` has a worker register them; the apps' ``<app>.tasks`` modules
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


WORKER = {"process": False}
"""Whether this process is a Celery worker (set when the worker starts, inherited by its pool's
processes): only a worker's database sessions carry the limits of ``worker_session_limits``."""


@celeryd_init.connect
def worker_mark(**_kwargs: Any) -> None:
    WORKER["process"] = True


@receiver(connection_created)
def worker_session_limits(sender: Any = None, connection: Any = None, **_kwargs: Any) -> None:
    """A worker's PostgreSQL session waits ``WORKER_LOCK_TIMEOUT_S`` at most for a lock (then
    ``LockNotAvailable``, a ``django.db.OperationalError``: a service fault its task tries again)
    and is ended by the server when it leaves a transaction open
    ``WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S`` (a frozen worker's locks released), so no worker
    waits on another without limit."""
    if not WORKER["process"] or connection is None or connection.vendor != "postgresql":
        return
    from django.conf import settings

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('lock_timeout', %s, false), "
            "set_config('idle_in_transaction_session_timeout', %s, false)",
            [
                f"{round(settings.WORKER_LOCK_TIMEOUT_S * 1000)}ms",
                f"{round(settings.WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S * 1000)}ms",
            ],
        )
