"""What every catalog serializer shares: the brief forms of related objects (nested on read,
written by slug), the currency field, and money and times as the API writes them."""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from hardware.models import MONEY_QUANTUM, GpuModel, InstanceOffer, Provider, Region
from hardware.names import hidden_characters_error

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


GEOGRAPHY_HELP = (
    "americas, europe, asia-pacific or other (Middle East, Africa); empty when the region's "
    "code does not say where it is"
)


class RegionBriefSerializer(serializers.ModelSerializer):
    """A region in brief (its provider is the offer's)."""

    class Meta:
        model = Region
        fields = ["id", "code", "name", "geography"]
        extra_kwargs = {
            "code": {"help_text": "the provider's own region name"},
            "name": {"help_text": "readable name"},
            "geography": {"help_text": GEOGRAPHY_HELP},
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


def must_be_positive(value: Decimal | int | None, what: str) -> None:
    if value is not None and value <= 0:
        raise serializers.ValidationError(f"{what} must be above 0.")


class CatalogSerializer(serializers.ModelSerializer):
    """Drops ``currency`` (checked to be USD) before saving; refuses text holding invisible
    format characters (``hardware.names.hidden_characters``) at its field."""

    def validate(self, attrs: dict) -> dict:
        attrs.pop("currency", None)
        problems = {
            name: [hidden_characters_error(value)]
            for name, value in attrs.items()
            if isinstance(value, str) and hidden_characters_error(value)
        }
        if problems:
            raise serializers.ValidationError(problems)
        return super().validate(attrs)


def money_string(value: Decimal) -> str:
    """A USD amount as the API writes it: a decimal string with 10 places (``"23.9200000000"``)."""
    return f"{Decimal(value).quantize(MONEY_QUANTUM):f}"


def utc_string(moment: datetime) -> str:
    """A time as the API writes it: ISO 8601 in UTC, ``Z`` for the offset."""
    text = moment.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
