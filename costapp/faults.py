"""Faults of the services the app depends on: which errors mean "a service is down", and the
answer a request gets when one is (docs/api.md, "Basics": 503 with ``Retry-After``).

A view that meets a database error (``django.db.OperationalError``, ``InterfaceError``,
``InternalError``) or a Redis or broker error (``redis.RedisError``,
``kombu.exceptions.OperationalError``) answers 503 with ``Retry-After``: under ``/api/`` in the API's error format, elsewhere a plain page saying
what is down (``templates/503.html``, rendered without the request's context, which would ask
the database for the user). The error is logged with its traceback.
"""

import logging
from collections.abc import Callable

from django.db import InterfaceError as DatabaseInterfaceError
from django.db import InternalError as DatabaseInternalError
from django.db import OperationalError as DatabaseOperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from kombu.exceptions import OperationalError as BrokerOperationalError
from redis import RedisError

logger = logging.getLogger(__name__)

DATABASE_ERRORS: tuple[type[Exception], ...] = (
    DatabaseOperationalError,
    DatabaseInterfaceError,
    DatabaseInternalError,
)
"""The database does not answer, dropped the connection, gave up a lock it could not take in
time, or ended a session that left a transaction open too long (PostgreSQL's
``idle_in_transaction_session_timeout``, an ``InternalError``)."""
BROKER_ERRORS: tuple[type[Exception], ...] = (RedisError, BrokerOperationalError)
"""Redis (the cache, the block store, the task broker) does not answer."""
SERVICE_ERRORS: tuple[type[Exception], ...] = DATABASE_ERRORS + BROKER_ERRORS
"""Every error that means a service is down, not that the request or the code is wrong."""

LOCK_NOT_AVAILABLE = "55P03"
"""PostgreSQL's SQLSTATE of a lock not taken within ``lock_timeout``."""


def lock_not_taken(exc: BaseException) -> bool:
    """Whether ``exc`` is a lock the database gave up waiting for (another session holds the
    row: busy, or frozen until the server ends its session), not the database down."""
    cause = exc.__cause__ if isinstance(exc, DatabaseOperationalError) else None
    return getattr(cause, "sqlstate", None) == LOCK_NOT_AVAILABLE


RETRY_AFTER_S = 30
"""What ``Retry-After`` says when a service is down [s]."""

DATABASE = "the database (PostgreSQL)"
BROKER = "the task queue and cache (Redis)"


def service_down(exc: BaseException) -> str | None:
    """Which service ``exc`` says is down, in words; ``None`` when it is no service's fault."""
    if isinstance(exc, DATABASE_ERRORS):
        return DATABASE
    if isinstance(exc, BROKER_ERRORS):
        return BROKER
    return None


def service_down_message(service: str) -> str:
    return f"A service this needs is down: {service}. Try again in a minute."


def service_down_response(request: HttpRequest, service: str) -> HttpResponse:
    """503 with ``Retry-After``: the API's error format under ``/api/``, otherwise the plain page."""
    response: HttpResponse
    if request.path_info.startswith("/api/"):
        message = service_down_message(service)
        response = JsonResponse({"errors": [{"field": None, "message": message}]}, status=503)
    else:
        page = render_to_string("503.html", {"service": service, "path": request.path})
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


class ServiceFaultMiddleware:
    """A view's service error as a 503 (:func:`service_down_response`), not a 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        service = service_down(exception)
        if service is None:
            return None
        logger.error(
            "%s %s: %s is down: %s: %s",
            request.method,
            request.path,
            service,
            type(exception).__name__,
            exception,
            exc_info=exception,
        )
        return service_down_response(request, service)
