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
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.decorators import analyst_required, role_required
from accounts.roles import ANALYST, VIEWER, user_has_role
from costapp import charts
from costapp.charts.risk import leader_chart
from costapp.models import Scenario, SimulationRun
from costapp.reports import comparison, joint_sizing, sizing_summary
from costapp.reports.categories import CATEGORY_FORMULAS
from costapp.reports.comparison import dotted_leaves, value_text
from costapp.reports.risk import risk_panel
from costapp.reports.sources import source_rows
from costapp.reports.warning_words import warnings_grouped, warnings_split
from costapp.runs import chart_cache, links, pipeline
from costapp.runs.exports import run_workbook
from costapp.runs.store import BrokerUnavailable
from costapp.scenarios import selectors, services
from costapp.tco import ScenarioError
from hardware.figures import plain_number
from hardware.selectors import gpu_names

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


def _scenario(request: HttpRequest, pk: int) -> Scenario:
    return get_object_or_404(selectors.scenarios_visible(user=request.user), pk=pk)


def visible_run(request: HttpRequest, pk: int) -> SimulationRun:
    return get_object_or_404(selectors.runs_visible(user=request.user), pk=pk)


viewer_required = role_required(VIEWER)
"""The read-only pages: every role."""


def owner_only(request: HttpRequest, scenario: Scenario, doing: str) -> None:
    if not user_has_role(request.user, ANALYST):
        raise PermissionDenied(
            f"Viewers read shared scenarios and runs; only the owner, an analyst, may {doing}."
        )
    if scenario.owner_id != request.user.pk:
        raise PermissionDenied(f"Only the owner of a shared scenario may {doing}.")


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
    found = _scenario(request, pk)
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


def run_charts(*, run: SimulationRun) -> list[charts.Chart]:
    """The charts of a succeeded run (``costapp.runs.chart_cache.run_charts``: built when it
    finished, kept in the cache)."""
    return chart_cache.run_charts(run=run)


def result_context(
    *, run: SimulationRun, result: dict[str, Any], request: HttpRequest | None = None
) -> dict[str, Any]:
    """What a run page shows of a succeeded run's ``result`` (the run's own, or a link's copy):
    the charts, key figures, the risk panel (with the budget ``request`` asks about, if any),
    sizing sweeps, sources, assumptions and formulas."""
    budget = "" if request is None else str(request.GET.get("budget", ""))[:64]
    risk = risk_panel(run=run, result=result, budget_text=budget)
    if risk is not None:
        risk["url"] = "" if request is None else request.path
        if risk["figures"] is not None:
            risk["chart"] = leader_chart(risk["figures"])
    groups = warnings_grouped(
        result["warnings"], [o["name"] for o in result["options"]], gpu_names()
    )
    warnings_open, warnings_folded = warnings_split(groups)
    return {
        "warnings_open": warnings_open,
        "warnings_folded": warnings_folded,
        "warnings_count": len(result["warnings"]),
        "risk": risk,
        "result": result,
        "charts": run_charts(run=run),
        "infeasible": [o for o in result["options"] if not o["feasible"]],
        "assumptions": assumptions(result["inputs"]),
        "formulas": CATEGORY_FORMULAS,
        "sizing": run_sizing(run=run),
        "sized_best": joint_sizing.best_beside_own(result),
        "sources": source_rows(
            result=result,
            engine_version=run.engine_version,
            today=timezone.localdate(run.created),
        ),
        "key_columns": {
            "tokens": any(
                o.get("all_in_usd_per_million_tokens") is not None for o in result["options"]
            ),
            "goodput": any(o.get("goodput") is not None for o in result["options"]),
        },
    }


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


def _succeeded(request: HttpRequest, pk: int) -> SimulationRun:
    found = visible_run(request, pk)
    if found.status != SimulationRun.Status.SUCCEEDED or found.result is None:
        raise Http404(f"the run has no result ({found.status})")
    return found


