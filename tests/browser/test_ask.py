"""The three questions of a finance lead asked at ``/ask/`` in a real browser, from the form alone
(no builder, no JSON), their runs on a real Celery worker (in the live server's process on the
embedded default: ``run_tasks``). Each test works out the expected figures in its own code from
the offers and figures the plan chose, by the scenario format's formulas, and finds them in the
answer; and a question edited in the builder and run again never shows its old answer under its
new title."""

import math
from pathlib import Path

import pytest

from costapp.models import Question, SimulationRun
from costapp.scenarios.services import scenario_simulate
from hardware.models import GpuModel
from hardware.selectors import current_prices
from tests.browser.support import console_problems, log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
HOURS = 730


def _rate(offer: dict, billing: str = "on_demand") -> float:
    return float(
        current_prices()
        .get(billing=billing, offer__provider__slug=offer["provider"],
             offer__instance_type=offer["instance"], region__code=offer["region"])
        .usd_per_gpu_hour
    )  # fmt: skip


def _ask(page, live_server, name: str) -> Question:
    page.click("#ask-button")
    page.wait_for_url(f"{live_server.url}/ask/*/")
    page.locator("#answer-body[data-status='succeeded'] #answer-sentence").wait_for(timeout=240_000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"ask-{name}.png"), full_page=True)
    return Question.objects.order_by("-pk").first()


def _best(question: Question) -> dict:
    sized = (question.changes or {}).get("sized")
    if sized:
        return sized["figures"]
    result = question.run.result
    return next(o for o in result["options"] if o["name"] == result["cheapest"])


def _start(page, live_server, user: str) -> list[str]:
    analyst(user)
    page.set_default_timeout(60_000)  # the machine running the suite may be busy
    problems = console_problems(page)
    log_in(page, live_server, user, f"pw-{user}")
    page.click("nav >> text=Ask")
    page.wait_for_url(live_server.url + "/ask/")
    assert "{" not in page.locator("#ask-form").inner_text()  # no JSON on the form
    return problems


def test_q1_fine_tune_a_70b_model_then_serve_it(page, live_server, catalog, run_tasks):
    problems = _start(page, live_server, "finance")
    page.fill("#id_months", "39")
    page.select_option("#id_serve_model", "llama-3.1-70b")
    page.fill("#id_tokens_per_day", "20000000")
    page.fill("#id_serve_start", "4")
    page.check("#id_train")
    page.select_option("#id_train_model", "llama-3.1-70b")
    page.fill("#id_train_tokens_billion", "1")
    page.fill("#id_train_start", "1")
    page.fill("#id_train_end", "3")
    page.uncheck("#id_failures")  # four GPUs for a LoRA run: the lead counts no failures
    question = _ask(page, live_server, "q1")

    result = question.run.result
    roles = question.notes["roles"]
    assert {role["family"] for role in roles.values()} >= {
        "on_demand_elastic", "on_demand_fixed", "committed_1y", "committed_3y", "on_prem", "api",
        "mix",
    }  # fmt: skip
    elastic = next(
        o for o in result["options"] if roles[o["name"]]["family"] == "on_demand_elastic"
    )
    offer = next(o for o in question.scenario.document["options"] if o["name"] == elastic["name"])
    rate = _rate(offer["offer"])
    h100 = GpuModel.objects.get(slug="h100-sxm")
    replica = math.ceil(70.6 * 2 * 1.2 / float(h100.memory_gb))
    serving = rate * replica * HOURS * 36
    assert (rate, replica, round(serving, 2)) == (2.99, 3, 235_731.60)
    fine_tune = 3 * 6 * 70.6e9 * 1e9 / (float(h100.bf16_dense_tflops) * 1e12 * 0.4 * 3600)
    assert elastic["total_usd"] == pytest.approx(serving + rate * fine_tune, rel=1e-9)
    best = _best(question)
    sentence = page.locator("#answer-sentence").inner_text()
    assert f"${best['total_usd']:,.0f} over the 39 months" in sentence
    assert f"P10–P90 ${best['p10_usd']:,.0f}–${best['p90_usd']:,.0f}" in sentence
    assert f"in the worst tenth of futures ${best['tail_npv_usd']:,.0f}" in sentence
    if result["cheapest"] == elastic["name"] and not question.changes.get("sized"):
        assert f"${serving + rate * fine_tune:,.0f} over the 39 months" in sentence
    rests = page.locator("#rests-on").inner_text()
    assert "$2.99 per GPU-hour" in rests and "days ago" in rests
    again = scenario_simulate(document=question.scenario.document)
    assert [o["total_usd"] for o in again["options"]] == [o["total_usd"] for o in result["options"]]
    assert page.locator("#what-would-change li").count() == 2
    assert page.locator("#offers-again tbody tr").count() >= 1
    assert problems == []


