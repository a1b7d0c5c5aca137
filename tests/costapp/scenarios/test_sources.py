"""The result's ``sources`` (format 1.2), token prices and sourced assumptions resolved when a run
is created, and the warning where a zero hides a cost.

Figures pinned here are read from the shipped files (``hardware/data/``): Shadeform's and
Lambda's SkyPilot catalogs (stated 2025-10-01 by ``hardware/data/stated_on.csv``), Fireworks'
Llama 3.1 70B row of ``models/token_prices.csv`` (0.9 and 0.9 USD per million tokens) and the
CBRE colocation row of ``assumptions.csv`` (184.06 USD per kW-month, stated 2024-12-31).
"""

import copy
import csv
import io

import pytest
from openpyxl import load_workbook

from costapp.models import Scenario
from costapp.runs import pipeline
from costapp.scenarios.services import scenario_document_check, scenario_simulate
from costapp.tco import ScenarioError
from hardware.hosted import selectors as market

from ..runs_helpers import analyst

FIREWORKS_70B = {
    "provider": "fireworks",
    "model": "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct",
}
SHADEFORM = {
    "provider": "shadeform",
    "instance": "hyperstack_H100x8-NVLINK",
    "region": "montreal-canada-2",
}
LAMBDA = {"provider": "lambda", "instance": "gpu_1x_h100_pcie", "region": "europe-central-1"}


def training(**extra) -> dict:
    return {"name": "steady", "type": "steady", "gpu": "h100-sxm", "gpus": 8, **extra}


def two_clouds() -> dict:
    return {
        "name": "Two clouds",
        "horizon_months": 12,
        "egress_tb_per_month": 50,
        "workloads": [training()],
        "options": [
            {"name": "Shadeform", "type": "cloud", "offer": SHADEFORM},
            {"name": "Lambda", "type": "cloud", "offer": LAMBDA, "gpu": "h100-pcie"},
        ],
    }


def serving() -> dict:
    return {
        "name": "Serve 70B",
        "horizon_months": 12,
        "workloads": [
            {
                "name": "chat",
                "type": "inference",
                "gpu": "h100-sxm",
                "params_billion": 70,
                "tokens_per_second": 200,
            }
        ],
        "options": [
            {"name": "Fireworks", "type": "api", "token_price": FIREWORKS_70B},
            {"name": "Rent", "type": "cloud", "usd_per_gpu_hour": 3.0},
        ],
    }


def owned(**fields) -> dict:
    return {
        "name": "Owned",
        "horizon_months": 36,
        "workloads": [training()],
        "options": [
            {"name": "Rent", "type": "cloud", "usd_per_gpu_hour": 3.0},
            {
                "name": "Buy",
                "type": "on_prem",
                "capex_usd_per_server": 250_000,
                "server_kw": 10.2,
                **fields,
            },
        ],
    }


def by_path(result: dict) -> dict[str, dict]:
    return {row["path"]: row for row in result["sources"]}


def test_two_offers_name_both_prices_their_day_staleness_and_the_unknown_egress(catalog):
    result = scenario_simulate(document=two_clouds())
    rows = by_path(result)
    shadeform, lam = rows["options[0].usd_per_gpu_hour"], rows["options[1].usd_per_gpu_hour"]
    assert shadeform["value"] == result["inputs"]["options"][0]["usd_per_gpu_hour"] == 15.6 / 8
    assert lam["value"] == result["inputs"]["options"][1]["usd_per_gpu_hour"] == 2.49
    for row in (shadeform, lam):
        assert row["stated_on"] == "2025-10-01"
        assert "stale" in row["flags"]
    assert "egress_unknown" not in shadeform["flags"]
    unknown = rows["options[0].offer"]
    assert unknown["value"] is None and unknown["flags"] == ["egress_unknown"]
    assert "shadeform" in unknown["source"]
    assert "options[1].offer" not in rows  # Lambda's egress is known: no fees
    assert rows["options[1].egress_tiers"]["value"] == [{"up_to_tb": None, "usd_per_gb": 0.0}]
    assert [row["path"] for row in result["sources"]] == [
        "options[0].usd_per_gpu_hour",
        "options[0].offer",
        "options[1].usd_per_gpu_hour",
        "options[1].egress_tiers",
    ]


