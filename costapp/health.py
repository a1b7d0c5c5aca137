"""Health of the services the app depends on (no secrets in the answer): the database, the
broker, and the workers of the run queue (docs/api.md, "Basics": 200 when all three answer, 503
with the same body saying which is down otherwise)."""

import threading
import time
from typing import Any

from django.conf import settings
from django.db import connection

WORKERS_TIMEOUT_S = 1.0
"""How long the workers are given to answer [s]."""
WORKERS_CACHE_S = 5.0
"""How long an answer about the workers is kept (per process) before they are asked again [s]."""

_workers_seen: dict[str, tuple[float, dict[str, Any]]] = {}
_workers_lock = threading.Lock()


def _database() -> dict[str, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure means "down"; the class name says which
        return {"status": "down", "vendor": connection.vendor, "error": type(exc).__name__}
    return {"status": "ok", "vendor": connection.vendor}


def _broker() -> dict[str, str]:
    if not settings.REDIS_URL:
        return {"status": "ok", "kind": "in-process"}
    import redis

    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2
        )
        client.ping()
    except Exception as exc:
        return {"status": "down", "kind": "redis", "error": type(exc).__name__}
    return {"status": "ok", "kind": "redis"}


def run_queue() -> str:
    """The queue of the run pipeline's tasks (``RUN_QUEUE``, or Celery's default queue)."""
    from celery import current_app

    return settings.RUN_QUEUE or current_app.conf.task_default_queue


def _workers_ask(queue: str) -> dict[str, Any]:
    """Ask every worker which queues it consumes (waiting :data:`WORKERS_TIMEOUT_S`)."""
    from celery import current_app

    try:
        # a connection of its own each time: one kept from before a broker restart would fail
        # (or wait on its reconnection) after the broker answers again
        with current_app.connection_for_write() as broker:
            inspect = current_app.control.inspect(timeout=WORKERS_TIMEOUT_S, connection=broker)
            replies = inspect.active_queues() or {}
    except Exception as exc:  # the broker failed between its check and this question
        return {"status": "down", "queue": queue, "workers": 0, "error": type(exc).__name__}
    count = sum(
        1
        for queues in replies.values()
        if any(isinstance(q, dict) and q.get("name") == queue for q in queues or [])
    )
    if not count:
        return {
            "status": "down",
            "queue": queue,
            "workers": 0,
            "error": "no worker consumes the run queue",
        }
    return {"status": "ok", "queue": queue, "workers": count}


def _workers(broker: dict[str, str]) -> dict[str, Any]:
    """The workers of the run queue: how many answered, kept :data:`WORKERS_CACHE_S`."""
    if not settings.REDIS_URL:
        return {"status": "ok", "kind": "in-process"}
    queue = run_queue()
    key = f"{settings.REDIS_URL} {queue}"
    if broker["status"] != "ok":  # what the workers said before is forgotten: they are
        # cut off too, and answer again only once they have reconnected
        with _workers_lock:
            _workers_seen.pop(key, None)
        return {"status": "down", "queue": queue, "workers": 0, "error": "the broker is down"}
    now = time.monotonic()
    with _workers_lock:
        seen = _workers_seen.get(key)
        if seen is not None and now - seen[0] < WORKERS_CACHE_S:
            return seen[1]
        found = _workers_ask(queue)
        if found["status"] == "ok":  # a failure is asked again at once, never kept
            _workers_seen[key] = (time.monotonic(), found)
        else:
            _workers_seen.pop(key, None)
    return found


def _runs(workers: dict[str, Any]) -> dict[str, Any]:
    """The active runs with no sign of life (started, a unit landed, a merge's beat) for
    ``RUN_STALL_REPORT_S``: ``stalled`` while the workers answer (a worker frozen holding a run,
    say), ``ok`` otherwise; never the status code's concern, which is the services'."""
    from datetime import timedelta

    from django.apps import apps
    from django.db.models import Q
    from django.db.models.functions import Coalesce
    from django.utils import timezone

    limit = settings.RUN_STALL_REPORT_S
    if workers["status"] != "ok":
        return {"status": "ok", "stalled": 0, "limit_s": limit}
    runs = apps.get_model("costapp", "SimulationRun")
    cutoff = timezone.now() - timedelta(seconds=limit)
    try:
        quiet = (
            runs.objects.filter(status__in=runs.ACTIVE)
            .annotate(seen=Coalesce("heartbeat", "created"))
            .filter(Q(seen__lt=cutoff))
            .order_by("seen")
            .values_list("pk", "seen")
        )
        found = list(quiet[:20])
    except Exception as exc:
        return {"status": "down", "error": type(exc).__name__, "limit_s": limit}
    if not found:
        return {"status": "ok", "stalled": 0, "limit_s": limit}
    return {
        "status": "stalled",
        "stalled": len(found),
        "runs": [pk for pk, _seen in found],
        "longest_s": round((timezone.now() - found[0][1]).total_seconds()),
        "limit_s": limit,
    }


def health_report() -> dict:
    """``{"status": "ok"|"degraded", "database": {...}, "broker": {...}, "workers": {...},
    "runs": {...}}``: the status is the three services'; ``runs`` says whether runs are
    stalled while they answer (``_runs``)."""
    database, broker = _database(), _broker()
    workers = _workers(broker)
    ok = all(part["status"] == "ok" for part in (database, broker, workers))
    return {
        "status": "ok" if ok else "degraded",
        "database": database,
        "broker": broker,
        "workers": workers,
        "runs": _runs(workers) if database["status"] == "ok" else {"status": "unknown"},
    }
