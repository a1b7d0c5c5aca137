"""Server-rendered catalog pages."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.forms import ModelForm
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from accounts.decorators import role_required
from accounts.roles import CATALOG_EDITOR, VIEWER, user_has_role
from hardware.committed.selectors import market_observations
from hardware.coverage import (
    coverage_reports,
    coverage_sources,
    latest_coverage,
    regions_without_geography,
)
from hardware.display.price_flags import flag_words
from hardware.filtersets import PRICE_ORDERING, PriceFilterSet
from hardware.forms import DedicatedQuoteForm, PurchaseQuoteForm
from hardware.models import DedicatedQuote, GpuModel, PurchaseQuote, Region
from hardware.selectors import cheapest_prices, current_prices_for_pages, gpu_headline, quotes_list

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
    columns: dict[str, dict[str, str | None]] = {}
    for name in PRICE_ORDERING:
        if current == name:
            columns[name] = {"state": "ascending", "next": f"-{name}"}
        elif current == f"-{name}":
            columns[name] = {"state": "descending", "next": name}
        else:
            columns[name] = {"state": None, "next": name}
    return columns


@role_required(VIEWER)
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


@role_required(VIEWER)
@require_GET
def gpus(request: HttpRequest) -> HttpResponse:
    """The GPU models in the catalog with their datasheet figures."""
    return render(request, "hardware/gpus.html", {"gpus": GpuModel.objects.all()})


QUOTE_KINDS: dict[str, tuple[type[DedicatedQuote] | type[PurchaseQuote], type[ModelForm], str]] = {
    "dedicated": (DedicatedQuote, DedicatedQuoteForm, "dedicated-server quote"),
    "purchase": (PurchaseQuote, PurchaseQuoteForm, "purchase quote"),
}


@role_required(VIEWER)
@require_GET
def quotes(request: HttpRequest) -> HttpResponse:
    """Dedicated-server and purchase quotes, expired ones marked; links to create and edit
    them for catalog editors and admins."""
    edits = user_has_role(request.user, CATALOG_EDITOR)
    today = timezone.localdate()
    context = {
        "today": today,
        "quotes": quotes_list(today=today),
        "can": {kind: {"add": edits, "change": edits} for kind in QUOTE_KINDS},
    }
    return render(request, "hardware/quotes.html", context)


@role_required(CATALOG_EDITOR)
@require_http_methods(["GET", "POST"])
def quote_edit(request: HttpRequest, kind: str, pk: int | None = None) -> HttpResponse:
    """Create (no ``pk``) or edit a quote: catalog editors and admins (403 for other roles).

    Served whole, or as the form alone to an htmx request that puts it in the quotes page."""
    if kind not in QUOTE_KINDS:
        raise Http404("no such kind of quote")
    model, form_class, label = QUOTE_KINDS[kind]
    instance = None if pk is None else get_object_or_404(model, pk=pk)
    htmx = request.headers.get("HX-Request") == "true"
    form = form_class(request.POST or None, instance=instance)
    if request.method == "POST" and form.is_valid():
        quote = form.save()
        verb = "added" if instance is None else "saved"
        messages.success(request, f"The {label} {quote.vendor} {quote.reference} was {verb}.")
        if htmx:  # the whole quotes page again, with the message
            return HttpResponse(headers={"HX-Redirect": reverse("quotes")})
        return redirect("quotes")
    context = {"form": form, "kind": kind, "label": label, "quote": instance}
    if htmx:  # htmx swaps 2xx answers only: the form with its errors comes back as 200
        return render(request, "hardware/_quote_form.html", context)
    status = 400 if request.method == "POST" else 200
    return render(request, "hardware/quote_form.html", context, status=status)


@role_required(VIEWER)
@require_GET
def gpu_cheapest(request: HttpRequest, slug: str) -> HttpResponse:
    """The cheapest current price per GPU-hour of one GPU, by provider and billing, each saying
    whether it is flagged, stale or of an unconfirmed GPU variant (the API's ``cheapest``); the
    headline is the cheapest unflagged price, a cheaper flagged one beside it with why."""
    gpu = get_object_or_404(GpuModel, slug=slug)
    rows = cheapest_prices(gpu=gpu.slug)
    for row in rows:
        row["flag_words"] = flag_words(row["flag"] or "")
    context = {
        "gpu": gpu,
        "rows": rows,
        "headline": gpu_headline(gpu=gpu),
        "observations": market_observations(gpu=gpu.slug),
        "stale_days": settings.PRICE_STALE_DAYS,
    }
    return render(request, "hardware/gpu_cheapest.html", context)


COVERAGE_PAGE_SIZE = 20


class CoverageFilter(forms.Form):
    """The coverage page's one filter: a source (empty: every source)."""

    source = forms.ChoiceField(required=False, label="Source", choices=[("", "every source")])

    def __init__(self, *args: object, sources: list[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        field = self.fields["source"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", "every source"), *((s, s) for s in sources)]


@role_required(VIEWER)
@require_GET
def coverage(request: HttpRequest) -> HttpResponse:
    """What the catalog cannot name: per source and run, newest first, the GPU and instance names
    a refresh or catalog load could not map; the newest run of each source; the regions without
    a geography."""
    query = _non_empty(request.GET)
    form = CoverageFilter(query, sources=coverage_sources())
    source = form.cleaned_data["source"] if form.is_valid() else ""
    paginator = Paginator(coverage_reports(source=source, unmapped_only=True), COVERAGE_PAGE_SIZE)
    context = {
        "form": form,
        "query": query,
        "latest": latest_coverage(source=source),
        "page_obj": paginator.get_page(query.get("page")),
        "paginator": paginator,
        "regions": regions_without_geography(),
    }
    return render(request, "hardware/coverage.html", context)
