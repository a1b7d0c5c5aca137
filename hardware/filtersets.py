"""Filters for catalog lists, shared by the pages and the REST API (docs/api.md names them).

A FilterSet here filters whatever queryset it is given: the Prices page passes the current prices
(``selectors.current_prices``), the API can pass the whole price history or the current prices.
"""

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import django_filters
from django import forms
from django.db.models import F, Model, OrderBy, Q, QuerySet
from django_filters.rest_framework import DjangoFilterBackend  # type: ignore[import-untyped]
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.settings import api_settings

from hardware.confidence import LABELS as LEVELS_LABELS
from hardware.confidence import LEVELS, confidence_filter
from hardware.geography import GEOGRAPHIES, LABELS
from hardware.models import (
    MONEY,
    Billing,
    DedicatedQuote,
    EgressTier,
    GpuModel,
    InstanceOffer,
    InstancePrice,
    Provider,
    ProviderKind,
    PurchaseQuote,
    QuoteStatus,
    Region,
)

# ``ordering`` values (the API's names) and the fields they sort on.
PRICE_ORDERING = {
    "usd_per_gpu_hour": "usd_per_gpu_hour",
    "usd_per_hour": "usd_per_hour",
    "gpu_count": "offer__gpu_count",
    "first_seen": "first_seen",
    "last_seen": "last_seen",
}

# Ties in the chosen order are broken the same way every time, so pages do not overlap.
PRICE_TIE_BREAK = ("offer__provider__slug", "offer__instance_type", "region__code", "billing", "pk")

# Fields the free-text search ``q`` looks in; every word must match one of them.
PRICE_SEARCH_FIELDS = (
    "offer__instance_type",
    "offer__host",
    "offer__provider__slug",
    "offer__provider__name",
    "offer__gpu__slug",
    "offer__gpu__name",
    "region__code",
    "region__name",
)


def _start_of_day(day: date) -> datetime:
    """Midnight UTC at the start of ``day`` (dates in filters are UTC days, docs/api.md)."""
    return datetime.combine(day, time.min, tzinfo=UTC)


class IntegerFilter(django_filters.NumberFilter):
    """A number filter that takes whole numbers only."""

    field_class = forms.IntegerField


class OrderingChoiceField(django_filters.fields.ChoiceField):
    """One name of an ``ordering`` list: an empty one (``?ordering=,``) is an error, not "any"."""

    def validate(self, value: Any) -> None:
        if value in self.empty_values:
            raise forms.ValidationError(
                "An empty name in the list (a stray comma?); give field names, - for descending.",
                code="empty_ordering",
            )
        super().validate(value)


class StableOrderingFilter(django_filters.OrderingFilter):
    """``?ordering=field`` or ``-field``; ties broken by a fixed order so pagination is stable.

    An empty figure (a GPU with no FP4 rate) sorts last either way, on SQLite and PostgreSQL
    alike (PostgreSQL alone would put it first in a descending order).
    """

    field_class = OrderingChoiceField

    def __init__(self, *args: Any, tie_break: tuple[str, ...] = ("pk",), **kwargs: Any) -> None:
        self.tie_break = tie_break
        super().__init__(*args, **kwargs)

    def filter(self, qs: QuerySet, value: list[str] | None) -> QuerySet:
        if not value:  # None or [] (django_filters.constants.EMPTY_VALUES)
            return qs
        ordering = [_nulls_last(self.get_ordering_value(param)) for param in value]
        return qs.order_by(*ordering, *self.tie_break)


def _nulls_last(term: str) -> OrderBy:
    """``-field`` or ``field`` as an order with empty values last."""
    if term.startswith("-"):
        return F(term[1:]).desc(nulls_last=True)
    return F(term).asc(nulls_last=True)


class PriceFilterForm(forms.Form):
    """The form behind ``PriceFilterSet``: checks that ranges are not reversed."""

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        low, high = cleaned.get("min_usd_per_gpu_hour"), cleaned.get("max_usd_per_gpu_hour")
        if low is not None and high is not None and low > high:
            raise forms.ValidationError(
                "The minimum USD per GPU-hour is above the maximum.", code="price_range_reversed"
            )
        after, before = cleaned.get("observed_after"), cleaned.get("observed_before")
        if after is not None and before is not None and after > before:
            raise forms.ValidationError(
                "“Observed on or after” is later than “observed on or before”.",
                code="date_range_reversed",
            )
        return cleaned


