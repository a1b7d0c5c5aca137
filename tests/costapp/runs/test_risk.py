"""A run's risk figures (``costapp.tco.risk``), stored with it at its finish: each equals what this
test computes itself by pricing every path's own document (the path's draws written into the
inputs) with the engine's ``simulate``, path by path."""

import copy
import math

import numpy as np
import pytest

from costapp.models import RunRisk, Scenario
from costapp.tco import budget_exceedance, sorted_totals_from_payload
from costapp.tco.montecarlo import block_draws
from tests.tco.helpers import run as simulate

from ..runs_helpers import analyst, stored_run

pytestmark = pytest.mark.django_db

HOURS = 730.0
HORIZON = 24
TERM = 12
RATE = 2.0
ON_DEMAND = 3.0
UPFRONT = 5_000.0
SUPPORT = 0.05
COMMITTED = 8
LAYER = 4

DOCUMENT = {
    "name": "risk of a commitment",
    "horizon_months": HORIZON,
    "hours_per_month": HOURS,
    "discount_rate": 0.08,
    "workloads": [
        {"name": "steady", "type": "steady", "gpu": "h100-sxm", "gpus": 12, "utilization": 0.4}
    ],
    "options": [
        {"name": "rent", "type": "cloud", "gpu": "h100-sxm", "usd_per_gpu_hour": ON_DEMAND},
        {
            "name": "commit",
            "type": "cloud",
            "gpu": "h100-sxm",
            "billing": "committed",
            "usd_per_gpu_hour": RATE,
            "committed_gpus": COMMITTED,
            "term_months": TERM,
            "upfront_usd": UPFRONT,
            "support_fraction": SUPPORT,
            "on_demand_usd_per_gpu_hour": ON_DEMAND,
        },
        {
            "name": "mix",
            "type": "mix",
            "layers": [{"option": "commit", "size": LAYER}],
            "rest": "rent",
        },
    ],
    "simulation": {
        "paths": 1000,
        "seed": 11,
        "demand_multiplier": {"dist": "triangular", "low": 0.5, "mode": 1.0, "high": 2.0},
        "cloud_price_change_per_year": {"dist": "uniform", "low": -0.2, "high": 0.1},
    },
}


def path_document(demand: float, change: float) -> dict:
    """The document of one path: its draws written into the inputs, no simulation."""
    document = copy.deepcopy(DOCUMENT)
    del document["simulation"]
    document["workloads"][0]["utilization"] = 0.4 * demand
    for option in document["options"]:
        if option["type"] == "cloud":
            option["price_change_per_year"] = change
    return document


