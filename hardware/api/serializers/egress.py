"""Providers' egress tiers."""

from decimal import Decimal

from rest_framework import serializers

from hardware.api.serializers.common import (
    CatalogSerializer,
    CurrencyField,
    must_be_positive,
    provider_field,
)
from hardware.models import EgressTier
from hardware.selectors import egress_tiers_problem
from hardware.sources.egress import tier_order_problem


class EgressTierListSerializer(serializers.ListSerializer):
    """Several tiers in one request, written together or not at all: per provider they are
    listed in the format's order (``up_to_tb`` increasing, the one without limit last), and the
    provider's tiers after the write keep the format's rule (``hardware.sources.egress``)."""

    def validate(self, attrs: list) -> list:
        errors: list[dict] = [{} for _ in attrs]
        by_provider: dict[int, list[int]] = {}
        for index, tier in enumerate(attrs):
            by_provider.setdefault(tier["provider"].pk, []).append(index)
        for indexes in by_provider.values():
            bounds = [attrs[i]["up_to_tb"] for i in indexes]
            found = tier_order_problem(bounds, complete=False)
            if found is not None:
                errors[indexes[found[0]]] = {
                    "up_to_tb": [
                        "Tiers must be listed with up_to_tb increasing, the one without limit "
                        f"last: {found[1]}."
                    ]
                }
                continue
            problem = egress_tiers_problem(provider=attrs[indexes[0]]["provider"], adding=bounds)
            if problem:
                errors[indexes[-1]] = {"up_to_tb": [problem]}
        if any(errors):
            raise serializers.ValidationError(errors)
        return attrs


class EgressTierSerializer(CatalogSerializer):
    """One tier of a provider's internet egress fee. ``POST`` also takes a list of tiers, written
    together or not at all (``up_to_tb`` increasing per provider, the open-ended tier last).

    A write that changes a provider's tiers (a new tier, another bound or provider) must leave
    them in the format's form: bounds strictly increasing, the last tier and only the last
    without limit; a provider with tiers has one without limit (write it first, or the tiers as
    a list)."""

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
        if isinstance(self.parent, serializers.ListSerializer):
            return attrs  # the list checks its providers' tiers whole
        if instance is None or bound != instance.up_to_tb or provider != instance.provider:
            problem = egress_tiers_problem(provider=provider, adding=[bound], excluding=instance)
            if problem:
                raise serializers.ValidationError({"up_to_tb": problem})
        if instance is not None and provider != instance.provider:
            problem = egress_tiers_problem(provider=instance.provider, excluding=instance)
            if problem:
                raise serializers.ValidationError(
                    {"provider": f"The tier cannot leave {instance.provider.slug}: {problem}"}
                )
        return attrs


def egress_tier_delete_problem(tier: EgressTier) -> str:
    """Why deleting ``tier`` would break its provider's tiers (the format's rule); ``""``: it
    would not (a tier with a limit, or the provider's last tier)."""
    problem = egress_tiers_problem(provider=tier.provider, excluding=tier)
    return f"Not deleted: {problem} Delete the tiers with a limit first." if problem else ""
