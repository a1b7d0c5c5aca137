"""Filters of the token price and assumption lists, shared by the pages and the REST API
(docs/api.md names them)."""

import django_filters

from hardware.filtersets import SearchFilter, StableOrderingFilter
from hardware.models import Assumption, Confidence, TokenPrice


class TokenPriceFilterSet(django_filters.FilterSet):
    """Filters for token prices: ``provider`` and ``model`` as the catalog writes them, ``q``
    free text."""

    provider = django_filters.CharFilter(
        label="Provider", max_length=64, help_text="as the catalog writes it, e.g. fireworks"
    )
    model = django_filters.CharFilter(
        label="Model", max_length=200, help_text="as the catalog writes it, whole"
    )
    q = SearchFilter(
        search_fields=("provider", "model", "notes", "source"),
        help_text="provider, model, notes or source",
    )
    ordering = StableOrderingFilter(
        fields=(
            ("usd_per_million_output_tokens", "usd_per_million_output_tokens"),
            ("usd_per_million_input_tokens", "usd_per_million_input_tokens"),
            ("stated_on", "stated_on"),
        ),
        field_labels={
            "usd_per_million_output_tokens": "USD per million output tokens",
            "usd_per_million_input_tokens": "USD per million input tokens",
            "stated_on": "stated on",
        },
        tie_break=("provider", "model", "pk"),
        label="Order by",
    )

    class Meta:
        model = TokenPrice
        fields: list[str] = []


class AssumptionFilterSet(django_filters.FilterSet):
    """Filters for sourced assumptions: the field a figure fills, its confidence, ``q``."""

    applies_to = django_filters.CharFilter(
        label="Fills", max_length=120, help_text="the scenario field, e.g. on_prem.pue"
    )
    confidence = django_filters.ChoiceFilter(choices=Confidence.choices, label="Confidence")
    q = SearchFilter(
        search_fields=("key", "applies_to", "unit", "source", "notes"),
        help_text="key, field, unit, source or notes",
    )

    class Meta:
        model = Assumption
        fields: list[str] = []
