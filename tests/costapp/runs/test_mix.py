"""A run of a format 1.3 document with a mix, its joint sizing and a simulation, through the run
pipeline: its result is the engine's, and its page and downloads show every option and layer."""

import csv
import io

import pytest
from openpyxl import load_workbook

from costapp.models import Scenario
from costapp.runs import pipeline
from costapp.scenarios import services
from tests.tco.helpers import scenario

from ..runs_helpers import analyst, stored_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def mix_run(catalog, tasks_in_process):
    """A succeeded 1 000-path run of the shipped mix scenario (computed once per test process,
    copied into each later test: ``stored_run``), its owner and its document."""
    document = scenario("own-commit-rent-mix")
    document["simulation"] = {
        "paths": 1000,
        "seed": 5,
        "demand_multiplier": {"dist": "triangular", "low": 0.7, "mode": 1, "high": 1.4},
    }
    owner = analyst("mia")
    saved = Scenario.objects.create(owner=owner, name="own, commit, rent", document=document)
    return stored_run(saved), owner, document


def test_the_run_gives_the_engines_result_with_the_mixs_layers_and_tail(mix_run):
    run, _owner, document = mix_run
    assert run.result == services.scenario_simulate(document=document)
    the_mix = run.result["options"][3]
    assert [layer["role"] for layer in the_mix["layers"]] == ["layer", "layer", "rest"]
    assert all("tail_npv_usd" in option for option in run.result["options"])
    [sweep] = run.result["sizing"]
    assert sweep["field"] == "layers" and isinstance(sweep["best"], list)
    assert run.result["engine_version"] == "1.3.0"


