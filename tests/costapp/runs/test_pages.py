"""The scenario and run pages: who may see them, the Run and Cancel buttons, the run page's
progress fragment and result (charts, key figures, assumptions, downloads), the dashboard's recent
scenarios and runs, and the example scenarios ``demo`` loads."""

import io
import json
import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import override_settings
from django.utils.html import escape
from openpyxl import load_workbook

from costapp.demo_scenarios import demo_documents, demo_scenarios_load
from costapp.models import Scenario, SimulationRun
from costapp.reports.warning_words import warnings_grouped
from costapp.runs import exports, pipeline
from costapp.tco.curves import cost_curves
from hardware.display.charts import template_json

from ..runs_helpers import analyst, scenario_document, stored_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def pat(db):
    return analyst("pat")


@pytest.fixture
def finished(pat, catalog, tasks_in_process):
    """A private scenario of pat's with a succeeded 2 000-path run (computed once per test
    process, a copy of it afterwards: ``stored_run``)."""
    scenario = Scenario.objects.create(
        owner=pat, name="H100 fleet", document=scenario_document(paths=2_000, seed=7)
    )
    return stored_run(scenario)


@pytest.fixture
def computed(pat, catalog, tasks_in_process):
    """As ``finished``, computed by this test: for what finishing a run does."""
    scenario = Scenario.objects.create(
        owner=pat, name="H100 fleet", document=scenario_document(paths=2_000, seed=7)
    )
    run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    return run


def viewer(username: str) -> User:
    user = User.objects.create_user(username=username)
    user.groups.add(Group.objects.get(name="viewer"))
    return user


def test_a_finished_run_stores_its_cost_curves(finished):
    assert finished.cost_curves == json.loads(
        json.dumps(cost_curves(finished.result["inputs"], finished.result["gpus"]))
    )
    assert finished.cost_curves


