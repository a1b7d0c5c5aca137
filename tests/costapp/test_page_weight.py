"""The weight of the heaviest pages a finance lead opens, on a real run: the 8B question (a mix
of bought servers, a 3-year commitment and on-demand rent sized jointly over 60 months, 14
options) priced in this process on the shipped catalog. Its run page, answer page and read-only
link weigh under 300 KB of HTML, and its scenario's builder page under ``BUILDER_KB``, with every
figure a lead needs still on them. ``bench/pages.py --part weight`` prints the same weights."""

import re

import pytest

from costapp.ask.presets import LEAD_QUESTIONS
from costapp.runs.links import run_link_create

from .runs_helpers import question_priced

pytestmark = pytest.mark.django_db

PAGE_KB = 300
"""A run or answer page (the issue's target)."""
BUILDER_KB = 300
"""A builder page of a scenario of 14 options (it weighed 720 KB when each row carried every
type's fields and each catalog list)."""
QUESTION = LEAD_QUESTIONS[
    "Q2: an 8B chat product at 2 B generated tokens a day, growing 50 % a year"
]


@pytest.fixture
def asked(client, catalog, tasks_in_process):
    return question_priced(client, QUESTION, timeout_s=180)


def _kb(response) -> float:
    assert response.status_code == 200
    return len(response.content) / 1000


def test_the_heaviest_run_page_answer_and_link_weigh_under_300_kb_with_every_figure(client, asked):
    lead, question, run = asked
    result = run.result
    options = result["options"]
    # the heaviest kind of run: a mix sized jointly, with a simulation, many options
    assert any(o["type"] == "mix" for o in options) and result.get("sizing")
    horizon = question.scenario.document["horizon_months"]
    assert len(options) >= 12 and horizon == 60

    page = client.get(f"/runs/{run.pk}/")
    assert _kb(page) < PAGE_KB, _kb(page)
    html = page.content.decode()
    for option in options:  # every option named, its total given
        assert option["name"].replace("'", "&#x27;") in html
    # the folded table of cost against utilization still has every point of every curve, each
    # option's name once as its group's heading
    body = html.split("<caption>Cost against utilization</caption>", 1)[1].split("</table>")[0]
    groups = re.findall(r'<th scope="rowgroup" class="group" colspan="\d+">([^<]*)</th>', body)
    assert len(groups) >= 5 and len(groups) == len(
        set(groups)
    )  # the options with GPUs of their own
    points = body.count("<tr>") - len(groups) - 1  # less the headings and the header row
    assert points == len(groups) * len(run.cost_curves["scale"]), points
    # the fan chart's table: a row per month, a P10, P50 and P90 per option
    fan = html.split("<caption>Cumulative cost percentiles</caption>", 1)[1].split("</table>")[0]
    assert fan.count("<tr>") == 1 + horizon + 1  # the header, months 0 to 60
    assert fan.count("<th scope=") == 1 + 3 * len(options)

    answer = client.get(f"/ask/{question.pk}/")
    assert _kb(answer) < PAGE_KB, _kb(answer)
    _link, key = run_link_create(run=run, user=lead)
    shared = client.get(f"/shared/{key}/")
    assert _kb(shared) < PAGE_KB, _kb(shared)


def test_the_builder_page_of_its_scenario_writes_each_catalog_list_once_and_each_rows_own_fields(
    client, asked
):
    _lead, question, run = asked
    page = client.get(f"/scenarios/{question.scenario.pk}/edit/")
    assert _kb(page) < BUILDER_KB, _kb(page)
    html = page.content.decode()
    options = question.scenario.document["options"]
    assert len(options) >= 12
    # the GPUs' list once for the options, each option's picker holding its own GPU only
    assert html.count('<template id="list-options-gpu">') == 1
    catalog_gpus = html.split('<template id="list-options-gpu">', 1)[1].split("</template>")[0]
    assert catalog_gpus.count("<option") > 10
    for index, option in enumerate(options):
        select = re.search(rf'<select name="options-{index}-gpu"[^>]*>(.*?)</select>', html, re.S)
        if option["type"] == "api":
            assert select is None  # an api option holds no GPU
            continue
        assert select and 'data-list="options-gpu"' in html
        chosen = re.findall(r'<option value="([^"]*)"', select.group(1))
        if "gpu" not in option:  # a mix: its layers' GPUs
            assert chosen == [""], chosen
            continue
        assert chosen == ["", option["gpu"]], chosen
        assert f'<option value="{option["gpu"]}"' in catalog_gpus
    # each row writes its type's fields: a cloud option no on-prem capex, an on-prem one no
    # hourly price; the empty row (for "Add an option") keeps every field
    for index, option in enumerate(options):
        capex = f'name="options-{index}-capex_usd_per_server"'
        hourly = f'name="options-{index}-usd_per_gpu_hour"'
        if option["type"] == "cloud":
            assert capex not in html and hourly in html
        if option["type"] == "on_prem":
            assert capex in html and hourly not in html
    empty = html.split('<template id="options-empty">', 1)[1].split("</template>")[0]
    for name in ("capex_usd_per_server", "usd_per_gpu_hour", "token_price", "layers"):
        assert f'name="options-__prefix__-{name}"' in empty
