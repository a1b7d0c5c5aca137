"""Serializers of the catalog API (docs/api.md, "Catalog").

Related objects read as a brief nested object (``{"slug", "name"}`` for a GPU) and are written by
their slug (an offer by its id, a region by its code within the offer's provider). Money is a
decimal string in USD; a write may say ``"currency": "USD"`` and nothing else. Every field's help
text names its unit; the OpenAPI schema shows it as the field's description.
"""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from ..models import (
    MONEY_QUANTUM,
    DedicatedQuote,
    EgressTier,
    GpuModel,
    InstanceOffer,
    InstancePrice,
    Provider,
    PurchaseQuote,
    Region,
)

# --- brief forms, nested on read ----------------------------------------------------------------


class GpuBriefSerializer(serializers.ModelSerializer):
    """A GPU model in brief."""

    class Meta:
        model = GpuModel
        fields = ["slug", "name"]
        extra_kwargs = {
            "slug": {"help_text": "identifier used by scenarios"},
            "name": {"help_text": "name, e.g. NVIDIA H100 SXM5 80GB"},
        }


class ProviderBriefSerializer(serializers.ModelSerializer):
    """A provider in brief."""

    class Meta:
        model = Provider
        fields = ["slug", "name", "kind"]
        extra_kwargs = {
            "slug": {"help_text": "identifier, e.g. aws"},
            "name": {"help_text": "name"},
            "kind": {"help_text": "what sort of seller"},
        }


class RegionBriefSerializer(serializers.ModelSerializer):
    """A region in brief (its provider is the offer's)."""

    class Meta:
        model = Region
        fields = ["id", "code", "name"]
        extra_kwargs = {
            "code": {"help_text": "the provider's own region name"},
            "name": {"help_text": "readable name"},
        }


class OfferBriefSerializer(serializers.ModelSerializer):
    """An instance offer in brief."""

    provider: serializers.SlugRelatedField[Provider] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, help_text="provider slug"
    )
    gpu: serializers.SlugRelatedField[GpuModel] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, help_text="GPU slug"
    )

    class Meta:
        model = InstanceOffer
        fields = ["id", "provider", "instance_type", "gpu", "gpu_count"]
        extra_kwargs = {
            "instance_type": {"help_text": "the provider's instance name"},
            "gpu_count": {"help_text": "GPUs per instance [count]"},
        }


class BriefRelatedField(serializers.SlugRelatedField):
    """Written as the related object's slug (or id), read as its brief serializer's form."""

    def __init__(self, brief: type[serializers.Serializer], **kwargs: Any) -> None:
        self.brief = brief
        super().__init__(**kwargs)

    def to_representation(self, obj: Any) -> Any:
        # One brief serializer per field, reused for every row: building a ModelSerializer's
        # fields is far dearer than rendering a row with them.
        brief = self.__dict__.get("_brief_serializer")
        if brief is None:
            brief = self.__dict__["_brief_serializer"] = self.brief(context=self.context)
        return brief.to_representation(obj)

    def use_pk_only_optimization(self) -> bool:
        return False

    def get_choices(self, cutoff: int | None = None) -> dict:
        # Only the browsable API lists choices; never load a whole table for it.
        return {}


def gpu_field(**kwargs: Any) -> BriefRelatedField:
    return BriefRelatedField(
        GpuBriefSerializer,
        slug_field="slug",
        queryset=GpuModel.objects.all(),
        help_text="GPU model: its slug on write, {slug, name} on read",
        **kwargs,
    )


def provider_field(**kwargs: Any) -> BriefRelatedField:
    return BriefRelatedField(
        ProviderBriefSerializer,
        slug_field="slug",
        queryset=Provider.objects.all(),
        help_text="provider: its slug on write, {slug, name, kind} on read",
        **kwargs,
    )


USD_ONLY = "USD"


