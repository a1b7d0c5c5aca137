"""The run page in a real browser (headless Chromium), the run computed by a real Celery worker
with Redis and in the live server's process on the embedded default (``run_tasks``): a run
started from the scenario page shows a progress bar that htmx polls (unless the run was quicker
than the page), then the result's charts, drawn by Plotly, without a page reload; its monthly
CSV downloads with one row per option and month."""

import csv

import pytest
from django.test import override_settings

from costapp.models import Scenario, SimulationRun
from costapp.runs.exports import MONTHLY_CSV_COLUMNS
from tests.browser.support import SCREENSHOTS
from tests.costapp.runs_helpers import analyst, scenario_document

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

CHARTS = ("cumulative", "breakdown", "fan", "usd-per-gpu-hour", "utilization")


@override_settings(RUN_BLOCKS_PER_TASK=1)
def test_a_run_started_from_its_page_shows_progress_then_every_chart_and_its_csv(
    page, live_server, catalog, run_tasks
):
    user = analyst("finance")
    scenario = Scenario.objects.create(
        owner=user, name="H100 fleet", document=scenario_document(paths=30_000, seed=11)
    )
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    # a fresh browser's first page can take a while on a loaded machine
    page.goto(live_server.url + "/login/", timeout=60_000)
    page.fill("#id_username", "finance")
    page.fill("#id_password", "pw-finance")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    page.click("nav >> text=Scenarios")
    page.click(f"a[href='/scenarios/{scenario.pk}/']")
    page.click("#run-button")
    page.wait_for_url(f"{live_server.url}/runs/*/")
    run = SimulationRun.objects.get(scenario=scenario)
    assert page.url == f"{live_server.url}/runs/{run.pk}/"
    page.evaluate("() => { window.notReloaded = true; }")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    # the progress bar, unless the worker was quicker than the page
    bar = page.locator("#run-progress")
    if bar.count():
        page.screenshot(path=str(SCREENSHOTS / "run-progress.png"), full_page=True)
        seen_values = {bar.get_attribute("value")}
    else:
        seen_values = set()
    page.locator("#run-body[data-status='succeeded']").wait_for(timeout=180_000)
    run.refresh_from_db()
    assert run.status == "succeeded" and run.progress == 100
    assert page.evaluate("() => window.notReloaded") is True  # swapped in by htmx, no reload
    assert seen_values or run.finished, seen_values
    for key in CHARTS:
        plot = page.locator(f"#chart-{key} .js-plotly-plot")
        plot.wait_for()
        traces = page.evaluate(
            f"() => document.querySelector('#chart-{key} .js-plotly-plot').data.length"
        )
        assert traces > 0, key
        assert page.locator(f"#chart-{key} .main-svg").count() >= 1, key
    names = [o["name"] for o in run.result["options"]]
    key_figures = page.locator("#key-figures").inner_text()
    assert all(name in key_figures for name in names)
    assert page.locator(".modebar-btn--logo").count() == 0
    assert all(url.startswith(live_server.url) for url in requests), requests
    page.screenshot(path=str(SCREENSHOTS / "run-result.png"), full_page=True)
    page.locator("#chart-cumulative").screenshot(path=str(SCREENSHOTS / "run-cumulative.png"))
    assert (SCREENSHOTS / "run-result.png").stat().st_size > 50_000

    # the monthly CSV (docs/api.md): one row per option and month 0 … H, as the result says
    with page.expect_download() as download_info:
        page.locator("#downloads").get_by_role("link", name="monthly CSV").click()
    download = download_info.value
    assert download.suggested_filename == f"run-{run.pk}-monthly.csv"
    with open(download.path(), newline="") as file:
        header, *rows = list(csv.reader(file))
    assert header == MONTHLY_CSV_COLUMNS
    horizon = run.result["inputs"]["horizon_months"]
    options = run.result["options"]
    assert len(rows) == len(options) * (horizon + 1)
    assert [(r[0], int(r[1])) for r in rows] == [
        (o["name"], m) for o in options for m in range(horizon + 1)
    ]
    cumulative = MONTHLY_CSV_COLUMNS.index("cumulative_usd")
    last = {r[0]: float(r[cumulative]) for r in rows if int(r[1]) == horizon}
    assert last == {o["name"]: pytest.approx(o["total_usd"], rel=1e-12) for o in options}
