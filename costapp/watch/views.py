"""``/watch/``: the user's budget watches and their events, newest first, each linking the two
runs side by side; a form to watch a scenario's option (analysts). And the API:
``GET /api/v1/watch-events/`` (the user's events, newest first) and ``GET``/``POST
/api/v1/watches/``."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.decorators import role_required
from accounts.roles import ANALYST, VIEWER
from costapp.models import BudgetWatch, Question, Scenario, WatchEvent
from costapp.scenarios.selectors import scenarios_visible
from costapp.watch.services import WatchError, event_sentence, watch_create


def watches_of(user: Any) -> Any:
    found = BudgetWatch.objects.select_related("scenario", "run")
    return found if user.is_superuser else found.filter(owner=user)


def events_of(user: Any) -> Any:
    found = WatchEvent.objects.select_related("watch__scenario", "watch__owner")
    return found if user.is_superuser else found.filter(watch__owner=user)


def _create(user: Any, data: Any) -> BudgetWatch:
    question = str(data.get("question", "")).strip()
    scenario = None
    if question:
        asked = Question.objects.filter(pk=int(question)) if question.isdigit() else None
        if asked is not None and not user.is_superuser:
            asked = asked.filter(owner=user)
        found = asked.select_related("scenario").first() if asked is not None else None
        if found is None or found.scenario is None:
            raise WatchError("question", "no such question of yours with a plan")
        scenario = found.scenario
    else:
        raw = str(data.get("scenario", "")).strip()
        if raw.isdigit():
            scenario = scenarios_visible(user=user).filter(pk=int(raw)).first()
        if scenario is None:
            raise WatchError("scenario", "no such scenario among those you may read")
    per_year = data.get("budget_per_year_usd") or []
    if isinstance(per_year, str):
        per_year = [v for v in per_year.replace(";", " ").split() if v]
    return watch_create(
        owner=user,
        scenario=scenario,
        option=str(data.get("option", "")).strip(),
        budget_usd=data.get("budget_usd", ""),
        per_year_usd=per_year,
    )


@role_required(VIEWER)
def watch_page(request: HttpRequest) -> HttpResponse:
    """The watches and events; POST (analysts) makes a watch."""
    may_watch = request.user.is_superuser or request.user.groups.filter(name=ANALYST).exists()
    if request.method == "POST" and may_watch:
        try:
            _create(request.user, request.POST)
        except WatchError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, "The plan is watched.")
        return redirect("watch")
    events = [(event, event_sentence(event)) for event in events_of(request.user)[:200]]
    scenarios: list[tuple[Scenario, list[str]]] = []
    if may_watch:
        for scenario in scenarios_visible(user=request.user)[:100]:
            run = scenario.runs.filter(status="succeeded").exclude(result=None).first()
            if run is not None and run.result is not None:
                scenarios.append((scenario, [o["name"] for o in run.result["options"]]))
    context = {
        "watches": watches_of(request.user),
        "events": events,
        "scenarios": scenarios,
        "may_watch": may_watch,
    }
    return render(request, "watch/watch.html", context)


class WatchSerializer(serializers.ModelSerializer[BudgetWatch]):
    """A budget watch: the plan, the option followed, the budget."""

    class Meta:
        model = BudgetWatch
        fields = ["id", "scenario", "option", "budget_usd", "budget_per_year_usd", "run", "created"]
        extra_kwargs = {
            "scenario": {"help_text": "the watched scenario [id]"},
            "option": {"help_text": "the followed option's name"},
            "budget_usd": {"help_text": "the budget over the horizon [USD]"},
            "budget_per_year_usd": {"help_text": "optional budgets per year [USD]"},
            "run": {"help_text": "the run the next event compares with [id]"},
            "created": {"help_text": "when the watch was set (UTC)"},
        }


class WatchEventSerializer(serializers.ModelSerializer[WatchEvent]):
    """What moved when a watched plan was priced again."""

    sentence = serializers.SerializerMethodField(help_text="the event in one sentence")

    class Meta:
        model = WatchEvent
        fields = [
            "id",
            "watch",
            "trigger",
            "refresh_run",
            "status",
            "old_run",
            "new_run",
            "budget_usd",
            "old_total_usd",
            "new_total_usd",
            "old_p90_usd",
            "new_p90_usd",
            "years_over_budget",
            "old_cheapest",
            "new_cheapest",
            "message",
            "created",
            "sentence",
        ]
        extra_kwargs = {
            "watch": {"help_text": "the watch [id]"},
            "trigger": {"help_text": "refresh or schedule"},
            "refresh_run": {"help_text": "the price refresh that moved a price, if any [id]"},
            "status": {"help_text": "pricing, priced or failed"},
            "old_run": {"help_text": "the run before [id]"},
            "new_run": {"help_text": "the run on the day's catalog [id]"},
            "budget_usd": {"help_text": "the budget over the horizon [USD]"},
            "old_total_usd": {"help_text": "the followed option's total before [USD]"},
            "new_total_usd": {"help_text": "the followed option's total now [USD]"},
            "old_p90_usd": {"help_text": "the followed option's P90 total before [USD]"},
            "new_p90_usd": {"help_text": "the followed option's P90 total now [USD]"},
            "years_over_budget": {"help_text": "the years (1 …) over their budget"},
            "old_cheapest": {"help_text": "the recommended option before"},
            "new_cheapest": {"help_text": "the recommended option now"},
            "message": {"help_text": "why a pricing failed, if it did"},
            "created": {"help_text": "when the plan was priced again (UTC)"},
        }

    def get_sentence(self, event: WatchEvent) -> str:
        return event_sentence(event)


class WatchListView(APIView):
    """The user's budget watches; POST makes one (analysts)."""

    permission_classes = [IsAuthenticated]

    serializer_class = WatchSerializer

    @extend_schema(responses={200: WatchSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return Response(WatchSerializer(watches_of(request.user), many=True).data)

    @extend_schema(
        request=inline_serializer(
            "WatchCreate",
            {
                "scenario": serializers.IntegerField(
                    required=False, help_text="the scenario to watch [id]"
                ),
                "question": serializers.IntegerField(
                    required=False, help_text="or a question whose plan to watch [id]"
                ),
                "option": serializers.CharField(help_text="the option to follow, by name"),
                "budget_usd": serializers.CharField(help_text="the budget over the horizon [USD]"),
                "budget_per_year_usd": serializers.ListField(
                    child=serializers.CharField(),
                    required=False,
                    help_text="optional budgets per year [USD]",
                ),
            },
        ),
        responses={201: WatchSerializer, 403: None},
    )
    def post(self, request: Request) -> Response:
        user = request.user
        if not (user.is_superuser or user.groups.filter(name=ANALYST).exists()):
            return Response(
                {"errors": [{"field": None, "message": "only analysts watch plans"}]},
                status=status.HTTP_403_FORBIDDEN,
            )
        try:
            watch = _create(user, request.data)
        except WatchError as error:
            raise ValidationError({error.field: [error.message]}) from error
        return Response(WatchSerializer(watch).data, status=status.HTTP_201_CREATED)


class WatchEventListView(APIView):
    """The events of the user's watches, newest first."""

    permission_classes = [IsAuthenticated]

    serializer_class = WatchEventSerializer

    @extend_schema(responses={200: WatchEventSerializer(many=True)})
    def get(self, request: Request) -> Response:
        events = events_of(request.user)[:200]
        return Response(WatchEventSerializer(events, many=True).data)
