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
        replies = current_app.control.inspect(timeout=WORKERS_TIMEOUT_S).active_queues() or {}
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
    if broker["status"] != "ok":
        return {"status": "down", "queue": queue, "workers": 0, "error": "the broker is down"}
    key = f"{settings.REDIS_URL} {queue}"
    now = time.monotonic()
    with _workers_lock:
        seen = _workers_seen.get(key)
        if seen is not None and now - seen[0] < WORKERS_CACHE_S:
            return seen[1]
        found = _workers_ask(queue)
        _workers_seen[key] = (time.monotonic(), found)
    return found


def health_report() -> dict:
    """``{"status": "ok"|"degraded", "database": {...}, "broker": {...}, "workers": {...}}``."""
    database, broker = _database(), _broker()
    workers = _workers(broker)
    ok = all(part["status"] == "ok" for part in (database, broker, workers))
    return {
        "status": "ok" if ok else "degraded",
        "database": database,
        "broker": broker,
        "workers": workers,
    }
