"""What every request under ``/api/`` meets before its view (docs/api.md, "Basics"):

- a body declared over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is refused unread with 413;
- a NUL in the path or in a query parameter is a 400 naming it (the path value by its name in the
  URL pattern, such as ``slug``), before any database sees it;
- a query parameter given more than once is a 400 naming it (each takes one value);
- a query string Django refuses (too many fields) is a 400;
- and any 4xx answer that is not JSON already (Django's own pages for a bad request, say) is
  turned into the API's error format, its headers kept.
"""

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve

from .parsers import text_problem

API_PREFIX = "/api/"
KEPT_HEADERS = ("Allow", "WWW-Authenticate", "Retry-After", "Vary")


def error_response(status: int, field: str | None, message: str) -> JsonResponse:
    return JsonResponse({"errors": [{"field": field, "message": message}]}, status=status)


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def path_problem(request: HttpRequest) -> tuple[str, str] | None:
    """(field, message) when the path holds a NUL: the field is the URL pattern's name for the
    value at fault (``slug``, ``id``), or ``path``."""
    path = request.path_info
    problem = text_problem(path)
    if problem is None:
        return None
    try:
        match = resolve(path)
    except Resolver404:
        match = None
    if match is not None:
        for name, value in match.kwargs.items():
            if isinstance(value, str) and text_problem(value) is not None:
                return name, f"the path's {name} {problem}"
    return "path", f"the path {problem}"


def query_problem(request: HttpRequest) -> tuple[str | None, str] | None:
    """(field, message) when a query parameter's name or value holds a NUL, or a parameter is
    given more than once: every query parameter of the API takes one value (a list, such as
    ``ordering``'s keys, is one value, comma-separated), so a repeated one is refused rather than
    read as its last value."""
    for name, values in request.GET.lists():
        problem = text_problem(name)
        if problem is not None:
            return None, f"a query parameter's name {problem}"
        for value in values:
            problem = text_problem(value)
            if problem is not None:
                return name, f"the query parameter {problem}"
        if len(values) > 1:
            return name, (
                f"is given {len(values)} times; give it once (where it takes a list, as "
                "ordering does, its items comma-separated in one value)"
            )
    return None


def as_api_error(response: HttpResponse) -> HttpResponse:
    """A 4xx ``response`` that is not JSON, as the same status in the API's error format."""
    if not 400 <= response.status_code < 500:
        return response
    if response.get("Content-Type", "").startswith("application/json"):
        return response
    try:
        message = HTTPStatus(response.status_code).phrase
    except ValueError:
        message = response.reason_phrase
    converted = error_response(response.status_code, None, f"{message}.")
    for header in KEPT_HEADERS:
        if header in response:
            converted[header] = response[header]
    return converted


class ApiGuardMiddleware:
    """The checks above, on requests under ``/api/`` only."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        refused = self.refusal(request)
        if refused is not None:
            return refused
        return as_api_error(self.get_response(request))

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        length = _declared_length(request)
        if limit is not None and length > limit:
            return error_response(
                413, None, f"The body is {length} bytes; at most {limit} bytes are read."
            )
        problem: Any = path_problem(request)
        if problem is None:
            try:
                problem = query_problem(request)
            except SuspiciousOperation as exc:  # too many fields in the query string
                return error_response(400, None, f"The query string is refused: {exc}")
        if problem is not None:
            field, message = problem
            return error_response(400, field, f"{message[0].upper()}{message[1:]}.")
        return None
