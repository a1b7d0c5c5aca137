"""The plan an answer recommends at its best size: a mix whose joint sizing beats every option at
its own size is priced again as a document of its own, the answer's sentence says what to hold of
each layer with that document's figures, and ``simulate`` on the document gives them again."""

import io
import json
import re

import pytest
from django.core.management import call_command
from django.utils.html import escape

from costapp.ask.answer import answer_of
from costapp.ask.sized import recommendation, sized_plan
from costapp.ask.steps import changes_of
from costapp.scenarios.services import scenario_simulate

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "name": "A steady fleet: commit, rent the rest",
    "horizon_months": 36,
    "discount_rate": 0.08,
    "workloads": [{"type": "steady", "name": "Fleet", "gpu": "h100-sxm", "gpus": 10,
                   "utilization": 1.0}],
    "options": [
        {"type": "cloud", "name": "Rent on demand", "gpu": "h100-sxm", "usd_per_gpu_hour": 4.0},
        {"type": "cloud", "name": "Commit 3 years", "gpu": "h100-sxm", "billing": "committed",
         "usd_per_gpu_hour": 1.5, "on_demand_usd_per_gpu_hour": 4.0, "term_months": 36,
         "committed_gpus": 30},
        {"type": "mix", "name": "Commit and rent", "layers": ["Commit 3 years"],
         "rest": "Rent on demand"},
    ],
    "simulation": {"paths": 2000, "seed": 0,
                   "demand_multiplier": {"dist": "triangular", "low": 0.7, "mode": 1.0,
                                         "high": 1.3}},
    "sizing": [{"option": "Commit and rent", "layers": [{"min": 0, "max": 20, "step": 2}],
                "objective": "mean_npv"}],
}  # fmt: skip
NOTES = {
    "roles": {
        "Rent on demand": {"family": "on_demand_elastic", "gpu": "h100-sxm", "seller": "Lambda",
                           "words": "rent", "price": "Lambda, $4.00 per GPU-hour"},
        "Commit 3 years": {"family": "committed_3y", "gpu": "h100-sxm", "years": 3,
                           "seller": "Azure", "words": "commit", "price": "Azure, $1.50"},
        "Commit and rent": {"family": "mix", "gpu": "h100-sxm", "words": "a mix"},
    },
    "gpu_names": {"h100-sxm": "H100"},
}  # fmt: skip


def test_a_mix_sized_better_is_the_answer_and_simulate_gives_its_figures(catalog):
    result = scenario_simulate(document=DOCUMENT)
    pick = recommendation(result, "mean_npv")
    assert pick["option"] == "Commit and rent" and pick["size"] is not None
    sized = sized_plan(result, "mean_npv")
    assert sized is not None and sized["size"] == pick["size"]
    committed = sized["size"][0]
    assert 0 < committed < 30
    again = scenario_simulate(document=sized["document"])
    mine = next(o for o in again["options"] if o["name"] == "Commit and rent")
    for field in ("total_usd", "p10_usd", "p90_usd", "tail_npv_usd", "savings_vs_baseline_pct"):
        assert mine[field] == sized["figures"][field], field
    sweep = result["sizing"][0]
    index = sweep["candidates"].index(sized["size"])
    assert mine["total_usd"] == pytest.approx(sweep["total_usd"][index], rel=1e-12)
    answer = answer_of(result, NOTES, sized)
    sentence = answer["sentence"]
    assert sentence.startswith(
        f"Commit to {committed} H100 for 3 years at Azure, rent the rest on demand at Lambda: "
        f"${mine['total_usd']:,.0f} over the 36 months (P10–P90 ${mine['p10_usd']:,.0f}–"
        f"${mine['p90_usd']:,.0f}; in the worst tenth of futures ${mine['tail_npv_usd']:,.0f}"
    ), sentence
    assert "below renting everything on demand" in sentence
    assert [r["option"] for r in answer["rests_on"]] == ["Rent on demand", "Commit 3 years"]


def test_the_step_keeps_the_sized_plan_its_charts_and_what_would_change_of_it(catalog):
    result = scenario_simulate(document=DOCUMENT)
    changes = changes_of(result, {**NOTES, "objective": "mean_npv"}, run_id=7)
    json.dumps(changes, allow_nan=False)  # kept on the question as it is
    sized = changes["sized"]
    assert changes["run"] == 7 and "priced" not in sized
    assert changes["recommended"] == "Commit and rent"
    assert [c["key"] for c in changes["charts"]] == ["cumulative", "layers-3", "fan"]
    layers = next(c for c in changes["charts"] if c["key"] == "layers-3")
    assert "Commit and rent" in layers["title"]
    assert changes["shared"]["sentence"] == answer_of(result, NOTES, sized)["sentence"]


