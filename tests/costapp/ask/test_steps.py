"""Ask does not compute on a page view, and an answer always belongs to its question: "what would
change" is the run's follow-up step, kept with the id of the run it belongs to; a question edited
after it was answered shows no old answer, says so and is asked again; a re-run of the scenario as
it stands becomes the question's run. Tasks run in this process; the catalog is the shipped one."""

import re

import grimp
import pytest

from costapp.ask import answer as answer_module
from costapp.ask.presets import EXAMPLE_QUESTION
from costapp.ask.steps import ASK_CHANGES_TASK, question_changes_compute
from costapp.models import Question, SimulationRun
from costapp.reports.warning_words import FIELD_NAMES
from costapp.runs import pipeline
from costapp.scenarios.services import scenario_update
from hardware.selectors import provider_names

from ..runs.test_task_names import registry
from ..runs_helpers import analyst

pytestmark = pytest.mark.django_db


def _sentence(page: str) -> str:
    return page[page.index('id="answer-sentence"') :].split("</p>")[0]


def _asked(client) -> Question:
    user = analyst("lead")
    client.force_login(user)
    response = client.post("/ask/", EXAMPLE_QUESTION)
    assert response.status_code == 302, response.content.decode()[:2000]
    return Question.objects.get(owner=user)


def test_what_would_change_is_the_runs_step_and_the_page_runs_no_engine(
    client, catalog, tasks_in_process, monkeypatch
):
    question = _asked(client)
    assert question.run.status == SimulationRun.Status.SUCCEEDED, question.run.error
    # worked out by the run's follow-up step, before any page view, for this run
    assert question.changes["run"] == question.run_id
    assert len(question.changes["moves"]) == 6
    assert question.changes["runner_up"]

    def no_engine(*_args, **_kwargs):
        raise AssertionError("the answer page ran the engine")

    monkeypatch.setattr(answer_module, "simulate", no_engine)
    page = client.get(f"/ask/{question.pk}/").content.decode()
    assert "What would change the answer" in page and 'id="sensitivity"' in page
    assert 'data-changes="pending"' not in page
    # a second delivery of the step leaves the question as it is
    assert question_changes_compute(question.run_id) == []


def test_a_question_edited_after_its_answer_shows_no_old_answer_and_is_asked_again(
    client, catalog, tasks_in_process
):
    question = _asked(client)
    old_run = question.run
    old_total = next(
        o["total_usd"] for o in old_run.result["options"] if o["name"] == old_run.result["cheapest"]
    )
    document = dict(question.scenario.document)
    document["name"] = "Ask: the same, for 48 months"
    document["horizon_months"] = 48
    scenario_update(scenario=question.scenario, document=document, name=document["name"])
    page = client.get(f"/ask/{question.pk}/").content.decode()
    assert 'id="answer-changed"' in page and "Ask again" in page
    assert 'id="answer-sentence"' not in page and f"${old_total:,.0f}" not in page
    response = client.post(f"/ask/{question.pk}/again/")
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.run_id != old_run.pk
    assert question.run.status == SimulationRun.Status.SUCCEEDED, question.run.error
    assert question.changes["run"] == question.run_id
    new = question.run.result
    best = next(o for o in new["options"] if o["name"] == new["cheapest"])
    page = client.get(f"/ask/{question.pk}/").content.decode()
    assert f"${best['total_usd']:,.0f} over the 48 months" in _sentence(page)
    assert "Ask: the same, for 48 months" in page


def test_a_rerun_of_the_edited_scenario_becomes_the_questions_run(
    client, catalog, tasks_in_process
):
    question = _asked(client)
    old_run = question.run
    document = dict(question.scenario.document)
    document["horizon_months"] = 45
    scenario_update(scenario=question.scenario, document=document)
    rerun = pipeline.run_create(scenario=question.scenario)  # the builder's Run button
    question.refresh_from_db()
    assert question.run_id == rerun.pk and question.changes["run"] == rerun.pk
    page = client.get(f"/ask/{question.pk}/").content.decode()
    rerun.refresh_from_db()
    best = next(o for o in rerun.result["options"] if o["name"] == rerun.result["cheapest"])
    assert f"${best['total_usd']:,.0f} over the 45 months" in _sentence(page)
    assert old_run.pk != rerun.pk


def test_a_worker_and_a_web_process_register_the_step_and_nothing_imports_its_module():
    found = registry()
    assert found["worker"].get(ASK_CHANGES_TASK) is True  # acknowledged late
    assert ASK_CHANGES_TASK in found["web"]
    graph = grimp.build_graph("costapp", cache_dir=None)
    assert graph.find_modules_that_directly_import("costapp.ask.tasks") == set()


