"""Who may open and do what on the scenario and run pages, shared by every page of runs (the run
pages, the read-only link's, the FOCUS downloads): a run or scenario the user may read (404
otherwise), a succeeded run (404 before), the owner-only actions (403), and a read-only link's
run with the headers every answer through a link carries."""

from typing import TypeVar

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404

from accounts.decorators import role_required
from accounts.roles import ANALYST, VIEWER, user_has_role
from costapp.models import Scenario, SimulationRun
from costapp.runs import links
from costapp.scenarios import selectors

Response = TypeVar("Response", bound=HttpResponseBase)

viewer_required = role_required(VIEWER)
"""The read-only pages: every role."""


def visible_scenario(request: HttpRequest, pk: int) -> Scenario:
    """The scenario ``pk`` if the user may read it (404 otherwise)."""
    return get_object_or_404(selectors.scenarios_visible(user=request.user), pk=pk)


def visible_run(request: HttpRequest, pk: int) -> SimulationRun:
    """The run ``pk`` if the user may read it (404 otherwise)."""
    return get_object_or_404(selectors.runs_visible(user=request.user), pk=pk)


def succeeded_run(request: HttpRequest, pk: int) -> SimulationRun:
    """The run ``pk`` if the user may read it and it has a result (404 otherwise)."""
    found = visible_run(request, pk)
    if found.status != SimulationRun.Status.SUCCEEDED or found.result is None:
        raise Http404(f"the run has no result ({found.status})")
    return found


def owner_only(request: HttpRequest, scenario: Scenario, doing: str) -> None:
    """Refuse (403) ``doing`` to anyone but the scenario's owner, an analyst or above."""
    if not user_has_role(request.user, ANALYST):
        raise PermissionDenied(
            f"Viewers read shared scenarios and runs; only the owner, an analyst, may {doing}."
        )
    if scenario.owner_id != request.user.pk:
        raise PermissionDenied(f"Only the owner of a shared scenario may {doing}.")


def link_run(key: str) -> SimulationRun:
    """The succeeded run a working read-only link ``key`` opens (404 for an unknown, revoked or
    expired key)."""
    found = links.run_link_open(key=key)
    if found is None or found.result is None:
        raise Http404("no such link, or it was revoked or has expired")
    return found


def link_private(response: Response) -> Response:
    """``response`` as every answer through a read-only link goes out: never indexed, never
    naming the link in a referrer."""
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Referrer-Policy"] = "no-referrer"
    return response
