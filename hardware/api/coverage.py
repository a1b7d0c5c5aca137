"""``coverage/``: what each refresh and catalog load could not name (the GPU and instance names
it could not map, per source and run, newest first), read-only for viewers."""

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError

from accounts.permissions import CatalogPermission
from hardware.coverage import coverage_reports
from hardware.filtersets import StrictQueryBackend
from hardware.models import CoverageReport, NameKind, RefreshRun, UnmappedName

TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


class UnmappedNameSerializer(serializers.ModelSerializer):
    """A name a feed used that the catalog could not map, on how many rows, with an example."""

    kind = serializers.ChoiceField(
        choices=NameKind.choices, read_only=True, help_text="gpu or instance"
    )
    rows = serializers.IntegerField(read_only=True, help_text="rows naming it [count]")
    example_line = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="where the first such row is in the feed [line]"
    )

    class Meta:
        model = UnmappedName
        fields = ["kind", "name", "reason", "rows", "example_line", "example"]
        read_only_fields = fields


class CoverageReportSerializer(serializers.ModelSerializer):
    """One feed of one refresh run (or one file of a catalog load) and the names it could not
    map."""

    refresh_run: serializers.PrimaryKeyRelatedField[RefreshRun] = (
        serializers.PrimaryKeyRelatedField(
            read_only=True,
            allow_null=True,
            help_text="the refresh run [id]; null for a load_catalog",
        )
    )
    names = UnmappedNameSerializer(
        many=True, read_only=True, help_text="the names it could not map, most rows first"
    )
    rows_read = serializers.IntegerField(read_only=True, help_text="[count]")
    rows_unmapped = serializers.IntegerField(
        read_only=True, help_text="rows whose GPU or instance name could not be mapped [count]"
    )

    class Meta:
        model = CoverageReport
        fields = [
            "id",
            "source",
            "provider",
            "feed_name",
            "recorded_at",
            "refresh_run",
            "rows_read",
            "rows_unmapped",
            "names",
        ]
        read_only_fields = fields


@extend_schema_view(
    get=extend_schema(
        parameters=[
            OpenApiParameter(
                "source", str, description="one source (skypilot-lambda, ..., load_catalog)"
            ),
            OpenApiParameter(
                "unmapped",
                bool,
                description="true: only the feeds that named something the catalog could not map",
            ),
        ]
    )
)
class CoverageView(generics.ListAPIView):
    """``GET /api/v1/coverage/``: per source and run, newest first, the GPU and instance names a
    feed used and the catalog could not map."""

    permission_classes = [CatalogPermission]
    serializer_class = CoverageReportSerializer
    filter_backends = [StrictQueryBackend]
    query_params_extra = ("source", "unmapped")

    def get_queryset(self) -> QuerySet[CoverageReport]:
        params = self.request.query_params
        raw = params.get("unmapped", "").strip().lower()
        if raw and raw not in TRUE + FALSE:
            raise ValidationError({"unmapped": [f"{raw[:40]!r} is not true or false"]})
        source = params.get("source", "").strip()
        if len(source) > 40:
            raise ValidationError({"source": ["at most 40 characters"]})
        return coverage_reports(source=source, unmapped_only=raw in TRUE)
