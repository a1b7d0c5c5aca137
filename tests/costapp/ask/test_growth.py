"""Ask's growth given a year or a month, in percent, as the builder takes it
(``costapp.scenarios.growth``): a bad value or two that disagree named at the field, the form
showing the growth converted, the plan's ``monthly_growth`` by one rule, and the answer saying
the growth both ways. Tasks run in this process; the catalog is the shipped one."""

import re
from html import unescape

import pytest

from costapp.ask.plan import monthly_growth
from costapp.models import Question, Scenario, SimulationRun

from ..runs_helpers import analyst
from .test_ask import ask

pytestmark = pytest.mark.django_db


def _field(html: str, name: str) -> str:
    return html[html.index(f'id="field-{name}"') :].split('id="field-')[1]


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"growth_per_month": "-100"}, "growth_per_month", "Must be above −100 % a month"),
        ({"growth_per_month": "-250"}, "growth_per_month", "Must be above −100 % a month"),
        ({"growth_per_month": "three"}, "growth_per_month", "Enter a number."),
        ({"growth_per_month": "inf"}, "growth_per_month", "Enter a number."),
        ({"growth_per_year": "-100", "growth_per_month": "2"}, "growth_per_year",
         "Must be above −100 % a year"),
        (
            {"growth_per_year": "50", "growth_per_month": "1"},
            "growth_per_month",
            "Says 1 % a month (12.68 % a year), but the growth a year says 3.437 % a month "
            "(50 % a year): clear one of them.",
        ),
    ],
)  # fmt: skip
def test_a_bad_growth_is_named_at_its_field_and_stores_nothing(
    client, catalog, changes, field, message
):
    client.force_login(analyst("lead"))
    response = ask(client, **changes)
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert field in errors and any(message in e for e in errors[field]), errors
    said = re.findall(
        r'<p class="error" role="alert">(.*?)</p>', _field(response.content.decode(), field)
    )
    assert any(message in unescape(e) for e in said), said
    assert not Question.objects.exists() and not Scenario.objects.exists()
    assert not SimulationRun.objects.exists()


def test_the_form_shows_the_growth_typed_either_way_converted(client, catalog):
    client.force_login(analyst("lead"))
    page = client.get("/ask/").content.decode()
    assert 'id="id_growth_per_year"' in page and 'id="id_growth_per_month"' in page
    note = re.search(
        r'<small class="converted" id="id_growth_per_month-converted"[^>]*>(.*?)</small>', page
    )
    assert note and note.group(1) == ""  # no growth typed, none said
    # sent back with another field's error, the growth typed is shown converted
    for typed, said in (
        ({"growth_per_year": "50"}, "= 3.437 % a month (50 % a year)"),
        ({"growth_per_month": "2"}, "= 2 % a month (26.82 % a year)"),
        ({"growth_per_year": "26.824179", "growth_per_month": "2"}, "= 2 % a month (26.82 % a year)"),
    ):  # fmt: skip
        html = ask(client, tokens_per_day="", **typed).content.decode()
        assert "Give the generated tokens per day" in html
        assert f'id="id_growth_per_month-converted" aria-live="polite">{said}</small>' in html, (
            typed
        )


def test_the_plan_takes_the_growth_a_month_as_typed_and_a_year_by_the_builders_rule():
    assert monthly_growth({"growth_per_month": 2.0}) == 0.02
    assert monthly_growth({"growth_per_year": 50.0}) == 1.5 ** (1 / 12) - 1
    # both given (they agree, or the form refuses them): the month's, as the builder keeps it
    assert monthly_growth({"growth_per_year": 26.824179, "growth_per_month": 2.0}) == 0.02
    assert monthly_growth({}) == 0.0


def test_a_growth_a_month_reaches_the_plan_and_the_answer_says_it_both_ways(
    client, catalog, tasks_in_process
):
    lead = analyst("lead")
    client.force_login(lead)
    response = ask(client, growth_per_month="2", steady="on", steady_gpus="8")
    assert response.status_code == 302, response.content.decode()[:2000]
    question = Question.objects.get(owner=lead)
    assert question.run.status == SimulationRun.Status.SUCCEEDED, question.run.error
    workloads = question.scenario.document["workloads"]
    grown = {w["type"]: w["monthly_growth"] for w in workloads if "monthly_growth" in w}
    assert grown == {"inference": 0.02, "steady": 0.02}
    page = client.get(f"/ask/{question.pk}/").content.decode()
    needs = unescape(page[page.index('id="work-needs"') :].split("</section>")[0])
    serving = next(line for line in needs.split("<li>") if "generated tokens a day" in line)
    fleet = next(line for line in needs.split("<li>") if "A steady fleet of 8 GPUs" in line)
    for line in (serving, fleet):
        assert "growing 2 % a month (26.82 % a year)" in line, line
    assert "8 H100 SXM5 80GB GPUs busy" in fleet and "GPUs in month 39" in fleet
