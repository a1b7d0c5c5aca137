"""Providers' egress tiers."""

from decimal import Decimal

from rest_framework import serializers

from ...models import EgressTier
from .common import CatalogSerializer, CurrencyField, must_be_positive, provider_field


def _bound_key(up_to_tb: Decimal | None) -> tuple[bool, Decimal]:
    return (up_to_tb is None, up_to_tb if up_to_tb is not None else Decimal(0))


class EgressTierListSerializer(serializers.ListSerializer):
    """Several tiers in one request: per provider their ``up_to_tb`` must rise, open-ended last."""

    def validate(self, attrs: list) -> list:
        previous: dict[int, Decimal | None] = {}
        errors: list[dict] = [{} for _ in attrs]
        for index, tier in enumerate(attrs):
            key = tier["provider"].pk
            if key in previous:
                before = previous[key]
                if before is None or (tier["up_to_tb"] is not None and tier["up_to_tb"] <= before):
                    shown = "no limit" if before is None else f"{before} TB"
                    errors[index] = {
                        "up_to_tb": [
                            f"Tiers must be listed with up_to_tb increasing, the one without "
                            f"limit last; the tier before this one goes up to {shown}."
                        ]
                    }
            previous[key] = tier["up_to_tb"]
        if any(errors):
            raise serializers.ValidationError(errors)
        return attrs


class EgressTierSerializer(CatalogSerializer):
    """One tier of a provider's internet egress fee. ``POST`` also takes a list of tiers, written
    together or not at all (``up_to_tb`` increasing per provider, the open-ended tier last)."""

    provider = provider_field()
    currency = CurrencyField()

    class Meta:
        model = EgressTier
        fields = [
            "id",
            "provider",
            "up_to_tb",
            "usd_per_gb",
            "scope",
            "source",
            "stated_on",
            "currency",
        ]
        list_serializer_class = EgressTierListSerializer
        validators: list = []  # the bounds are checked in validate(), naming up_to_tb
        extra_kwargs = {
            "up_to_tb": {
                "help_text": "the tier covers monthly traffic up to this [TB/month]; null = no limit",
            },
            "usd_per_gb": {"help_text": "[USD/GB] within this tier", "min_value": 0},
            "scope": {"help_text": "regions the tiers apply to"},
            "source": {"help_text": "where the figures come from"},
            "stated_on": {"help_text": "the date the source gave the tiers [date]"},
        }

    def validate_up_to_tb(self, value: Decimal | None) -> Decimal | None:
        must_be_positive(value, "up_to_tb")
        return value

    def validate(self, attrs: dict) -> dict:
        attrs = super().validate(attrs)
        instance = self.instance
        provider = attrs.get("provider", instance.provider if instance else None)
        bound = attrs.get("up_to_tb", instance.up_to_tb if instance else None)
        if provider is None:
            return attrs
        same = EgressTier.objects.filter(provider=provider, up_to_tb=bound)
        if bound is None:
            same = EgressTier.objects.filter(provider=provider, up_to_tb__isnull=True)
        if instance is not None:
            same = same.exclude(pk=instance.pk)
        if same.exists():
            what = "a tier without limit" if bound is None else f"a tier up to {bound} TB"
            raise serializers.ValidationError(
                {"up_to_tb": f"{provider.slug} already has {what}; change that one instead."}
            )
        return attrs
