"""The budget watch's writes: a watch made (``watch_create``), every active watch priced again
after a price refresh or on beat's schedule (``watches_reprice``), and an event settled once its
run has ended (``event_settle``, ``events_settle``), its e-mail sent through Django's mail
settings.

A plan is priced again only when the day's catalog gives its document other inputs than the run
the watch compares with (``plan_moved``): a refresh that moves no price the plan rests on adds no
event, and a plan is priced at most once per refresh (``WatchEvent``'s constraint).
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.urls import reverse

from costapp.models import BudgetWatch, Scenario, SimulationRun, WatchEvent
from costapp.runs import pipeline
from costapp.scenarios.catalog import engine_gpu_figures
from costapp.scenarios.sources import resolved_catalog_refs
from costapp.tco import ScenarioError, normalize

logger = logging.getLogger(__name__)

CENT = Decimal("0.01")


class WatchError(ValueError):
    """A watch that cannot be made; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _money(value: Any, field: str) -> Decimal:
    try:
        amount = Decimal(str(value).replace(",", "").strip())
    except InvalidOperation:
        raise WatchError(field, "give an amount in dollars, e.g. 1500000") from None
    if not amount.is_finite() or amount <= 0:
        raise WatchError(field, "give an amount above 0")
    return amount.quantize(CENT)


def watch_create(
    *, owner: Any, scenario: Scenario, option: str, budget_usd: Any, per_year_usd: Any = ()
) -> BudgetWatch:
    """A watch of ``scenario``'s option ``option`` (its latest succeeded run is the one the
    first event compares with) against ``budget_usd`` and, optionally, a budget per year."""
    run = (
        scenario.runs.filter(status=SimulationRun.Status.SUCCEEDED)
        .exclude(result=None)
        .order_by("-created", "-id")
        .first()
    )
    if run is None:
        raise WatchError("scenario", "the scenario has no succeeded run to watch")
    assert run.result is not None
    names = [o["name"] for o in run.result["options"]]
    if option not in names:
        raise WatchError("option", f"no option {option!r} in the scenario's run")
    budget = _money(budget_usd, "budget_usd")
    years = [str(_money(v, "budget_per_year_usd")) for v in per_year_usd or ()]
    return BudgetWatch.objects.create(
        owner=owner,
        scenario=scenario,
        option=option,
        budget_usd=budget,
        budget_per_year_usd=years,
        run=run,
    )


def plan_moved(watch: BudgetWatch) -> bool:
    """Whether the day's catalog gives the scenario's document other inputs than the watched
    run's (a price, a quote, an assumption it rests on moved); a document the catalog can no
    longer price counts as moved (its run fails and says why)."""
    gpus, _source = engine_gpu_figures()
    document = watch.scenario.document
    try:
        normalized = normalize(document, gpus, resolved_catalog_refs(document, gpus))
    except ScenarioError:
        return True
    return json.dumps(normalized.document, sort_keys=True) != json.dumps(
        watch.run.inputs, sort_keys=True
    )


def _option_of(run: SimulationRun, name: str) -> dict[str, Any] | None:
    assert run.result is not None
    return next((o for o in run.result["options"] if o["name"] == name), None)


def _usd(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value)).quantize(CENT)


def watch_reprice(
    watch: BudgetWatch, *, trigger: str, refresh_run_id: int | None = None
) -> WatchEvent | None:
    """Price the watched plan again when it moved; the event (None when nothing moved or the
    refresh already has this watch's event)."""
    if refresh_run_id is not None and watch.events.filter(refresh_run_id=refresh_run_id).exists():
        return None
    if not plan_moved(watch):
        return None
    old = watch.run
    assert old.result is not None
    before = _option_of(old, watch.option) or {}
    try:
        with transaction.atomic():
            event = WatchEvent.objects.create(
                watch=watch,
                trigger=trigger,
                refresh_run_id=refresh_run_id,
                old_run=old,
                budget_usd=watch.budget_usd,
                old_total_usd=_usd(before.get("total_usd")),
                old_p90_usd=_usd(before.get("p90_usd")),
                old_cheapest=str(old.result.get("cheapest") or ""),
            )
    except IntegrityError:  # another worker took this refresh's event
        return None
    try:
        run = pipeline.run_create(scenario=watch.scenario, reprice=True)
    except Exception as exc:  # noqa: BLE001 (any refusal is the event's failure, said)
        event.status = WatchEvent.Status.FAILED
        event.message = f"The plan could not be priced again: {exc}"
        event.save(update_fields=["status", "message"])
        _notify(event)
        return event
    event.new_run = run
    event.save(update_fields=["new_run"])
    return event_settle(event)


