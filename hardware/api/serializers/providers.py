"""Providers, their regions and their instance offers."""

from decimal import Decimal

from rest_framework import serializers

from hardware.api.serializers.common import (
    GEOGRAPHY_HELP,
    CatalogSerializer,
    gpu_field,
    provider_field,
)
from hardware.models import InstanceOffer, Provider, Region


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
        fields = ["id", "provider", "code", "name", "geography"]
        extra_kwargs = {
            "code": {"help_text": "the provider's own region name, e.g. us-east-1"},
            "name": {"help_text": "readable name"},
            "geography": {
                "help_text": GEOGRAPHY_HELP
                + "; left out or empty on a new region: read from its code"
            },
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