def test_the_run_page_shows_the_result_charts_key_figures_assumptions_and_downloads(
    client, finished, pat
):
    client.force_login(pat)
    response = client.get(f"/runs/{finished.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    for key in ("cumulative", "breakdown", "fan", "usd-per-gpu-hour", "utilization"):
        assert f'id="chart-{key}"' in html, key
        assert f'id="figure-{key}"' in html, key
    assert "/status/" not in html and 'hx-trigger="every' not in html  # no polling once finished
    for option in finished.result["options"]:
        assert option["name"] in html
    assert 'id="key-figures"' in html
    # every input, per workload and option, and each category's formula
    assert "Workload: " + finished.result["inputs"]["workloads"][0]["name"] in html
    assert "Option: " + finished.result["inputs"]["options"][0]["name"] in html
    assert "<code>horizon_months</code>" in html
    for category in ("compute", "egress", "power", "financing", "residual", "burst"):
        assert f"<code>{category}</code>" in html
    assert f'href="/api/v1/runs/{finished.pk}/monthly.csv"' in html
    assert f'href="/runs/{finished.pk}/run.xlsx"' in html
    assert f'href="/runs/{finished.pk}/result.json"' in html


def test_the_run_page_holds_plotlys_template_once_and_each_table_column_one_precision(
    client, finished, pat
):
    client.force_login(pat)
    html = client.get(f"/runs/{finished.pk}/").content.decode()
    scripts = dict(re.findall(r'<script id="([^"]+)" type="application/json">(.*?)</script>', html))
    templates = json.loads(scripts.pop("plotly-templates"))
    assert templates == {"plotly_white": template_json("plotly_white")}
    figures = {key: json.loads(text) for key, text in scripts.items() if key.startswith("figure-")}
    assert len(figures) >= 5
    for key, figure in figures.items():
        assert figure["layout"]["template"] == "plotly_white", key  # by name, not whole
    assert html.count('"paper_bgcolor"') == 1  # the template's, once
    # the fan chart's percentiles: whole dollars in every column, none with a fraction
    fan = re.search(r'<figure class="chart" id="chart-fan">(.*?)</figure>', html, re.S)
    assert fan
    body = fan.group(1).split("<tbody>")[1].split("</tbody>")[0]
    cells = re.findall(r"<td>([^<]*)", body)  # end tags left out (templates/charts/_chart.html)
    assert len(cells) > 100 and all(re.fullmatch(r"-?[\d,]+", cell) for cell in cells), cells[:20]
    assert "0.0000" not in html


def test_a_finished_runs_charts_are_built_when_it_finishes_not_on_its_first_view(
    client, computed, pat, monkeypatch
):
    from costapp import charts

    finished = computed
    built = charts.result_charts(finished.result, finished.cost_curves)

    def not_again(*args, **kwargs):
        raise AssertionError("the run page built the charts again")

    monkeypatch.setattr(charts, "result_charts", not_again)
    client.force_login(pat)
    response = client.get(f"/runs/{finished.pk}/")
    assert response.status_code == 200
    assert [c.figure for c in response.context["charts"]] == [c.figure for c in built]


def test_the_xlsx_has_typed_numeric_cells_a_header_row_and_frozen_panes(client, finished, pat):
    client.force_login(pat)
    response = client.get(f"/runs/{finished.pk}/run.xlsx")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    book = load_workbook(io.BytesIO(response.content))
    monthly = book["monthly"]
    assert monthly.freeze_panes == "A2"
    header = [cell.value for cell in monthly[1]]
    assert header == exports.MONTHLY_CSV_COLUMNS
    rows = [[cell.value for cell in row] for row in monthly.iter_rows(min_row=2)]
    expected = exports.run_monthly_rows(run=finished)
    assert len(rows) == len(expected)
    for got, want in zip(rows, expected, strict=True):
        assert got[0] == want[0] and got[1] == want[1]
        assert got[2:-1] == pytest.approx(want[2:-1], rel=1e-12, abs=1e-9)
        assert got[-1] is None and want[-1] is None  # the fleet serves no tokens
    assert all(monthly.cell(row=2, column=c).data_type == "n" for c in range(2, len(header)))
    options = book["options"]
    assert options.freeze_panes == "A2"
    totals = {row[0].value: row[5].value for row in options.iter_rows(min_row=2)}
    # Excel keeps 15 significant digits
    assert totals == pytest.approx(
        {o["name"]: o["total_usd"] for o in finished.result["options"]}, rel=1e-14
    )


def test_the_result_json_is_the_stored_result(client, finished, pat):
    client.force_login(pat)
    response = client.get(f"/runs/{finished.pk}/result.json")
    assert response.status_code == 200
    assert json.loads(response.content) == finished.result


def test_the_owner_starts_a_run_from_the_scenario_page(client, finished, pat):
    client.force_login(pat)
    page = client.get(f"/scenarios/{finished.scenario_id}/").content.decode()
    assert 'id="run-button"' in page and f"/runs/{finished.pk}/" in page
    response = client.post(f"/scenarios/{finished.scenario_id}/")
    newest = SimulationRun.objects.order_by("-id").first()
    assert newest.pk != finished.pk and newest.status == "succeeded"
    assert response.status_code == 302 and response["Location"] == f"/runs/{newest.pk}/"
    assert newest.result == finished.result  # same frozen inputs and seed, same result


def test_with_the_broker_down_the_run_button_says_so_and_stores_nothing(client, finished, pat):
    client.force_login(pat)
    before = SimulationRun.objects.count()
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        response = client.post(f"/scenarios/{finished.scenario_id}/", follow=True)
    assert response.status_code == 200
    assert "The run was not started" in response.content.decode()
    assert "does not answer" in response.content.decode()
    assert SimulationRun.objects.count() == before


def queued_copy(run: SimulationRun, **fields) -> SimulationRun:
    return SimulationRun.objects.create(
        scenario=run.scenario,
        seed=run.seed,
        paths=run.paths,
        document_sha256=run.document_sha256,
        inputs=run.inputs,
        gpus=run.gpus,
        units=run.units,
        **fields,
    )


def test_an_active_run_shows_a_polled_progress_bar_and_the_owner_may_cancel_it(
    client, finished, pat
):
    running = queued_copy(finished, status="running", progress=40)
    client.force_login(pat)
    html = client.get(f"/runs/{running.pk}/").content.decode()
    assert f'hx-get="/runs/{running.pk}/status/"' in html
    assert '<progress id="run-progress" max="100" value="40">' in html
    assert 'id="cancel-button"' in html
    fragment = client.get(f"/runs/{running.pk}/status/").content.decode()
    assert fragment.lstrip().startswith("<div") and "<html" not in fragment
    assert 'value="40"' in fragment
    response = client.post(f"/runs/{running.pk}/", follow=True)
    running.refresh_from_db()
    assert running.status == "cancelled"
    assert "The run was cancelled" in response.content.decode()
    # once ended the fragment has no polling and says what happened
    fragment = client.get(f"/runs/{running.pk}/status/").content.decode()
    assert "hx-get" not in fragment and 'id="run-cancelled"' in fragment


def test_a_failed_run_shows_its_error(client, finished, pat):
    failed = queued_copy(finished, status="failed", error="the engine failed: ValueError: boom")
    client.force_login(pat)
    html = client.get(f"/runs/{failed.pk}/").content.decode()
    assert 'id="run-error"' in html and "ValueError: boom" in html
    assert client.get(f"/runs/{failed.pk}/run.xlsx").status_code == 404


def test_infeasible_options_and_warnings_are_shown_plainly(client, pat, finished):
    document = scenario_document("h100-fleet-buy-vs-rent")
    document["options"].append(
        {"type": "dedicated", "name": "One server only", "servers": 1, "usd_per_server_month": 9000}
    )
    scenario = Scenario.objects.create(owner=pat, name="too small", document=document)
    run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    client.force_login(pat)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    small = next(o for o in run.result["options"] if o["name"] == "One server only")
    assert not small["feasible"] and run.result["warnings"]
    assert "Infeasible options" in html
    assert (
        f"<strong>One server only</strong>: {small['shortfall_gpu_hours']:,.0f} GPU-hours" in html
    )
    # the warnings after the figures, in words, grouped by what they are about
    assert html.index('id="key-figures"') < html.index('id="run-warnings"')
    groups = warnings_grouped(run.result["warnings"], [o["name"] for o in run.result["options"]])
    assert sum(len(group.warnings) for group in groups) == len(run.result["warnings"])
    for group in groups:
        assert escape(group.subject) in html
        for warning in group.warnings:
            assert escape(warning) in html
    assert "GPU-hours of work are not done (shortfall): this option is infeasible." in html


def test_another_analyst_gets_404_for_a_private_scenario_and_403_for_a_shared_ones_buttons(
    client, finished
):
    other = analyst("quinn")
    client.force_login(other)
    scenario_id, run_id = finished.scenario_id, finished.pk
    private = [
        f"/scenarios/{scenario_id}/",
        f"/runs/{run_id}/",
        f"/runs/{run_id}/status/",
        f"/runs/{run_id}/run.xlsx",
        f"/runs/{run_id}/result.json",
    ]
    for url in private:
        assert client.get(url).status_code == 404, url
    assert client.post(f"/scenarios/{scenario_id}/").status_code == 404
    assert "H100 fleet" not in client.get("/scenarios/").content.decode()
    Scenario.objects.filter(pk=scenario_id).update(shared=True)
    for url in private:
        assert client.get(url).status_code == 200, url
    assert "H100 fleet" in client.get("/scenarios/").content.decode()
    html = client.get(f"/scenarios/{scenario_id}/").content.decode()
    assert 'id="run-button"' not in html
    before = SimulationRun.objects.count()
    assert client.post(f"/scenarios/{scenario_id}/").status_code == 403
    assert SimulationRun.objects.count() == before
    running = queued_copy(finished, status="running")
    assert client.post(f"/runs/{running.pk}/").status_code == 403
    running.refresh_from_db()
    assert running.status == "running"


def test_users_without_a_role_get_403_viewers_read_shared_runs_only_and_visitors_log_in(
    client, finished
):
    urls = [
        "/scenarios/",
        f"/scenarios/{finished.scenario_id}/",
        "/runs/",
        f"/runs/{finished.pk}/",
        f"/runs/{finished.pk}/status/",
        f"/runs/{finished.pk}/run.xlsx",
        f"/runs/{finished.pk}/result.json",
    ]
    own = [u for u in urls if u not in ("/scenarios/", "/runs/")]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url
    client.force_login(User.objects.create_user("nobody"))
    for url in urls:
        assert client.get(url).status_code == 403, url
    html = client.get("/").content.decode()
    assert 'href="/scenarios/"' not in html and 'id="recent-runs"' not in html
    # a viewer: the lists, never another user's private scenario or run (404)
    client.force_login(viewer("vic"))
    for url in urls:
        assert client.get(url).status_code == (404 if url in own else 200), url
    Scenario.objects.filter(pk=finished.scenario_id).update(shared=True)
    for url in urls:
        assert client.get(url).status_code == 200, url
    assert client.get(f"/api/v1/runs/{finished.pk}/monthly.csv").status_code == 200
    html = client.get(f"/scenarios/{finished.scenario_id}/").content.decode()
    for control in ("run-button", "edit-link", "share-button", "duplicate-button"):
        assert f'id="{control}"' not in html, control
    assert 'id="read-only"' in html
    run_html = client.get(f"/runs/{finished.pk}/").content.decode()
    assert 'id="downloads"' in run_html and 'id="link-button"' not in run_html
    before = SimulationRun.objects.count()
    assert client.post(f"/scenarios/{finished.scenario_id}/").status_code == 403
    assert client.post(f"/scenarios/{finished.scenario_id}/duplicate/").status_code == 403
    assert SimulationRun.objects.count() == before
    home = client.get("/").content.decode()
    assert 'href="/scenarios/"' in home and f'href="/runs/{finished.pk}/"' in home


def test_the_dashboard_lists_recent_scenarios_and_runs_and_the_nav_links_them(
    client, finished, pat
):
    client.force_login(pat)
    html = client.get("/").content.decode()
    assert 'href="/scenarios/"' in html and 'href="/runs/"' in html
    assert f'href="/scenarios/{finished.scenario_id}/">H100 fleet</a>' in html
    assert f'href="/runs/{finished.pk}/">Run {finished.pk}</a>' in html
    runs_page = client.get("/runs/").content.decode()
    assert f'href="/runs/{finished.pk}/">Run {finished.pk}</a>' in runs_page


def test_demo_loads_the_examples_as_shared_runs_once(pat, catalog, tasks_in_process):
    documents = demo_documents()
    assert len(documents) >= 13  # seven shipped examples and the claims' cases
    created, started = demo_scenarios_load(user=pat)
    assert created == started == len(documents)
    assert Scenario.objects.filter(owner=pat, shared=True).count() == len(documents)
    assert set(SimulationRun.objects.values_list("status", flat=True)) == {"succeeded"}
    assert demo_scenarios_load(user=pat) == (0, 0)
    assert Scenario.objects.count() == len(documents)
    assert SimulationRun.objects.count() == len(documents)


def test_every_demo_scenario_name_fits_its_field_and_a_long_one_keeps_its_whole_name():
    most = Scenario._meta.get_field("name").max_length
    documents = demo_documents()
    assert all(len(name) <= most for name, _description, _document in documents)
    cut = [
        (name, description, document)
        for name, description, document in documents
        if description.startswith("Shipped example") and name != document.get("name", name)
    ]
    assert cut  # the 70B serving example's name is longer than the field
    for name, description, document in cut:
        assert name.endswith("…") and document["name"].startswith(name[:-1])
        assert document["name"] in description