class PriceFilterSet(django_filters.FilterSet):
    """Filters for instance prices; the names are the API contract's (docs/api.md).

    Date filters are inclusive UTC days and select prices observed in the window: a price seen
    from ``first_seen`` to ``last_seen`` matches when that span overlaps the days asked for.
    """

    gpu = django_filters.ModelChoiceFilter(
        field_name="offer__gpu",
        to_field_name="slug",
        queryset=GpuModel.objects.all(),
        label="GPU",
        empty_label="Any GPU",
    )
    provider = django_filters.ModelChoiceFilter(
        field_name="offer__provider",
        to_field_name="slug",
        queryset=Provider.objects.all(),
        label="Provider",
        empty_label="Any provider",
    )
    region = django_filters.CharFilter(
        field_name="region__code",
        label="Region code",
        max_length=160,
        help_text="as the provider writes it, e.g. us-east-1",
    )
    geography = django_filters.ChoiceFilter(
        field_name="region__geography",
        choices=[(geography, LABELS[geography]) for geography in GEOGRAPHIES],
        label="Geography",
        empty_label="Anywhere",
        help_text="americas, europe, asia-pacific or other (Middle East, Africa)",
    )
    billing = django_filters.ChoiceFilter(
        choices=Billing.choices, label="Billing", empty_label="Any billing"
    )
    gpu_count = IntegerFilter(
        field_name="offer__gpu_count",
        label="GPUs per instance",
        min_value=1,
        widget=forms.NumberInput(attrs={"min": 1, "step": 1}),
    )
    min_usd_per_gpu_hour = django_filters.NumberFilter(
        field_name="usd_per_gpu_hour",
        lookup_expr="gte",
        label="Min USD per GPU-hour",
        max_digits=MONEY["max_digits"],
        decimal_places=MONEY["decimal_places"],
        widget=forms.NumberInput(attrs={"min": 0, "step": "any"}),
    )
    max_usd_per_gpu_hour = django_filters.NumberFilter(
        field_name="usd_per_gpu_hour",
        lookup_expr="lte",
        label="Max USD per GPU-hour",
        max_digits=MONEY["max_digits"],
        decimal_places=MONEY["decimal_places"],
        widget=forms.NumberInput(attrs={"min": 0, "step": "any"}),
    )
    observed_after = django_filters.DateFilter(
        method="filter_observed_after",
        label="Observed on or after",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    observed_before = django_filters.DateFilter(
        method="filter_observed_before",
        label="Observed on or before",
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    q = django_filters.CharFilter(
        method="filter_q",
        label="Search",
        max_length=200,
        help_text="instance type, provider, GPU or region",
    )
    confidence = django_filters.ChoiceFilter(
        method="filter_confidence",
        choices=[(level, LEVELS_LABELS[level]) for level in LEVELS],
        label="Confidence",
        empty_label="Any confidence",
        help_text="high: fresh, unflagged, a provider's list price, egress known, GPU confirmed",
    )
    ordering = StableOrderingFilter(
        fields=tuple((field, name) for name, field in PRICE_ORDERING.items()),
        field_labels={
            "usd_per_gpu_hour": "USD per GPU-hour",
            "usd_per_hour": "USD per instance-hour",
            "offer__gpu_count": "GPU count",
            "first_seen": "first seen",
            "last_seen": "last seen",
        },
        tie_break=PRICE_TIE_BREAK,
        label="Order by",
    )

    class Meta:
        model = InstancePrice
        form = PriceFilterForm
        fields: list[str] = []

    def filter_observed_after(self, queryset: QuerySet, name: str, value: date) -> QuerySet:
        """Prices still seen on or after the start of day ``value`` (UTC)."""
        return queryset.filter(last_seen__gte=_start_of_day(value))

    def filter_observed_before(self, queryset: QuerySet, name: str, value: date) -> QuerySet:
        """Prices first seen before the end of day ``value`` (UTC)."""
        if value == date.max:
            return queryset
        return queryset.filter(first_seen__lt=_start_of_day(value + timedelta(days=1)))

    def filter_confidence(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """Only the prices of that confidence (``hardware.confidence``)."""
        return confidence_filter(queryset, value)

    def filter_q(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """Every word of ``value`` in one of the searched fields (case-insensitive)."""
        for word in value.split():
            match = Q()
            for field in PRICE_SEARCH_FIELDS:
                match |= Q(**{f"{field}__icontains": word})
            queryset = queryset.filter(match)
        return queryset


# --- the API's filter backend


class StrictFilterBackend(DjangoFilterBackend):
    """django-filter's backend for the API, refusing query parameters the list does not take: an
    unknown filter (``?gpu_model=``) is a 400 naming it, never silently ignored.

    A list takes its FilterSet's filters, its paginator's ``page`` and ``page_size``, DRF's
    ``format`` and the names in the view's ``query_params_extra`` (such as ``as_of``)."""

    def filter_queryset(self, request: Any, queryset: Any, view: Any) -> Any:
        filterset_class = self.get_filterset_class(view, queryset)
        query_params_refuse_unknown(request, query_params_known(view, filterset_class))
        return super().filter_queryset(request, queryset, view)


class StrictQueryBackend(BaseFilterBackend):
    """The same refusal of unknown query parameters, for a list that is no queryset (it filters
    nothing itself): it takes ``page``, ``page_size``, ``format`` and ``query_params_extra``."""

    def filter_queryset(self, request: Any, queryset: Any, view: Any) -> Any:
        query_params_refuse_unknown(request, query_params_known(view, None))
        return queryset

    def get_schema_operation_parameters(self, view: Any) -> list:
        return []  # the view documents its own parameters


def query_params_refuse_unknown(request: Any, known: set[str]) -> None:
    """400 naming each query parameter of ``request`` not in ``known``."""
    unknown = [name for name in request.query_params if name not in known]
    if unknown:
        listed = ", ".join(sorted(known))
        raise ValidationError(
            {name: [f"unknown query parameter; this one takes: {listed}"] for name in unknown}
        )


def query_params_known(view: Any, filterset_class: Any) -> set[str]:
    """The query parameters ``view`` takes (see :class:`StrictFilterBackend`)."""
    known = {api_settings.URL_FORMAT_OVERRIDE, *getattr(view, "query_params_extra", ())}
    if filterset_class is not None:
        known.update(filterset_class.base_filters)
    paginator = getattr(view, "paginator", None)
    for attribute in ("page_query_param", "page_size_query_param"):
        name = getattr(paginator, attribute, None)
        if name:
            known.add(name)
    known.discard(None)
    return known


# --- the other catalog lists (docs/api.md: "other lists filter by their slugs and names the same
# way"); one FilterSet per model, for the API and the pages alike.


def _search(queryset: QuerySet, value: str, fields: tuple[str, ...]) -> QuerySet:
    """Every word of ``value`` found (case-insensitive) in one of ``fields``."""
    for word in value.split():
        match = Q()
        for field in fields:
            match |= Q(**{f"{field}__icontains": word})
        queryset = queryset.filter(match)
    return queryset


class SearchFilter(django_filters.CharFilter):
    """``q``: free text; every word must appear in one of the given fields."""

    def __init__(self, *args: Any, search_fields: tuple[str, ...], **kwargs: Any) -> None:
        self.search_fields = search_fields
        kwargs.setdefault("label", "Search")
        kwargs.setdefault("max_length", 200)
        super().__init__(*args, **kwargs)

    def filter(self, qs: QuerySet, value: str) -> QuerySet:
        if value in django_filters.constants.EMPTY_VALUES:
            return qs
        return _search(qs, value, self.search_fields)


def _slug_choice(
    field_name: str, model: type[Model], label: str
) -> django_filters.ModelChoiceFilter:
    return django_filters.ModelChoiceFilter(
        field_name=field_name,
        to_field_name="slug",
        queryset=model._default_manager.all(),
        label=label,
    )


class GpuModelFilterSet(django_filters.FilterSet):
    """Filters for GPU models."""

    slug = django_filters.CharFilter(label="GPU slug", max_length=64)
    vendor = django_filters.CharFilter(lookup_expr="iexact", label="Vendor", max_length=40)
    min_memory_gb = django_filters.NumberFilter(
        field_name="memory_gb",
        lookup_expr="gte",
        label="Min memory [GB]",
        max_digits=8,
        decimal_places=2,
    )
    q = SearchFilter(
        search_fields=("slug", "name", "vendor", "form_factor"), help_text="slug, name or vendor"
    )
    ordering = StableOrderingFilter(
        fields=(
            ("memory_gb", "memory_gb"),
            ("memory_bandwidth_tb_s", "memory_bandwidth_tb_s"),
            ("bf16_dense_tflops", "bf16_dense_tflops"),
            ("fp8_dense_tflops", "fp8_dense_tflops"),
            ("fp4_dense_tflops", "fp4_dense_tflops"),
            ("tdp_w", "tdp_w"),
            ("release_date", "release_date"),
        ),
        tie_break=("slug",),
    )

    class Meta:
        model = GpuModel
        fields: list[str] = []


class ProviderFilterSet(django_filters.FilterSet):
    """Filters for providers."""

    slug = django_filters.CharFilter(label="Provider slug", max_length=64)
    kind = django_filters.ChoiceFilter(choices=ProviderKind.choices, label="Kind")
    q = SearchFilter(search_fields=("slug", "name"), help_text="slug or name")

    class Meta:
        model = Provider
        fields: list[str] = []


NO_GEOGRAPHY = "none"
"""``?geography=none`` on regions: the regions no geography was found for."""


class RegionFilterSet(django_filters.FilterSet):
    """Filters for regions."""

    provider = _slug_choice("provider", Provider, "Provider")
    code = django_filters.CharFilter(label="Region code", max_length=160)
    geography = django_filters.ChoiceFilter(
        choices=[
            *((geography, LABELS[geography]) for geography in GEOGRAPHIES),
            (NO_GEOGRAPHY, "not placed"),
        ],
        method="filter_geography",
        label="Geography",
        help_text="americas, europe, asia-pacific, other, or none: the regions whose code does "
        "not say where they are",
    )
    q = SearchFilter(search_fields=("code", "name", "provider__slug"), help_text="code or name")

    class Meta:
        model = Region
        fields: list[str] = []

    def filter_geography(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """The regions in ``value``; ``none``: those with no geography."""
        return queryset.filter(geography="" if value == NO_GEOGRAPHY else value)


class InstanceOfferFilterSet(django_filters.FilterSet):
    """Filters for instance offers."""

    provider = _slug_choice("provider", Provider, "Provider")
    gpu = _slug_choice("gpu", GpuModel, "GPU")
    gpu_count = IntegerFilter(field_name="gpu_count", label="GPUs per instance", min_value=1)
    instance_type = django_filters.CharFilter(label="Instance type", max_length=120)
    q = SearchFilter(
        search_fields=("instance_type", "host", "provider__slug", "provider__name", "gpu__slug"),
        help_text="instance type, host, provider or GPU",
    )
    ordering = StableOrderingFilter(
        fields=(("gpu_count", "gpu_count"), ("vcpus", "vcpus"), ("memory_gib", "memory_gib")),
        tie_break=("provider__slug", "instance_type"),
    )

    class Meta:
        model = InstanceOffer
        fields: list[str] = []


class EgressTierFilterSet(django_filters.FilterSet):
    """Filters for egress tiers."""

    provider = _slug_choice("provider", Provider, "Provider")

    class Meta:
        model = EgressTier
        fields: list[str] = []


class _QuoteFilterSet(django_filters.FilterSet):
    gpu = _slug_choice("gpu", GpuModel, "GPU")
    vendor = django_filters.CharFilter(lookup_expr="iexact", label="Vendor", max_length=120)
    reference = django_filters.CharFilter(label="Vendor's quote number", max_length=80)
    status = django_filters.ChoiceFilter(choices=QuoteStatus.choices, label="Status")
    is_demo = django_filters.BooleanFilter(label="Demonstration data")
    q = SearchFilter(
        search_fields=("vendor", "reference", "server_description", "gpu__slug"),
        help_text="vendor, reference, server or GPU",
    )


def _quote_ordering(*fields: str) -> StableOrderingFilter:
    """``?ordering`` on a quote's ``fields`` (named as in the model), ties broken by the quote's
    unique key (vendor and reference)."""
    return StableOrderingFilter(
        fields=tuple((field, field) for field in fields), tie_break=("vendor", "reference")
    )


class DedicatedQuoteFilterSet(_QuoteFilterSet):
    """Filters for dedicated-server quotes."""

    ordering = _quote_ordering("usd_per_server_month", "term_months", "valid_until")

    class Meta:
        model = DedicatedQuote
        fields: list[str] = []


class PurchaseQuoteFilterSet(_QuoteFilterSet):
    """Filters for purchase quotes."""

    ordering = _quote_ordering(
        "capex_usd_per_server", "server_kw", "lead_time_months", "valid_until"
    )

    class Meta:
        model = PurchaseQuote
        fields: list[str] = []
