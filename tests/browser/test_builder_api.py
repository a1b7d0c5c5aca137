"""An ``api`` option (format 1.2) built in the builder in a real browser, its run on a real
Celery worker (in the live server's process on the embedded default: ``run_tasks``): the hosted model's price picked from the catalog, no GPU fields shown for it, the run's
cost per million tokens on the run page and in the monthly CSV, its sources in words."""

import csv
import io

import pytest
from playwright.sync_api import expect

from costapp.builder.catalog import token_price_value
from costapp.models import Scenario, SimulationRun
from costapp.runs.exports import MONTHLY_CSV_COLUMNS
from tests.browser.support import console_problems, log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

FIREWORKS = token_price_value(
    "fireworks", "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct"
)


def test_an_api_option_built_in_the_builder_runs_and_shows_its_cost_per_million_tokens(
    page, live_server, catalog, run_tasks
):
    user = analyst("finance")
    page.set_default_timeout(60_000)  # the machine running the suite may be busy
    problems = console_problems(page)
    log_in(page, live_server, "finance", "pw-finance")
    page.goto(live_server.url + "/scenarios/new/")
    page.fill("#id_name", "Serve 70B: host it or buy tokens")
    page.fill("#id_horizon_months", "12")
    page.select_option("#id_workloads-0-type", "inference")
    page.fill("#id_workloads-0-name", "Chat")
    page.select_option("#id_workloads-0-gpu", "h100-sxm")
    page.fill("#id_workloads-0-params_billion", "70")
    page.fill("#id_workloads-0-tokens_per_second", "231.5")
    page.select_option("#id_options-0-type", "api")
    page.fill("#id_options-0-name", "Fireworks by the token")
    expect(page.locator("#id_options-0-gpu")).to_be_hidden()
    expect(page.locator("#id_options-0-throughput_factor")).to_be_hidden()
    page.select_option("#id_options-0-token_price", FIREWORKS)
    page.select_option("#id_options-1-type", "cloud")
    page.fill("#id_options-1-name", "Rent H100")
    page.fill("#id_options-1-usd_per_gpu_hour", "2.99")
    page.click("#save-button")
    page.wait_for_url(f"{live_server.url}/scenarios/*/")
    scenario = Scenario.objects.get(owner=user)
    option = scenario.document["options"][0]
    assert option == {
        "type": "api",
        "name": "Fireworks by the token",
        "token_price": {
            "provider": "fireworks",
            "model": "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct",
        },
    }

    page.click("#run-button")
    page.wait_for_url(f"{live_server.url}/runs/*/")
    page.locator("#run-body[data-status='succeeded']").wait_for(timeout=180_000)
    run = SimulationRun.objects.get(scenario=scenario)
    fireworks = run.result["options"][0]
    assert run.result["inputs"]["options"][0]["usd_per_million_tokens"] == 0.9
    per_million = fireworks["all_in_usd_per_million_tokens"]
    assert per_million == pytest.approx(0.9, rel=1e-12)  # no prompt tokens in this workload
    header = page.locator("#key-figures thead").inner_text()
    assert "All-in USD per million tokens" in header
    row = page.locator("#key-figures tbody tr").first.inner_text()
    assert "by the token" in row and f"${per_million:,.2f}" in row
    sources = page.locator("#sources-table").inner_text()
    assert "USD per million output tokens" in sources and "of unknown age" in sources

    response = page.request.get(f"{live_server.url}/api/v1/runs/{run.pk}/monthly.csv")
    assert response.status == 200
    rows = list(csv.DictReader(io.StringIO(response.text())))
    assert list(rows[0]) == MONTHLY_CSV_COLUMNS
    figures = {r["all_in_usd_per_million_tokens"] for r in rows if r["option"] == fireworks["name"]}
    assert figures == {repr(per_million)}
    assert problems == []
