"""A finance lead on a phone (390 × 844 px) sees a page's key figures on its first screen: a run's
key figures (the first option's total and NPV), an Ask answer's sentence, a read-only link's
sentence (a question's run) or key figures (any other run); and the charts of those pages,
drawn by Plotly with the page's one copy of its template, have no text under their toolbar, no
two labels of an axis alike (the 70B question's options share "H100 SXM5 80GB on…"), nothing
overlapping or leaving the chart, at 390 and 1440 px (``tests/browser/layout.py``)."""

import time

import pytest
from django.test import Client

from costapp.ask.presets import EXAMPLE_QUESTION
from costapp.models import Question, SimulationRun
from costapp.runs.links import run_link_create
from tests.browser.layout import (
    EXPONENTS,
    FIRST_SCREEN,
    FITTED,
    KEY_FIGURES_END,
    OVERFLOWS,
    PLOT_TEXT,
)
from tests.browser.support import PASSWORD, SCREENSHOTS, finished_run, log_in
from tests.conftest import tasks_run_in_process
from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": FIRST_SCREEN}

NPV_OF_THE_FIRST = "#key-figures tbody tr:first-child td[data-label='NPV']"
TOTAL_OF_THE_FIRST = "#key-figures tbody tr:first-child td[data-label='Total']"


def _asked(lead) -> Question:
    client = Client()
    client.force_login(lead)
    with tasks_run_in_process():
        assert client.post("/ask/", EXAMPLE_QUESTION).status_code == 302
        question = Question.objects.get(owner=lead)
        deadline = time.monotonic() + 240
        while question.run.status != SimulationRun.Status.SUCCEEDED:
            assert question.run.status not in ("failed", "cancelled"), question.run.error
            assert time.monotonic() < deadline, "the question did not finish"
            time.sleep(0.2)
            question.refresh_from_db()
            question.run.refresh_from_db()
    return question


def test_the_key_figures_are_on_a_phones_first_screen_and_charts_fit_their_toolbar(
    page, live_server, catalog
):
    lead = user_with_role("lead", "analyst", password=PASSWORD)
    question = _asked(lead)
    run = question.run
    plain = finished_run(lead, "today")
    _link, question_key = run_link_create(run=run, user=lead)
    _link, plain_key = run_link_create(run=plain, user=lead)
    page.set_default_timeout(60_000)  # heavy pages on a busy machine
    log_in(page, live_server, "lead")
    origin = live_server.url
    pages = {
        "answer": (f"/ask/{question.pk}/", ["#answer-sentence"]),
        "run": (f"/runs/{run.pk}/", [TOTAL_OF_THE_FIRST, NPV_OF_THE_FIRST]),
        "plain-run": (f"/runs/{plain.pk}/", [TOTAL_OF_THE_FIRST, NPV_OF_THE_FIRST]),
        "question-link": (f"/shared/{question_key}/", ["#answer-sentence"]),
        "plain-link": (f"/shared/{plain_key}/", [TOTAL_OF_THE_FIRST, NPV_OF_THE_FIRST]),
        "builder": (f"/scenarios/{run.scenario.pk}/edit/", []),  # its fields: no exponent
    }
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems: dict[str, list[str]] = {}
    for name, (path, selectors) in pages.items():
        page.set_viewport_size(PHONE)
        page.goto(origin + path)
        page.screenshot(path=str(SCREENSHOTS / f"phone-{name}-390.png"))
        for selector in selectors:
            bottom = page.evaluate(KEY_FIGURES_END, selector)
            assert bottom is not None, (name, selector)
            assert bottom <= FIRST_SCREEN, f"{name}: {selector} ends {bottom:.0f} px down"
        for width in (390, 1440):
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_function(FITTED)
            found = page.evaluate(OVERFLOWS) + page.evaluate(PLOT_TEXT) + page.evaluate(EXPONENTS)
            if found:
                problems[f"{name} at {width} px"] = found
    assert problems == {}, problems
    # the charts were drawn with the page's one copy of Plotly's template (plotly_white's
    # "white" plot; without a template Plotly's own is "#fff")
    page.goto(f"{origin}/runs/{run.pk}/")
    page.wait_for_function(FITTED)
    grounds = page.evaluate(
        """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
          .map(el => el._fullLayout.plot_bgcolor)"""
    )
    assert len(grounds) >= 5 and set(grounds) == {"white"}, grounds
    # the 70B question's options sharing a name's start have labels apart on the phone
    names = [option["name"] for option in run.result["options"]]
    assert sum(name.startswith("H100 SXM5 80GB on demand") for name in names) >= 2