def test_the_answer_page_of_a_sized_plan_shows_its_sentence_charts_and_plan(
    client, catalog, tasks_in_process
):
    from django.db import transaction

    from costapp.models import Question
    from costapp.runs import pipeline
    from costapp.scenarios import services

    from ..runs_helpers import analyst

    user = analyst("lead")
    client.force_login(user)
    with transaction.atomic():
        scenario = services.scenario_create(owner=user, name=DOCUMENT["name"], document=DOCUMENT)
        run = pipeline.run_create(scenario=scenario)
        question = Question.objects.create(owner=user, answers={}, scenario=scenario, run=run,
                                           notes={**NOTES, "objective": "mean_npv"})  # fmt: skip
    question.refresh_from_db()
    sized = question.changes["sized"]
    page = client.get(f"/ask/{question.pk}/").content.decode()
    sentence = page[page.index('id="answer-sentence"') :].split("</p>")[0]
    assert f"Commit to {sized['size'][0]} H100 for 3 years at Azure" in sentence
    assert f"${sized['figures']['total_usd']:,.0f} over the 36 months" in sentence
    titles = [c["title"] for c in question.changes["charts"]]
    assert any("Commit and rent" in t for t in titles)
    for title in titles:
        assert escape(title) in page
    plan = client.get(f"/ask/{question.pk}/plan.json")
    assert plan.status_code == 200
    again = scenario_simulate(document=json.loads(plan.content))
    mine = next(o for o in again["options"] if o["name"] == "Commit and rent")
    assert mine["total_usd"] == sized["figures"]["total_usd"]


def test_the_mix_a_question_is_answered_with_fed_to_simulate_gives_the_answers_figures(
    client, catalog, tasks_in_process, tmp_path
):
    """A steady fleet of 64 H100 at 90 %, 16 of them owned: asked at ``/ask/``, the answer is the
    mix of the owned GPUs, bought servers and on-demand rest at its best size; its plan, as the
    answer page offers it, priced by ``manage.py simulate``, says the sentence's figures."""
    from costapp.ask.presets import EXAMPLE_QUESTION
    from costapp.models import Question

    from ..runs_helpers import analyst

    user = analyst("lead")
    client.force_login(user)
    answers = {**EXAMPLE_QUESTION, "months": "36", "steady": "on", "steady_gpus": "64",
               "steady_utilization": "0.9", "owned_gpus": "16", "owned_gpu": "h100-sxm",
               "owned_usd_per_month": "6000", "commitments": []}  # fmt: skip
    for field in ("serve", "train"):
        answers.pop(field)
    assert client.post("/ask/", answers).status_code == 302
    question = Question.objects.get(owner=user)
    sized = question.changes.get("sized")
    assert sized, question.changes.get("recommended")  # the mix at its best size is the answer
    page = client.get(f"/ask/{question.pk}/").content.decode()
    plan = client.get(re.search(r'href="([^"]+)" id="plan-json"', page).group(1))
    assert plan.status_code == 200
    (tmp_path / "plan.json").write_bytes(plan.content)
    out = io.StringIO()
    call_command("simulate", str(tmp_path / "plan.json"), "--json", stdout=out)
    priced = json.loads(out.getvalue())
    document = json.loads(plan.content)
    mix = next(o for o in document["options"] if o["name"] == sized["option"])
    assert mix["type"] == "mix"
    sizes = [layer["size"] for layer in mix["layers"]]
    assert sizes == sized["size"] and sizes[0] == 1  # the owned GPUs, kept
    mine = next(o for o in priced["options"] if o["name"] == mix["name"])
    sentence = page[page.index('id="answer-sentence"') :].split("</p>")[0]
    assert sentence.startswith(
        'id="answer-sentence"><strong>Keep the 16 H100 SXM5 80GB already owned, buy '
        f"{sizes[1]} server{'s' * (sizes[1] != 1)} of 8 H100 SXM5 80GB, rent the rest on demand"
    ), sentence
    assert (
        f": ${mine['total_usd']:,.0f} over the 36 months (P10–P90 ${mine['p10_usd']:,.0f}–"
        f"${mine['p90_usd']:,.0f}; in the worst tenth of futures ${mine['tail_npv_usd']:,.0f} in "
        f"NPV), {mine['savings_vs_baseline_pct']:.1f} % below renting everything on demand."
    ) in sentence
    figures = page[page.index('id="answer-figures"') :].split("</ul>")[0]
    assert f"Total over the horizon: <strong>${mine['total_usd']:,.0f}</strong>" in figures
    assert f"Net present value: <strong>${mine['npv_usd']:,.0f}</strong>" in figures
    for field in ("total_usd", "npv_usd", "p10_usd", "p90_usd", "tail_npv_usd"):
        assert mine[field] == sized["figures"][field], field
