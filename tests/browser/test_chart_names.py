"""Names a user wrote are plain text in a run's charts: an option named like an HTML link is
drawn as the text typed, and no chart holds a link (headless Chromium, the run page at 1440 and
390 px)."""

import pytest

from costapp.models import Scenario
from tests.browser.support import SCREENSHOTS, console_problems, log_in
from tests.conftest import tasks_run_in_process
from tests.costapp.runs_helpers import analyst, scenario_document

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

LINK_NAME = '<a href="http://x">y</a>'
BOLD_WORKLOAD = "<b>fleet</b> & co"


def test_no_chart_of_a_run_links_out_whatever_its_option_is_named(page, live_server, catalog):
    from costapp.runs import pipeline

    document = scenario_document(paths=1_000, seed=3)
    document["options"][0]["name"] = LINK_NAME
    document["workloads"][0]["name"] = BOLD_WORKLOAD
    document["baseline"] = LINK_NAME
    user = analyst("finance")
    scenario = Scenario.objects.create(owner=user, name="named like a link", document=document)
    with tasks_run_in_process():
        run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    problems = console_problems(page)
    log_in(page, live_server, "finance", "pw-finance")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/runs/{run.pk}/")
        plots = page.locator(".js-plotly-plot")
        plots.first.wait_for()
        page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot')]"
            ".every(p => p.closest('[data-settled]'))"
        )
        assert plots.count() >= 4
        links = page.evaluate(
            """() => [...document.querySelectorAll('.js-plotly-plot svg a, .js-plotly-plot a[href]')]
                   .map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || '')"""
        )
        assert [href for href in links if href and not href.startswith("#")] == []
        texts = page.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot svg text')]"
            ".map(t => t.textContent).join(' | ')"
        )
        assert 'href="http://x"' in texts  # the name drawn as typed
        assert "<b>fleet</b>" in texts or "fleet" not in texts
        page.screenshot(path=str(SCREENSHOTS / f"chart-names-{width}.png"), full_page=True)
    assert problems == []
