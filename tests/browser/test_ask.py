"""The 70B question asked at ``/ask/`` in a real browser, as a finance lead would (no JSON, no
builder), its run on a real Celery worker (in the live server's process on the embedded
default: ``run_tasks``): the plan holds every option family the catalog can price
for H100, the answer sentence's figures are the run's, the built scenario priced again by
``simulate`` gives the same result, and the cheapest on-demand elastic option costs what a hand
computation from the offer's price says."""

import math
from pathlib import Path

import pytest

from costapp.models import Question
from costapp.scenarios.services import scenario_simulate
from hardware.models import GpuModel
from hardware.selectors import current_prices
from tests.browser.support import console_problems, log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def hand_figure(offer: dict) -> float:
    """Fit 3 H100s (70.6B × 2 bytes × 1.2 over 80 GB: 2.12, so 3), one replica held all month
    for the 36 months of serving, at the offer's rate; plus the fine-tune's GPU-hours: three runs
    of 6 × 70.6e9 × 1e9 FLOPs at 40 % of the H100's dense BF16 TFLOPS."""
    h100 = GpuModel.objects.get(slug="h100-sxm")
    rate = float(
        current_prices()
        .get(billing="on_demand", offer__provider__slug=offer["provider"],
             offer__instance_type=offer["instance"], region__code=offer["region"])
        .usd_per_gpu_hour
    )  # fmt: skip
    replica_gpus = math.ceil(70.6 * 2 * 1.2 / float(h100.memory_gb))
    assert replica_gpus == 3
    serving = replica_gpus * 730 * 36
    fine_tune = 3 * 6 * 70.6e9 * 1e9 / (float(h100.bf16_dense_tflops) * 1e12 * 0.4 * 3600)
    return rate * (serving + fine_tune)


def test_the_70b_question_asked_in_plain_words_gets_the_right_answer(
    page, live_server, catalog, run_tasks
):
    user = analyst("finance")
    page.set_default_timeout(60_000)  # the machine running the suite may be busy
    problems = console_problems(page)
    log_in(page, live_server, "finance", "pw-finance")
    page.click("nav >> text=Ask")
    page.wait_for_url(live_server.url + "/ask/")
    assert "{" not in page.locator("#ask-form").inner_text()  # no JSON on the form
    page.fill("#id_months", "39")
    page.select_option("#id_serve_model", "llama-3.1-70b")
    page.fill("#id_tokens_per_day", "20000000")
    page.fill("#id_serve_start", "4")
    page.check("#id_train")
    page.select_option("#id_train_model", "llama-3.1-70b")
    page.fill("#id_train_tokens_billion", "1")
    page.fill("#id_train_start", "1")
    page.fill("#id_train_end", "3")
    page.click("#ask-button")
    page.wait_for_url(f"{live_server.url}/ask/*/")
    page.locator("#answer-body[data-status='succeeded'] #answer-sentence").wait_for(timeout=240_000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "ask-answer.png"), full_page=True)

    question = Question.objects.get(owner=user)
    result = question.run.result
    roles = question.notes["roles"]
    assert {role["family"] for role in roles.values()} >= {
        "on_demand_elastic", "on_demand_fixed", "committed_1y", "committed_3y", "on_prem", "api"
    }  # fmt: skip
    best = next(o for o in result["options"] if o["name"] == result["cheapest"])
    sentence = page.locator("#answer-sentence").inner_text()
    assert f"${best['total_usd']:,.0f} over the 39 months" in sentence
    assert f"P10–P90 ${best['p10_usd']:,.0f}–${best['p90_usd']:,.0f}" in sentence
    again = scenario_simulate(document=question.scenario.document)
    assert [o["total_usd"] for o in again["options"]] == [o["total_usd"] for o in result["options"]]
    assert [o["p10_usd"] for o in again["options"]] == [o["p10_usd"] for o in result["options"]]
    elastic = next(
        o for o in result["options"] if roles[o["name"]]["family"] == "on_demand_elastic"
    )
    offer = next(o for o in question.scenario.document["options"] if o["name"] == elastic["name"])
    assert elastic["total_usd"] == pytest.approx(hand_figure(offer["offer"]), rel=1e-9)
    assert elastic["total_usd"] > 200_000
    assert page.locator("#what-would-change li").count() == 2
    assert page.locator("#sources-table tbody tr").count() == len(result["sources"])
    assert problems == []
