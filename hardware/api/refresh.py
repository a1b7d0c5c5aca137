"""Price refreshes in the API (docs/api.md): refresh runs for admins, with a held run's diff and
its approval or discard, and the prices that moved since a day, for every viewer."""

from collections.abc import Callable
from datetime import date
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.permissions import AdminPermission, CatalogPermission
from hardware.filtersets import StrictQueryBackend
from hardware.models import MONEY, RefreshRun, RefreshStatus
from hardware.refresh.changes import PriceChange, price_changes
from hardware.refresh.pipeline import (
    CATALOG_MOVED,
    RefreshError,
    RefreshLocked,
    refresh_run_approve,
    refresh_run_diff,
    refresh_run_discard,
)

RUN_FIELDS = [
    "id", "url", "source", "provider", "status", "feed_name", "feed_url", "feed_sha256",
    "feed_stated_on", "started_at", "finished_at", "not_modified", "etag", "last_modified",
    "bytes_read", "rows_read", "rows_accepted", "rows_rejected", "rejected_by_reason",
    "prices_added", "prices_changed", "prices_unchanged", "prices_vanished", "egress_changes",
    "held_reasons", "conflicts", "prices_kept", "error",
]  # fmt: skip


class RefreshRunSerializer(serializers.HyperlinkedModelSerializer):
    """A refresh run as listed."""

    url = serializers.HyperlinkedIdentityField(
        view_name="refreshrun-detail", help_text="this run's URL"
    )

    class Meta:
        model = RefreshRun
        fields = RUN_FIELDS
        read_only_fields = RUN_FIELDS
        extra_kwargs = {
            "status": {
                "help_text": "running, applied, unchanged, held, failed, approved, discarded"
            },
        }


class RefreshRunDetailSerializer(RefreshRunSerializer):
    """A refresh run with its first rejected rows and, while held, the diff applying it makes:
    each price and egress tier with its old and new value.
    """

    diff = serializers.SerializerMethodField(
        help_text="while held: each price and egress tier applying it changes, old and new"
    )

    class Meta(RefreshRunSerializer.Meta):
        fields = [*RUN_FIELDS, "rejections", "diff"]
        read_only_fields = fields

    def get_diff(self, run: RefreshRun) -> dict:
        return refresh_run_diff(run=run)


class RefreshRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Price refresh runs, newest first (admins). ``?status=held`` lists those waiting for review;
    ``approve`` applies a held run as staged, ``discard`` drops it (409 if it is not held, or
    while another refresh of its source runs). An approval finding that the catalog changed
    since the run was checked keeps it held with the new diff and answers 409.
    """

    queryset = RefreshRun.objects.all().order_by("-started_at", "-pk")
    permission_classes = [AdminPermission]
    filterset_fields = ["status", "source", "provider"]

    def get_serializer_class(self) -> type[serializers.BaseSerializer[RefreshRun]]:
        return RefreshRunSerializer if self.action == "list" else RefreshRunDetailSerializer

    def _decide(self, request: Request, service: Callable[..., RefreshRun]) -> Response:
        run = self.get_object()
        try:
            run = service(run_id=run.pk)
        except (RefreshError, RefreshLocked) as exc:
            return Response(
                {"errors": [{"field": None, "message": str(exc)}]},
                status=status.HTTP_409_CONFLICT,
            )
        if service is refresh_run_approve and run.status == RefreshStatus.HELD:
            return Response(
                {"errors": [{"field": None, "message": f"refresh run {run.pk}: {CATALOG_MOVED}"}]},
                status=status.HTTP_409_CONFLICT,
            )
        serializer = RefreshRunDetailSerializer(run, context=self.get_serializer_context())
        return Response(serializer.data)

    @extend_schema(request=None, responses={200: RefreshRunDetailSerializer, 409: None})
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(request, refresh_run_approve)

    @extend_schema(request=None, responses={200: RefreshRunDetailSerializer, 409: None})
    @action(detail=True, methods=["post"])
    def discard(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(request, refresh_run_discard)


def _usd_or_null(source: str | None, help_text: str) -> serializers.DecimalField:
    """An amount in USD with the catalog's digits (``MONEY``), null when there is none."""
    return serializers.DecimalField(source=source, **MONEY, allow_null=True, help_text=help_text)


class PriceChangeSerializer(serializers.Serializer):
    """One price that moved: old and new values, absolute and relative change."""

    kind = serializers.CharField(help_text="added, changed or vanished")
    provider = serializers.CharField(source="price.offer.provider.slug", help_text="provider slug")
    instance_type = serializers.CharField(
        source="price.offer.instance_type", help_text="the provider's instance name"
    )
    gpu = serializers.CharField(source="price.offer.gpu.slug", help_text="GPU model slug")
    gpu_count = serializers.IntegerField(
        source="price.offer.gpu_count", help_text="GPUs per instance [count]"
    )
    region = serializers.CharField(source="price.region.code", help_text="region code")
    billing = serializers.CharField(
        source="price.billing", help_text="on_demand, spot, commit_1y or commit_3y"
    )
    old_usd_per_hour = _usd_or_null("before.usd_per_hour", "price before [USD/h]; null when added")
    new_usd_per_hour = _usd_or_null("after.usd_per_hour", "price after [USD/h]; null when vanished")
    old_usd_per_gpu_hour = _usd_or_null(
        "before.usd_per_gpu_hour", "price before [USD per GPU-hour]; null when added"
    )
    new_usd_per_gpu_hour = _usd_or_null(
        "after.usd_per_gpu_hour", "price after [USD per GPU-hour]; null when vanished"
    )
    change_usd_per_hour = _usd_or_null(None, "new - old [USD/h]; null when added or vanished")
    change_ratio = serializers.DecimalField(
        max_digits=20, decimal_places=6, allow_null=True, help_text="(new - old) / old [ratio]"
    )
    changed_at = serializers.DateTimeField(help_text="when the change reached the catalog [UTC]")


class PriceChangesView(generics.ListAPIView):
    """``GET /api/v1/prices/changes/?since=DATE``: current prices that moved since that day
    (inclusive): added, changed or vanished, with old and new values and the change.
    """

    permission_classes = [CatalogPermission]
    serializer_class = PriceChangeSerializer
    filter_backends = [StrictQueryBackend]
    query_params_extra = ("since",)

    def get_queryset(self) -> list[PriceChange]:  # type: ignore[override]
        raw = self.request.query_params.get("since", "")
        if not raw:
            raise ValidationError({"since": ["required: a day, YYYY-MM-DD"]})
        try:
            since = date.fromisoformat(raw)
        except ValueError:
            raise ValidationError({"since": [f"{raw!r} is not a day (YYYY-MM-DD)"]}) from None
        if since <= date.min:  # the day before it (the catalog as it stood) does not exist
            raise ValidationError({"since": ["must be after 0001-01-01"]})
        return price_changes(since=since)

    @extend_schema(
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATE, required=True, description="YYYY-MM-DD"),
        ],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)
