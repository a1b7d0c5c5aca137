"""Views of the scenarios and runs API (docs/api.md, "Scenarios and runs").

Every role reads, analysts and above write (``ScenarioPermission``); pricing a document at once
is for analysts (``AnalystPermission``). Privacy by owner: another user's private scenario, and
its runs, answer 404 on every endpoint, to every role; a shared scenario (and its runs) is readable
by every role, viewers included, and changed, run or cancelled by its owner alone (403 for
others).
"""

import json
from typing import Any

import django_filters
from django import forms
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import mixins, renderers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, NotFound, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from accounts.permissions import AnalystPermission, ScenarioPermission
from costapp.api.parsers import DocumentJSONParser, StrictJSONParser, scenario_error_detail
from costapp.api.serializers import (
    RunCreateSerializer,
    RunRiskSerializer,
    RunSerializer,
    ScenarioSerializer,
)
from costapp.models import Scenario, SimulationRun
from costapp.reports.risk import budget_parse, risk_document
from costapp.runs import exports, focus_views, pipeline, requests
from costapp.runs.focus import FocusRequestError
from costapp.runs.store import BrokerUnavailable
from costapp.scenarios import selectors, services
from costapp.tco import ScenarioError
from hardware.filtersets import query_params_refuse_unknown


class EscapedJSONRenderer(renderers.JSONRenderer):
    """JSON with every non-ASCII character escaped: a document may hold any string, a lone
    surrogate included, and still reads back exactly."""

    ensure_ascii = True


JSON_RENDERERS = [EscapedJSONRenderer, renderers.BrowsableAPIRenderer]


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state of the resource."


def broker_unavailable_response(exc: BrokerUnavailable) -> Response:
    """503 in the API's error format, with a hint when to retry."""
    return Response(
        {"errors": [{"field": None, "message": str(exc)}]},
        status=status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": "30"},
    )


def _owned(request: Request, scenario: Scenario, doing: str) -> None:
    if scenario.owner_id != request.user.pk:
        raise PermissionDenied(f"Only the owner of a shared scenario may {doing}.")


class ScenarioViewSet(viewsets.ModelViewSet):
    """Your scenarios and the shared ones."""

    serializer_class = ScenarioSerializer
    permission_classes = [ScenarioPermission]
    renderer_classes = JSON_RENDERERS
    parser_classes = [StrictJSONParser]

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # the schema generator's anonymous look
            return Scenario.objects.none()
        return selectors.scenarios_visible(user=self.request.user)

    def perform_update(self, serializer: BaseSerializer[Scenario]) -> None:
        scenario = serializer.instance
        assert scenario is not None  # an update always has its row
        _owned(self.request, scenario, "change it")
        serializer.save()

    def perform_destroy(self, instance: Scenario) -> None:
        _owned(self.request, instance, "delete it")
        instance.delete()

    @extend_schema(
        request=RunCreateSerializer,
        parameters=[
            OpenApiParameter(
                requests.KEY_HEADER,
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="any unique string (a UUID): the same key sent again by the same "
                "user within RUN_IDEMPOTENCY_HOURS answers with the run it first started "
                "(header Idempotent-Replayed: true) instead of starting another",
            )
        ],
        responses={202: RunSerializer, 503: OpenApiResponse(description="broker unreachable")},
    )
    @action(detail=True, methods=["post"], url_path="runs")
    def runs(self, request: Request, pk: Any = None) -> Response:
        """Start a run of this scenario (202, ``Location``: the run)."""
        scenario = self.get_object()
        _owned(request, scenario, "run it")
        body = RunCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        options = {
            "scenario": scenario,
            "seed": body.validated_data.get("seed"),
            "paths": body.validated_data.get("paths"),
            "reprice": body.validated_data["reprice"],
        }
        key = request.headers.get(requests.KEY_HEADER)
        replayed = False
        try:
            if key is None:
                run = pipeline.run_create(**options)
            else:
                user = request.user
                assert isinstance(user, User)  # an analyst owning the scenario
                run, started = requests.run_start_once(user=user, key=key, **options)
                replayed = not started
        except requests.KeyRefused as exc:
            raise ValidationError({requests.KEY_HEADER: [str(exc)]}) from None
        except ScenarioError as exc:
            raise ValidationError(scenario_error_detail(exc.errors, prefix="document")) from None
        except BrokerUnavailable as exc:
            return broker_unavailable_response(exc)
        data = RunSerializer(run, context=self.get_serializer_context()).data
        headers = {"Location": reverse("run-detail", args=[run.pk], request=request)}
        if replayed:
            headers["Idempotent-Replayed"] = "true"
        return Response(data, status=status.HTTP_202_ACCEPTED, headers=headers)


ROW_ID_MAX = 2**63 - 1
"""The largest id a row can have (a 64-bit key on PostgreSQL and SQLite alike)."""


@extend_schema_field(OpenApiTypes.INT)
class RowIdFilter(django_filters.NumberFilter):
    """A row's id: a whole number from 1 to ``ROW_ID_MAX`` (anything else a 400 at the field)."""

    field_class = forms.IntegerField

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(min_value=1, max_value=ROW_ID_MAX, **kwargs)


