"""The token price and assumption endpoints of the catalog API (docs/api.md, "Catalog"):
``token-prices/`` and ``assumptions/``, ``assumptions/{key}/``. Viewers read, catalog editors
write (``accounts.permissions.CatalogPermission``, through ``CatalogViewSet``).

A list shows the current row per (provider, model) or per key (``hardware.hosted.selectors``); a token
price written with ``POST`` is a new price of its (provider, model), first seen now, the older
one kept as history (``token-prices/{id}/`` reads any row, history included); an assumption
posted under a key the catalog holds is a newer statement of that key, likewise. Every write is
kept, with who made it, in the rows' history (django-simple-history).
"""

from django.db.models import QuerySet
from django.utils import timezone
from rest_framework import serializers

from hardware.api.serializers import CatalogSerializer, CurrencyField
from hardware.api.views import CatalogViewSet
from hardware.hosted.filters import AssumptionFilterSet, TokenPriceFilterSet
from hardware.hosted.load import APPLIES_TO_RE, KEY_RE, PROVIDER_RE
from hardware.hosted.selectors import current_assumptions, current_token_prices
from hardware.models import Assumption, TokenPrice

SEEN_FIELDS = {
    "first_seen": {"help_text": "when this catalog first had it [UTC]; set on create"},
    "last_seen": {"help_text": "when this catalog last loaded it [UTC]"},
}


class TokenPriceSerializer(CatalogSerializer):
    """A hosted model's price per million input and output tokens, with its source."""

    stale = serializers.BooleanField(
        read_only=True,
        help_text="true when stated_on is unknown or older than the configured age "
        "(PRICE_STALE_DAYS)",
    )
    currency = CurrencyField()

    class Meta:
        model = TokenPrice
        fields = [
            "id",
            "provider",
            "model",
            "usd_per_million_input_tokens",
            "usd_per_million_output_tokens",
            "source",
            "stated_on",
            "stale",
            "flag",
            "notes",
            "first_seen",
            "last_seen",
            "currency",
        ]
        read_only_fields = ["first_seen", "last_seen"]
        extra_kwargs = {
            "provider": {"help_text": "the seller as the catalog writes it, e.g. fireworks"},
            "model": {"help_text": "the model as the catalog writes it"},
            "usd_per_million_input_tokens": {
                "help_text": "price of a million prompt tokens [USD per million tokens]",
                "min_value": 0,
            },
            "usd_per_million_output_tokens": {
                "help_text": "price of a million generated tokens [USD per million tokens]",
                "min_value": 0,
            },
            "source": {"help_text": "where the price is published"},
            "stated_on": {"help_text": "the day the source stated the price [date]; null: unknown"},
            "flag": {"help_text": "why the price may not hold; empty: not flagged"},
            "notes": {"help_text": "free text"},
            **SEEN_FIELDS,
        }

    def validate_provider(self, value: str) -> str:
        if not PROVIDER_RE.match(value):
            raise serializers.ValidationError(
                "Use lower-case letters, digits, “_”, “.” and “-”, as the catalog writes sellers."
            )
        return value

    def validate(self, attrs: dict) -> dict:
        attrs = super().validate(attrs)
        if self.instance is not None:
            provider = attrs.get("provider", self.instance.provider)
            model = attrs.get("model", self.instance.model)
            clash = TokenPrice.objects.filter(
                provider=provider, model=model, first_seen=self.instance.first_seen
            ).exclude(pk=self.instance.pk)
            if clash.exists():
                raise serializers.ValidationError(
                    {
                        "model": f"{provider} {model} already has a price seen first at "
                        f"{self.instance.first_seen:%Y-%m-%d %H:%M:%S} UTC; change that one."
                    }
                )
        return attrs

    def create(self, validated_data: dict) -> TokenPrice:
        now = timezone.now()
        return super().create({**validated_data, "first_seen": now, "last_seen": now})


class AssumptionSerializer(CatalogSerializer):
    """A sourced figure for plans without a quote, under the key a scenario names."""

    stale = serializers.BooleanField(
        read_only=True,
        help_text="true when stated_on is unknown or older than the configured age "
        "(ASSUMPTION_STALE_DAYS)",
    )

    class Meta:
        model = Assumption
        fields = [
            "key",
            "value",
            "unit",
            "applies_to",
            "source",
            "stated_on",
            "confidence",
            "stale",
            "notes",
            "first_seen",
            "last_seen",
        ]
        read_only_fields = ["first_seen", "last_seen"]
        extra_kwargs = {
            "key": {"help_text": 'the name a scenario refers to it by: {"assumption": key}'},
            "value": {"help_text": "the figure [in unit]", "min_value": 0},
            "unit": {"help_text": "what the value counts, e.g. USD per kWh"},
            "applies_to": {
                "help_text": "the scenario field it fills, <dedicated|on_prem|option>.<field>, "
                "e.g. on_prem.colo_usd_per_kw_month"
            },
            "source": {"help_text": "who states the figure, and where"},
            "stated_on": {
                "help_text": "the day the source stated the figure [date]; null: unknown"
            },
            "confidence": {"help_text": "how far the figure can be relied on"},
            "notes": {"help_text": "free text"},
            **SEEN_FIELDS,
        }

    def validate_key(self, value: str) -> str:
        if not KEY_RE.match(value):
            raise serializers.ValidationError("Use lower-case letters, digits and “_”.")
        if self.instance is not None and value != self.instance.key:
            raise serializers.ValidationError(
                "A figure keeps its key; post the figure under the new key instead."
            )
        return value

    def validate_applies_to(self, value: str) -> str:
        if not APPLIES_TO_RE.match(value):
            raise serializers.ValidationError(
                "Write the field it fills as <dedicated|on_prem|option>.<field>, "
                "e.g. on_prem.colo_usd_per_kw_month."
            )
        return value

    def create(self, validated_data: dict) -> Assumption:
        now = timezone.now()
        return super().create({**validated_data, "first_seen": now, "last_seen": now})


class TokenPriceViewSet(CatalogViewSet):
    """Hosted models' token prices: the list holds the current price per (provider, model);
    a row by its id may be an older one (history)."""

    serializer_class = TokenPriceSerializer
    filterset_class = TokenPriceFilterSet
    queryset = TokenPrice.objects.order_by("provider", "model", "pk")

    def get_queryset(self) -> QuerySet[TokenPrice]:
        if self.action == "list":
            return current_token_prices()
        return super().get_queryset()


class AssumptionViewSet(CatalogViewSet):
    """Sourced assumptions, looked up by key: the current figure of each key."""

    serializer_class = AssumptionSerializer
    filterset_class = AssumptionFilterSet
    lookup_field = "key"
    queryset = Assumption.objects.none()

    def get_queryset(self) -> QuerySet[Assumption]:
        return current_assumptions()