class CurrencyField(serializers.ChoiceField):
    """``currency`` on write: amounts are USD; any other currency is refused, not converted."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            choices=[USD_ONLY],
            write_only=True,
            required=False,
            help_text="currency of the amounts; only USD is accepted (convert before sending)",
            error_messages={"invalid_choice": "Amounts must be in USD; “{input}” is not accepted."},
            **kwargs,
        )


def _positive(value: Decimal | int | None, what: str) -> None:
    if value is not None and value <= 0:
        raise serializers.ValidationError(f"{what} must be above 0.")


class CatalogSerializer(serializers.ModelSerializer):
    """Drops ``currency`` (checked to be USD) before saving."""

    def validate(self, attrs: dict) -> dict:
        attrs.pop("currency", None)
        return super().validate(attrs)


# --- GPU models -------------------------------------------------------------------------------

GPU_UNITS = {
    "slug": "identifier used by scenarios, e.g. h100-sxm5-80gb",
    "name": "name as sold",
    "vendor": "maker, e.g. NVIDIA",
    "form_factor": "board form, e.g. SXM5, PCIe",
    "memory_gb": "GPU memory [GB, 1e9 bytes]",
    "memory_bandwidth_tb_s": "memory bandwidth [TB/s]",
    "bf16_dense_tflops": "dense BF16 throughput [TFLOP/s]; null when not known or not supported",
    "fp16_dense_tflops": "dense FP16 throughput [TFLOP/s]; null when not known or not supported",
    "fp8_dense_tflops": "dense FP8 throughput [TFLOP/s]; null when not known or not supported",
    "tf32_dense_tflops": "dense TF32 throughput [TFLOP/s]; null when not known or not supported",
    "int8_dense_tops": "dense INT8 throughput [TOP/s]; null when not known or not supported",
    "fp32_tflops": "FP32 throughput [TFLOP/s]; null when not known",
    "tdp_w": "board power [W]",
    "interconnect": "GPU-to-GPU link, e.g. NVLink 4 900 GB/s",
    "release_date": "first availability [date]",
    "notes": "free text",
}


class GpuModelSerializer(CatalogSerializer):
    """A GPU model with its datasheet figures (dense throughput, no sparsity)."""

    class Meta:
        model = GpuModel
        fields = list(GPU_UNITS)
        extra_kwargs: dict[str, dict[str, Any]] = {
            name: {"help_text": text} for name, text in GPU_UNITS.items()
        }
        extra_kwargs["memory_gb"]["min_value"] = Decimal("0.01")
        extra_kwargs["memory_bandwidth_tb_s"]["min_value"] = Decimal("0.001")
        for name in (
            "bf16_dense_tflops",
            "fp16_dense_tflops",
            "fp8_dense_tflops",
            "tf32_dense_tflops",
            "int8_dense_tops",
            "fp32_tflops",
        ):
            extra_kwargs[name]["min_value"] = Decimal(0)


class CheapestPriceSerializer(serializers.Serializer):
    """The cheapest current price of a GPU from one provider in one billing model."""

    provider = ProviderBriefSerializer(
        source="offer.provider", read_only=True, help_text="who sells it"
    )
    billing = serializers.CharField(
        read_only=True, help_text="on_demand, spot, commit_1y, commit_3y, commit_5y"
    )
    usd_per_gpu_hour = serializers.DecimalField(
        max_digits=20, decimal_places=10, read_only=True, help_text="[USD per GPU-hour]"
    )
    usd_per_hour = serializers.DecimalField(
        max_digits=20, decimal_places=10, read_only=True, help_text="instance price [USD/h]"
    )
    offer = OfferBriefSerializer(read_only=True, help_text="the instance offer behind the price")
    region = RegionBriefSerializer(read_only=True, help_text="the region the price applies in")
    price_id = serializers.IntegerField(
        source="id", read_only=True, help_text="the price row (prices/{id}/) [id]"
    )
    first_seen = serializers.DateTimeField(read_only=True, help_text="[UTC]")
    last_seen = serializers.DateTimeField(read_only=True, help_text="[UTC]")


class CheapestSerializer(serializers.Serializer):
    """``gpus/{slug}/cheapest/``: per provider and billing, the lowest USD per GPU-hour."""

    gpu = GpuBriefSerializer(read_only=True, help_text="the GPU model")
    as_of = serializers.DateField(read_only=True, help_text="the day the catalog is read at [UTC]")
    results = CheapestPriceSerializer(
        many=True, read_only=True, help_text="one row per provider and billing"
    )


# --- providers, regions, offers ---------------------------------------------------------------


class ProviderSerializer(CatalogSerializer):
    """A seller of GPU capacity."""

    egress_known = serializers.BooleanField(
        read_only=True,
        help_text="false when the catalog holds no egress tiers for the provider: its egress "
        "price is unknown (not free)",
    )

    class Meta:
        model = Provider
        fields = ["slug", "name", "kind", "website", "egress_known"]
        extra_kwargs = {
            "slug": {"help_text": "identifier, e.g. aws"},
            "name": {"help_text": "name"},
            "kind": {"help_text": "what sort of seller"},
            "website": {"help_text": "URL"},
        }


class RegionSerializer(CatalogSerializer):
    """A provider's region, named as the provider names it."""

    provider = provider_field()

    class Meta:
        model = Region
        fields = ["id", "provider", "code", "name"]
        extra_kwargs = {
            "code": {"help_text": "the provider's own region name, e.g. us-east-1"},
            "name": {"help_text": "readable name"},
        }


