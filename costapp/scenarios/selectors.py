"""Reads of scenarios and their runs: what a user may read (their own and the shared ones),
newest first, as query sets the pages and the API filter further."""

from typing import Any

from django.db.models import Q, QuerySet

from costapp.models import Scenario, SimulationRun


def scenarios_visible(*, user: Any) -> QuerySet[Scenario]:
    """The scenarios ``user`` may read: their own and the shared ones, newest first."""
    return Scenario.objects.filter(Q(owner=user) | Q(shared=True)).select_related("owner")


def runs_visible(*, user: Any) -> QuerySet[SimulationRun]:
    """The runs ``user`` may read: those of the scenarios they may read, newest first."""
    return (
        SimulationRun.objects.filter(Q(scenario__owner=user) | Q(scenario__shared=True))
        .select_related("scenario")
        .order_by("-created", "-id")
    )


def runs_succeeded_visible(*, user: Any) -> QuerySet[SimulationRun]:
    """The succeeded runs ``user`` may read (those a comparison can use), newest first, without
    their heavy fields (inputs, result, curves)."""
    return (
        runs_visible(user=user)
        .filter(status=SimulationRun.Status.SUCCEEDED, result__isnull=False)
        .defer("inputs", "gpus", "result", "monthly_breakdown_usd", "cost_curves", "units")
    )