def test_the_run_page_and_its_downloads_show_the_mix(client, mix_run):
    run, owner, _document = mix_run
    client.force_login(owner)
    page = client.get(f"/runs/{run.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    the_mix = run.result["options"][3]
    assert the_mix["name"][:40] in html
    rows = list(
        csv.DictReader(
            io.StringIO(client.get(f"/api/v1/runs/{run.pk}/monthly.csv").content.decode())
        )
    )
    assert {row["option"] for row in rows} >= {the_mix["name"]}
    workbook = load_workbook(io.BytesIO(client.get(f"/runs/{run.pk}/run.xlsx").content))
    options = workbook["options"]
    names = [cell.value for cell in options["A"]]
    assert the_mix["name"] in names
    sheet = workbook["layers"]
    rows = [[cell.value for cell in row] for row in sheet.iter_rows(min_row=2)]
    assert [row[1] for row in rows] == [layer["name"] for layer in the_mix["layers"]]
    assert [row[4] for row in rows] == pytest.approx(
        [layer["served_gpu_hours"] for layer in the_mix["layers"]], rel=1e-12
    )
    # the joint sizing, one row per combination, the best marked; money as dollars
    [sweep] = run.result["sizing"]
    sizing = [[cell.value for cell in row] for row in workbook["sizing"].iter_rows()]
    header, rows = sizing[0], sizing[1:]
    assert header[:6] == ["sweep", "option", "field", "objective", "candidate", "best"]
    assert len(rows) == len(sweep["candidates"])
    [best] = [row for row in rows if row[5] is True]
    assert best[4] == " / ".join(str(n) for n in sweep["best"])
    assert best[header.index("tail_npv_usd")] == pytest.approx(
        sweep["tail_npv_usd"][sweep["candidates"].index(sweep["best"])], rel=1e-12
    )
    money = workbook["sizing"].cell(row=2, column=header.index("npv_usd") + 1)
    assert money.number_format == '"$"#,##0.00' and isinstance(money.value, float)
    heads = [cell.value for cell in options[1]]
    assert {"p10_usd", "p50_usd", "p90_usd", "probability_cheapest"} <= set(heads)
    share = options.cell(row=2, column=heads.index("probability_cheapest") + 1)
    assert share.number_format == "0.0%"


def test_the_joint_sizing_is_ranked_and_a_copy_at_the_best_sizes_prices_as_the_sweep(
    client, mix_run
):
    run, owner, _document = mix_run
    client.force_login(owner)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    [sweep] = run.result["sizing"]
    assert 'id="sizing-1-ranked"' in html and "(best)" in html
    assert "(the scenario's own)" in html
    # two layers: a heat map of the objective by combination
    assert 'id="chart-sizing-1"' in html or "sizing-1" in html
    copied = client.post(f"/runs/{run.pk}/sizing/1/copy/")
    assert copied.status_code == 302, copied.content
    copy = Scenario.objects.exclude(pk=run.scenario_id).get(owner=owner)
    layers = copy.document["options"][3]["layers"]
    assert [layer["size"] for layer in layers] == sweep["best"]
    result = services.scenario_simulate(document=copy.document)
    best = sweep["candidates"].index(sweep["best"])
    the_mix = result["options"][3]
    assert the_mix["npv_usd"] == sweep["npv_usd"][best]
    assert the_mix["tail_npv_usd"] == sweep["tail_npv_usd"][best]
    assert the_mix["total_usd"] == sweep["total_usd"][best]


def test_the_command_table_names_the_joint_sizing(tmp_path):
    from ..management.test_simulate import SCENARIOS, run_simulate

    printed = run_simulate(str(SCENARIOS / "own-commit-rent-mix.json"))
    assert printed.returncode == 0, printed.stderr.decode()
    assert "layers [0, 0]-[6, 48]" in printed.stdout.decode()


def test_the_key_figures_say_what_the_sizing_found_beside_the_size_written(client, mix_run):
    run, owner, _document = mix_run
    client.force_login(owner)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    [sweep] = run.result["sizing"]
    assert 'id="sized-best"' in html
    assert "is priced above at the scenario's own size, 2 owned servers, 8 committed GPUs" in html
    assert "finds 1 owned server, 0 committed GPUs best" in html


def test_the_examples_whose_figures_format_1_3_changes_say_so():
    from costapp.demo_scenarios import demo_documents

    described = {document["name"]: text for _name, text, document in demo_documents()}
    changed = [text for text in described.values() if "Format 1.3 changes" in text]
    assert len(changed) == 2
    assert any("cannot run the 128-GPU pre-training" in text for text in changed)
    assert any("Format 1.3's mix" in text for text in described.values())


def test_two_mix_runs_compare_and_a_read_only_link_shows_the_mix(client, mix_run):
    from costapp.runs.links import run_link_create

    run, owner, document = mix_run
    cheaper = {**document, "name": "cheaper commitment"}
    cheaper["options"] = [dict(o) for o in document["options"]]
    cheaper["options"][1]["usd_per_gpu_hour"] = 2.2
    saved = Scenario.objects.create(owner=owner, name="cheaper", document=cheaper)
    other = pipeline.run_create(scenario=saved)
    assert other.status == "succeeded", other.error
    client.force_login(owner)
    page = client.get(f"/runs/compare/?a={run.pk}&b={other.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "2.59" in html and "2.2" in html  # the committed rate that differs, in words
    _link, key = run_link_create(run=run, user=owner)
    client.logout()
    shared = client.get(f"/shared/{key}/")
    assert shared.status_code == 200
    assert run.result["options"][3]["name"][:40] in shared.content.decode()


def test_a_joint_sizing_counts_every_combination_against_the_at_once_limit():
    from costapp.scenarios.services import SIMULATE_MAX_SIZING_WORK, simulate_at_once
    from costapp.tco import ScenarioError

    document = scenario("own-commit-rent-mix")
    document["simulation"] = {"paths": 1000}
    document["sizing"][0]["layers"] = [{"min": 0, "max": 49}, {"min": 0, "max": 39}]
    assert SIMULATE_MAX_SIZING_WORK < 50 * 40 * 1000
    with pytest.raises(ScenarioError) as refused:
        simulate_at_once(document=document)
    assert any(
        e.field == "sizing" and "candidate-paths here" in e.message for e in refused.value.errors
    )