def test_q2_an_8b_chat_product_growing_half_a_year(page, live_server, catalog, run_tasks):
    problems = _start(page, live_server, "finance")
    page.fill("#id_months", "60")
    page.fill("#id_growth_per_year", "50")
    page.check("input[name=gpus][value=l40s]")
    page.select_option("#id_serve_model", "llama-3.1-8b")
    page.fill("#id_tokens_per_day", "2000000000")
    page.fill("#id_prompt_tokens", "3")
    page.fill("#id_peak_to_average", "2")
    question = _ask(page, live_server, "q2")

    serving = question.scenario.document["workloads"][0]
    assert serving["monthly_growth"] == pytest.approx(1.5 ** (1 / 12) - 1, rel=1e-12)
    h100 = GpuModel.objects.get(slug="h100-sxm")
    params = 8.03e9
    bandwidth, tflops = float(h100.memory_bandwidth_tb_s), float(h100.bf16_dense_tflops)
    decode_rate = min(32 * bandwidth * 1e12 / (2 * params), 0.5 * tflops * 1e12 / (2 * params))
    prefill_rate = 0.5 * tflops * 1e12 / (2 * params)
    x = 2e9 / 86_400
    decode, prefill = x / decode_rate, x * 3 / prefill_rate
    assert (round(decode, 2), round(prefill, 2), round(decode + prefill, 2)) == (3.47, 2.25, 5.72)
    assert (round(decode_rate), round(prefill_rate)) == (6675, 30803)
    peak = math.ceil((decode + prefill) * 2)
    assert peak == 12
    needs = page.locator("#work-needs").inner_text()
    assert f"{decode + prefill:,.2f} H100" in needs
    assert f"{decode:,.2f} generating at {decode_rate:,.0f} tokens/s" in needs
    assert (
        f"{prefill:,.2f} reading 3 prompt tokens per generated token at {prefill_rate:,.0f}"
        in needs
    )
    assert f"{peak} at the busiest hours" in needs
    assert "50.0 % a year" in needs

    best = _best(question)
    sentence = page.locator("#answer-sentence").inner_text()
    assert f"${best['total_usd']:,.0f} over the 60 months" in sentence
    # the next acceptable L40S offers, priced again, with their figures
    rows = [r for r in question.changes["offers"] if "L40S" in r["option"]]
    assert rows, question.changes["offers"]
    table = page.locator("#offers-again").inner_text()
    for row in rows:
        assert f"{row['usd_per_gpu_hour']:.2f}" in table
        assert f"{row['winner_total_usd']:,.2f}".replace(",", "") in table.replace(",", "")
    verdict = page.locator("#offers-verdict").inner_text()
    changes = any(row["changes"] for row in question.changes["offers"])
    assert ("would change the recommendation" in verdict) == changes
    assert problems == []


