"""Price history rows."""

from datetime import datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from hardware.api.serializers.common import (
    BriefRelatedField,
    CatalogSerializer,
    CurrencyField,
    OfferBriefSerializer,
    RegionBriefSerializer,
    money_string,
    utc_string,
)
from hardware.confidence import LEVELS, price_confidence
from hardware.models import InstanceOffer, InstancePrice, Region


class RegionCodeField(serializers.CharField):
    """A region: written as its code (within the offer's provider), read in brief."""

    def to_representation(self, value: Any) -> Any:
        brief = self.__dict__.get("_brief_serializer")
        if brief is None:
            brief = self.__dict__["_brief_serializer"] = RegionBriefSerializer(context=self.context)
        return brief.to_representation(value)


class FlagField(serializers.CharField):
    """A price's flag: stored as text, empty when not flagged; read as null then."""

    def to_representation(self, value: Any) -> Any:
        return super().to_representation(value) or None


class InstancePriceSerializer(CatalogSerializer):
    """One price of an offer in a region and billing model, as observed over a time span."""

    offer = BriefRelatedField(
        OfferBriefSerializer,
        slug_field="pk",
        queryset=InstanceOffer.objects.select_related("provider", "gpu"),
        help_text="instance offer: its id [id] on write, in brief on read",
    )
    region = RegionCodeField(
        max_length=160,
        help_text="region: its code (of the offer's provider) on write, in brief on read",
    )
    # The metaclass takes declared fields out of the class, so this never shadows Field.source
    # at run time; the stubs cannot know that.
    source = serializers.CharField(  # type: ignore[assignment]
        source="source_name", max_length=200, help_text="file, feed or document the price came from"
    )
    first_seen = serializers.DateTimeField(
        required=False, help_text="when this catalog first had the price [UTC]; default now"
    )
    last_seen = serializers.DateTimeField(
        required=False, help_text="when this catalog last saw it [UTC]; default first_seen"
    )
    stated_on = serializers.DateField(
        required=False, help_text="the date the source gave the price [date]; default today"
    )
    stale = serializers.BooleanField(
        read_only=True,
        help_text="true when stated_on is older than the configured age (PRICE_STALE_DAYS)",
    )
    flag = FlagField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=300,
        help_text="null, or why the price looks wrong",
    )
    currency = CurrencyField()
    confidence = serializers.SerializerMethodField(
        help_text="high, medium or low: the price's age, flag, provider kind, egress and GPU "
        "variant weighed (hardware.confidence)"
    )
    confidence_reasons = serializers.SerializerMethodField(
        help_text="why, in words, one reason a line"
    )

    @extend_schema_field({"type": "string", "enum": list(LEVELS)})
    def get_confidence(self, price: InstancePrice) -> str:
        return price_confidence(price).level

    @extend_schema_field({"type": "array", "items": {"type": "string"}})
    def get_confidence_reasons(self, price: InstancePrice) -> list[str]:
        return list(price_confidence(price).reasons)

    class Meta:
        model = InstancePrice
        fields = [
            "id",
            "offer",
            "region",
            "zone",
            "billing",
            "usd_per_hour",
            "usd_per_gpu_hour",
            "source",
            "stated_on",
            "first_seen",
            "last_seen",
            "stale",
            "flag",
            "currency",
            "confidence",
            "confidence_reasons",
        ]
        read_only_fields = ["usd_per_gpu_hour"]
        validators: list = []  # uniqueness is checked in validate(), once the region is known
        extra_kwargs = {
            "zone": {"help_text": "availability zone the price applies in (spot)"},
            "billing": {"help_text": "how the price is paid"},
            "usd_per_hour": {"help_text": "price of one instance-hour [USD/h]", "min_value": 0},
            "usd_per_gpu_hour": {
                "help_text": "usd_per_hour / gpu_count [USD per GPU-hour] (derived)"
            },
        }

    def to_representation(self, instance: InstancePrice) -> dict:
        """The same document as DRF's field-by-field rendering (a test holds them equal), built
        directly: price lists are the API's busiest read."""
        offer, region = instance.offer, instance.region
        confidence = price_confidence(instance)
        return {
            "id": instance.pk,
            "offer": {
                "id": offer.pk,
                "provider": offer.provider.slug,
                "instance_type": offer.instance_type,
                "gpu": offer.gpu.slug,
                "gpu_count": offer.gpu_count,
            },
            "region": {
                "id": region.pk,
                "code": region.code,
                "name": region.name,
                "geography": region.geography,
            },
            "zone": instance.zone,
            "billing": instance.billing,
            "usd_per_hour": money_string(instance.usd_per_hour),
            "usd_per_gpu_hour": money_string(instance.usd_per_gpu_hour),
            "source": instance.source_name,
            "stated_on": instance.stated_on.isoformat(),
            "first_seen": utc_string(instance.first_seen),
            "last_seen": utc_string(instance.last_seen),
            "stale": instance.stale,
            "flag": instance.flag or None,
            "confidence": confidence.level,
            "confidence_reasons": list(confidence.reasons),
        }

    def validate(self, attrs: dict) -> dict:
        attrs = super().validate(attrs)
        instance: InstancePrice | None = self.instance
        # A new price has its offer (a required field) and its first_seen (set below).
        offer: InstanceOffer = (
            attrs["offer"] if instance is None else attrs.get("offer", instance.offer)
        )
        if "region" in attrs or instance is None:
            code = attrs.get("region")
            region = Region.objects.filter(provider=offer.provider, code=code).first()
            if region is None:
                raise serializers.ValidationError(
                    {"region": f"{offer.provider.slug} has no region “{code}”."}
                )
            attrs["region"] = region
        elif "offer" in attrs and attrs["offer"].provider_id != instance.region.provider_id:
            raise serializers.ValidationError(
                {"region": "The region belongs to another provider than the offer; give it."}
            )
        if "flag" in attrs:
            attrs["flag"] = attrs["flag"] or ""
        if instance is None:
            attrs.setdefault("first_seen", timezone.now())
            attrs.setdefault("last_seen", attrs["first_seen"])
            attrs.setdefault("stated_on", timezone.localdate())
        first: datetime = (
            attrs["first_seen"]
            if instance is None
            else attrs.get("first_seen", instance.first_seen)
        )
        last: datetime = (
            attrs["last_seen"] if instance is None else attrs.get("last_seen", instance.last_seen)
        )
        if last < first:
            raise serializers.ValidationError({"last_seen": "last_seen is before first_seen."})
        region = attrs.get("region", instance.region if instance else None)
        billing = attrs.get("billing", instance.billing if instance else None)
        clash = InstancePrice.objects.filter(
            offer=offer, region=region, billing=billing, first_seen=first
        )
        if instance is not None:
            clash = clash.exclude(pk=instance.pk)
        if clash.exists():
            raise serializers.ValidationError(
                {
                    "first_seen": "This offer already has a price in that region and billing "
                    "first seen at this time."
                }
            )
        return attrs