def test_the_same_document_fed_back_from_inputs_gives_the_same_figures_and_no_sources(catalog):
    first = scenario_simulate(document=two_clouds())
    again = scenario_simulate(document=copy.deepcopy(first["inputs"]))
    assert again["sources"] == []
    assert [o["total_usd"] for o in again["options"]] == [o["total_usd"] for o in first["options"]]
    assert [o["monthly_usd"] for o in again["options"]] == [
        o["monthly_usd"] for o in first["options"]
    ]


def test_an_api_option_takes_fireworks_prices_into_inputs_and_sources(catalog):
    result = scenario_simulate(document=serving())
    option = result["inputs"]["options"][0]
    assert option["usd_per_million_tokens"] == 0.9
    assert option["usd_per_million_input_tokens"] == 0.9
    rows = by_path(result)
    for name in ("usd_per_million_tokens", "usd_per_million_input_tokens"):
        row = rows[f"options[0].{name}"]
        assert row["value"] == 0.9
        assert "litellm" in row["source"].lower() and FIREWORKS_70B["model"] in row["source"]
        assert row["stated_on"] is None and row["flags"] == ["stale"]  # the file states no day
    assert result["options"][0]["all_in_usd_per_million_tokens"] is not None


def test_an_explicit_price_wins_over_the_token_price_and_has_no_source_row(catalog):
    document = serving()
    document["options"][0]["usd_per_million_tokens"] = 1.25
    result = scenario_simulate(document=document)
    assert result["inputs"]["options"][0]["usd_per_million_tokens"] == 1.25
    assert [row["path"] for row in result["sources"]] == ["options[0].usd_per_million_input_tokens"]


def test_an_unknown_token_price_is_an_error_at_the_field(catalog):
    document = serving()
    document["options"][0]["token_price"] = {"provider": "fireworks", "model": "no-such-model"}
    with pytest.raises(ScenarioError) as caught:
        scenario_simulate(document=document)
    assert [e.field for e in caught.value.errors] == ["options[0].token_price"]


def test_an_assumption_fills_colocation_with_its_figure_and_source(catalog):
    result = scenario_simulate(
        document=owned(colo_usd_per_kw_month={"assumption": "colo_usd_per_kw_month"})
    )
    assert result["inputs"]["options"][1]["colo_usd_per_kw_month"] == 184.06
    row = by_path(result)["options[1].colo_usd_per_kw_month"]
    assert row["value"] == 184.06 and row["stated_on"] == "2024-12-31"
    assert row["source"].startswith("CBRE North America Data Center Trends H2 2024")
    assert "high confidence" in row["source"]
    assert result["options"][1]["breakdown_usd"]["colo"] > 0


@pytest.mark.parametrize(
    ("field", "key", "message"),
    [
        (
            "colo_usd_per_kw_month",
            "no_such_key",
            'no such assumption in the catalog: "no_such_key"',
        ),
        ("colo_usd_per_kw_month", "usd_per_kwh", "is a figure for usd_per_kwh"),
        ("pue", "colo_usd_per_kw_month", "is a figure for colo_usd_per_kw_month"),
    ],
)
def test_an_unknown_key_or_a_key_of_another_field_is_an_error_at_the_field(
    catalog, field, key, message
):
    with pytest.raises(ScenarioError) as caught:
        scenario_document_check(document=owned(**{field: {"assumption": key}}))
    errors = [(e.field, e.message) for e in caught.value.errors]
    assert len(errors) == 1 and errors[0][0] == f"options[1].{field}"
    assert message in errors[0][1]


