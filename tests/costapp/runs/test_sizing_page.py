"""The sizing view of the run page: per sweep its chart (with the P10–P90 band stored beside the
run), a sentence of what it means, and the "Make a copy at the best size" button, which saves a
private copy of the scenario for whoever presses it, with the option at the best size, checked
like any new scenario."""

import json
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from costapp.models import Scenario, SimulationRun
from costapp.runs import pipeline
from costapp.scenarios import services

from ..runs_helpers import analyst, scenario_document, stored_run

pytestmark = pytest.mark.django_db

COMMITTED = "Commit some, rest on-demand"
ON_PREM = "Buy some, burst the rest"


def fleet(paths: int | None = 1_100) -> dict:
    document = scenario_document("size-the-fleet")
    document["sizing"] = [
        {"option": COMMITTED, "min": 0, "max": 192, "step": 32},
        {"option": ON_PREM, "min": 8, "max": 8},  # only the scenario's own size
    ]
    if paths:
        document["simulation"] = {
            "paths": paths,
            "seed": 3,
            "demand_multiplier": {"dist": "triangular", "low": 0.6, "mode": 1.0, "high": 1.5},
        }
    return document


def figure_of(html: str, key: str) -> dict:
    """The Plotly figure a page ships for chart ``key`` (its json_script element)."""
    found = re.search(rf'<script id="figure-{key}" type="application/json">(.*?)</script>', html)
    assert found, key
    return json.loads(found.group(1))


@pytest.fixture
def pat(db):
    return analyst("pat")


@pytest.fixture
def sized(pat, catalog, tasks_in_process):  # noqa: F811
    """A shared scenario of pat's with a succeeded sizing run (1 100 paths)."""
    scenario = Scenario.objects.create(owner=pat, name="Fleet", document=fleet(), shared=True)
    return stored_run(scenario)  # computed once per test process, then copied


@pytest.fixture
def sized_computed(pat, catalog, tasks_in_process):
    """As ``sized``, computed by this test: for what finishing a run does."""
    scenario = Scenario.objects.create(owner=pat, name="Fleet", document=fleet(), shared=True)
    run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    return run


def test_the_run_page_shows_each_sweeps_chart_sentence_and_copy_button(client, sized, pat):
    client.force_login(pat)
    html = client.get(f"/runs/{sized.pk}/").content.decode()
    sweeps = sized.result["sizing"]
    assert 'id="sizing-title"' in html
    for number in (1, 2):
        assert f'id="chart-sizing-{number}"' in html and f'id="figure-sizing-{number}"' in html
    figure = figure_of(html, "sizing-1")
    band = next(t for t in figure["data"] if t["name"] == "NPV P10–P90 over 1,100 paths")
    # the page's figure: the result's numbers as the tooltip shows them, whole dollars
    # (hardware.display.charts.page_trace)
    assert "%{y:$,.0f}" in band["hovertemplate"]
    assert sweeps[0]["p90_npv_usd"] == sized.sizing_bands[0]["p90_npv_usd"]
    assert band["y"] == [round(value) for value in sweeps[0]["p90_npv_usd"]]
    assert band["y"] != sweeps[0]["p90_npv_usd"]  # its cents' fractions left out
    best = sweeps[0]["best"]
    assert best not in (None, 64)
    assert f"Commit to {best} GPUs: beyond that, a committed GPU is idle often enough" in html
    assert "That is the scenario&#x27;s own size." in html  # sweep 2: 8 servers, its own
    assert f'action="/runs/{sized.pk}/sizing/1/copy/"' in html
    assert f"Make a copy at the best size ({best} committed GPUs)" in html
    assert 'id="sizing-2-copy"' not in html  # its best is the scenario's own size
    assert "Table: the numbers of" in html
    assert (
        "Committed GPUs 0–192 by 32, 7 sizes; objective: mean NPV over 1,100 paths; every path "
        "must get all its work done." in html
    )
    assert "The band holds the middle 80 % of the simulated futures" in html


def test_an_old_run_without_bands_shows_the_chart_without_a_band(client, sized, pat):
    # a run finished before the bands were kept (another finish time: not the charts the cache
    # holds for this run)
    SimulationRun.objects.filter(pk=sized.pk).update(
        sizing_bands=None, finished=sized.finished - timedelta(days=400)
    )
    client.force_login(pat)
    html = client.get(f"/runs/{sized.pk}/").content.decode()
    figure = figure_of(html, "sizing-1")
    assert not any("P10" in t["name"] for t in figure["data"])
    assert "This run predates the P10–P90 band" in html


def test_any_analyst_who_sees_the_run_gets_a_private_copy_at_the_best_size(client, sized):
    quinn = analyst("quinn")
    client.force_login(quinn)
    best = sized.result["sizing"][0]["best"]
    response = client.post(f"/runs/{sized.pk}/sizing/1/copy/", follow=True)
    copied = Scenario.objects.exclude(pk=sized.scenario_id).get()
    assert response.redirect_chain == [(f"/scenarios/{copied.pk}/", 302)]
    assert (copied.owner, copied.shared) == (quinn, False)
    assert copied.name == f"Fleet (at best size: {best} committed GPUs)"
    expected = fleet()
    expected["options"][1]["committed_gpus"] = best
    assert copied.document == expected  # the document as written, one field changed
    html = response.content.decode()
    assert f"Saved “Fleet (at best size: {best} committed GPUs)”" in html
    assert f"run {sized.pk}" in copied.description
    # the copy prices the option at that size: its NPV is the sweep's at best
    run = pipeline.run_create(scenario=copied)
    option = next(o for o in run.result["options"] if o["name"] == COMMITTED)
    sweep = sized.result["sizing"][0]
    assert option["npv_usd"] == sweep["npv_usd"][sweep["candidates"].index(best)]
    assert option["mean_npv_usd"] == sweep["best_objective_usd"]


