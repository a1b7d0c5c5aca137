"""Server-rendered pages and the health check."""

import json
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.shortcuts import render
from django.templatetags.static import static
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.decorators import role_required
from accounts.roles import VIEWER, user_has_role
from costapp import charts
from costapp.reports.claims import CLAIMS, Claim, claim_get
from costapp.reports.glossary import TERMS
from costapp.runs.views import dashboard_runs
from costapp.scenarios.catalog import engine_gpu_figures
from costapp.scenarios.services import scenario_simulate
from costapp.tco import ScenarioError, cost_curves
from hardware.confidence import with_confidence
from hardware.display import price_chart
from hardware.selectors import (
    current_prices,
    latest_price_changes,
    offer_price_history,
    price_headlines,
)

from .health import health_report


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """The dashboard: recent scenarios and runs (analysts), the catalog's cheapest unflagged
    on-demand USD per GPU-hour per GPU model with when its source stated it (a cheaper flagged
    price beside it), the latest price changes, and the claims tested (viewers and above; a user
    without a role is told so)."""
    if not user_has_role(request.user, VIEWER):
        return render(request, "home.html", {"no_role": True})
    context = {
        "cheapest": price_headlines(billing="on_demand"),
        "changes": latest_price_changes(limit=10),
        "claims": CLAIMS,
        "stale_days": settings.PRICE_STALE_DAYS,
        **dashboard_runs(user=request.user),
    }
    return render(request, "home.html", context)


@role_required(VIEWER)
@require_GET
def offer(request: HttpRequest, pk: int) -> HttpResponse:
    """An offer's price history: a chart of USD per GPU-hour by the day each source stated the
    price, one line per region and billing, and the table of the same prices."""
    found = offer_price_history(offer_id=pk)
    if found is None:
        raise Http404("no such offer")
    offer, prices = found
    points = [
        price_chart.DatedPrice(
            region=p.region.code,
            billing=p.get_billing_display(),
            stated_on=p.stated_on,
            usd_per_gpu_hour=p.usd_per_gpu_hour,
            usd_per_hour=p.usd_per_hour,
            zone=p.zone,
            source=p.source_name,
            first_seen=p.first_seen,
            last_seen=p.last_seen,
        )
        for p in prices
    ]
    title = f"{offer.provider.name} {offer.instance_type}: price per GPU-hour"
    chart = price_chart.price_history_chart(title, points) if points else None
    current = with_confidence(current_prices().filter(offer=offer)).order_by(
        "region__code", "billing", "zone"
    )
    context = {"offer": offer, "prices": prices, "chart": chart, "current": current}
    return render(request, "hardware/offer.html", context)


@role_required(VIEWER)
@require_GET
def glossary(request: HttpRequest) -> HttpResponse:
    """The words the pages use for the engine's figures, each with one line of meaning."""
    return render(request, "glossary.html", {"terms": TERMS})


@role_required(VIEWER)
@require_GET
def claims(request: HttpRequest) -> HttpResponse:
    """The claims about GPU costs that the example scenarios test."""
    return render(request, "claims/list.html", {"claims": CLAIMS})


@role_required(VIEWER)
@require_GET
def claim(request: HttpRequest, slug: str) -> HttpResponse:
    """One claim: where it holds and where it fails, with the arithmetic, and each case's
    result computed by the engine with its charts."""
    found = claim_get(slug)
    if found is None:
        raise Http404("no such claim")
    return render(request, "claims/detail.html", {"claim": found, "cases": _claim_cases(found)})


_CLAIM_CASES: dict[tuple[str, str], list[dict[str, Any]]] = {}
"""Computed claim cases by (claim slug, GPU figures used): the documents carry their prices and
reference nothing else in the catalog, so the same figures give the same results and charts."""


def _claim_cases(claim: Claim) -> list[dict[str, Any]]:
    """Each case of a claim with its result document and charts, computed once per process for
    the catalog's current GPU figures."""
    figures, _source = engine_gpu_figures()
    key = (claim.slug, json.dumps(figures, sort_keys=True))
    if key not in _CLAIM_CASES:
        cases = []
        for case in claim.cases:
            try:
                result = scenario_simulate(document=claim.document(case))
            except ScenarioError as exc:  # e.g. a catalog without the GPU the claim runs on
                cases.append({"case": case, "errors": exc.as_dicts()})
                continue
            curves = cost_curves(result["inputs"], result["gpus"])
            cases.append(
                {"case": case, "result": result, "charts": charts.result_charts(result, curves)}
            )
        for stale in [k for k in _CLAIM_CASES if k[0] == claim.slug]:
            del _CLAIM_CASES[stale]
        _CLAIM_CASES[key] = cases
    return _CLAIM_CASES[key]


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """State of the database, the broker and the run queue's workers; 200 when all answer, 503
    (the same body, saying which is down) otherwise."""
    report = health_report()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask for on every page (the admin's too): the site's icon
    in ``static/``."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))