def test_staff_comes_from_the_two_rows_by_the_rule_for_the_sized_fleet(catalog):
    rule = market.staff_usd_per_month(1.0)
    assert rule is not None
    result = scenario_simulate(
        document=owned(staff_usd_per_month={"assumption": "engineer_usd_per_year"})
    )
    servers = result["inputs"]["options"][1]["servers"]
    assert servers == 1  # eight GPUs of steady work on servers of eight
    staff = result["inputs"]["options"][1]["staff_usd_per_month"]
    assert staff == pytest.approx(rule.value * servers, rel=1e-12) and staff > 0
    row = by_path(result)["options[1].staff_usd_per_month"]
    assert row["value"] == staff and "servers = 1" in row["source"]
    given = scenario_simulate(
        document=owned(servers=3, staff_usd_per_month={"assumption": "servers_per_engineer"})
    )
    assert given["inputs"]["options"][1]["staff_usd_per_month"] == pytest.approx(rule.value * 3)


def test_a_zero_colocation_is_warned_with_the_figure_the_table_holds_and_a_given_one_is_not(
    catalog,
):
    left = scenario_simulate(document=owned())
    warned = [w for w in left["warnings"] if "colo_usd_per_kw_month at 0" in w]
    assert len(warned) == 1
    assert '"Buy"' in warned[0] and "184.06 USD per kW-month" in warned[0]
    assert '{"assumption": "colo_usd_per_kw_month"}' in warned[0]
    for name in ("staff_usd_per_month", "support_fraction_per_year", "residual_fraction"):
        assert any(f"{name} at 0" in w for w in left["warnings"]), name
    given = scenario_simulate(document=owned(colo_usd_per_kw_month=150))
    assert not any("colo_usd_per_kw_month at 0" in w for w in given["warnings"])
    referenced = scenario_simulate(
        document=owned(colo_usd_per_kw_month={"assumption": "colo_usd_per_kw_month"})
    )
    assert not any("colo_usd_per_kw_month at 0" in w for w in referenced["warnings"])


def test_a_run_stores_its_sources_and_warnings_and_keeps_them_when_its_inputs_are_copied(
    catalog,
    tasks_in_process,
):
    owner = analyst("pat")
    scenario = Scenario.objects.create(owner=owner, name="Two clouds", document=two_clouds())
    run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    assert run.result["sources"] == run.sources
    assert {row["path"] for row in run.sources} >= {
        "options[0].usd_per_gpu_hour",
        "options[0].offer",
        "options[1].usd_per_gpu_hour",
    }
    again = pipeline.run_create(scenario=scenario)
    assert again.inputs_copied_from_id == run.pk
    assert again.result["sources"] == run.sources


def test_the_run_page_shows_each_source_and_flag_in_words_and_the_typed_prices(
    catalog,
    tasks_in_process,
    client,
):
    owner = analyst("pat")
    document = two_clouds()
    document["options"].append({"name": "Typed", "type": "cloud", "usd_per_gpu_hour": 2.5})
    scenario = Scenario.objects.create(owner=owner, name="Two clouds", document=document)
    run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    client.force_login(owner)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    section = page[page.index('id="sources"') :]
    table = section[: section.index("</table>")]
    assert table.count("stale: stated more than") >= 2  # both prices (and Lambda's tiers)
    assert table.count('<time datetime="2025-10-01" title="2025-10-01">stated ') == 2
    assert "egress price unknown: no egress cost is counted" in table
    assert "/prices/?provider=shadeform&amp;region=montreal-canada-2" in table
    # each offer's price says its confidence as the run recorded it: Shadeform's is a stale
    # marketplace listing with unknown egress, Lambda's is stale
    assert table.count('<span class="confidence confidence-') == 2
    assert (
        '<strong>Low confidence</strong><span class="sub">stale, marketplace, egress unknown'
        in table
    )
    assert '<strong>Medium confidence</strong><span class="sub">stale</span>' in table
    # figures by their labels and sources by what they are: no field name, file path or slug
    assert 'title="usd_per_gpu_hour">USD per GPU hour</td>' in table
    assert "SkyPilot&#x27;s price catalog for Lambda: Lambda gpu_1x_h100_pcie" in table
    assert ".csv" not in table and "<code>" not in table
    assert "Shadeform hyperstack_H100x8-NVLINK" in table
    assert 'title="offer">Egress price</td>' in table and "Shadeform: egress price unknown" in table
    typed = section[section.index('id="typed-prices"') :]
    assert "Typed" in typed and "typed in the scenario, no source" in typed
    assert "Shadeform" not in typed[: typed.index("</table>")]


