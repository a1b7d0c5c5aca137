"""The comparison of two runs side by side: ``/runs/compare/?a=<id>&b=<id>``.

Analysts and above; both runs must be visible to the user (else 404) and have succeeded (else a
page saying which has not, answered 409). The comparison itself is ``costapp.comparison`` (pure)
and the chart ``costapp.charts.comparison_cumulative_chart``; this view only reads and renders.
"""

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from costapp import charts, comparison, selectors
from costapp.models import SimulationRun
from costapp.run_views import analyst_required


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


@analyst_required
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
