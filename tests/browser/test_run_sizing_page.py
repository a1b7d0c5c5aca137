"""The sizing view of a run page in a real browser (headless Chromium): each sweep's chart drawn by
Plotly with its band, best and own size, and the "Make a copy at the best size" button landing on
the new scenario's page."""

import re
from pathlib import Path

import pytest

from costapp.models import Scenario
from costapp.reports import sizing_summary
from costapp.runs import pipeline
from tests.conftest import tasks_run_in_process
from tests.costapp.runs_helpers import analyst, scenario_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
UNCERTAIN = {
    "demand_multiplier": {"dist": "triangular", "low": 0.6, "mode": 1.0, "high": 1.5},
    "cloud_price_change_per_year": {"dist": "normal", "mean": -0.12, "sd": 0.08},
    "usd_per_kwh_multiplier": {"dist": "uniform", "low": 0.8, "high": 1.4},
}


@pytest.fixture
def sizing_run(catalog):
    """A succeeded run of the shipped size-the-fleet scenario with 5 000 paths, computed in this
    process (the page is what is under test here, not the workers)."""
    user = analyst("finance")
    document = scenario_document("size-the-fleet", paths=5_000, seed=11, **UNCERTAIN)
    # a narrow sweep: three sizes, whose axis plotly would tick every half server
    document["sizing"].append({"option": "Buy some, burst the rest", "min": 7, "max": 9})
    scenario = Scenario.objects.create(owner=user, name="H100 fleet size", document=document)
    with tasks_run_in_process():
        run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    return run


def test_a_sizing_run_page_draws_each_sweep_and_copies_the_scenario_at_the_best_size(
    page, live_server, sizing_run
):
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.set_default_timeout(60_000)  # the machine may be loaded; a page is still expected
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", "finance")
    page.fill("#id_password", "pw-finance")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    # a run page builds its figures on its first view
    page.goto(f"{live_server.url}/runs/{sizing_run.pk}/", timeout=120_000)
    sweeps = sizing_run.result["sizing"]
    for number, sweep in enumerate(sweeps, start=1):
        page.locator(f"#chart-sizing-{number} .js-plotly-plot").wait_for()
        drawn = page.evaluate(
            f"() => document.querySelector('#chart-sizing-{number} .js-plotly-plot')"
            ".data.map(t => ({name: t.name, x: t.x, y: t.y}))"
        )
        names = [t["name"] for t in drawn]
        assert "NPV P10–P90 over 5,000 paths" in names, names
        band = next(t for t in drawn if t["name"] == "NPV P10–P90 over 5,000 paths")
        # the page carries the figures as the tooltip shows them, whole dollars
        # (hardware.display.charts.page_trace)
        shown = [round(value) for value in sweep["p90_npv_usd"]]
        assert band["x"] == sweep["candidates"] and band["y"] == shown
        assert f"Best: {sweep['best']} " in " ".join(names)
        # the size axis shows whole sizes only
        ticks = page.locator(f"#chart-sizing-{number} .xtick text").all_text_contents()
        assert ticks and all(re.fullmatch(r"\d{1,3}(,\d{3})*", t) for t in ticks), ticks
        if number == 4:
            assert ticks == ["7", "8", "9"]
        points = page.locator(f"#chart-sizing-{number} .main-svg .scatterlayer .trace")
        assert points.count() == len(drawn)
        # the own size's legend entry only when the sweep priced it; else words say where it is
        legend = page.locator(f"#chart-sizing-{number} .legend").text_content()
        caption = page.locator(f"#chart-sizing-{number} figcaption").inner_text()
        own = sizing_summary.own_size(sizing_run.result, number - 1)
        if own in sweep["candidates"]:
            assert f"The scenario's own size: {own}" in legend
            assert "not among the sizes swept" not in caption
        else:
            assert "own size" not in legend
            assert "is not among the sizes swept" in caption
    sentence = page.locator("#sizing-1-sentence").inner_text()
    best = sweeps[0]["best"]
    assert sentence.startswith(f"Commit to {best} GPUs: beyond that")
    assert page.locator(".modebar-btn--logo").count() == 0
    assert all(url.startswith(live_server.url) for url in requests), requests
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#sizing").scroll_into_view_if_needed()
    page.locator("#sizing").screenshot(path=str(SCREENSHOTS / "run-sizing.png"))
    page.locator("#sizing-3").screenshot(path=str(SCREENSHOTS / "run-sizing-own-size-unswept.png"))
    page.locator("#sizing-4").screenshot(path=str(SCREENSHOTS / "run-sizing-narrow.png"))
    assert (SCREENSHOTS / "run-sizing.png").stat().st_size > 50_000

    page.click("#sizing-1-copy")
    page.wait_for_url(f"{live_server.url}/scenarios/*/")
    copied = Scenario.objects.exclude(pk=sizing_run.scenario_id).get()
    assert page.url == f"{live_server.url}/scenarios/{copied.pk}/"
    name = f"H100 fleet size (at best size: {best} committed GPUs)"
    assert copied.name == name and copied.owner.username == "finance" and not copied.shared
    assert name in page.locator("h1").inner_text()
    assert f"Saved “{name}”" in page.locator(".messages").inner_text()
    option = next(o for o in copied.document["options"] if o["name"] == sweeps[0]["option"])
    assert option["committed_gpus"] == best
