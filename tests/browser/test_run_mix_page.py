"""The run page of a format 1.3 document with a mix and its joint sizing in a real browser
(headless Chromium): the joint sizing's heat map drawn, its ranked table, every chart fitted and
nothing wider than its box at 1440, 1280 and 390 px; photographed at 1440 and 390 px."""

import pytest

from costapp.models import Scenario
from costapp.runs import pipeline
from tests.conftest import tasks_run_in_process
from tests.costapp.runs_helpers import analyst
from tests.tco.helpers import scenario

from .layout import FITTED, OVERFLOWS, PLOT_TEXT, WIDTHS
from .support import PASSWORD, SCREENSHOTS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def mix_run(catalog):
    user = analyst("lead")
    user.set_password(PASSWORD)
    user.save()
    document = scenario("own-commit-rent-mix")
    document["simulation"] = {
        "paths": 1000,
        "seed": 5,
        "demand_multiplier": {"dist": "triangular", "low": 0.7, "mode": 1, "high": 1.4},
    }
    saved = Scenario.objects.create(owner=user, name="Own, commit, rent", document=document)
    with tasks_run_in_process():
        run = pipeline.run_create(scenario=saved)
    assert run.status == "succeeded", run.error
    return run


def test_a_mix_run_page_draws_its_joint_sizing_and_fits_every_width(page, live_server, mix_run):
    page.set_default_timeout(60_000)
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/runs/{mix_run.pk}/", timeout=120_000)
    page.locator("#chart-sizing-1 .js-plotly-plot").wait_for()
    kinds = page.evaluate(
        "() => document.querySelector('#chart-sizing-1 .js-plotly-plot').data.map(t => t.type)"
    )
    assert kinds[0] == "heatmap", kinds
    # what each layer and rest serve, month by month, stacked, with each layer's capacity
    page.locator("#chart-layers-4 .js-plotly-plot").wait_for()
    names = page.evaluate(
        "() => document.querySelector('#chart-layers-4 .js-plotly-plot').data.map(t => t.name)"
    )
    assert len([n for n in names if n.startswith("Capacity up to")]) == 2, names
    assert any(n.startswith("Rest: ") for n in names), names
    ranked = page.locator("#sizing-1-ranked tbody tr")
    assert ranked.count() >= 2
    assert "(best)" in ranked.first.inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems: dict[int, list[str]] = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_function(FITTED)
        found = page.evaluate(OVERFLOWS) + page.evaluate(PLOT_TEXT)
        if found:
            problems[width] = found
        if width in (1440, 390):
            page.screenshot(path=str(SCREENSHOTS / f"run-mix-{width}.png"), full_page=True)
            page.locator("#sizing").screenshot(
                path=str(SCREENSHOTS / f"run-mix-sizing-{width}.png")
            )
            page.locator("#chart-layers-4").screenshot(
                path=str(SCREENSHOTS / f"run-mix-layers-{width}.png")
            )
    assert not problems, problems


def test_the_risk_panel_reads_a_typed_budget_in_place(page, live_server, mix_run):
    """The risk panel of the run: the leader chart drawn, the unused commitments listed, and a
    budget typed on the page answered in place (htmx) with the chance each option exceeds it."""
    page.set_default_timeout(60_000)
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/runs/{mix_run.pk}/#risk", timeout=120_000)
    page.locator("#chart-risk-leader .js-plotly-plot").wait_for()
    assert page.locator("#risk-unused tbody tr").count() == 2  # the commitment, and the mix's
    totals = sorted(o["p50_usd"] for o in mix_run.result["options"])
    page.fill("#budget-input", f"{totals[len(totals) // 2]:,.0f}")
    page.click("#budget-button")
    page.locator("#risk-options th:has-text('exceeds the budget')").wait_for()
    assert "?budget=" in page.url
    cells = page.locator("#risk-options tbody td:last-child").all_inner_texts()
    assert len(cells) == len(mix_run.result["options"]) and all(c.endswith("%") for c in cells)
    page.fill("#budget-input", "lots")
    page.click("#budget-button")
    page.locator("#budget-error").wait_for()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.fill("#budget-input", f"{totals[len(totals) // 2]:,.0f}")
    page.click("#budget-button")
    page.locator("#risk-options th:has-text('exceeds the budget')").wait_for()
    problems: dict[int, list[str]] = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_function(FITTED)
        found = page.evaluate(OVERFLOWS) + page.evaluate(PLOT_TEXT)
        if found:
            problems[width] = found
        if width in (1440, 390):
            page.locator("#risk").screenshot(path=str(SCREENSHOTS / f"run-risk-{width}.png"))
    assert not problems, problems
