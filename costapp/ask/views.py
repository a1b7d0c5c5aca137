"""``/ask/``: a buying question in plain words, and its answer.

Every signed-in user with a role may ask; the question is saved as the asker's own private
scenario and run (only analysts open it in the builder). The answer page polls while the run is
under way, then shows the answer sentence, the figures that drive it, what would change it, the
sources, and the run's charts.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.core.cache import cache
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.decorators import role_required
from accounts.roles import ANALYST, VIEWER, user_has_role
from costapp.ask.answer import answer_of, change_sentences
from costapp.ask.charts import sensitivity_chart
from costapp.ask.forms import QuestionForm
from costapp.ask.needs import work_needs
from costapp.ask.plan import question_plan
from costapp.ask.steps import ANSWER_CHARTS, changes_publish
from costapp.charts import Chart, Table
from costapp.faults import BROKER_ERRORS
from costapp.models import Question, Scenario, SimulationRun
from costapp.reports.sources import source_rows
from costapp.runs import chart_cache, pipeline
from costapp.runs.store import BrokerUnavailable
from costapp.scenarios.services import document_sha256
from costapp.tco import ScenarioError
from hardware.models import GpuModel


def _form(data: Any = None, initial: dict[str, Any] | None = None) -> QuestionForm:
    gpus = list(GpuModel.objects.order_by("name"))
    return QuestionForm(
        data,
        initial=initial,
        gpu_choices=[
            (g.slug, f"{g.name} ({g.memory_gb.normalize():f} GB)" if g.memory_gb else g.name)
            for g in gpus
        ],  # fmt: skip
        memory={g.slug: float(g.memory_gb or 0) for g in gpus},
    )


def _answers(form: QuestionForm) -> dict[str, Any]:
    answers = {k: v for k, v in form.cleaned_data.items() if v not in (None, "")}
    answers["discount_rate"] = form.discount_rate
    return answers


@role_required(VIEWER)
@require_http_methods(["GET", "POST"])
def ask(request: HttpRequest) -> HttpResponse:
    """The question form; a valid question becomes a private scenario of the asker's and a run,
    and the answer page follows."""
    again = request.GET.get("from")
    initial = None
    if again and again.isdigit():
        earlier = Question.objects.filter(pk=int(again), owner_id=request.user.pk).first()
        initial = dict(earlier.answers) if earlier else None
    form = _form(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        answers = _answers(form)
        document, notes = question_plan(answers, today=timezone.localdate())
        if not document["options"]:
            form.add_error("gpus", "The catalog can price none of these GPU models: "
                           + " ".join(notes["left_out"]))  # fmt: skip
            return render(request, "ask/ask.html", {"form": form, "here": "ask"})
        try:
            question = _question_create(request.user, answers, document, notes)
        except ScenarioError as exc:
            for error in exc.errors:
                form.add_error(
                    None, f"{error.field}: {error.message}" if error.field else error.message
                )
        except BrokerUnavailable as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("answer", pk=question.pk)
    return render(request, "ask/ask.html", {"form": form, "here": "ask"})


def _question_create(user: Any, answers: dict, document: dict, notes: dict) -> Question:
    """The question's scenario, run and question, written in one transaction: a broker that does
    not answer, or an invalid plan, leaves none of them behind. The run's tasks are published on
    its commit (on the embedded default they run in the process's background thread, so the
    request returns at once and the answer page follows the run); a broker that refuses them
    then (the run failed with its error) has the three deleted, so a refused question leaves
    nothing behind either."""
    from costapp.scenarios import services

    name = document["name"][: Scenario._meta.get_field("name").max_length]
    written: list[Question] = []
    try:
        with transaction.atomic():
            scenario = services.scenario_create(
                owner=user, name=name, document=document,
                description="Built by Ask from a question in plain words.",
            )  # fmt: skip
            run = pipeline.run_create(scenario=scenario, off_request=True)
            written.append(Question.objects.create(
                owner=user, answers=answers, scenario=scenario, run=run, notes=notes))  # fmt: skip
    except BrokerUnavailable:
        for question in written:  # committed, then refused by the broker
            with transaction.atomic():
                question.delete()
                scenario.delete()  # and its run
        raise
    return written[0]


def _question(request: HttpRequest, pk: int) -> Question:
    found = get_object_or_404(Question.objects.select_related("run", "scenario"), pk=pk)
    if found.owner_id != request.user.pk:
        raise Http404("no such question")
    return found


CHANGES_LOST_AFTER = timedelta(seconds=60)
"""A finished run whose "what would change" has not arrived this long after: its step is sent
again (its message was lost)."""


def question_run(question: Question) -> SimulationRun | None:
    """The run of the question as it now stands: its own run when the scenario is still what that
    run priced, else the newest run of the scenario as it stands (a re-run from the builder,
    which becomes the question's run); None when the question changed and was not priced again."""
    run, scenario = question.run, question.scenario
    if scenario is None:
        return run
    current = document_sha256(scenario.document)
    if run is not None and run.document_sha256 == current:
        return run
    latest = scenario.runs.filter(document_sha256=current).order_by("-created", "-pk").first()
    if latest is not None:
        Question.objects.filter(pk=question.pk).update(run=latest, changes=None)
        question.run, question.changes = latest, None
    return latest


def answer_charts(
    run: SimulationRun, changes: dict[str, Any], recommended: str | None
) -> list[Chart]:
    """The charts of the plan recommended: at its best size, those its step drew of it; else the
    run's cumulative cost and spread, and what the mix's layers serve when a mix at its own size
    is the answer."""
    if changes.get("charts"):
        return [
            Chart(**{**c, "tables": [Table(**t) for t in c["tables"]]}) for c in changes["charts"]
        ]
    mix_key = next(
        (f"layers-{i + 1}" for i, o in enumerate(run.result["options"]) if o["name"] == recommended),
        None,
    ) if run.result else None  # fmt: skip
    return [
        chart for chart in chart_cache.run_charts(run=run)
        if chart.key.startswith(ANSWER_CHARTS) and (not chart.key.startswith("layers-")
                                                     or chart.key == mix_key)
    ]  # fmt: skip


def answer_context(question: Question) -> dict[str, Any]:
    """What the answer page shows of a question: its run's progress, the answer of the run of the
    question as it stands, or that the question changed since it was answered."""
    run = question_run(question)
    context: dict[str, Any] = {"question": question, "run": run,
                               "left_out": question.notes.get("left_out", [])}  # fmt: skip
    if run is None:
        context["changed"] = question.run is not None or question.scenario is not None
        return context
    if run.status != SimulationRun.Status.SUCCEEDED or run.result is None:
        return context
    result = run.result
    changes = question.changes if (question.changes or {}).get("run") == run.pk else None
    if changes is None:
        context["changes_pending"] = True
        lost = run.finished and timezone.now() - run.finished > CHANGES_LOST_AFTER
        try:
            if lost and cache.add(f"ask-changes-sent:{run.pk}", 1, CHANGES_LOST_AFTER.seconds):
                changes_publish(run.pk)  # at most once a minute, whoever polls
        except BROKER_ERRORS:
            pass  # the queue does not answer: the page polls on, and sends it again later
        return context
    answer = answer_of(result, question.notes, changes.get("sized"))
    context["answer"] = answer
    context["step_error"] = changes.get("error")
    context["needs"] = work_needs(
        result["inputs"], result["gpus"], question.notes.get("gpu_names", {})
    )
    context["offers"] = changes.get("offers") or []
    context["offers_change"] = any(row["changes"] for row in context["offers"])
    if changes.get("moves"):
        context["changes"] = change_sentences(changes, result)
        context["moves"] = changes["moves"]
        if all("recommended_lead_usd" in m for m in changes["moves"]):
            context["sensitivity"] = sensitivity_chart(changes)
    sources = source_rows(result=result, engine_version=run.engine_version)
    context["sources"] = sources
    flags = [flag for row in sources["sourced"] for flag in row["flags"]]
    context["source_counts"] = {
        "stale": sum(1 for f in flags if f.startswith("stale")),
        "unknown": sum(1 for f in flags if f.startswith("of unknown age")),
        "other": sum(1 for f in flags if not f.startswith(("stale", "of unknown age"))),
    }
    context["charts"] = answer_charts(run, changes, answer["recommended"])
    context["result"] = result
    return context


@role_required(VIEWER)
@require_GET
def answer(request: HttpRequest, pk: int) -> HttpResponse:
    """A question's answer (its run's progress while it is under way)."""
    question = _question(request, pk)
    context = answer_context(question)
    context["here"] = "ask"
    context["may_build"] = user_has_role(request.user, ANALYST)
    context["question_json"] = json.dumps(question.answers, indent=2)
    template = "ask/_answer_body.html" if request.headers.get("HX-Request") else "ask/answer.html"
    return render(request, template, context)


@role_required(VIEWER)
@require_POST
def ask_again(request: HttpRequest, pk: int) -> HttpResponse:
    """Price the question again as it now stands (a new run of its scenario, at today's prices):
    the answer page then follows that run."""
    question = _question(request, pk)
    if question.scenario is None:
        raise Http404("the question's scenario was deleted")
    try:
        with transaction.atomic():
            run = pipeline.run_create(scenario=question.scenario, reprice=True, off_request=True)
            Question.objects.filter(pk=question.pk).update(run=run, changes=None)
    except (ScenarioError, BrokerUnavailable) as exc:
        messages.error(request, f"The question could not be asked again: {exc}")
    return redirect("answer", pk=question.pk)


@role_required(VIEWER)
@require_GET
def questions(request: HttpRequest) -> HttpResponse:
    """The asker's questions, newest first."""
    found = Question.objects.filter(owner_id=request.user.pk).select_related("run")[:50]
    if not found:
        messages.info(request, "You have asked no question yet.")
    return render(request, "ask/questions.html", {"questions": found, "here": "ask"})


@role_required(VIEWER)
@require_GET
def answer_json(request: HttpRequest, pk: int) -> HttpResponse:
    """The answer's result document, as the engine wrote it."""
    question = _question(request, pk)
    if question.run is None or question.run.result is None:
        raise Http404("the question has no result yet")
    response = HttpResponse(
        json.dumps(question.run.result, indent=2, allow_nan=False), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="question-{question.pk}-result.json"'
    return response


@role_required(VIEWER)
@require_GET
def answer_plan(request: HttpRequest, pk: int) -> HttpResponse:
    """The recommended plan at its best size as a scenario document: ``manage.py simulate`` gives
    the answer's figures from it."""
    question = _question(request, pk)
    sized = (question.changes or {}).get("sized")
    if sized is None or question.changes.get("run") != question.run_id:
        raise Http404("the answer recommends an option of the question's own scenario")
    response = HttpResponse(
        json.dumps(sized["document"], indent=2, allow_nan=False), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="question-{question.pk}-plan.json"'
    return response


@role_required(VIEWER)
@require_GET
def answer_scenario(request: HttpRequest, pk: int) -> HttpResponse:
    """The scenario document the question built (``manage.py simulate`` prices it again)."""
    question = _question(request, pk)
    if question.scenario is None:
        raise Http404("the question's scenario was deleted")
    response = HttpResponse(
        json.dumps(question.scenario.document, indent=2, allow_nan=False),
        content_type="application/json",
    )
    response["Content-Disposition"] = f'attachment; filename="question-{question.pk}-scenario.json"'
    return response
