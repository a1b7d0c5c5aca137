"""A three-layer mix built in the scenario builder (format 1.3) in a real browser, without JSON:
own servers, lease servers, commit to GPUs and rent the rest, sized jointly; saved, run, its best
combination and layers chart read on the run page, the scenario copied at the best sizes, and the
copy's run giving the figures the sizing found for them."""

import pytest

from costapp.models import Scenario, SimulationRun
from tests.browser.support import SCREENSHOTS, log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]


def option_row(page, index: int) -> None:
    """Make sure option row ``index`` exists (the builder starts with fewer)."""
    if not page.locator(f"#id_options-{index}-type").count():
        page.click("button[data-add=options]")
        page.locator(f"#id_options-{index}-type").wait_for()


def run_and_wait(page, live_server) -> SimulationRun:
    page.click("#run-button")
    page.wait_for_url(f"{live_server.url}/runs/*/")
    page.locator("#run-body[data-status='succeeded']").wait_for(timeout=240_000)
    return SimulationRun.objects.get(pk=int(page.url.rstrip("/").split("/")[-1]))


def test_a_mix_built_in_the_form_is_sized_jointly_run_and_copied_at_its_best(
    page, live_server, catalog, run_tasks
):
    user = analyst("finance")
    page.set_default_timeout(60_000)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    log_in(page, live_server, "finance", "pw-finance")
    page.goto(live_server.url + "/scenarios/new/")

    page.fill("#id_name", "Chat on H100: own, lease, commit, rent")
    page.fill("#id_horizon_months", "24")
    page.select_option("#id_workloads-0-type", "inference")
    page.fill("#id_workloads-0-name", "Chat")
    page.select_option("#id_workloads-0-gpu", "h100-sxm")
    page.fill("#id_workloads-0-tokens_per_second", "3000")
    page.fill("#id_workloads-0-tokens_per_second_per_gpu", "400")
    page.fill("#id_workloads-0-peak_to_average", "2")
    page.fill("#id_workloads-0-peak_hours_per_day", "6")
    # the growth a year or a month (the document's fraction): typing one empties the other
    note = page.locator("#id_workloads-0-monthly_growth-converted")
    page.fill("#id_workloads-0-growth_per_year", "50")
    assert note.text_content() == "= 3.437 % a month (50 % a year)"
    page.fill("#id_workloads-0-monthly_growth", "0.03")
    assert page.input_value("#id_workloads-0-growth_per_year") == ""
    assert note.text_content() == "= 3 % a month (42.58 % a year)"

    rows = [
        ("cloud", "Rent", {"usd_per_gpu_hour": "2.99"}, {}),
        (
            "cloud",
            "Commit",
            {"usd_per_gpu_hour": "2.1", "committed_gpus": "8", "on_demand_usd_per_gpu_hour": "3.2"},
            {"billing": "committed"},
        ),
        ("dedicated", "Lease", {"usd_per_server_month": "15000", "servers": "1"}, {}),
        (
            "on_prem",
            "Own",
            {"capex_usd_per_server": "280000", "server_kw": "10.2", "servers": "1"},
            {},
        ),
        ("mix", "Own, lease, commit, rent", {}, {}),
    ]
    for i, (kind, name, numbers, choices) in enumerate(rows):
        option_row(page, i)
        page.select_option(f"#id_options-{i}-type", kind)
        for field, value in choices.items():
            page.select_option(f"#id_options-{i}-{field}", value)
        page.fill(f"#id_options-{i}-name", name)
        if kind != "mix":
            page.select_option(f"#id_options-{i}-gpu", "h100-sxm")
        for field, value in numbers.items():
            page.fill(f"#id_options-{i}-{field}", value)
    # the mix: its layers one a line, bottom first, then what rents the rest
    page.fill("#id_options-4-layers", "Own = 1\nLease = 1\nCommit = 8")
    page.fill("#id_options-4-rest", "Rent")
    # a joint sizing of the mix: one range a line, in the mix's order
    page.click("button[data-add=sizing]")
    page.locator("#id_sizing-0-option").wait_for()
    page.select_option("#id_sizing-0-option", "Own, lease, commit, rent")
    page.fill("#id_sizing-0-layers", "0-2\n0-1\n0-16 by 8")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("fieldset.option").nth(4).screenshot(path=str(SCREENSHOTS / "builder-mix.png"))
    page.locator("#sizing-section").screenshot(path=str(SCREENSHOTS / "builder-mix-sizing.png"))
    page.click("#save-button")
    page.wait_for_url(f"{live_server.url}/scenarios/*/")
    scenario = Scenario.objects.get(owner=user)
    the_mix = scenario.document["options"][4]
    assert the_mix["layers"] == [
        {"option": "Own", "size": 1},
        {"option": "Lease", "size": 1},
        {"option": "Commit", "size": 8},
    ]
    assert scenario.document["sizing"][0]["layers"] == [
        {"min": 0, "max": 2},
        {"min": 0, "max": 1},
        {"min": 0, "max": 16, "step": 8},
    ]

    run = run_and_wait(page, live_server)
    [sweep] = run.result["sizing"]
    assert len(sweep["candidates"]) == 3 * 2 * 3 and sweep["best"] is not None
    ranked = page.locator("#sizing-1-ranked tbody tr").first.inner_text()
    assert "(best)" in ranked
    assert all(str(size) in ranked for size in sweep["best"])
    page.locator("#chart-layers-5 .js-plotly-plot").wait_for()
    assert list(sweep["best"]) != [1, 1, 8]  # the sizing finds better than the sizes written
    page.click("#sizing-1-copy")
    page.wait_for_url(f"{live_server.url}/scenarios/*/")
    copy = Scenario.objects.exclude(pk=scenario.pk).get(owner=user)
    assert [layer["size"] for layer in copy.document["options"][4]["layers"]] == sweep["best"]
    again = run_and_wait(page, live_server)
    at_best = again.result["options"][4]
    index = sweep["candidates"].index(sweep["best"])
    assert at_best["npv_usd"] == sweep["npv_usd"][index]
    assert at_best["total_usd"] == sweep["total_usd"][index]
    assert problems == []
