"""Server-rendered pages of scenarios and runs: lists, a scenario with its runs and a Run
button, a run's page (a progress bar polled by htmx, then the result with its charts, key figures,
assumptions and downloads), a run's downloads (XLSX, the result JSON), and two runs side by side
(``/runs/compare/?a=<id>&b=<id>``).

Every role reads (viewers the shared scenarios and their runs, read-only, with the downloads);
another user's private scenario (and its runs) answers 404 to every role; only a scenario's owner,
an analyst or above, may run it or cancel its runs (403 for others), as in the API; copying a run
at a sizing sweep's best size is for analysts.
"""

import json
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.decorators import analyst_required
from accounts.roles import ANALYST, VIEWER, user_has_role
from costapp import charts
from costapp.models import Scenario, SimulationRun
from costapp.reports import comparison
from costapp.runs import links, pipeline
from costapp.runs.access import (
    owner_only,
    succeeded_run,
    viewer_required,
    visible_run,
    visible_scenario,
)
from costapp.runs.exports import run_workbook
from costapp.runs.result_page import result_context
from costapp.runs.store import BrokerUnavailable
from costapp.scenarios import selectors, services
from costapp.tco import ScenarioError

HEAVY_FIELDS = (
    "inputs",
    "gpus",
    "result",
    "monthly_breakdown_usd",
    "cost_curves",
    "sizing_bands",
    "units",
)
"""Run fields a list of runs does not show."""

RECENT = 5
"""How many scenarios and runs the dashboard lists."""


def dashboard_runs(*, user: Any) -> dict[str, Any]:
    """The dashboard's recent scenarios and runs ``user`` may read (none without a role)."""
    if not user_has_role(user, VIEWER):
        return {"recent_scenarios": None, "recent_runs": None}
    return {
        "recent_scenarios": list(selectors.scenarios_visible(user=user)[:RECENT]),
        "recent_runs": list(selectors.runs_visible(user=user).defer(*HEAVY_FIELDS)[:RECENT]),
    }


@viewer_required
@require_GET
def scenarios(request: HttpRequest) -> HttpResponse:
    """Your scenarios and the shared ones, newest first."""
    found = selectors.scenarios_visible(user=request.user)
    return render(request, "runs/scenarios.html", {"scenarios": found})


@viewer_required
@require_http_methods(["GET", "POST"])
def scenario(request: HttpRequest, pk: int) -> HttpResponse:
    """A scenario: its document, its runs, and the Run button (for its owner), which posts here
    to start a run."""
    found = visible_scenario(request, pk)
    if request.method == "POST":
        return _scenario_run(request, found)
    context = {
        "scenario": found,
        "runs": found.runs.defer(*HEAVY_FIELDS).order_by("-created", "-id"),
        "document_json": json.dumps(found.document, indent=2),
        "may_run": found.owner_id == request.user.pk and user_has_role(request.user, ANALYST),
    }
    return render(request, "runs/scenario.html", context)


def _scenario_run(request: HttpRequest, found: Scenario) -> HttpResponse:
    """Start a run of the scenario (its owner only) and go to the run's page; with the broker
    down, say so (nothing stored, or the run failed with the broker's error when it refused the
    run's tasks)."""
    owner_only(request, found, "run it")
    try:
        run = pipeline.run_create(scenario=found)
    except BrokerUnavailable as exc:
        messages.error(request, f"The run was not started: {exc}")
        return redirect("scenario", pk=found.pk)
    except ScenarioError as exc:
        problems = "; ".join(
            f"{error.field}: {error.message}" if error.field else error.message
            for error in exc.errors
        )
        messages.error(request, f"The scenario cannot be run: {problems}")
        return redirect("scenario", pk=found.pk)
    return redirect("run", pk=run.pk)


@viewer_required
@require_GET
def runs(request: HttpRequest) -> HttpResponse:
    """Runs of your scenarios and of the shared ones, newest first."""
    found = selectors.runs_visible(user=request.user).defer(*HEAVY_FIELDS)[:200]
    return render(request, "runs/runs.html", {"runs": found})


def _run_context(request: HttpRequest, run: SimulationRun) -> dict[str, Any]:
    owner = run.scenario.owner_id == request.user.pk and user_has_role(request.user, ANALYST)
    context: dict[str, Any] = {
        "run": run,
        "may_cancel": owner,
        "may_link": owner,
        "link_days": settings.RUN_LINK_LIFETIME.days,
        "active": run.status in SimulationRun.ACTIVE,
    }
    if run.status == SimulationRun.Status.SUCCEEDED and run.result is not None:
        context.update(result_context(run=run, result=run.result, request=request))
        if owner:
            context["links"] = list(links.run_links_working(run=run))
        if not user_has_role(request.user, ANALYST):
            for item in context["sizing"]:
                item["may_copy"] = False
    return context


