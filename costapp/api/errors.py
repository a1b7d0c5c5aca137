"""One error format for every 4xx answer of the API (docs/api.md, "Basics"):
``{"errors": [{"field": "<path or null>", "message": "<text>"}]}``.

Field paths are written as in scenario documents: ``document.options[1].pue``; errors that belong
to no field (``non_field_errors``, authentication, permissions, throttling) have ``field: null``.
"""

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

NON_FIELD_KEYS = {api_settings.NON_FIELD_ERRORS_KEY, "detail"}


def join_path(parent: str | None, key: Any) -> str | None:
    """``parent`` extended by a mapping key (``a.b``) or a list index (``a[0]``)."""
    if isinstance(key, int):
        return f"{parent or ''}[{key}]"
    if key in NON_FIELD_KEYS:
        return parent
    return f"{parent}.{key}" if parent else str(key)


def flatten_errors(detail: Any, path: str | None = None) -> list[dict[str, Any]]:
    """DRF's nested error detail as a flat list of ``{"field", "message"}`` in document order."""
    if isinstance(detail, dict):
        errors: list[dict[str, Any]] = []
        for key, value in detail.items():
            sub = join_path(path, int(key) if isinstance(key, str) and key.isdigit() else key)
            errors.extend(flatten_errors(value, sub))
        return errors
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [{"field": path, "message": str(item)} for item in detail]
        errors = []
        for index, item in enumerate(detail):
            if item:  # DRF marks a valid item of a list with an empty dict
                errors.extend(flatten_errors(item, join_path(path, index)))
        return errors
    return [{"field": path, "message": str(detail)}]


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, with every 4xx body rewritten to the API's error format."""
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if 400 <= response.status_code < 500:
        if isinstance(exc, exceptions.ValidationError):
            errors = flatten_errors(exc.detail)
        else:
            errors = flatten_errors(response.data.get("detail", response.data))
        response.data = {"errors": errors or [{"field": None, "message": "invalid request"}]}
    return response


@csrf_exempt
def api_not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    """Any path under ``/api/`` that names no endpoint: 404 in the error format (JSON, not the
    site's HTML page), with a hint when the path only lacks its trailing slash."""
    message = f"No API endpoint at {request.path}."
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            message += f" Did you mean {request.path}/ ?"
    return JsonResponse({"errors": [{"field": None, "message": message}]}, status=404)
