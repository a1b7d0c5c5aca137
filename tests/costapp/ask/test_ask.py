"""``/ask/``: a buying question in plain words becomes an ordinary scenario and run, and its answer
says what to buy, why the other options lose or fail, what was left out, and how sure the
figures are. Tasks run in this process; the catalog is the shipped one."""

import json
import re
from html import unescape

import pytest

from accounts.roles import VIEWER
from costapp.ask.presets import EXAMPLE_QUESTION
from costapp.models import Question, Scenario, SimulationRun
from costapp.scenarios.services import scenario_simulate
from tests.factories import UserFactory

from ..runs_helpers import analyst

pytestmark = pytest.mark.django_db


QUESTION_70B = EXAMPLE_QUESTION


def ask(client, **changes):
    data = {**QUESTION_70B, **changes}
    data = {k: v for k, v in data.items() if v is not None}
    return client.post("/ask/", data)


def test_the_70b_question_becomes_a_plan_of_every_family_and_an_answer_in_one_sentence(
    client, catalog, tasks_in_process
):
    user = analyst("lead")
    client.force_login(user)
    response = ask(client)
    assert response.status_code == 302, response.content.decode()[:2000]
    question = Question.objects.get(owner=user)
    assert response["Location"] == f"/ask/{question.pk}/"
    run = question.run
    assert run.status == SimulationRun.Status.SUCCEEDED, run.error
    families = {role["family"] for role in question.notes["roles"].values()}
    assert families >= {"on_demand_elastic", "on_demand_fixed", "committed_1y", "committed_3y",
                        "dedicated", "on_prem", "api"}  # fmt: skip
    document = question.scenario.document
    assert not question.scenario.shared and question.scenario.owner == user
    names = " ".join(o["name"] for o in document["options"])
    assert "Demo" not in names and "DEMO-" not in names  # quotes by vendor only in sources
    assert document["simulation"]["paths"] == 10_000
    assert document["simulation"]["demand_multiplier"] == {
        "dist": "triangular", "low": 0.7, "mode": 1.0, "high": 1.3}  # fmt: skip
    assert {s["option"] for s in document["sizing"]} == {
        name for name, role in question.notes["roles"].items() if role["family"] == "mix"
    }  # fmt: skip  (its layers are sized in it)
    page = client.get(f"/ask/{question.pk}/").content.decode()
    result = run.result
    best = next(o for o in result["options"] if o["name"] == result["cheapest"])
    sentence = page[page.index('id="answer-sentence"') :].split("</p>")[0]
    assert f"${best['total_usd']:,.0f} over the 39 months" in sentence
    assert f"P10–P90 ${best['p10_usd']:,.0f}–${best['p90_usd']:,.0f}" in sentence
    assert "What would change the answer" in page and 'id="sensitivity"' in page
    share = f"/scenarios/{question.scenario.pk}/share/"
    assert share in page and client.get(share).status_code == 200  # the owner shares it
    question.refresh_from_db()
    assert question.changes["runner_up"] and len(question.changes["moves"]) == 6
    # the plan priced again in this process gives the same result
    again = scenario_simulate(document=document)
    assert [o["total_usd"] for o in again["options"]] == [o["total_usd"] for o in result["options"]]
    assert [o["p90_usd"] for o in again["options"]] == [o["p90_usd"] for o in result["options"]]