def test_bought_servers_are_bridged_at_the_cheapest_on_demand_price_of_their_gpu(
    client, catalog, tasks_in_process
):
    question = _asked(client)
    roles = question.notes["roles"]
    options = {o["name"]: o for o in question.scenario.document["options"]}
    bought = next(n for n, r in roles.items() if r["family"] == "on_prem")
    elastic = next(n for n, r in roles.items() if r["family"] == "on_demand_elastic")
    assert options[bought]["bridge_usd_per_gpu_hour"] == roles[elastic]["rate"]
    assert (
        f"${roles[elastic]['rate']:,.2f} per GPU-hour until they arrive" in roles[bought]["bridge"]
    )
    result = {o["name"]: o for o in question.run.result["options"]}
    assert result[bought]["feasible"]  # the months before the servers arrive are rented
    assert question.run.result["inputs"]["options"][list(options).index(bought)][
        "bridge_usd_per_gpu_hour"
    ] == roles[elastic]["rate"]  # fmt: skip


def test_a_read_only_link_of_the_questions_run_opens_on_the_answer_and_its_prices(
    client, catalog, tasks_in_process
):
    from django.test import Client

    from costapp.runs.links import run_link_create
    from hardware.models import DedicatedQuote

    question = _asked(client)
    _link, key = run_link_create(run=question.run, user=question.owner)
    page = Client().get(f"/shared/{key}/").content.decode()  # nobody signed in
    answer = page[page.index('id="shared-answer"') :].split("</section>")[0]
    assert page.index('id="shared-answer"') < page.index('id="run-body"')
    own = client.get(f"/ask/{question.pk}/").content.decode()
    assert _sentence(answer) == _sentence(own)
    assert "The prices it rests on" in answer and "per GPU-hour" in answer and "days ago" in answer
    for vendor in DedicatedQuote.objects.values_list("vendor", flat=True):
        assert vendor not in answer
    # the sentence, the prices it rests on, then the figures: the answer's, then the run's
    order = ['id="answer-sentence"', 'id="rests-on"', 'id="offers-verdict"',
             'id="shared-answer-figures"', 'id="key-figures"', 'id="downloads"']  # fmt: skip
    assert [page.index(mark) for mark in order] == sorted(page.index(mark) for mark in order)
    assert "Total over the horizon" in answer and "Net present value" in answer
    # its warnings in words: no field name, file path, address or billing code
    warnings = page[page.index('id="run-warnings"') :].split("</section>")[0]
    assert "may no longer hold" in warnings  # the shipped catalog is a dated snapshot
    for code in (".csv", ".json", "://", "commit-1y", "commit-3y", "skypilot-v8"):
        assert code not in warnings, code
    for name in FIELD_NAMES:
        assert not re.search(rf"\b{name}\b", warnings), name
    # a provider by its name, never its slug ("the on-demand price of lambda ... in us-east-1")
    assert "the on-demand price of Lambda gpu_8x_h100_sxm5 in us-east-1" in warnings
    for slug in provider_names():
        assert f"price of {slug} " not in warnings and f"through {slug}," not in warnings, slug
    for vendor in DedicatedQuote.objects.values_list("vendor", flat=True):
        assert vendor not in page


def test_a_step_that_fails_leaves_the_runs_own_answer_and_says_why(
    client, catalog, tasks_in_process, monkeypatch
):
    from costapp.ask import steps

    def broken(*_args, **_kwargs):
        raise ValueError("no figures today")

    monkeypatch.setattr(steps, "changes_of", broken)
    question = _asked(client)
    assert question.changes == {"run": question.run_id, "error": "ValueError: no figures today"}
    page = client.get(f"/ask/{question.pk}/").content.decode()
    result = question.run.result
    best = next(o for o in result["options"] if o["name"] == result["cheapest"])
    assert f"${best['total_usd']:,.0f} over the 39 months" in _sentence(page)
    assert 'id="step-error"' in page and "no figures today" in page
    assert 'data-changes="pending"' not in page  # the page stops polling


def test_a_step_lost_is_sent_again_by_the_page_at_most_once_a_minute(
    client, catalog, tasks_in_process
):
    from datetime import timedelta

    from django.core.cache import cache
    from django.utils import timezone

    question = _asked(client)
    Question.objects.filter(pk=question.pk).update(changes=None)
    SimulationRun.objects.filter(pk=question.run_id).update(finished=timezone.now())
    page = client.get(f"/ask/{question.pk}/").content.decode()
    assert 'data-changes="pending"' in page and 'id="answer-sentence"' not in page
    question.refresh_from_db()
    assert question.changes is None  # not lost yet: its step may still be on its way
    cache.delete(f"ask-changes-sent:{question.run_id}")
    SimulationRun.objects.filter(pk=question.run_id).update(
        finished=timezone.now() - timedelta(minutes=2)
    )
    client.get(f"/ask/{question.pk}/")  # sends it again (here it runs at once)
    question.refresh_from_db()
    assert question.changes["run"] == question.run_id
    page = client.get(f"/ask/{question.pk}/").content.decode()
    assert 'id="answer-sentence"' in page