def commitment_cost(unused_per_month: float, gpus: int, change: float) -> float:
    """The hand figure: each month's unused share of the commitment's charges (the committed
    GPUs at the rate renewed each term, the upfront spread over its term) with its support."""
    usd = 0.0
    for month in range(1, HORIZON + 1):
        renewed = RATE * (1 + change) ** (TERM * ((month - 1) // TERM) / 12)
        charges = gpus * HOURS * renewed + UPFRONT / TERM
        usd += unused_per_month / (gpus * HOURS) * charges * (1 + SUPPORT)
    return usd


@pytest.fixture(scope="module")
def per_path():
    draws = block_draws(DOCUMENT["simulation"], 0)
    rows = []
    for demand, change in zip(
        draws["demand_multiplier"], draws["cloud_price_change_per_year"], strict=True
    ):
        result = simulate(path_document(float(demand), float(change)))
        commit = result["options"][1]
        [layer, _rest] = result["options"][2]["layers"]
        held = COMMITTED * HOURS * HORIZON
        unused = held * (1 - commit["average_utilization"])
        layer_unused = LAYER * HOURS * HORIZON - layer["served_gpu_hours"]
        rows.append(
            {
                "totals": [option["total_usd"] for option in result["options"]],
                "cumulative": [option["cumulative_usd"] for option in result["options"]],
                "feasible": [option["feasible"] for option in result["options"]],
                "unused": [unused, layer_unused],
                "unused_usd": [
                    commitment_cost(unused / HORIZON, COMMITTED, float(change)),
                    commitment_cost(layer_unused / HORIZON, LAYER, float(change)),
                ],
            }
        )
    return rows


@pytest.fixture
def risk_run(catalog, tasks_in_process):
    """A succeeded run of DOCUMENT with its risk figures (computed once per test process, copied
    into each later test: ``stored_run``)."""
    owner = analyst("risa")
    return stored_run(Scenario.objects.create(owner=owner, name="risk", document=DOCUMENT))


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def test_unused_commitment_equals_every_paths_own_document(risk_run, per_path):
    risk = RunRisk.objects.get(run=risk_run)
    rows = risk.figures["commitments"]
    assert [(row["option"], row["layer"], row["committed_gpus"]) for row in rows] == [
        ("commit", None, COMMITTED),
        ("mix", "commit", LAYER),
    ]
    for k, row in enumerate(rows):
        hours = np.array([path["unused"][k] for path in per_path])
        usd = np.array([path["unused_usd"][k] for path in per_path])
        assert hours.min() >= 0 and hours.max() > 0  # some paths leave committed hours unused
        assert close(row["unused_gpu_hours_mean"], float(hours.mean()))
        assert close(row["unused_gpu_hours_p90"], float(np.percentile(hours, 90)))
        assert close(row["unused_usd_mean"], float(usd.mean()))
        assert close(row["unused_usd_p90"], float(np.percentile(usd, 90)))
        assert row["unused_usd_p90"] > row["unused_usd_mean"] > 0


def test_cheapest_so_far_equals_every_paths_own_document(risk_run, per_path):
    figures = RunRisk.objects.get(run=risk_run).figures
    names = ["rent", "commit", "mix"]
    assert figures["paths"] == 1000 and figures["options"] == names
    counts = np.zeros((3, HORIZON + 1))
    for path in per_path:
        cumulative = np.array(
            [
                c if ok else [math.inf] * (HORIZON + 1)
                for c, ok in zip(path["cumulative"], path["feasible"], strict=True)
            ]
        )
        counts[np.argmin(cumulative, axis=0), np.arange(HORIZON + 1)] += 1
    for o, name in enumerate(names):
        assert figures["cheapest_so_far"][name] == pytest.approx(counts[o] / 1000, abs=1e-12)
    # the leader changes over the months: the plan is not the same answer in month 1 and 24
    month_1 = np.argmax(counts[:, 1])
    month_last = np.argmax(counts[:, HORIZON])
    assert month_1 != month_last or counts[month_last, HORIZON] < 1000


def test_the_chance_of_exceeding_a_budget_counts_every_path(risk_run, per_path):
    risk = RunRisk.objects.get(run=risk_run)
    totals = np.array([path["totals"] for path in per_path]).T  # (O, paths)
    stored = sorted_totals_from_payload(risk.sorted_totals)
    assert stored.shape == (3, 1000)
    np.testing.assert_allclose(stored, np.sort(totals, axis=-1), rtol=1e-9)
    ordered = np.sort(totals[1])
    budget = float((ordered[699] + ordered[700]) / 2)  # between two paths' totals
    shares = budget_exceedance(stored, budget)
    for o in range(3):
        assert shares[o] == pytest.approx(float(np.mean(totals[o] > budget)), abs=1e-12)
    assert shares[1] == pytest.approx(0.3)


def test_the_run_page_shows_the_risk_panel_and_a_budgets_chance(client, risk_run, per_path):
    client.force_login(risk_run.scenario.owner)
    html = client.get(f"/runs/{risk_run.pk}/").content.decode()
    assert 'id="risk"' in html and 'id="risk-unused"' in html and "risk-leader" in html
    assert "Chance its total exceeds the budget" not in html  # no budget typed yet
    totals = np.array([path["totals"] for path in per_path]).T
    ordered = np.sort(totals[0])
    budget = int((ordered[249] + ordered[250]) / 2)  # three futures in four of "rent" above it
    page = client.get(f"/runs/{risk_run.pk}/", {"budget": f"${budget:,}"})
    html = page.content.decode()
    assert "Chance its total exceeds the budget" in html
    share = float(np.mean(totals[0] > budget))
    assert f"{100 * share:.1f} %" in html
    wrong = client.get(f"/runs/{risk_run.pk}/", {"budget": "a lot"}).content.decode()
    assert 'id="budget-error"' in wrong and "Type an amount in dollars" in wrong


def test_a_run_without_stored_risk_figures_says_so(client, risk_run):
    RunRisk.objects.filter(run=risk_run).delete()  # as a run finished before they existed
    client.force_login(risk_run.scenario.owner)
    html = client.get(f"/runs/{risk_run.pk}/", {"budget": "1M"}).content.decode()
    assert 'id="risk-not-stored"' in html and 'id="risk-options"' in html


def test_the_workbooks_risk_sheet_holds_the_stored_figures(client, risk_run):
    import io

    from openpyxl import load_workbook

    client.force_login(risk_run.scenario.owner)
    workbook = load_workbook(io.BytesIO(client.get(f"/runs/{risk_run.pk}/run.xlsx").content))
    sheet = [tuple(row) for row in workbook["risk"].iter_rows(values_only=True)]
    figures = RunRisk.objects.get(run=risk_run).figures
    assert sheet[0][0] == "NPV over the simulated futures, per option"
    assert sheet[1][:6] == (
        "option",
        "feasible",
        "mean_npv_usd",
        "p90_npv_usd",
        "tail_npv_usd",
        "probability_cheapest",
    )
    for option, row in zip(risk_run.result["options"], sheet[2:5], strict=True):
        assert row[0] == option["name"]
        assert row[4] == pytest.approx(option["tail_npv_usd"], rel=1e-14)
    committed = next(i for i, row in enumerate(sheet) if row[0] and "Committed" in str(row[0]))
    first = figures["commitments"][0]
    assert sheet[committed + 2][0] == "commit"
    assert sheet[committed + 2][6] == pytest.approx(first["unused_usd_mean"], rel=1e-14)
    leaders = next(i for i, row in enumerate(sheet) if row[0] and "cost least" in str(row[0]))
    assert sheet[leaders + 1][:4] == ("month", "rent", "commit", "mix")
    assert [row[2] for row in sheet[leaders + 2 : leaders + 2 + HORIZON + 1]] == pytest.approx(
        figures["cheapest_so_far"]["commit"], rel=1e-14
    )


def test_the_api_gives_the_risk_figures_and_a_budgets_chance(client, risk_run, per_path):
    client.force_login(risk_run.scenario.owner)
    totals = np.array([path["totals"] for path in per_path]).T
    budget = float((np.sort(totals[2])[499] + np.sort(totals[2])[500]) / 2)
    answer = client.get(f"/api/v1/runs/{risk_run.pk}/risk/", {"budget": f"{budget:.2f}"})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    stored = RunRisk.objects.get(run=risk_run).figures
    assert body["paths"] == 1000 and body["budget_usd"] == pytest.approx(budget)
    assert [o["name"] for o in body["options"]] == ["rent", "commit", "mix"]
    for o, option in enumerate(body["options"]):
        assert option["exceeds_budget"] == pytest.approx(float(np.mean(totals[o] > budget)))
        assert option["cheapest_so_far"] == stored["cheapest_so_far"][option["name"]]
        assert option["tail_npv_usd"] == risk_run.result["options"][o]["tail_npv_usd"]
    assert body["options"][2]["exceeds_budget"] == pytest.approx(0.5)
    assert body["commitments"][1]["layer"] == "commit"
    without = client.get(f"/api/v1/runs/{risk_run.pk}/risk/").json()
    assert without["budget_usd"] is None and without["options"][0]["exceeds_budget"] is None
    wrong = client.get(f"/api/v1/runs/{risk_run.pk}/risk/", {"budget": "-5"})
    assert wrong.status_code == 400 and "budget" in wrong.content.decode()
    unknown = client.get(f"/api/v1/runs/{risk_run.pk}/risk/", {"budjet": "5"})
    assert unknown.status_code == 400 and "budjet" in unknown.content.decode()
    RunRisk.objects.filter(run=risk_run).delete()
    assert client.get(f"/api/v1/runs/{risk_run.pk}/risk/").status_code == 404
