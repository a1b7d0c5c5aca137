"""``market-observations/``: the dated committed prices sources stated for a GPU at a provider
and region (Epoch AI's archived price pages), read-only for viewers (docs/api.md)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from accounts.permissions import CatalogPermission
from hardware.committed.selectors import market_observations
from hardware.models import GpuModel, InstanceOffer, MarketObservation, Provider
from hardware.models.observations import COMMITTED_CHOICES


class MarketObservationSerializer(serializers.ModelSerializer):
    """One dated committed price per GPU-hour, with its term and where it was stated."""

    gpu: serializers.SlugRelatedField[GpuModel] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, help_text="GPU slug"
    )
    provider: serializers.SlugRelatedField[Provider] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, help_text="provider slug"
    )
    region = serializers.CharField(
        source="region.code", read_only=True, help_text="the provider's region code"
    )
    offer: serializers.PrimaryKeyRelatedField[InstanceOffer] = serializers.PrimaryKeyRelatedField(
        read_only=True,
        allow_null=True,
        help_text="id of the catalog's offer the row was matched to; null: none [offer id]",
    )
    term_months = serializers.IntegerField(read_only=True, help_text="[months]")
    term = serializers.CharField(
        source="get_billing_display", read_only=True, help_text="the term in words"
    )
    billing = serializers.CharField(read_only=True, help_text="commit_1y, commit_3y or commit_5y")
    line_no = serializers.IntegerField(
        read_only=True, help_text="the row's line in the file [line]"
    )

    class Meta:
        model = MarketObservation
        fields = [
            "id",
            "gpu",
            "provider",
            "region",
            "offer",
            "billing",
            "term_months",
            "term",
            "usd_per_gpu_hour",
            "stated_on",
            "instance",
            "gpu_evidence",
            "source_name",
            "line_no",
            "source_url",
        ]
        read_only_fields = fields


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("gpu", str, description="GPU slug"),
            OpenApiParameter("provider", str, description="provider slug"),
            OpenApiParameter(
                "billing", str, enum=[c for c, _ in COMMITTED_CHOICES], description="term"
            ),
        ]
    )
)
class MarketObservationViewSet(viewsets.ReadOnlyModelViewSet):
    """Dated committed prices per GPU-hour, newest first per GPU, provider and billing."""

    serializer_class = MarketObservationSerializer
    permission_classes = [CatalogPermission]
    query_params_extra = ("gpu", "provider", "billing")

    def get_queryset(self):  # type: ignore[no-untyped-def]
        request = getattr(self, "request", None)
        params = request.query_params if request is not None else {}
        return market_observations(
            gpu=params.get("gpu"), provider=params.get("provider"), billing=params.get("billing")
        )