def test_q3_pre_train_a_13b_model_on_512_h100s(page, live_server, catalog, run_tasks):
    problems = _start(page, live_server, "finance")
    page.fill("#id_months", "36")
    page.uncheck("#id_serve")
    page.check("#id_train")
    page.select_option("#id_train_model", "custom")
    page.fill("#id_train_params_billion", "13")
    page.select_option("#id_train_method", "full")
    page.fill("#id_train_tokens_billion", "2000")
    page.fill("#id_runs_per_year", "2")
    page.fill("#id_train_cluster_gpus", "512")
    page.fill("#id_checkpoint_minutes", "5")
    page.fill("#id_restart_minutes", "20")
    assert page.is_checked("#id_failures")  # on by default for training
    question = _ask(page, live_server, "q3")

    inputs = question.run.result["inputs"]
    mtbf = next(o["gpu_mtbf_hours"] for o in inputs["options"] if o.get("gpu_mtbf_hours"))
    assert mtbf == 50_677  # the sourced H100 figure
    failure = mtbf / 512
    interval = math.sqrt(2 * (5 / 60) * failure)
    goodput = 1 - (5 / 60) / interval - (20 / 60 + interval / 2) / failure
    assert round(goodput, 4) == 0.9556
    needs = page.locator("#work-needs").inner_text()
    assert f"goodput {goodput:.4f}" in needs and "on 512 GPUs at once" in needs
    result = question.run.result
    elastic = next(o for o in result["options"] if o["name"] == inputs["baseline"])
    assert elastic["goodput"] == pytest.approx(goodput, rel=1e-9)
    # no owned or committed plan below 512 GPUs is called one that does the work
    text = page.locator("#answer-body").inner_text()
    for option in result["options"]:
        owned = option["type"] == "on_prem" or "committed" in option["name"]
        if owned and option["provisioned_gpus"] < 512:
            assert option["name"] + " does the work" not in text
    infeasible = page.locator("#answer-infeasible").inner_text() if page.locator(
        "#answer-infeasible").count() else ""  # fmt: skip
    for option in result["options"]:
        if not option["feasible"]:
            assert option["name"] in infeasible
    best = _best(question)
    assert f"${best['total_usd']:,.0f} over the 36 months" in page.locator(
        "#answer-sentence").inner_text()  # fmt: skip
    assert problems == []


def test_a_question_edited_in_the_builder_and_run_again_never_shows_its_old_answer(
    page, live_server, catalog, run_tasks
):
    problems = _start(page, live_server, "finance")
    page.fill("#id_months", "24")
    page.select_option("#id_serve_model", "llama-3.1-8b")
    page.fill("#id_tokens_per_day", "20000000")
    question = _ask(page, live_server, "before-edit")
    old = _best(question)
    old_text = f"${old['total_usd']:,.0f}"
    page.click("#answer-actions >> text=Open it in the builder")
    page.fill("#id_name", "Ask: the same, for 36 months")
    page.fill("#id_horizon_months", "36")
    page.fill("#id_workloads-0-end_month", "36")
    page.click("#save-button")
    page.wait_for_url(f"{live_server.url}/scenarios/*/")
    page.goto(f"{live_server.url}/ask/{question.pk}/")
    assert page.locator("h1").inner_text() == "Ask: the same, for 36 months"
    assert page.locator("#answer-changed").is_visible()
    assert old_text not in page.locator("#answer-body").inner_text()
    page.goto(f"{live_server.url}/scenarios/{question.scenario.pk}/")
    page.click("#run-button")
    page.wait_for_url(f"{live_server.url}/runs/*/")
    page.locator("#run-body[data-status='succeeded']").wait_for(timeout=180_000)
    page.goto(f"{live_server.url}/ask/{question.pk}/")
    page.locator("#answer-body[data-status='succeeded'] #answer-sentence").wait_for(timeout=120_000)
    question.refresh_from_db()
    rerun = SimulationRun.objects.filter(scenario=question.scenario).order_by("-pk").first()
    assert question.run_id == rerun.pk
    new = _best(question)
    assert page.locator("h1").inner_text() == "Ask: the same, for 36 months"
    sentence = page.locator("#answer-sentence").inner_text()
    assert f"${new['total_usd']:,.0f} over the 36 months" in sentence
    assert old_text not in sentence
    page.screenshot(path=str(SCREENSHOTS / "ask-after-builder-edit.png"), full_page=True)
    assert problems == []
