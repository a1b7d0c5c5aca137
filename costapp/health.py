"""Health of the services the app depends on (no secrets in the answer)."""

from django.conf import settings
from django.db import connection


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


def health_report() -> dict:
    """``{"status": "ok"|"degraded", "database": {...}, "broker": {...}}``."""
    database, broker = _database(), _broker()
    ok = database["status"] == "ok" and broker["status"] == "ok"
    return {"status": "ok" if ok else "degraded", "database": database, "broker": broker}
