"""Viewsets of the catalog API (docs/api.md, "Catalog"): viewers read, catalog editors write.

Every list reads a fixed number of SQL queries whatever the page size (related objects are
joined or prefetched), and filters with the FilterSets the pages use (hardware/filtersets.py).
Every list is in a total order (ties broken down to one row), so its pages neither overlap nor
skip a row.
"""

from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import ProtectedError, QuerySet
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, generics, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.permissions import CatalogPermission
from hardware import filtersets, references, selectors
from hardware.api import exports, page_cache, schema  # noqa: F401 (schema: field types for the OpenAPI schema)
from hardware.api.serializers import (
    CheapestSerializer,
    DedicatedQuoteSerializer,
    EgressTierSerializer,
    GpuModelSerializer,
    InstanceOfferSerializer,
    InstancePriceSerializer,
    ProviderSerializer,
    PurchaseQuoteSerializer,
    RegionSerializer,
    egress_tier_delete_problem,
)
from hardware.confidence import with_confidence
from hardware.models import (
    DedicatedQuote,
    EgressTier,
    GpuModel,
    InstanceOffer,
    InstancePrice,
    PurchaseQuote,
    Region,
)


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The object is still in use."
    default_code = "conflict"


class CatalogViewSet(viewsets.ModelViewSet):
    """CRUD for one catalog model; deleting something still referred to answers 409.

    ``delete_blockers``: related names that must be empty before a delete (so that deleting,
    say, a provider cannot silently take its whole price history with it).
    """

    permission_classes = [CatalogPermission]
    delete_blockers: tuple[str, ...] = ()

    def perform_create(self, serializer: serializers.BaseSerializer) -> None:
        with transaction.atomic():
            serializer.save()

    def perform_update(self, serializer: serializers.BaseSerializer) -> None:
        if "slug" in serializer.validated_data and serializer.instance is not None:
            refusal = references.slug_rename_refusal(
                serializer.instance, serializer.validated_data["slug"]
            )
            if refusal is not None:
                raise exceptions.ValidationError({"slug": [refusal]})
        with transaction.atomic():
            serializer.save()

    def perform_destroy(self, instance: Any) -> None:
        for name in self.delete_blockers:
            if getattr(instance, name).exists():
                raise Conflict(
                    f"{instance} still has {name.replace('_', ' ')}; delete or move them first."
                )
        try:
            with transaction.atomic():
                instance.delete()
        except ProtectedError as exc:
            raise Conflict(f"{instance} is still referred to; delete those first.") from exc


AS_OF = OpenApiParameter(
    "as_of",
    OpenApiTypes.DATE,
    description="the catalog as it stood at the end of this day [UTC]; default now",
)


class AsOfSerializer(serializers.Serializer):
    as_of = serializers.DateField(required=False, allow_null=True)


def as_of_param(request: Request) -> date | None:
    """The ``as_of`` query parameter as a date (400 naming ``as_of`` when it is not one)."""
    params = AsOfSerializer(data={"as_of": request.query_params.get("as_of") or None})
    params.is_valid(raise_exception=True)
    return params.validated_data.get("as_of")


class GpuModelViewSet(CatalogViewSet):
    """GPU models, looked up by slug."""

    queryset = GpuModel.objects.order_by("vendor", "name", "pk")
    serializer_class = GpuModelSerializer
    filterset_class = filtersets.GpuModelFilterSet
    lookup_field = "slug"
    delete_blockers = ("offers", "dedicated_quotes", "purchase_quotes")

    @extend_schema(
        summary="Cheapest current USD per GPU-hour, by provider and billing",
        parameters=[AS_OF],
        responses={200: CheapestSerializer},
    )
    @action(detail=True, methods=["get"], filter_backends=[], pagination_class=None)
    def cheapest(self, request: Request, slug: str | None = None) -> Response:
        filtersets.query_params_refuse_unknown(request, {"as_of", "format"})
        gpu = self.get_object()
        as_of = as_of_param(request)
        rows = selectors.cheapest_price_rows(gpu=gpu, as_of=as_of)
        day = as_of or timezone.now().date()
        document = {"gpu": gpu, "as_of": day, "results": rows}
        return Response(CheapestSerializer(document, context={"today": day}).data)


class ProviderViewSet(CatalogViewSet):
    """Providers, looked up by slug."""

    queryset = selectors.providers_list()
    serializer_class = ProviderSerializer
    filterset_class = filtersets.ProviderFilterSet
    lookup_field = "slug"
    delete_blockers = ("regions", "offers", "egress_tiers")