def test_infeasible_and_left_out_options_and_stale_sources_are_said_in_words(
    client, catalog, tasks_in_process
):
    user = analyst("lead")
    client.force_login(user)
    ask(client, gpus=["h100-sxm", "l40s"], bridge=None)
    question = Question.objects.get(owner=user)
    page = client.get(f"/ask/{question.pk}/").content.decode()
    infeasible = page[page.index('id="answer-infeasible"') :].split("</section>")[0]
    assert "the servers arrive in month 4" in infeasible
    assert "ask again with “Rent while bought servers arrive” on" in infeasible
    assert "hosted tokens cannot run the fine-tune" in infeasible
    left = page[page.index('id="answer-left-out"') :].split("</section>")[0]
    assert "L40S" in left and "no purchase quote" in left
    said = page[page.index('id="answer-sources-said"') :].split("</section>")[0]
    assert "are stale" in said and "of unknown age" in said
    assert "of unknown age: its source states no day" in page  # the token price's row


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"tokens_per_day": "-5"}, "tokens_per_day", "greater than or equal to 0"),
        ({"train_start": "3", "train_end": "2"}, "train_end", "Must not be before month 3"),
        ({"gpus": ["no-such-gpu"]}, "gpus", "not one of the available choices"),
        ({"serve_model": "llama-3.1-405b", "gpus": ["l4"]}, "serve_model", "needs about 972 GB"),
        ({"tokens_per_day": ""}, "tokens_per_day", "Give the generated tokens per day"),
        ({"growth_per_year": "-150"}, "growth_per_year", "Must be above −100 % a year"),
        ({"growth_per_year": "-100"}, "growth_per_year", "Must be above −100 % a year"),
        ({"train_cluster_gpus": "10000001"}, "train_cluster_gpus", "At most 10,000,000 GPUs"),
        ({"region": "mars"}, "region", "Choose a region: the Americas, Europe, Asia-Pacific"),
        ({"kinds": []}, "kinds", "Choose at least one kind of provider"),
    ],
)
def test_a_bad_answer_shows_its_message_at_the_field_and_stores_nothing(
    client, catalog, changes, field, message
):
    user = analyst("lead")
    client.force_login(user)
    response = ask(client, **changes)
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert field in errors and any(message in e for e in errors[field]), errors
    html = response.content.decode()
    block = html[html.index(f'id="field-{field}"') :].split('id="field-')[1]  # the field's own
    said = [unescape(e) for e in re.findall(r'<p class="error" role="alert">(.*?)</p>', block)]
    assert any(message in e for e in said), (field, said)
    assert not Question.objects.exists() and not Scenario.objects.exists()
    assert not SimulationRun.objects.exists()


def test_a_viewer_asks_and_gets_a_private_answer_others_cannot_read(
    client, catalog, tasks_in_process
):
    viewer = UserFactory(username="finance", roles=[VIEWER])
    client.force_login(viewer)
    assert client.get("/ask/").status_code == 200
    ask(client, train=None, serve_start="1", months="12")
    question = Question.objects.get(owner=viewer)
    page = client.get(f"/ask/{question.pk}/").content.decode()
    assert 'id="answer-sentence"' in page
    assert "Open it in the builder" not in page  # only analysts open it in the builder
    assert client.get(f"/runs/{question.run.pk}/").status_code == 200  # their own run
    assert json.loads(client.get(f"/ask/{question.pk}/scenario.json").content)["options"]
    other = analyst("other")
    client.force_login(other)
    assert client.get(f"/ask/{question.pk}/").status_code == 404


def test_the_7b_claim_asked_in_plain_words_reaches_the_claims_conclusion(
    client, catalog, tasks_in_process
):
    """The claim page: a 7B model in FP16 is served from one 24 GB L4, not a 28 GB-class GPU."""
    user = analyst("lead")
    client.force_login(user)
    ask(client, train=None, months="12", serve_start="1", serve_model="custom",
        serve_params_billion="7", tokens_per_day=str(20 * 86_400), peak_to_average="1",
        gpus=["l4"])  # fmt: skip
    result = Question.objects.get(owner=user).run.result
    fixed = [o for o in result["options"] if "kept running" in o["name"]]
    assert fixed and fixed[0]["gpu"] == "l4" and fixed[0]["provisioned_gpus"] == 1


@pytest.mark.parametrize("utilization", ["0.9", "0.3"])
def test_the_dedicated_claim_asked_in_plain_words_fails_against_gpu_cloud_prices(
    client, catalog, tasks_in_process, utilization
):
    """The claim page: dedicated servers do not save more than half against GPU-cloud
    on-demand prices, busy or not."""
    user = analyst("lead")
    client.force_login(user)
    ask(client, serve=None, train=None, months="36", steady="on", steady_gpus="64",
        steady_utilization=utilization)  # fmt: skip
    question = Question.objects.get(owner=user)
    roles = question.notes["roles"]
    totals = {roles[o["name"]]["family"]: o["total_usd"] for o in question.run.result["options"]}
    assert totals["dedicated"] > 0.5 * totals["on_demand_elastic"]


