"""Server-rendered catalog pages."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from .filtersets import PRICE_ORDERING, PriceFilterSet
from .models import GpuModel, Region
from .selectors import cheapest_prices, current_prices_for_pages

PRICES_PAGE_SIZE = 50


def _non_empty(query: QueryDict) -> QueryDict:
    """``query`` without its empty parameters (what an unfilled GET form sends)."""
    kept = QueryDict(mutable=True)
    for key, values in query.lists():
        values = [v for v in values if v.strip()]
        if values:
            kept.setlist(key, values)
    return kept


def _sort_columns(ordering: list[str] | None) -> dict[str, dict[str, str | None]]:
    """Per sortable column: its ``aria-sort`` state and the ``ordering`` its header link asks
    for (ascending first, then descending)."""
    current = ordering[0] if ordering else None
    columns = {}
    for name in PRICE_ORDERING:
        if current == name:
            columns[name] = {"state": "ascending", "next": f"-{name}"}
        elif current == f"-{name}":
            columns[name] = {"state": "descending", "next": name}
        else:
            columns[name] = {"state": None, "next": name}
    return columns


@login_required
@require_GET
def prices(request: HttpRequest) -> HttpResponse:
    """The current cloud prices (latest per offer, region and billing), filtered and sorted with
    the API's filter names, 50 rows a page."""
    query = _non_empty(request.GET)
    filterset = PriceFilterSet(query, queryset=current_prices_for_pages(), request=request)
    rows = filterset.qs  # validates the filters; invalid ones are left out and reported
    form = filterset.form
    form.fields["region"].widget.attrs["list"] = "region-codes"

    paginator = Paginator(rows, PRICES_PAGE_SIZE)
    page = paginator.get_page(query.get("page"))

    ordering = form.cleaned_data.get("ordering")
    context = {
        "filterset": filterset,
        "form": form,
        "page_obj": page,
        "paginator": paginator,
        "query": query,
        "ordering": ",".join(ordering) if ordering else "",
        "sort": _sort_columns(ordering),
        "filtered": any(key in filterset.filters and key != "ordering" for key in query),
        "region_codes": Region.objects.order_by("code").values_list("code", flat=True).distinct(),
        "stale_days": settings.PRICE_STALE_DAYS,
    }
    return render(request, "hardware/prices.html", context)


@login_required
@require_GET
def gpu_cheapest(request: HttpRequest, slug: str) -> HttpResponse:
    """The cheapest current price per GPU-hour of one GPU, by provider and billing, each saying
    whether it is flagged, stale or of an unconfirmed GPU variant (the API's ``cheapest``)."""
    gpu = get_object_or_404(GpuModel, slug=slug)
    rows = cheapest_prices(gpu=gpu.slug)
    context = {
        "gpu": gpu,
        "rows": rows,
        "cheapest": rows[0] if rows else None,
        "stale_days": settings.PRICE_STALE_DAYS,
    }
    return render(request, "hardware/gpu_cheapest.html", context)
