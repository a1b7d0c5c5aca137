"""Reads of scenarios and their runs: what a user may read (their own and the shared ones),
newest first, as query sets the pages and the API filter further."""

from typing import Any

from django.db.models import Q, QuerySet

from costapp.models import Scenario, SimulationRun


def _mine_or_shared(user: Any, prefix: str = "") -> Q:
    """Their own and the shared ones; everything for a superuser (docs/api.md: superusers can
    do everything)."""
    if getattr(user, "is_superuser", False):
        return Q()
    return Q(**{f"{prefix}owner": user}) | Q(**{f"{prefix}shared": True})


def scenarios_visible(*, user: Any) -> QuerySet[Scenario]:
    """The scenarios ``user`` may read: their own and the shared ones (a superuser: all),
    newest first."""
    return Scenario.objects.filter(_mine_or_shared(user)).select_related("owner")


def runs_visible(*, user: Any) -> QuerySet[SimulationRun]:
    """The runs ``user`` may read: those of the scenarios they may read, newest first."""
    return (
        SimulationRun.objects.filter(_mine_or_shared(user, "scenario__"))
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
