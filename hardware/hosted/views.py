"""The token prices and sourced assumptions pages (server-rendered, for viewers and above)."""

from datetime import date

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.decorators import role_required
from accounts.roles import CATALOG_EDITOR, VIEWER, user_has_role
from hardware.hosted.filters import AssumptionFilterSet, TokenPriceFilterSet
from hardware.hosted.selectors import (
    ENGINEER_COST_KEY,
    SERVERS_PER_ENGINEER_KEY,
    STAFF_FIELD,
    STAFF_RULE,
    current_assumptions,
    current_token_prices,
    staff_usd_per_month,
)
from hardware.views import _non_empty

STAFF_EXAMPLE_SERVERS = 8


def _edits_in_admin(request: HttpRequest) -> bool:
    """Whether the user may edit the tables in the admin (a staff catalog editor or admin)."""
    return bool(request.user.is_staff and user_has_role(request.user, CATALOG_EDITOR))


@role_required(VIEWER)
@require_GET
def token_prices(request: HttpRequest) -> HttpResponse:
    """The current price of each hosted model per provider, per million input and output
    tokens, each as stated by its source (a price of unknown age is marked stale), filtered by
    the API's ``provider``, ``model`` and ``q``."""
    query = _non_empty(request.GET)
    filterset = TokenPriceFilterSet(query, queryset=current_token_prices(), request=request)
    rows = list(filterset.qs)
    context = {
        "form": filterset.form,
        "rows": rows,
        "query": query,
        "filtered": any(key in filterset.filters for key in query),
        "stale_days": settings.PRICE_STALE_DAYS,
        "edits": _edits_in_admin(request),
    }
    return render(request, "hardware/token_prices.html", context)


@role_required(VIEWER)
@require_GET
def assumptions(request: HttpRequest) -> HttpResponse:
    """The sourced assumptions: each figure with its unit, the scenario field it fills, its
    source and day, its confidence (stale ones marked), and the staff rule."""
    query = _non_empty(request.GET)
    filterset = AssumptionFilterSet(query, queryset=current_assumptions(), request=request)
    example = staff_usd_per_month(STAFF_EXAMPLE_SERVERS)
    context = {
        "form": filterset.form,
        "rows": list(filterset.qs),
        "query": query,
        "filtered": any(key in filterset.filters for key in query),
        "stale_days": settings.ASSUMPTION_STALE_DAYS,
        "edits": _edits_in_admin(request),
        "staff": {
            "field": STAFF_FIELD,
            "rule": STAFF_RULE,
            "keys": (ENGINEER_COST_KEY, SERVERS_PER_ENGINEER_KEY),
            "servers": STAFF_EXAMPLE_SERVERS,
            "example": example,
            "example_stated_on": (
                date.fromisoformat(example.stated_on) if example and example.stated_on else None
            ),
        },
    }
    return render(request, "hardware/assumptions.html", context)
