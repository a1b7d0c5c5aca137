"""Read-only links to a run (``costapp.runs.links``): its owner makes and revokes them on the
run's page; anyone holding a working link, signed in or not, sees at ``/shared/<key>/`` the run's
figures, charts and downloads and nothing else (no link into the catalog or to another page of
the site, each quote's vendor and reference said as "a quote"). An unknown, revoked or expired
key, or another path, answers 404."""

import copy
import json

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from costapp.reports.shared import shared_result
from costapp.runs import links
from costapp.runs.access import link_private, link_run, owner_only, viewer_required, visible_run
from costapp.runs.exports import run_monthly_csv, run_workbook
from costapp.runs.followups import answer_words
from costapp.runs.result_page import result_context


@viewer_required
@require_POST
def run_link_create(request: HttpRequest, pk: int) -> HttpResponse:
    """Make a read-only link to the run (its owner) and show its address once."""
    found = visible_run(request, pk)
    owner_only(request, found.scenario, "share its runs by a link")
    try:
        link, key = links.run_link_create(run=found, user=request.user)
    except ValueError as exc:
        messages.error(request, f"No link was made: {exc}.")
        return redirect("run", pk=found.pk)
    address = request.build_absolute_uri(reverse("shared-run", args=[key]))
    messages.success(
        request,
        f"Read-only link made, working until {link.expires:%Y-%m-%d %H:%M} UTC: {address} "
        "(copy it now: it is shown only this once).",
    )
    return redirect("run", pk=found.pk)


@viewer_required
@require_POST
def run_link_revoke(request: HttpRequest, pk: int, link: int) -> HttpResponse:
    """Revoke one of the run's links (its owner): it answers 404 from now on."""
    found = visible_run(request, pk)
    owner_only(request, found.scenario, "revoke its links")
    if links.run_link_revoke(run=found, link_id=link):
        messages.success(request, "The link was revoked: it opens nothing any more.")
    else:
        messages.error(request, "That link no longer works (revoked or expired).")
    return redirect("run", pk=found.pk)


@never_cache
@require_GET
def shared_run(request: HttpRequest, key: str) -> HttpResponse:
    """The run's page as a link shows it."""
    found = link_run(key)
    assert found.result is not None
    context = result_context(run=found, result=shared_result(found.result), request=request)
    for item in context["sizing"]:
        item["may_copy"] = False
    for row in context["sources"]["sourced"]:
        row["link"] = None
    context.update(run=found, shared_key=key, active=False, answer_words=answer_words(found))
    return link_private(render(request, "runs/shared.html", context))


@never_cache
@require_GET
def shared_monthly_csv(request: HttpRequest, key: str) -> HttpResponse:
    found = link_run(key)
    response = HttpResponse(run_monthly_csv(run=found), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{found.pk}-monthly.csv"'
    return link_private(response)


@never_cache
@require_GET
def shared_xlsx(request: HttpRequest, key: str) -> HttpResponse:
    found = link_run(key)
    assert found.result is not None
    shown = copy.copy(found)
    shown.result = shared_result(found.result)
    response = HttpResponse(
        run_workbook(run=shown),
        content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    )
    response["Content-Disposition"] = f'attachment; filename="run-{found.pk}.xlsx"'
    return link_private(response)


@never_cache
@require_GET
def shared_result_json(request: HttpRequest, key: str) -> HttpResponse:
    found = link_run(key)
    assert found.result is not None
    response = HttpResponse(
        json.dumps(shared_result(found.result), indent=2, allow_nan=False),
        content_type="application/json",
    )
    response["Content-Disposition"] = f'attachment; filename="run-{found.pk}-result.json"'
    return link_private(response)