def test_a_run_made_before_sources_were_recorded_still_renders_and_says_so(
    catalog,
    tasks_in_process,
    client,
):
    owner = analyst("pat")
    scenario = Scenario.objects.create(owner=owner, name="Two clouds", document=two_clouds())
    run = pipeline.run_create(scenario=scenario)
    result = dict(run.result, engine_version="1.1.0")
    result.pop("sources")
    for option in result["options"]:
        option.pop("all_in_usd_per_million_tokens", None)
        option.pop("goodput", None)
    type(run).objects.filter(pk=run.pk).update(result=result, engine_version="1.1.0", sources=[])
    client.force_login(owner)
    response = client.get(f"/runs/{run.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="sources-not-recorded"' in page and "typed in the scenario" not in page
    assert "All-in USD per million tokens" not in page


def test_the_csv_carries_the_cost_per_million_tokens_and_the_workbook_a_sources_sheet(
    catalog, tasks_in_process, client
):
    owner = analyst("pat")
    scenario = Scenario.objects.create(owner=owner, name="Serve 70B", document=serving())
    run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    client.force_login(owner)
    lines = list(
        csv.DictReader(
            io.StringIO(client.get(f"/api/v1/runs/{run.pk}/monthly.csv").content.decode())
        )
    )
    for option in run.result["options"]:
        figures = {
            row["all_in_usd_per_million_tokens"] for row in lines if row["option"] == option["name"]
        }
        assert figures == {repr(option["all_in_usd_per_million_tokens"])}
    fireworks = run.result["options"][0]
    assert fireworks["all_in_usd_per_million_tokens"] == pytest.approx(0.9 + 0.9 * 0, rel=0.5)
    book = load_workbook(io.BytesIO(client.get(f"/runs/{run.pk}/run.xlsx").content))
    sheet = book["sources"]
    assert [cell.value for cell in sheet[1]] == ["path", "value", "source", "stated_on", "flags"]
    rows = [[cell.value for cell in row] for row in sheet.iter_rows(min_row=2)]
    assert [row[0] for row in rows] == [row["path"] for row in run.sources]
    assert rows[0][1] == 0.9 and rows[0][4] == "stale"
    options = book["options"]
    header = [cell.value for cell in options[1]]
    assert "all_in_usd_per_million_tokens" in header and "goodput" in header


def test_the_comparison_names_the_figures_whose_source_differs(catalog, tasks_in_process, client):
    owner = analyst("pat")
    first = Scenario.objects.create(owner=owner, name="Two clouds", document=two_clouds())
    typed = two_clouds()
    typed["options"][0]["usd_per_gpu_hour"] = 2.0
    second = Scenario.objects.create(owner=owner, name="Typed Shadeform", document=typed)
    run_a, run_b = (pipeline.run_create(scenario=s) for s in (first, second))
    client.force_login(owner)
    response = client.get(f"/runs/compare/?a={run_a.pk}&b={run_b.pk}")
    assert response.status_code == 200
    changes = response.context["comparison"].source_changes
    assert {c.path for c in changes} == {"options[0].usd_per_gpu_hour", "options[0].offer"}
    price = next(c for c in changes if c.path == "options[0].usd_per_gpu_hour")
    assert price.a["value"] == 1.95 and price.b is None
    html = response.content.decode()
    assert "no catalog source (typed in the scenario" in html
    figures = {f.key for o in response.context["comparison"].options for f in o.figures}
    assert "all_in_usd_per_million_tokens" in figures  # both runs have the key (null here)
