"""A saved scenario's builder page in a real browser (headless Chromium): each row comes with its
type's fields only and each catalog list once for the page (``costapp.builder.fields.ListSelect``);
the page's script puts the lists into the pickers, keeping each chosen value, and brings a row
the other types' fields when its type is changed, each in its place. Saved unchanged but for one
option's type, the document is the same but for that option."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from costapp.models import Scenario
from tests.browser.support import log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

DOCUMENT = json.loads(
    (Path(__file__).resolve().parents[2] / "bench" / "uncertain-h100-fleet.json").read_text()
)

ROW_FIELDS = """(index) => Array.from(document.querySelectorAll(
    `#options-rows > fieldset.row:nth-child(${index + 1}) .field-grid > .field [name]`))
  .map(el => el.name.replace(/^options-\\d+-/, ''))"""
EMPTY_FIELDS = """() => Array.from(document.getElementById('options-empty').content
    .querySelectorAll('.field-grid > .field [name]'))
  .map(el => el.name.replace(/^options-__prefix__-/, ''))"""


def test_a_saved_scenarios_rows_get_the_lists_and_another_types_fields_when_changed(
    page, live_server, catalog
):
    user = analyst("builder-lists")
    document = {**DOCUMENT, "options": [dict(o) for o in DOCUMENT["options"]]}
    document["options"][0]["gpu"] = "h100-sxm"
    scenario = Scenario.objects.create(owner=user, name="Lists", document=document)
    page.set_default_timeout(60_000)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    log_in(page, live_server, user.username, f"pw-{user.username}")
    page.goto(f"{live_server.url}/scenarios/{scenario.pk}/edit/")

    # the GPUs' list put into each picker, the chosen GPU kept
    listed = page.evaluate(
        "() => document.getElementById('list-options-gpu').content.querySelectorAll('option')"
        ".length"
    )
    assert listed > 10
    gpu = page.locator("#id_options-0-gpu")
    assert gpu.evaluate("el => el.options.length") == listed
    expect(gpu).to_have_value("h100-sxm")
    assert page.locator("#id_workloads-0-gpu").evaluate("el => el.options.length") > 10
    expect(page.locator("#id_workloads-0-gpu")).to_have_value("h100-sxm")

    # each row its type's fields: the dedicated option has no capex, the on-prem one no hourly price
    assert page.locator("#id_options-3-capex_usd_per_server").count() == 0
    assert page.locator("#id_options-4-usd_per_gpu_hour").count() == 0
    expect(page.locator("#id_options-4-capex_usd_per_server")).to_be_visible()

    # the dedicated option made on-prem: the on-prem fields come, in the empty row's order, the
    # purchase quotes' list in their picker; the dedicated price is kept, hidden, and named
    page.select_option("#id_options-3-type", "on_prem")
    expect(page.locator("#id_options-3-capex_usd_per_server")).to_be_visible()
    assert page.locator("#id_options-3-purchase_quote").evaluate("el => el.options.length") > 1
    expect(page.locator("#id_options-3-usd_per_server_month")).to_be_hidden()
    expect(page.locator("#id_options-3-type-unsaved")).to_contain_text("= 14500")
    order = page.evaluate(EMPTY_FIELDS)
    fields = page.evaluate(ROW_FIELDS, 3)
    assert fields == [name for name in order if name in fields]
    assert len(fields) == len(order)  # the whole row now, every field once

    # and then cloud, priced by the hour; saved, only that option changed
    page.select_option("#id_options-3-type", "cloud")
    page.fill("#id_options-3-usd_per_gpu_hour", "2.5")
    page.click("#save-button")
    page.wait_for_url(f"{live_server.url}/scenarios/{scenario.pk}/")
    scenario.refresh_from_db()
    saved = scenario.document
    assert saved["options"][3] == {
        "name": "Dedicated 8-GPU servers",
        "type": "cloud",
        "usd_per_gpu_hour": 2.5,
    }
    for index in (0, 1, 2, 4):
        assert saved["options"][index] == document["options"][index], index
    assert saved["workloads"] == document["workloads"]
    assert problems == []