def test_a_sweep_size_cheaper_than_the_plans_option_is_named_in_the_answer():
    from costapp.ask.answer import answer_of

    option = {"name": "Commit", "type": "cloud", "gpu": "h100-sxm", "feasible": True,
              "total_usd": 100.0, "npv_usd": 90.0, "provisioned_gpus": 4,
              "savings_vs_baseline_pct": 10.0, "break_even_month": 0, "shortfall_gpu_hours": 0}  # fmt: skip
    result = {
        "baseline": "Rent", "cheapest": "Commit",
        "inputs": {"horizon_months": 12, "workloads": [], "options": [{"name": "Commit"}]},
        "options": [option, {**option, "name": "Rent", "total_usd": 111.0, "npv_usd": 99.0}],
        "sizing": [{"option": "Commit", "field": "committed_gpus", "candidates": [0, 2, 4],
                    "npv_usd": [99.0, 80.0, 90.0], "total_usd": [111.0, 88.0, 100.0],
                    "feasible": [True, True, True], "best": 2}],
    }  # fmt: skip
    notes = {"roles": {"Commit": {"family": "committed_3y", "years": 3, "words": "commit"},
                       "Rent": {"family": "on_demand_elastic", "words": "rent"}}}  # fmt: skip
    sentence = answer_of(result, notes)["sentence"]
    assert sentence.startswith("Commit to 4 h100-sxm GPUs for 3 years: $100 over the 12 months")
    assert "Sized better, Commit at 2 GPUs committed costs $88 ($80 in NPV against $90)" in sentence
    result["sizing"][0]["best"] = 4
    assert "Sized better" not in answer_of(result, notes)["sentence"]


def test_a_question_whose_broker_does_not_answer_leaves_no_scenario_run_or_question(
    client, catalog, settings
):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    user = analyst("lead")
    client.force_login(user)
    response = ask(client)
    assert response.status_code == 200
    assert "does not answer" in response.content.decode()
    assert not Scenario.objects.filter(owner=user).exists()
    assert not SimulationRun.objects.exists() and not Question.objects.exists()


def test_every_field_of_the_form_explains_itself_in_a_line_and_says_its_default(client, catalog):
    from costapp.ask.forms import QuestionForm

    client.force_login(analyst("lead"))
    page = client.get("/ask/").content.decode()
    for name in QuestionForm.base_fields:
        block = page[page.index(f'id="field-{name}"') + 1 :].split('id="field-')[0]
        help_text = block[block.index('class="helptext"') :].split("</span>")[0]
        assert "default" in help_text, (name, help_text)
    for name in ("commitments", "discount_percent", "growth_per_year", "peak_hours_per_day",
                 "train_cluster_gpus", "train_days", "failures", "checkpoint_minutes",
                 "restart_minutes", "bridge", "kinds", "region", "max_price_age_days",
                 "owned_gpus", "owned_gpu", "owned_usd_per_month"):  # fmt: skip
        assert f'id="field-{name}"' in page
    discount = page[page.index('id="field-discount_percent"') :].split("</div>")[0]
    assert "; default 8" in discount  # DISCOUNT_RATE, 0.08


def test_the_discount_rate_and_commitments_asked_are_the_plans(client, catalog, tasks_in_process):
    client.force_login(analyst("lead"))
    assert "discount_percent" in ask(client, discount_percent="-1").context["form"].errors
    assert not Question.objects.exists()
    response = ask(client, discount_percent="12.5", commitments=["1", "5"], months="48",
                   train=None, serve_start="1")  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    question = Question.objects.get()
    assert question.scenario.document["discount_rate"] == 0.125
    assert question.run.result["inputs"]["discount_rate"] == 0.125
    committed = {r["family"] for r in question.notes["roles"].values()
                 if r["family"].startswith("committed")}  # fmt: skip
    assert committed == {"committed_1y"}  # 5 years only over 60 months or more