class RunFilterSet(django_filters.FilterSet):
    scenario = RowIdFilter(field_name="scenario_id", help_text="the scenario's id")

    class Meta:
        model = SimulationRun
        fields = ["scenario"]


class CSVRenderer(renderers.BaseRenderer):
    """``text/csv``: text as it is (anything else, an error body, as JSON)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        if isinstance(data, str):
            return data.encode("utf-8")
        return json.dumps(data).encode("utf-8")


class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Runs of your scenarios and of the shared ones, newest first."""

    serializer_class = RunSerializer
    permission_classes = [ScenarioPermission]
    renderer_classes = JSON_RENDERERS
    filterset_class = RunFilterSet

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # the schema generator's anonymous look
            return SimulationRun.objects.none()
        return selectors.runs_visible(user=self.request.user)

    @extend_schema(request=None, responses={200: RunSerializer, 409: None})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: Any = None) -> Response:
        """Cancel a queued or running run (409 when it has already ended)."""
        run = self.get_object()
        _owned(request, run.scenario, "cancel its runs")
        if not pipeline.run_cancel(run=run):
            raise Conflict(f"The run has already ended ({run.status}).")
        return Response(self.get_serializer(run).data)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "budget",
                OpenApiTypes.STR,
                description="a total over the horizon in dollars (1500000, 1,500,000 or 1.5M)",
            )
        ],
        responses={200: RunRiskSerializer, 404: None, 409: None},
    )
    @action(detail=True, methods=["get"], filter_backends=[])
    def risk(self, request: Request, pk: Any = None) -> Response:
        """The run's risk figures: per option its NPV over the paths, its chance of being the
        cheapest, month by month its chance of having cost least so far and, with ``?budget=``,
        its chance of exceeding it; each commitment's unused GPU-hours and their cost. 404 for a
        run without them (no simulation, or finished before they existed)."""
        query_params_refuse_unknown(request, {"budget", "format"})
        run = self.get_object()
        if run.status != SimulationRun.Status.SUCCEEDED:
            raise Conflict(f"The run has no result yet ({run.status}).")
        budget = budget_parse(str(request.query_params.get("budget", "")))
        if budget.error:
            raise ValidationError({"budget": [budget.error]})
        found = risk_document(run=run, budget_usd=budget.usd)
        if found is None:
            raise NotFound(
                "This run has no risk figures: it has no simulation, or it finished before they were computed."
            )
        return Response(RunRiskSerializer(found).data)

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # the FOCUS export's ?format= names its file, refused by the action when unknown
        return super().perform_content_negotiation(request, force=force or self.action == "focus")

    @extend_schema(
        parameters=[
            OpenApiParameter("option", OpenApiTypes.STR, description="name or 1-based number"),
            OpenApiParameter("percentile", OpenApiTypes.STR, description="P50, P90 or 1 to 99"),
            OpenApiParameter("format", OpenApiTypes.STR, enum=["csv", "parquet"]),
        ],
        responses={
            (200, "text/csv"): str,
            (200, "application/vnd.apache.parquet"): bytes,
            409: None,
        },
    )
    @action(
        detail=True,
        methods=["get"],
        filter_backends=[],
        renderer_classes=[EscapedJSONRenderer, CSVRenderer, focus_views.ParquetRenderer],
    )
    def focus(self, request: Request, pk: Any = None) -> HttpResponseBase:
        """An option of the run as a forward plan in FOCUS 1.2 columns, one row per month and
        charge, at the deterministic figures or at a percentile of the paths; streamed."""
        query_params_refuse_unknown(request, {"option", "percentile", "format"})
        run = self.get_object()
        if run.status != SimulationRun.Status.SUCCEEDED or run.result is None:
            raise Conflict(f"The run has no result yet ({run.status}).")
        try:
            return focus_views.focus_response(run, run.result, request.query_params)
        except FocusRequestError as error:
            raise ValidationError({error.field: [error.message]}) from error

    @extend_schema(responses={(200, "text/csv"): str, 409: None})
    def monthly_csv(self, request: Request, pk: Any = None) -> HttpResponse:
        """One row per option and month 0 … H: the cost categories, total and cumulative [USD]."""
        run = self.get_object()
        if run.status != SimulationRun.Status.SUCCEEDED:
            raise Conflict(f"The run has no result yet ({run.status}).")
        response = HttpResponse(
            exports.run_monthly_csv(run=run), content_type="text/csv; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-monthly.csv"'
        return response


class SimulateView(APIView):
    """Price a small scenario document at once (at most 1 000 paths): 200 with the result."""

    permission_classes = [AnalystPermission]
    parser_classes = [DocumentJSONParser]
    renderer_classes = JSON_RENDERERS

    @extend_schema(request=dict, responses={200: dict})
    def post(self, request: Request) -> Response:
        try:
            result = services.simulate_at_once(document=request.data)
            json.dumps(result, allow_nan=False)
        except ScenarioError as exc:
            raise ValidationError(scenario_error_detail(exc.errors, prefix="document")) from None
        except (ArithmeticError, ValueError) as exc:
            # Numbers at the edge of what validation accepts can still overflow the arithmetic.
            raise ValidationError(
                {"document": [f"these figures cannot be computed: {type(exc).__name__}: {exc}"]}
            ) from None
        return Response(result)