@viewer_required
@require_http_methods(["GET", "POST"])
def run(request: HttpRequest, pk: int) -> HttpResponse:
    """A run: its progress while queued or running, then its result; the Cancel button posts
    here."""
    found = visible_run(request, pk)
    if request.method == "POST":
        return _run_cancel(request, found)
    return render(request, "runs/run.html", _run_context(request, found))


@viewer_required
@require_GET
def run_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The run's body alone, polled by htmx while the run is active: the progress bar, or the
    result once the run has ended (which stops the polling)."""
    found = visible_run(request, pk)
    return render(request, "runs/_run_body.html", _run_context(request, found))


def _run_cancel(request: HttpRequest, found: SimulationRun) -> HttpResponse:
    """Cancel a queued or running run (its scenario's owner only)."""
    owner_only(request, found.scenario, "cancel its runs")
    if pipeline.run_cancel(run=found):
        messages.success(request, "The run was cancelled.")
    else:
        messages.error(request, f"The run has already ended ({found.status}).")
    return redirect("run", pk=found.pk)


@viewer_required
@require_GET
def run_xlsx(request: HttpRequest, pk: int) -> HttpResponse:
    """The run's monthly figures as a workbook: sheet "monthly" (the CSV's rows, numeric cells,
    header row frozen) and sheet "options" (the key figures per option)."""
    found = succeeded_run(request, pk)
    body = run_workbook(run=found)
    response = HttpResponse(
        body, content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    )
    response["Content-Disposition"] = f'attachment; filename="run-{found.pk}.xlsx"'
    return response


@viewer_required
@require_GET
def run_result_json(request: HttpRequest, pk: int) -> HttpResponse:
    """The result document exactly as the engine wrote it."""
    found = succeeded_run(request, pk)
    response = HttpResponse(
        json.dumps(found.result, indent=2, allow_nan=False), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="run-{found.pk}-result.json"'
    return response


def _problems(exc: ScenarioError) -> str:
    return "; ".join(
        f"{error.field}: {error.message}" if error.field else error.message for error in exc.errors
    )


@analyst_required
@require_POST
def run_sizing_copy(request: HttpRequest, pk: int, sweep: int) -> HttpResponse:
    """Save a copy of the run's scenario, yours and private, with sizing sweep ``sweep`` (from 1)
    at its best size, and go to it; any analyst who can see the run may."""
    found = succeeded_run(request, pk)
    try:
        copied = services.scenario_copy_at_size(
            run=found, sweep_index=sweep - 1, owner=request.user
        )
    except ScenarioError as exc:  # a ValueError too: caught first
        messages.error(
            request, f"No copy was made, the document would be invalid: {_problems(exc)}"
        )
        return redirect("run", pk=found.pk)
    except ValueError as exc:
        messages.error(request, f"No copy was made: {exc}.")
        return redirect("run", pk=found.pk)
    result_sweep = found.result["sizing"][sweep - 1] if found.result else {}
    messages.success(
        request,
        f"Saved “{copied.name}”: {result_sweep.get('option')} at its best size from run "
        f"{found.pk}. It is yours and private; run it to see its figures.",
    )
    return redirect("scenario", pk=copied.pk)


# --- two runs side by side ---------------------------------------------------------------------


def _run_id(request: HttpRequest, name: str) -> int | None:
    raw = request.GET.get(name, "").strip()
    return int(raw) if raw.isdigit() else None


def _not_comparable(run: SimulationRun) -> str | None:
    if run.status == SimulationRun.Status.SUCCEEDED and run.result is not None:
        return None
    return (
        f"Run {run.pk} of “{run.scenario.name}” has not succeeded (it is {run.status}): only "
        "runs that succeeded have figures to compare."
    )


@viewer_required
@require_GET
def runs_compare(request: HttpRequest) -> HttpResponse:
    """Two runs side by side: key figures per option with their differences, the cumulative
    cost of both, and the inputs that differ."""
    ids = {name: _run_id(request, name) for name in ("a", "b")}
    missing = [name for name, pk in ids.items() if pk is None]
    if missing:
        context: dict[str, Any] = {
            "problems": [
                f"“{name}” must be the number of a run (/runs/compare/?a=RUN&b=RUN)."
                for name in missing
            ]
        }
        return render(request, "runs/compare.html", context, status=400)
    visible = selectors.runs_visible(user=request.user)
    run_a = get_object_or_404(visible, pk=ids["a"])
    run_b = get_object_or_404(visible, pk=ids["b"])
    problems = [p for p in (_not_comparable(run_a), _not_comparable(run_b)) if p]
    context = {"run_a": run_a, "run_b": run_b, "problems": problems}
    if problems:
        return render(request, "runs/compare.html", context, status=409)
    if run_a.result is None or run_b.result is None:  # for the type checker: checked above
        raise Http404("no result")
    context["comparison"] = comparison.results_compare(run_a.result, run_b.result)
    context["chart"] = charts.comparison_cumulative_chart(
        run_a.result, run_b.result, label_a=f"run {run_a.pk}", label_b=f"run {run_b.pk}"
    )
    return render(request, "runs/compare.html", context)