@viewer_required
@require_GET
def run_xlsx(request: HttpRequest, pk: int) -> HttpResponse:
    """The run's monthly figures as a workbook: sheet "monthly" (the CSV's rows, numeric cells,
    header row frozen) and sheet "options" (the key figures per option)."""
    found = _succeeded(request, pk)
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
    found = _succeeded(request, pk)
    response = HttpResponse(
        json.dumps(found.result, indent=2, allow_nan=False), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="run-{found.pk}-result.json"'
    return response


def _rows(mapping: Any) -> list[tuple[str, str]]:
    """Key/value rows of a mapping, nested mappings flattened to dotted names in key order, lists
    of scalars and of small mappings as JSON (values written as the comparison page writes them)."""
    return [
        (path, value_text(value))
        for path, value in dotted_leaves(mapping, sort_keys=True, into_lists=False)
    ]


def assumptions(inputs: Any) -> dict[str, Any]:
    """Every input and default the result used (its ``inputs``: the normalised document), in
    sections: general settings, each workload, each option."""
    general = {k: v for k, v in inputs.items() if k not in ("workloads", "options")}
    return {
        "general": _rows(general),
        "workloads": [
            (w.get("name", f"workload {i + 1}"), _rows(w))
            for i, w in enumerate(inputs.get("workloads", []))
        ],
        "options": [
            (o.get("name", f"option {i + 1}"), _rows(o))
            for i, o in enumerate(inputs.get("options", []))
        ],
    }


# --- sizing sweeps (scenario format 1.1) --------------------------------------------------------


def run_sizing(*, run: SimulationRun) -> list[dict[str, Any]]:
    """Per sizing sweep of a succeeded run: its chart, what it means in words, its best and the
    scenario's own size, and whether a copy at the best size can be made (a best that is not
    the scenario's own)."""
    assert run.result is not None
    result = run.result
    sweeps = result.get("sizing") or []
    out: list[dict[str, Any]] = []
    for index, (sweep, chart) in enumerate(
        zip(sweeps, chart_cache.run_sizing_charts(run=run), strict=True)
    ):
        if joint_sizing.is_joint(sweep):  # format 1.3: a mix sized jointly
            out.append(joint_sizing_item(result, index, chart))
            continue
        own = sizing_summary.own_size(result, index)
        best = sweep["best"]
        step = int(result["inputs"]["sizing"][index]["step"])
        sizes = sweep["candidates"]
        swept = f"{sizing_summary.unit(sweep['field'])} {sizes[0]:,}–{sizes[-1]:,}"
        swept += f" by {step:,}" if step != 1 else ""
        swept += f", {len(sizes):,} sizes; objective: "
        swept += sizing_summary.objective_label(result, sweep["objective"])
        if sizing_summary.paths(result):
            cap = sizing_summary.max_shortfall_probability(result, index)
            swept += (
                f"; work may be left undone on at most {plain_number(100.0 * cap)} % of the paths"
                if cap > 0
                else "; every path must get all its work done"
            )
        out.append(
            {
                "number": index + 1,
                "sweep": sweep,
                "chart": chart,
                "sentence": sizing_summary.sentence(result, index),
                "own": own,
                "swept": swept,
                "unit": sizing_summary.unit(sweep["field"], best),
                "may_copy": best is not None and best != own,
            }
        )
    return out


def _problems(exc: ScenarioError) -> str:
    return "; ".join(
        f"{error.field}: {error.message}" if error.field else error.message for error in exc.errors
    )


def joint_sizing_item(result: dict[str, Any], index: int, chart: Any) -> dict[str, Any]:
    """A mix's joint sizing on the run page: its heat map (two layers), the best combinations
    ranked with the scenario's own, one sentence, and whether a copy at the best can be made."""
    sweep = result["sizing"][index]
    layers = joint_sizing.layers(result, index)
    label = sizing_summary.objective_label(result, sweep["objective"])
    simulated = bool(sizing_summary.paths(result))
    rows = []
    for combination in joint_sizing.ranked(result, index):
        i = combination.position
        rows.append(
            {
                "rank": combination.rank,
                "sizes": combination.sizes,
                "cells": [
                    (layer.heading, size)
                    for layer, size in zip(layers, combination.sizes, strict=True)
                ],
                "objective_usd": combination.objective_usd,
                "npv_usd": combination.npv_usd,
                "tail_npv_usd": sweep["tail_npv_usd"][i] if "tail_npv_usd" in sweep else None,
                "shortfall_probability": combination.shortfall_probability,
                "own": combination.own,
                "best": list(combination.sizes) == list(sweep["best"] or []),
            }
        )
    count = len(sweep["candidates"])
    best = sweep["best"]
    return {
        "number": index + 1,
        "sweep": sweep,
        "joint": True,
        "chart": chart,
        "layers": layers,
        "rows": rows,
        "objective": label,
        "objective_is_npv": sweep["objective"] == "npv",
        "tail_words": "Mean NPV of the worst "
        f"{plain_number(100.0 * float((result.get('simulation') or {}).get('tail_fraction') or 0.1))} % "
        "of paths",
        "simulated": simulated,
        "sentence": joint_sizing.sentence(result, index),
        "swept": f"{count:,} combinations of the sizes of {len(layers)} layers; objective: {label}",
        "best_words": "" if best is None else joint_sizing.described(result, index, best),
        "may_copy": best is not None and list(best) != joint_sizing.own_sizes(result, index),
    }


@analyst_required
@require_POST
def run_sizing_copy(request: HttpRequest, pk: int, sweep: int) -> HttpResponse:
    """Save a copy of the run's scenario, yours and private, with sizing sweep ``sweep`` (from 1)
    at its best size, and go to it; any analyst who can see the run may."""
    found = _succeeded(request, pk)
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