def test_a_scenario_changed_since_the_run_is_copied_from_the_runs_frozen_inputs(client, sized, pat):
    scenario = sized.scenario
    scenario.document = {**scenario.document, "horizon_months": 24}
    scenario.save()
    client.force_login(pat)
    client.post(f"/runs/{sized.pk}/sizing/1/copy/")
    copied = Scenario.objects.exclude(pk=scenario.pk).get()
    expected = json.loads(json.dumps(sized.inputs))
    expected["options"][1]["committed_gpus"] = sized.result["sizing"][0]["best"]
    assert copied.document == expected
    assert copied.document["horizon_months"] == 36
    assert "from the run's frozen inputs" in copied.description


def test_a_copy_that_would_not_validate_is_not_stored(client, sized, pat):
    inputs = json.loads(json.dumps(sized.inputs))
    inputs["options"][1]["colour"] = "blue"  # a run frozen under other rules
    SimulationRun.objects.filter(pk=sized.pk).update(inputs=inputs)
    Scenario.objects.filter(pk=sized.scenario_id).update(document={**fleet(), "name": "changed"})
    client.force_login(pat)
    response = client.post(f"/runs/{sized.pk}/sizing/1/copy/", follow=True)
    assert response.redirect_chain == [(f"/runs/{sized.pk}/", 302)]
    assert Scenario.objects.count() == 1
    html = response.content.decode()
    assert "No copy was made, the document would be invalid: options[1].colour" in html


def test_no_copy_without_a_best_or_at_the_own_size(client, pat, catalog, tasks_in_process):  # noqa: F811
    document = fleet(paths=None)
    del document["options"][2]["burst_usd_per_gpu_hour"]
    document["sizing"] = [
        {"option": ON_PREM, "min": 1, "max": 3},  # too few servers: none qualifies
        {"option": ON_PREM, "min": 20, "max": 20},
    ]
    document["options"][2]["servers"] = 20
    scenario = Scenario.objects.create(owner=pat, name="Few", document=document)
    run = pipeline.run_create(scenario=scenario)
    assert [s["best"] for s in run.result["sizing"]] == [None, 20]
    client.force_login(pat)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "No size from 1 to 3 servers qualifies: every one leaves work undone" in html
    assert 'id="sizing-1-copy"' not in html and 'id="sizing-2-copy"' not in html
    for number, reason in ((1, "found no size that qualifies"), (2, "is at the best size")):
        response = client.post(f"/runs/{run.pk}/sizing/{number}/copy/", follow=True)
        assert response.redirect_chain == [(f"/runs/{run.pk}/", 302)]
        assert reason in response.content.decode()
    assert client.post(f"/runs/{run.pk}/sizing/3/copy/", follow=True).status_code == 200
    assert Scenario.objects.count() == 1


def test_the_copy_needs_post_csrf_the_analyst_role_and_sight_of_the_run(sized, pat):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(pat)
    url = f"/runs/{sized.pk}/sizing/1/copy/"
    assert strict.post(url).status_code == 403  # no CSRF token
    assert strict.get(url).status_code == 405
    viewer = User.objects.create_user(username="vic")
    viewer.groups.add(Group.objects.get(name="viewer"))
    client = Client()
    client.force_login(viewer)
    assert client.post(url).status_code == 403
    Scenario.objects.filter(pk=sized.scenario_id).update(shared=False)
    client.force_login(analyst("quinn"))
    assert client.post(url).status_code == 404
    assert Client().post(url).status_code == 302  # to the login page
    assert Scenario.objects.count() == 1


def test_a_long_name_is_cut_short_and_keeps_the_size(sized, pat):
    Scenario.objects.filter(pk=sized.scenario_id).update(name="F" * 200)
    run = SimulationRun.objects.get(pk=sized.pk)
    copied = services.scenario_copy_at_size(run=run, sweep_index=0, owner=pat)
    best = sized.result["sizing"][0]["best"]
    assert len(copied.name) == 200
    assert copied.name.endswith(f"F… (at best size: {best} committed GPUs)")


def test_charts_cached_by_other_chart_code_are_not_served(sized_computed, monkeypatch):
    """A run's charts are cached when it finishes; a deploy whose charts draw differently (another
    ``CHARTS_VERSION``) builds them again instead of serving the old figures."""
    from costapp import charts
    from costapp.runs import chart_cache

    built: list[str] = []
    result_charts, sizing_charts = charts.result_charts, charts.sizing_charts

    def result_spy(*args):
        built.append("result")
        return result_charts(*args)

    def sizing_spy(*args):
        built.append("sizing")
        return sizing_charts(*args)

    monkeypatch.setattr(charts, "result_charts", result_spy)
    monkeypatch.setattr(charts, "sizing_charts", sizing_spy)
    chart_cache.run_charts(run=sized_computed)
    chart_cache.run_sizing_charts(run=sized_computed)
    assert built == []  # both cached when the run finished
    monkeypatch.setattr(charts, "CHARTS_VERSION", "another-version")
    fresh = chart_cache.run_charts(run=sized_computed)
    fresh_sizing = chart_cache.run_sizing_charts(run=sized_computed)
    assert built == ["result", "sizing"]
    assert [c.figure for c in fresh] == [
        c.figure for c in result_charts(sized_computed.result, sized_computed.cost_curves)
    ]
    assert [c.figure for c in fresh_sizing] == [
        c.figure for c in sizing_charts(sized_computed.result, sized_computed.sizing_bands)
    ]
    chart_cache.run_charts(run=sized_computed)
    chart_cache.run_sizing_charts(run=sized_computed)
    assert built == ["result", "sizing"]  # kept under the new version
