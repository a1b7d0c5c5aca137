"""Serializers of the catalog API (docs/api.md, "Catalog").

Related objects read as a brief nested object (``{"slug", "name"}`` for a GPU) and are written by
their slug (an offer by its id, a region by its code within the offer's provider). Money is a
decimal string in USD; a write may say ``"currency": "USD"`` and nothing else. Every field's help
text names its unit; the OpenAPI schema shows it as the field's description.

Split by resource: ``common`` (brief forms, related fields, currency, money and times), ``gpus``,
``providers`` (with regions and offers), ``prices``, ``egress`` and ``quotes``; every serializer is
named here.
"""

from hardware.api.serializers.common import (
    BriefRelatedField,
    CatalogSerializer,
    CurrencyField,
    GpuBriefSerializer,
    OfferBriefSerializer,
    ProviderBriefSerializer,
    RegionBriefSerializer,
    money_string,
    utc_string,
)
from hardware.api.serializers.egress import (
    EgressTierListSerializer,
    EgressTierSerializer,
    egress_tier_delete_problem,
)
from hardware.api.serializers.gpus import (
    CheapestPriceSerializer,
    CheapestSerializer,
    GpuModelSerializer,
)
from hardware.api.serializers.prices import FlagField, InstancePriceSerializer, RegionCodeField
from hardware.api.serializers.providers import (
    InstanceOfferSerializer,
    ProviderSerializer,
    RegionSerializer,
)
from hardware.api.serializers.quotes import DedicatedQuoteSerializer, PurchaseQuoteSerializer

__all__ = [
    "BriefRelatedField",
    "CatalogSerializer",
    "CheapestPriceSerializer",
    "CheapestSerializer",
    "CurrencyField",
    "DedicatedQuoteSerializer",
    "EgressTierListSerializer",
    "EgressTierSerializer",
    "FlagField",
    "GpuBriefSerializer",
    "GpuModelSerializer",
    "InstanceOfferSerializer",
    "InstancePriceSerializer",
    "OfferBriefSerializer",
    "ProviderBriefSerializer",
    "ProviderSerializer",
    "PurchaseQuoteSerializer",
    "RegionBriefSerializer",
    "RegionCodeField",
    "RegionSerializer",
    "money_string",
    "egress_tier_delete_problem",
    "utc_string",
]
