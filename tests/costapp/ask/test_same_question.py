"""One default for the same question: a plan asked through ``/ask/`` and the same plan built in
the scenario builder, leaving the builder's defaults as the page offers them (the discount rate
it starts a new scenario at) and giving the growth a year as the question did, have the same
NPV. Tasks run in this process; the catalog is the shipped one."""

import re

import pytest
from django.conf import settings

from costapp.ask.presets import LEAD_QUESTIONS
from costapp.builder.documents import document_form_data
from costapp.models import Scenario, SimulationRun
from costapp.runs import pipeline

from ..runs_helpers import analyst, question_priced

pytestmark = pytest.mark.django_db

QUESTION = {
    **LEAD_QUESTIONS["Q2: an 8B chat product at 2 B generated tokens a day, growing 50 % a year"],
    "months": "36",
    "gpus": ["h100-sxm"],
}
"""The 8B chat product growing 50 % a year, on H100 over three years."""


def _input_value(html: str, field_id: str) -> str:
    tag = re.search(rf'<input[^>]*id="{field_id}"[^>]*>', html)
    assert tag, field_id
    value = re.search(r'value="([^"]*)"', tag.group(0))
    return value.group(1) if value else ""


def test_the_same_question_asked_and_built_with_the_defaults_has_the_same_npv(
    client, catalog, tasks_in_process
):
    lead, question, run = question_priced(client, QUESTION, timeout_s=120)
    asked = question.scenario.document
    workload = asked["workloads"][0]
    option = next(
        o for o in asked["options"] if o["type"] == "cloud" and o.get("scaling") == "elastic"
    )
    assert asked["discount_rate"] == settings.DISCOUNT_RATE == 0.08
    assert workload["monthly_growth"] == 1.5 ** (1 / 12) - 1

    # the builder's new page offers the site's discount rate, and says so
    page = client.get("/scenarios/new/").content.decode()
    assert _input_value(page, "id_discount_rate") == "0.08"
    assert "a new scenario starts at 0.08 (8 % a year), the site&#x27;s rate" in page
    assert 'id="id_workloads-0-growth_per_year"' in page
    # built as a person would: the work and the option typed as the question has them, the
    # growth a year (not a month), the discount rate left as the page offers it
    typed_work = {k: v for k, v in workload.items() if k != "monthly_growth"}
    typed = {"name": "Built by hand", "horizon_months": asked["horizon_months"],
             "workloads": [typed_work], "options": [option]}  # fmt: skip
    data, leftovers = document_form_data(typed)
    assert leftovers == []
    data.update(
        {
            "discount_rate": _input_value(page, "id_discount_rate"),
            "workloads-0-growth_per_year": "50",
        }
    )
    response = client.post("/scenarios/new/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    built = Scenario.objects.get(owner=lead, name="Built by hand")
    assert built.document["discount_rate"] == asked["discount_rate"]
    assert built.document["workloads"][0]["monthly_growth"] == workload["monthly_growth"]
    priced = pipeline.run_create(scenario=built)
    assert priced.status == SimulationRun.Status.SUCCEEDED, priced.error
    by_hand = priced.result["options"][0]
    from_ask = next(o for o in run.result["options"] if o["name"] == option["name"])
    assert by_hand["npv_usd"] == from_ask["npv_usd"] > 0
    assert by_hand["total_usd"] == from_ask["total_usd"]


def test_growth_a_year_and_a_month_given_together_must_say_the_same_growth(client, catalog):
    client.force_login(analyst("lead"))
    document = {"name": "Growing", "horizon_months": 12, "options": [],
                "workloads": [{"type": "steady", "name": "Fleet", "gpu": "h100-sxm", "gpus": 8,
                               "monthly_growth": 0.01}]}  # fmt: skip
    data, _leftovers = document_form_data(document)
    assert data["workloads-0-growth_per_year"] == "12.6825"  # 1.01^12 − 1, shown converted
    refused = client.post("/scenarios/new/", {**data, "workloads-0-growth_per_year": "50"})
    assert refused.status_code == 200
    assert "Says 3.437 % a month (50 % a year), but the growth per month says 1 % a month" in (
        refused.content.decode()
    )
    assert not Scenario.objects.filter(name="Growing").exists()
    below = client.post(
        "/scenarios/new/",
        {**data, "workloads-0-monthly_growth": "", "workloads-0-growth_per_year": "-100"},
    )
    assert "Must be above −100 % a year" in below.content.decode()
    # below −100 % a year no rate a month reads back: the page names the field, says no growth
    beyond = client.post(
        "/scenarios/new/",
        {**data, "workloads-0-monthly_growth": "", "workloads-0-growth_per_year": "-150"},
    )
    assert beyond.status_code == 200
    html = beyond.content.decode()
    assert "Must be above −100 % a year" in html
    assert 'id="id_workloads-0-monthly_growth-converted" aria-live="polite"></small>' in html