class InstanceOfferSerializer(CatalogSerializer):
    """A cloud instance type with its GPUs: what one instance-hour buys."""

    provider = provider_field()
    gpu = gpu_field()

    class Meta:
        model = InstanceOffer
        fields = [
            "id",
            "provider",
            "instance_type",
            "gpu",
            "gpu_count",
            "vcpus",
            "memory_gib",
            "host",
            "gpu_confirmed",
        ]
        extra_kwargs = {
            "gpu_confirmed": {
                "help_text": "false when the GPU variant could not be settled from evidence "
                "(the model shown is the slower candidate)"
            },
            "instance_type": {"help_text": "the provider's instance name, e.g. p5.48xlarge"},
            "gpu_count": {"help_text": "GPUs per instance [count]", "min_value": 1},
            "vcpus": {"help_text": "vCPUs per instance [count]", "min_value": Decimal(0)},
            "memory_gib": {"help_text": "host RAM [GiB]", "min_value": Decimal(0)},
            "host": {"help_text": "on a marketplace, the company behind the offer"},
        }


# --- prices -----------------------------------------------------------------------------------


def money_string(value: Decimal) -> str:
    """A USD amount as the API writes it: a decimal string with 10 places (``"23.9200000000"``)."""
    return f"{Decimal(value).quantize(MONEY_QUANTUM):f}"


def utc_string(moment: datetime) -> str:
    """A time as the API writes it: ISO 8601 in UTC, ``Z`` for the offset."""
    text = moment.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


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
        return {
            "id": instance.pk,
            "offer": {
                "id": offer.pk,
                "provider": offer.provider.slug,
                "instance_type": offer.instance_type,
                "gpu": offer.gpu.slug,
                "gpu_count": offer.gpu_count,
            },
            "region": {"id": region.pk, "code": region.code, "name": region.name},
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


# --- egress tiers -----------------------------------------------------------------------------


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
        _positive(value, "up_to_tb")
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


# --- quotes -----------------------------------------------------------------------------------

QUOTE_COMMON = {
    "vendor": {"help_text": "who quoted"},
    "reference": {"help_text": "the vendor's quote number"},
    "server_description": {"help_text": "the server as quoted"},
    "gpus_per_server": {"help_text": "[GPUs per server]", "min_value": 1},
    "valid_until": {"help_text": "last day the quote holds [date]"},
    "status": {"help_text": "where the quote stands with procurement"},
    "notes": {"help_text": "free text"},
    "is_demo": {"help_text": "demonstration data, not a real quote"},
}


class DedicatedQuoteSerializer(CatalogSerializer):
    """A vendor's offer to lease dedicated GPU servers by the month."""

    gpu = gpu_field()
    currency = CurrencyField()

    class Meta:
        model = DedicatedQuote
        fields = ["id", *DedicatedQuote.edit_fields(), "is_demo", "currency"]
        extra_kwargs = {
            **QUOTE_COMMON,
            "usd_per_server_month": {"help_text": "[USD per server-month], each month of the term"},
            "setup_usd": {"help_text": "[USD] once, for the whole order", "min_value": 0},
            "term_months": {"help_text": "[months]", "min_value": 1},
            "included_egress_tb": {
                "help_text": "[TB/month] of egress included for the whole order",
                "min_value": 0,
            },
            "overage_usd_per_tb": {
                "help_text": "[USD/TB] beyond the included egress",
                "min_value": 0,
            },
        }

    def validate_usd_per_server_month(self, value: Decimal) -> Decimal:
        _positive(value, "usd_per_server_month")
        return value


class PurchaseQuoteSerializer(CatalogSerializer):
    """A reseller's offer to sell GPU servers to own and host."""

    gpu = gpu_field()
    currency = CurrencyField()

    class Meta:
        model = PurchaseQuote
        fields = ["id", *PurchaseQuote.edit_fields(), "is_demo", "currency"]
        extra_kwargs = {
            **QUOTE_COMMON,
            "capex_usd_per_server": {"help_text": "[USD per server], once"},
            "server_kw": {"help_text": "server power at load [kW]"},
            "lead_time_months": {"help_text": "order to delivery [months]"},
            "support_fraction_per_year": {
                "help_text": "yearly support contract [fraction of capex per year], 0 to 1",
                "min_value": 0,
                "max_value": 1,
            },
        }

    def validate_capex_usd_per_server(self, value: Decimal) -> Decimal:
        _positive(value, "capex_usd_per_server")
        return value

    def validate_server_kw(self, value: Decimal) -> Decimal:
        _positive(value, "server_kw")
        return value
