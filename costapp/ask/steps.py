"""Ask's step after a run: once a run of a question's scenario succeeds, "what would change the
answer" (the crossings, each key input moved, the next acceptable offers priced again) is worked
out off the request, in a task of its own (:data:`ASK_CHANGES_TASK`), and kept on the question with
the id of the run it belongs to. A run of the scenario as it now stands becomes the question's run
(a re-run from the builder): the question's page then shows that run's answer, never the old."""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from django.dispatch import receiver

from costapp.ask.answer import answer_of, offers_priced_again, what_would_change
from costapp.ask.sized import sized_plan
from costapp.charts import result_charts
from costapp.faults import SERVICE_ERRORS
from costapp.models import Question, SimulationRun
from costapp.runs import store
from costapp.runs.followups import run_succeeded
from costapp.scenarios.services import document_sha256

logger = logging.getLogger(__name__)

ANSWER_CHARTS = ("cumulative", "layers-", "fan")
"""The charts an answer shows: cumulative cost, what each layer of a mix serves each month, the
spread over the futures (the run page has them all)."""

ASK_CHANGES_TASK = "costapp.ask_changes"
"""The task that works out a finished run's "what would change" for its questions."""


@receiver(run_succeeded, dispatch_uid="ask-changes")
def run_succeeded_received(run_id: int, **_kwargs: Any) -> None:
    """Publish the "what would change" step of a run whose scenario is a question's."""
    scenario_id = SimulationRun.objects.values_list("scenario_id", flat=True).get(pk=run_id)
    if Question.objects.filter(scenario_id=scenario_id).exists():
        changes_publish(run_id)


def changes_publish(run_id: int) -> None:
    """Send the step's task (on the embedded default it runs now, in this process)."""
    store.publish(ASK_CHANGES_TASK, run_id)


def changes_of(result: dict[str, Any], notes: dict[str, Any], run_id: int) -> dict[str, Any]:
    """The answer's step of a result: ``run`` (the run it belongs to); ``sized``: the plan
    recommended at its best size, priced on every path (:func:`costapp.ask.sized.sized_plan`),
    when a size the sizing found beats every option at its own; with a runner-up, the crossings
    and moves (:func:`costapp.ask.answer.what_would_change`); ``offers``: the next acceptable
    offers of each price the plan rests on, priced again; ``shared``: the sentence, the prices it
    rests on, whether the next offers change it and the answer's figures, as a read-only link
    shows them."""
    sized = sized_plan(result, notes.get("objective") or "mean_npv")
    answer = answer_of(result, notes, sized)
    changes: dict[str, Any] = {"run": run_id}
    inputs = sized["inputs"] if sized else None
    if sized is not None:
        priced = sized.pop("priced")
        changes["sized"] = sized
        changes["charts"] = [
            asdict(chart) for chart in result_charts(priced) if chart.key.startswith(ANSWER_CHARTS)
        ]
    if answer["recommended"] and answer["runner_up"]:
        changes.update(
            what_would_change(result, answer["recommended"], answer["runner_up"], inputs)
        )
    if answer["recommended"]:
        changes["offers"] = offers_priced_again(result, notes, answer["recommended"], inputs)
    shared = answer_of(result, quotes_hidden(notes), sized)
    offers = changes.get("offers")
    changes["shared"] = {
        "sentence": shared["sentence"],
        "rests_on": shared["rests_on"],
        "offers_change": any(row["changes"] for row in offers) if offers else None,
        "figures": shared["figures"],
    }
    return changes


def quotes_hidden(notes: dict[str, Any]) -> dict[str, Any]:
    """The notes with each quote's vendor said as "a quote": what a read-only link shows."""
    roles = {name: {**role, "vendor": "a quote"} if role.get("vendor") else role
             for name, role in (notes.get("roles") or {}).items()}  # fmt: skip
    return {**notes, "roles": roles}


def question_changes_compute(run_id: int) -> list[int]:
    """Work out and keep "what would change" for each question of the run's scenario whose run it
    is, or whose scenario, as it stands now, is what the run priced (it becomes the question's
    run). The ids of the questions updated; a run not succeeded updates none."""
    run = (
        SimulationRun.objects.select_related("scenario")
        .filter(pk=run_id, status=SimulationRun.Status.SUCCEEDED)
        .first()
    )
    if run is None or run.result is None:
        return []
    as_it_stands = document_sha256(run.scenario.document) == run.document_sha256
    updated = []
    for question in Question.objects.filter(scenario_id=run.scenario_id):
        if question.run_id != run.pk and not as_it_stands:
            continue
        if question.run_id == run.pk and (question.changes or {}).get("run") == run.pk:
            continue  # a second delivery
        try:
            changes = changes_of(run.result, question.notes, run.pk)
        except SERVICE_ERRORS:
            raise  # the task tries again
        except Exception as exc:  # the answer stands on the run alone, and says why
            logger.exception("question %s: the answer's step failed on run %s", question.pk, run.pk)
            changes = {"run": run.pk, "error": f"{type(exc).__name__}: {exc}"}
        Question.objects.filter(pk=question.pk).update(run=run, changes=changes)
        updated.append(question.pk)
        logger.info("question %s: what would change worked out from run %s", question.pk, run.pk)
    return updated
