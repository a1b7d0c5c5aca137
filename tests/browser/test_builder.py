"""The scenario builder in a real browser (headless Chromium), its runs on a real Celery worker
(in the live server's process on the embedded default: ``run_tasks``): build a
scenario from the form (a workload, two options, one priced from the offer picker), save it, run
it and wait for the run to succeed; every control of the builder is reachable with the Tab key;
no console errors."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from costapp.builder import forms as builder_forms
from costapp.models import Scenario, SimulationRun
from costapp.tco import schema, swept_field
from tests.browser.support import log_in
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
    page, live_server, catalog, run_tasks
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
    log_in(page, live_server, "finance", "pw-finance")
    page.click("nav >> text=Scenarios")
    page.click("#new-scenario-link")
    page.wait_for_url(live_server.url + "/scenarios/new/")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    page.fill("#id_name", "Serve on H100: rent or buy")
    page.fill("#id_horizon_months", "36")
    page.fill("#id_discount_rate", "0.08")
    # the workload
    page.select_option("#id_workloads-0-type", "steady")
    expect(page.locator("#id_workloads-0-mfu")).to_be_hidden()  # a training field
    page.fill("#id_workloads-0-name", "Inference fleet")
    page.select_option("#id_workloads-0-gpu", "h100-sxm")
    page.fill("#id_workloads-0-gpus", "16")
    page.fill("#id_workloads-0-utilization", "0.7")
    # option 1: on-demand cloud, priced from the offer picker
    page.select_option("#id_options-0-type", "cloud")
    expect(page.locator("#id_options-0-pue")).to_be_hidden()  # an on-prem field
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


def sweep_choices(page, select: str) -> list[list[str]]:
    return page.evaluate(
        f"() => Array.from(document.querySelector('{select}').options)"
        ".map(o => [o.value, o.textContent])"
    )


LABEL_FITS = """(selector) => {
    const select = document.querySelector(selector);
    const style = getComputedStyle(select);
    const context = document.createElement('canvas').getContext('2d');
    context.font = style.font;
    const text = context.measureText(select.options[select.selectedIndex].text).width;
    const room = select.clientWidth - parseFloat(style.paddingLeft)
        - parseFloat(style.paddingRight) - 16;  // the arrow
    return { text, room };
}"""


def label_fits(page, select: str) -> bool:
    """Whether the chosen option's label is shown whole in the closed select (its text is no
    wider than the select's room beside the arrow)."""
    sizes = page.evaluate(LABEL_FITS, select)
    return sizes["text"] <= sizes["room"]


