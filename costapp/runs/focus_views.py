"""The FOCUS forward plan's downloads: from the run page (``/runs/ID/focus/``) and from a
read-only link (``/shared/KEY/focus/``), with ``option``, ``percentile`` and ``format`` as the
API takes them (``costapp.runs.focus.focus_choice``); a choice it cannot answer is a 400 naming
the field."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from rest_framework import renderers

from costapp.models import SimulationRun
from costapp.reports.shared import shared_result
from costapp.runs.access import link_private, link_run, succeeded_run, viewer_required
from costapp.runs.focus import FocusRequestError, focus_choice, focus_filename, focus_rows
from costapp.runs.focus_files import focus_csv_stream, focus_parquet_stream


class ParquetRenderer(renderers.BaseRenderer):
    """``?format=parquet`` on the API's FOCUS export (the file is streamed past it; an error
    body, as JSON)."""

    media_type = "application/vnd.apache.parquet"
    format = "parquet"
    charset = None
    render_style = "binary"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        return json.dumps(data).encode("utf-8")


CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}


def focus_response(
    run: SimulationRun, result: dict[str, Any], params: Any
) -> StreamingHttpResponse:
    """The export of ``run`` as ``result`` shows it, streamed; raises ``FocusRequestError`` for a
    choice it cannot answer (before anything is sent)."""
    choice = focus_choice(
        result,
        option=str(params.get("option", "")),
        percentile=str(params.get("percentile", "")),
        file_format=str(params.get("format", "")),
    )
    rows = focus_rows(run, result, choice)
    stream = focus_csv_stream(rows) if choice.file_format == "csv" else focus_parquet_stream(rows)
    response = StreamingHttpResponse(stream, content_type=CONTENT_TYPES[choice.file_format])
    response["Content-Disposition"] = f'attachment; filename="{focus_filename(run, choice)}"'
    return response


def _refused(error: FocusRequestError) -> HttpResponse:
    return HttpResponseBadRequest(str(error), content_type="text/plain; charset=utf-8")


@viewer_required
@require_GET
def run_focus(request: HttpRequest, pk: int) -> Any:
    """The run's option as a FOCUS forward plan."""
    found = succeeded_run(request, pk)
    assert found.result is not None
    try:
        return focus_response(found, found.result, request.GET)
    except FocusRequestError as error:
        return _refused(error)


@never_cache
@require_GET
def shared_focus(request: HttpRequest, key: str) -> HttpResponseBase:
    """The same through a read-only link (quotes named only as "a quote")."""
    found = link_run(key)
    assert found.result is not None
    try:
        response = focus_response(found, shared_result(found.result), request.GET)
    except FocusRequestError as error:
        return link_private(_refused(error))
    return link_private(response)
