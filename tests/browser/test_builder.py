"""The scenario builder in a real browser (headless Chromium) with a real Celery worker: build a
scenario from the form (a workload, two options, one priced from the offer picker), save it, run
it and wait for the run to succeed; every control of the builder is reachable with the Tab key;
no console errors."""

from pathlib import Path

import pytest

from costapp.models import Scenario, SimulationRun
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"

VISIBLE_CONTROLS = """() => Array.from(document.querySelectorAll(
    '#builder-form input:not([type=hidden]), #builder-form select, #builder-form textarea, '
    + '#builder-form button, #builder-form a[href]'))
  .filter(el => !el.disabled && el.offsetParent !== null)
  .map(el => el.id || el.name || el.textContent.trim())"""


def tab_walk(page, limit: int = 400) -> list[str]:
    """Focus the page's start, then press Tab until focus leaves the builder form; the controls
    focused on the way (id, else name, else text)."""
    page.locator("h1").click()
    reached: list[str] = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        where = page.evaluate(
            """() => { const el = document.activeElement;
                return { inside: !!el.closest('#builder-form'),
                         key: el.id || el.name || el.textContent.trim() }; }"""
        )
        if where["inside"]:
            reached.append(where["key"])
        elif reached:
            break
    return reached


def test_a_scenario_built_in_the_form_is_saved_run_and_reachable_by_keyboard(
    page, live_server, catalog_gpus, celery_worker_process
):
    user = analyst("finance")
    page.set_default_timeout(60_000)  # the machine running the suite may be busy
    problems: list[str] = []

    def console(message) -> None:
        # the browser's own request for /favicon.ico (the site serves none) is not the page's
        if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico"):
            problems.append(f"{message.text} at {message.location}")

    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(str(error)))
    failed: list[str] = []
    page.on(
        "response", lambda response: failed.append(response.url) if response.status >= 400 else None
    )
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", "finance")
    page.fill("#id_password", "pw-finance")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    page.click("nav >> text=Scenarios")
    page.click("#new-scenario-link")
    page.wait_for_url(live_server.url + "/scenarios/new/")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    page.fill("#id_name", "Serve on H100: rent or buy")
    page.fill("#id_horizon_months", "36")
    page.fill("#id_discount_rate", "0.08")
    # the workload
    page.select_option("#id_workloads-0-type", "steady")
    assert page.locator("#id_workloads-0-mfu").is_hidden()  # a training field
    page.fill("#id_workloads-0-name", "Inference fleet")
    page.select_option("#id_workloads-0-gpu", "h100-sxm")
    page.fill("#id_workloads-0-gpus", "16")
    page.fill("#id_workloads-0-utilization", "0.7")
    # option 1: on-demand cloud, priced from the offer picker
    page.select_option("#id_options-0-type", "cloud")
    assert page.locator("#id_options-0-pue").is_hidden()  # an on-prem field
    page.fill("#id_options-0-name", "Rent on demand")
    page.select_option("#id_options-0-gpu", "h100-sxm")
    page.locator("fieldset.option").first.locator("button.find-offers").click()
    first = page.locator("#options-0-offers button.use-offer").first
    first.wait_for()
    source_text = page.locator("#options-0-offers td.source").first.inner_text()
    assert "as stated by" in source_text
    chosen = {
        "provider": first.get_attribute("data-provider"),
        "instance": first.get_attribute("data-instance"),
        "region": first.get_attribute("data-region"),
    }
    first.click()
    assert page.input_value("#id_options-0-offer_provider") == chosen["provider"]
    assert "as stated by" in page.locator("#options-0-standing").inner_text()
    # option 2: buy servers
    page.select_option("#id_options-1-type", "on_prem")
    page.fill("#id_options-1-name", "Buy servers")
    page.fill("#id_options-1-capex_usd_per_server", "280000")
    page.fill("#id_options-1-staff_usd_per_month", "4000")
    # saved without the servers' power: the engine's message at that field, nothing stored
    page.click("#save-button")
    page.locator("#builder-errors").wait_for()
    invalid = page.locator(".field.invalid:has(#id_options-1-server_kw)")
    assert "required" in invalid.locator(".error").inner_text()
    assert "options[1].server_kw" in page.locator("#builder-errors").inner_text()
    assert not Scenario.objects.filter(owner=user).exists()
    page.screenshot(path=str(SCREENSHOTS / "builder-errors.png"), full_page=True)
    assert page.input_value("#id_options-0-offer_provider") == chosen["provider"]
    assert "as stated by" in page.locator("#options-0-standing").inner_text()
    page.fill("#id_options-1-server_kw", "10.2")
    # a row added and removed again is not part of the document
    page.click("button[data-add=workloads]")
    page.locator("#id_workloads-1-type").wait_for()
    page.locator("#workloads-rows fieldset.row >> nth=1 >> button.remove-row").click()
    # a small simulation
    page.check("#id_simulate")
    page.fill("#id_paths", "2000")
    page.fill("#id_seed", "7")
    page.select_option("#id_demand_multiplier_dist", "triangular")
    page.fill("#id_demand_multiplier_low", "0.8")
    page.fill("#id_demand_multiplier_mode", "1")
    page.fill("#id_demand_multiplier_high", "1.3")

    # every visible control of the builder is reachable with the Tab key
    controls = page.evaluate(VISIBLE_CONTROLS)
    reached = tab_walk(page)
    missing = [c for c in controls if c not in reached]
    assert not missing, missing
    assert len(controls) > 40

    page.screenshot(path=str(SCREENSHOTS / "builder.png"), full_page=True)
    page.locator("#options-section").screenshot(path=str(SCREENSHOTS / "builder-options.png"))

    page.click("#save-button")
    page.wait_for_url(f"{live_server.url}/scenarios/*/")
    scenario = Scenario.objects.get(owner=user)
    document = scenario.document
    assert document["options"][0]["offer"] == chosen
    assert document["options"][0]["type"] == "cloud"
    assert "usd_per_gpu_hour" not in document["options"][0]  # the offer supplies it
    assert [w["name"] for w in document["workloads"]] == ["Inference fleet"]
    assert document["simulation"]["demand_multiplier"] == {
        "dist": "triangular",
        "low": 0.8,
        "mode": 1,
        "high": 1.3,
    }
    assert "hours_per_month" not in document  # left empty: the default applies

    page.click("#run-button")
    page.wait_for_url(f"{live_server.url}/runs/*/")
    page.locator("#run-body[data-status='succeeded']").wait_for(timeout=180_000)
    run = SimulationRun.objects.get(scenario=scenario)
    assert run.status == "succeeded"
    assert [o["name"] for o in run.result["options"]] == ["Rent on demand", "Buy servers"]
    assert run.inputs["options"][0]["usd_per_gpu_hour"] > 0  # priced from the catalog offer
    assert failed == []
    assert problems == []