def watches_reprice(*, trigger: str, refresh_run_id: int | None = None) -> list[WatchEvent]:
    """Every active watch priced again (see :func:`watch_reprice`); the events made."""
    events = []
    for watch in BudgetWatch.objects.filter(active=True).select_related("run", "scenario"):
        try:
            event = watch_reprice(watch, trigger=trigger, refresh_run_id=refresh_run_id)
        except Exception:
            logger.exception("budget watch %s: not priced again", watch.pk)
            continue
        if event is not None:
            events.append(event)
    return events


def _years_over(watch: BudgetWatch, option: dict[str, Any]) -> list[int]:
    monthly = list(option.get("monthly_usd") or [])
    over = []
    for year, budget in enumerate(watch.budget_per_year_usd, start=1):
        months = monthly[(year - 1) * 12 + 1 : year * 12 + 1]
        if year == 1 and monthly:
            months = [monthly[0], *months]
        if months and Decimal(str(sum(months))) > Decimal(budget):
            over.append(year)
    return over


def event_settle(event: WatchEvent) -> WatchEvent:
    """Fill the event from its new run once that run has ended (left pricing before), move the
    watch on to the new run, and send the e-mail. The event is settled under its row's lock,
    so of two settlings at once (the run's end, beat's pass) one fills it and mails."""
    run = event.new_run
    if event.status != WatchEvent.Status.PRICING or run is None:
        return event
    run.refresh_from_db()
    if run.status in (SimulationRun.Status.QUEUED, SimulationRun.Status.RUNNING):
        return event
    with transaction.atomic():
        event = WatchEvent.objects.select_for_update().select_related("watch").get(pk=event.pk)
        if event.status != WatchEvent.Status.PRICING:
            return event
        _event_fill(event, run)
    _notify(event)
    return event


def _event_fill(event: WatchEvent, run: SimulationRun) -> None:
    watch = event.watch
    if run.status != SimulationRun.Status.SUCCEEDED or run.result is None:
        event.status = WatchEvent.Status.FAILED
        event.message = f"The plan's new run {run.status}: {run.error or 'no result'}"
    else:
        after = _option_of(run, watch.option)
        event.new_cheapest = str(run.result.get("cheapest") or "")
        if after is None:
            event.status = WatchEvent.Status.FAILED
            event.message = f"The new run has no option {watch.option!r}."
        else:
            event.status = WatchEvent.Status.PRICED
            event.new_total_usd = _usd(after.get("total_usd"))
            event.new_p90_usd = _usd(after.get("p90_usd"))
            event.years_over_budget = _years_over(watch, after)
            watch.run = run
            watch.save(update_fields=["run"])
    event.save()


def events_settle() -> int:
    """Settle every event whose run has ended since; how many were settled."""
    settled = 0
    for event in WatchEvent.objects.filter(status=WatchEvent.Status.PRICING).select_related(
        "watch", "new_run"
    ):
        if event_settle(event).status != WatchEvent.Status.PRICING:
            settled += 1
    return settled


def event_sentence(event: WatchEvent) -> str:
    """The event in one sentence."""
    watch = event.watch
    if event.status == WatchEvent.Status.FAILED:
        return f"{watch.scenario.name}: {event.message}"
    if event.status == WatchEvent.Status.PRICING:
        return f"{watch.scenario.name}: being priced again."
    words = (
        f"{watch.scenario.name}, {watch.option}: total ${event.new_total_usd:,.0f} "
        f"(was ${event.old_total_usd:,.0f}) against a budget of ${event.budget_usd:,.0f}"
    )
    if event.new_total_usd is not None and event.new_total_usd > event.budget_usd:
        words += ", over budget"
    if event.new_p90_usd is not None:
        words += f"; P90 ${event.new_p90_usd:,.0f}"
        if event.old_p90_usd is not None:
            words += f" (was ${event.old_p90_usd:,.0f})"
    if event.years_over_budget:
        words += "; over the year's budget in year " + ", ".join(
            str(y) for y in event.years_over_budget
        )
    if event.old_cheapest != event.new_cheapest:
        words += f"; the cheapest option is now {event.new_cheapest} (was {event.old_cheapest})"
    return words + "."


def _notify(event: WatchEvent) -> None:
    owner = event.watch.owner
    if event.emailed or not owner.email:
        return
    link = reverse("watch")
    if event.new_run_id:
        link = f"{reverse('runs-compare')}?a={event.old_run_id}&b={event.new_run_id}"
    subject = f"Budget watch: {event.watch.scenario.name}"[:200]
    send_mail(subject, f"{event_sentence(event)}\n\n{link}\n", None, [owner.email])
    event.emailed = True
    event.save(update_fields=["emailed"])
