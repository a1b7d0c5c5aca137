"""Comparing two runs in a real browser (headless Chromium): from a run's page, "Compare with…"
the other run, then the comparison page with its chart drawn by Plotly (run A solid, run B
dashed), the key figures' differences and the price that changed."""

import pytest

from tests.browser.support import finished_run, log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_analyst_compares_a_run_with_another_from_the_run_page(page, live_server, catalog):
    user = analyst("finance")
    run_a = finished_run(user, "today")
    run_b = finished_run(user, "cheaper-cloud")
    page.set_default_timeout(60_000)  # heavy pages on a busy machine
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    log_in(page, live_server, "finance", "pw-finance")
    page.goto(f"{live_server.url}/runs/{run_a.pk}/")
    page.get_by_label(f"Compare run {run_a.pk} with…").select_option(str(run_b.pk))
    page.get_by_role("button", name="Compare").click()
    page.wait_for_url(f"{live_server.url}/runs/compare/?a={run_a.pk}&b={run_b.pk}")
    assert page.locator("h1").inner_text() == f"Run {run_a.pk} against run {run_b.pk}"

    page.locator("#chart-compare-cumulative .js-plotly-plot").wait_for()
    traces = page.evaluate(
        "() => document.querySelector('#chart-compare-cumulative .js-plotly-plot').data"
        ".map(t => ({name: t.name, dash: t.line.dash, y: t.y}))"
    )
    options = run_a.result["options"]
    assert len(traces) == 2 * len(options)
    for option, solid, dashed in zip(options, traces[::2], traces[1::2], strict=True):
        assert solid == {
            "name": f"{option['name']} (run {run_a.pk})",
            "dash": "solid",
            # the page carries the figures as the tooltip shows them, whole dollars
            # (hardware.display.charts.page_trace)
            "y": [round(value) for value in option["cumulative_usd"]],
        }
        assert dashed["name"] == f"{option['name']} (run {run_b.pk})" and dashed["dash"] == "dash"
    assert page.locator("#chart-compare-cumulative .main-svg .scatterlayer .trace").count() == 10

    # the GPU cloud is cheaper in B; the other options cost the same
    cloud = page.locator("#compare-figures tbody[data-option='GPU cloud on-demand']")
    total = cloud.locator("tr[data-key='total_usd'] td")
    a_total = next(o for o in options if o["name"] == "GPU cloud on-demand")["total_usd"]
    b_total = next(o for o in run_b.result["options"] if o["name"] == "GPU cloud on-demand")[
        "total_usd"
    ]
    assert b_total < a_total
    assert total.nth(1).inner_text() == f"{a_total:,.2f}"
    assert total.nth(2).inner_text() == f"{b_total:,.2f}"
    assert total.nth(3).inner_text() == f"−{a_total - b_total:,.2f}"
    assert total.nth(4).inner_text() == f"−{100 * (a_total - b_total) / a_total:.1f}"
    dedicated = page.locator(
        "#compare-figures tbody[data-option='Dedicated 8-GPU servers'] tr[data-key='total_usd']"
    )
    assert dedicated.locator("td").nth(3).inner_text() == "unchanged"
    # paired by position (the same five options), the one input that differs in words
    assert page.locator("#compare-pairing").inner_text() == (
        "Workloads and options paired by position: both runs have 1 workload and 5 options of "
        "the same types."
    )
    change = page.locator("#compare-inputs tr[data-path='options[2].usd_per_gpu_hour']")
    assert change.locator("td").all_inner_texts() == [
        "option 3 “GPU cloud on-demand”, USD per GPU hour: $2.99 → $2.49",
        "−$0.500 (−16.7 %)",
    ]
    assert page.locator("#compare-inputs tbody tr").count() == 1
    assert errors == []