def test_a_sweeps_option_follows_the_options_and_values_of_another_type_are_named(
    page, live_server, browser, catalog
):
    """A sizing sweep's option is picked from the names of the options it can size, kept current
    as options are added, renamed, removed and change billing; a value typed for another type is
    named as not saved, next to the type, kept when switching back, and named again after saving;
    without JavaScript the select is the server's."""
    user = analyst("finance")
    page.set_default_timeout(60_000)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    log_in(page, live_server, "finance", "pw-finance")
    page.goto(live_server.url + "/scenarios/new/")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    page.fill("#id_name", "Lease or buy")
    page.select_option("#id_workloads-0-type", "steady")
    page.fill("#id_workloads-0-name", "Fleet")
    page.fill("#id_workloads-0-gpus", "16")
    # option 1 first set up as on-prem, a PUE typed, then made a cloud option
    page.select_option("#id_options-0-type", "on_prem")
    page.fill("#id_options-0-pue", "1.4")
    notice = page.locator("#id_options-0-type-unsaved")
    assert notice.is_hidden()
    page.select_option("#id_options-0-type", "cloud")
    # what a change shows or hides follows it (the builder never moves the page during a press)
    expect(notice).to_have_text(
        "Not saved with this type and billing: PUE = 1.4. Switch back to keep it."
    )
    page.select_option("#id_options-0-type", "on_prem")  # switching back keeps the value
    expect(notice).to_be_hidden()
    assert page.input_value("#id_options-0-pue") == "1.4"
    page.select_option("#id_options-0-type", "cloud")
    page.fill("#id_options-0-name", "Rent")
    page.fill("#id_options-0-usd_per_gpu_hour", "2.5")
    page.select_option("#id_options-1-type", "on_prem")
    page.fill("#id_options-1-name", "Buy")
    page.fill("#id_options-1-capex_usd_per_server", "280000")
    page.fill("#id_options-1-server_kw", "10.2")

    # a sweep picks from the names of the options it can size: not an on-demand cloud option
    page.click("button[data-add=sizing]")
    page.locator("#id_sizing-0-option").wait_for()
    assert sweep_choices(page, "#id_sizing-0-option") == [["", "(choose)"], ["Buy", "Buy"]]
    # billed as committed, it can be sized: it joins the choices
    page.select_option("#id_options-0-billing", "committed")
    assert sweep_choices(page, "#id_sizing-0-option") == [
        ["", "(choose)"],
        ["Rent", "Rent"],
        ["Buy", "Buy"],
    ]
    page.select_option("#id_sizing-0-option", "Rent")
    # billed on spot, it leaves them; the sweep keeps it, marked with why
    page.select_option("#id_options-0-billing", "spot")
    assert sweep_choices(page, "#id_sizing-0-option") == [
        ["", "(choose)"],
        ["Buy", "Buy"],
        ["Rent", "Rent (cannot be sized: spot cloud)"],
    ]
    assert page.input_value("#id_sizing-0-option") == "Rent"
    page.select_option("#id_options-0-billing", "")
    assert sweep_choices(page, "#id_sizing-0-option")[-1] == [
        "Rent",
        "Rent (cannot be sized: on-demand cloud)",
    ]
    assert label_fits(page, "#id_sizing-0-option")
    page.locator("#sizing-section").screenshot(
        path=str(SCREENSHOTS / "builder-sizing-cannot-be-sized.png")
    )
    page.select_option("#id_sizing-0-option", "Buy")
    assert [v for v, _ in sweep_choices(page, "#id_sizing-0-option")] == ["", "Buy"]
    # renamed: the sweep follows its option
    page.fill("#id_options-1-name", "Buy 8-GPU servers")
    assert page.input_value("#id_sizing-0-option") == "Buy 8-GPU servers"
    # added: a new option joins the choices
    page.click("button[data-add=options]")
    page.select_option("#id_options-2-type", "dedicated")
    page.fill("#id_options-2-name", "Lease")
    page.fill("#id_options-2-usd_per_server_month", "18000")
    assert [v for v, _ in sweep_choices(page, "#id_sizing-0-option")] == [
        "",
        "Buy 8-GPU servers",
        "Lease",
    ]
    # removed: it leaves the choices; the sweep keeps it, marked
    page.locator("#options-rows fieldset.row >> nth=1 >> button.remove-row").click()
    assert sweep_choices(page, "#id_sizing-0-option") == [
        ["", "(choose)"],
        ["Lease", "Lease"],
        ["Buy 8-GPU servers", "Buy 8-GPU servers (no option of that name)"],
    ]
    assert page.input_value("#id_sizing-0-option") == "Buy 8-GPU servers"
    page.fill("#id_sizing-0-min", "0")
    page.fill("#id_sizing-0-max", "4")
    assert label_fits(page, "#id_sizing-0-option")
    page.locator("#sizing-section").screenshot(path=str(SCREENSHOTS / "builder-sizing.png"))

    # saved so: the engine's message at the sweep's option, and the page still says which value
    # of option 1 will not be saved
    page.click("#save-button")
    page.locator("#builder-errors").wait_for()
    invalid = page.locator(".field.invalid:has(#id_sizing-0-option)")
    assert 'names no option: "Buy 8-GPU servers"' in invalid.locator(".error").inner_text()
    assert "sizing[0].option" in page.locator("#builder-errors").inner_text()
    assert "PUE = 1.4" in page.locator("#id_options-0-type-unsaved").inner_text()
    page.locator("#options-rows fieldset.row >> nth=0").screenshot(
        path=str(SCREENSHOTS / "builder-unsaved-notice.png")
    )
    assert not Scenario.objects.filter(owner=user).exists()
    page.screenshot(path=str(SCREENSHOTS / "builder-sizing-errors.png"), full_page=True)

    page.select_option("#id_sizing-0-option", "Lease")
    page.click("#save-button")
    page.wait_for_url(f"{live_server.url}/scenarios/*/")
    scenario = Scenario.objects.get(owner=user)
    assert scenario.document["sizing"] == [{"option": "Lease", "min": 0, "max": 4}]
    assert "pue" not in scenario.document["options"][0]
    assert "option 1 “Rent” (PUE = 1.4)" in page.locator(".messages").inner_text()
    page.locator(".messages").screenshot(path=str(SCREENSHOTS / "builder-unsaved-message.png"))
    assert problems == []

    # without JavaScript the edit page's select lists the options, the sweep's own chosen
    context = browser.new_context(java_script_enabled=False)
    try:
        plain = context.new_page()
        plain.set_default_timeout(60_000)
        log_in(plain, live_server, "finance", "pw-finance")
        plain.goto(f"{live_server.url}/scenarios/{scenario.pk}/edit/")
        assert [v for v, _ in sweep_choices(plain, "#id_sizing-0-option")] == ["", "Lease"]
        assert plain.input_value("#id_sizing-0-option") == "Lease"
    finally:
        context.close()


SET_VALUE = """([selector, value]) => { const el = document.querySelector(selector);
    el.value = value; el.dispatchEvent(new Event('change', { bubbles: true })); }"""


def test_the_sweeps_choices_agree_with_the_engine_over_every_type_and_billing(page, live_server):
    """For every option type (and none) × billing (and none), the page lists the option in a
    sweep's choices exactly when the engine's rule (``swept_field``) can size it, and otherwise
    keeps the sweep's value marked with the server's reason."""
    analyst("finance")
    page.set_default_timeout(60_000)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    log_in(page, live_server, "finance", "pw-finance")
    page.goto(live_server.url + "/scenarios/new/")
    page.select_option("#id_options-0-type", "on_prem")
    page.fill("#id_options-0-name", "X")
    page.click("button[data-add=sizing]")
    page.locator("#id_sizing-0-option").wait_for()
    page.select_option("#id_sizing-0-option", "X")
    checked = 0
    for option_type in ("", *schema.OPTION_TYPES):
        for billing in ("", *schema.BILLINGS):
            page.evaluate(SET_VALUE, ["#id_options-0-billing", billing])
            page.evaluate(SET_VALUE, ["#id_options-0-type", option_type])
            choices = sweep_choices(page, "#id_sizing-0-option")
            sizable = swept_field(option_type, billing) is not None
            if sizable:
                assert choices == [["", "(choose)"], ["X", "X"]], (option_type, billing)
            else:
                reason = builder_forms.unsizable_reason(option_type, billing)
                assert choices == [["", "(choose)"], ["X", f"X (cannot be sized: {reason})"]], (
                    option_type,
                    billing,
                )
            assert page.input_value("#id_sizing-0-option") == "X"
            checked += 1
    # cloud, dedicated, on_prem, api, mix (format 1.3) and none; three billings and none
    assert checked == 6 * 4
    assert problems == []