class RegionViewSet(CatalogViewSet):
    """Providers' regions."""

    queryset = Region.objects.select_related("provider")
    serializer_class = RegionSerializer
    filterset_class = filtersets.RegionFilterSet
    delete_blockers = ("prices",)


class InstanceOfferViewSet(CatalogViewSet):
    """Cloud instance offers."""

    queryset = InstanceOffer.objects.select_related("provider", "gpu")
    serializer_class = InstanceOfferSerializer
    filterset_class = filtersets.InstanceOfferFilterSet
    delete_blockers = ("prices",)


PRICE_RELATED = ("offer", "offer__provider", "offer__gpu", "region")


class InstancePriceViewSet(CatalogViewSet):
    """Price history rows; ``current/`` gives the latest per offer, region and billing."""

    queryset = InstancePrice.objects.select_related(*PRICE_RELATED).order_by(
        *filtersets.PRICE_TIE_BREAK
    )
    serializer_class = InstancePriceSerializer
    filterset_class = filtersets.PriceFilterSet

    def get_queryset(self) -> QuerySet[InstancePrice]:
        """The price rows, each with its confidence judged today (``hardware.confidence``)."""
        return with_confidence(super().get_queryset())

    @property
    def query_params_extra(self) -> tuple[str, ...]:
        """``as_of`` on ``current/`` (the price history has no date to stand at)."""
        return ("as_of",) if self.action == "current" else ()

    @extend_schema(
        summary="The latest price per offer, region and billing",
        parameters=[AS_OF],
        responses={200: InstancePriceSerializer(many=True)},
    )
    @action(detail=False, methods=["get"])
    def current(self, request: Request) -> HttpResponse:
        lookup = page_cache.page_lookup(request)
        if lookup is not None and lookup.hit is not None:
            return lookup.hit
        rows = self.filter_queryset(with_confidence(selectors.current_prices(as_of_param(request))))
        page = self.paginate_queryset(rows)
        response = self.get_paginated_response(self.get_serializer(page, many=True).data)
        return page_cache.page_store(lookup, response)


class CurrentPricesExport(generics.GenericAPIView):
    """``prices/current.csv`` and ``prices/current.xlsx``: the current prices as a table for
    spreadsheets, with the same filters (and ``as_of``) as ``prices/current/``, unpaginated."""

    permission_classes = [CatalogPermission]
    kind = "csv"

    queryset = InstancePrice.objects.select_related(*PRICE_RELATED)
    filterset_class = filtersets.PriceFilterSet
    pagination_class = None
    query_params_extra = ("as_of",)

    @extend_schema(
        filters=True,
        parameters=[AS_OF],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="one row a price"),
            (200, exports.XLSX): OpenApiResponse(OpenApiTypes.BINARY, description="a workbook"),
        },
    )
    def get(self, request: Request) -> HttpResponse:
        rows = self.filter_queryset(selectors.current_prices(as_of_param(request)))
        table = exports.price_table(rows)
        stamp = timezone.now().strftime("%Y-%m-%d")
        if self.kind == "xlsx":
            body, content_type = exports.price_workbook(table), exports.XLSX
        else:
            body, content_type = exports.price_csv(table), "text/csv; charset=utf-8"
        response = HttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = (
            f'attachment; filename="current-prices-{stamp}.{self.kind}"'
        )
        return response


class EgressTierViewSet(CatalogViewSet):
    """Providers' egress tiers; ``POST`` takes one tier or a list (all written or none)."""

    queryset = EgressTier.objects.select_related("provider")
    serializer_class = EgressTierSerializer
    filterset_class = filtersets.EgressTierFilterSet

    def get_serializer(self, *args: Any, **kwargs: Any) -> serializers.BaseSerializer:
        if isinstance(kwargs.get("data"), list):
            kwargs["many"] = True
        return super().get_serializer(*args, **kwargs)

    def perform_destroy(self, instance: EgressTier) -> None:
        problem = egress_tier_delete_problem(instance)
        if problem:
            raise serializers.ValidationError({"up_to_tb": problem})
        super().perform_destroy(instance)


class DedicatedQuoteViewSet(CatalogViewSet):
    """Quotes to lease dedicated GPU servers."""

    queryset = DedicatedQuote.objects.select_related("gpu")
    serializer_class = DedicatedQuoteSerializer
    filterset_class = filtersets.DedicatedQuoteFilterSet


class PurchaseQuoteViewSet(CatalogViewSet):
    """Quotes to buy GPU servers."""

    queryset = PurchaseQuote.objects.select_related("gpu")
    serializer_class = PurchaseQuoteSerializer
    filterset_class = filtersets.PurchaseQuoteFilterSet
