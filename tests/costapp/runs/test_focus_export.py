"""The FOCUS forward plan: every shipped example's cheapest option, run through the pipeline,
exported as CSV and Parquet and checked against the FOCUS 1.2 rules as the FOCUS Validator
publishes them (its rule file, kept in ``focus_rules/`` with its notice and read by
``focus_model``: every mandatory column present and typed as the specification says, the
nullability and values of each column, ids as text), with no null ``ListCost`` or
``ContractedCost`` and ``Hours`` for hourly charges; and against the run's own figures:
ΣEffectiveCost == ΣBilledCost over the horizon, per month and commitment (a committed option's, a
mix's committed layer's) Used + Unused committed hours == the committed hours, ΣBilledCost ==
``total_usd`` (at a percentile, the total of that path, read from the run's stored sorted
totals). Spot hours list at the on-demand price of the same work."""

import csv
import io
import math
import re
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from costapp.models import RunRisk
from costapp.runs import links, pipeline
from costapp.tco import plan_build, sorted_totals_from_payload
from hardware.selectors import current_prices
from tests.tco.helpers import scenario, scenario_names

from ..factories import ScenarioFactory
from ..runs_helpers import analyst
from .focus_model import Dataset, focus_failures

pytestmark = pytest.mark.django_db

NOT_NULL = ["ListCost", "ContractedCost", "BilledCost", "EffectiveCost"]
IDS = [
    "BillingAccountId",
    "CommitmentDiscountId",
    "InvoiceId",
    "ResourceId",
    "SkuId",
    "SkuPriceId",
    "SubAccountId",
    "x_ScenarioId",
    "x_RunId",
]
COMMITMENT_TERM = re.compile(r"^(?P<commitment>.+)-commitment-term-\d+$")


def csv_rows(body: bytes) -> list[dict[str, str | None]]:
    rows = list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
    return [{k: (v if v != "" else None) for k, v in row.items()} for row in rows]


def number(value: str | None) -> float:
    assert value is not None
    return float(value)


def rules_check(header: list[str], rows: list[dict[str, str | None]]) -> None:
    """The FOCUS 1.2 rules on a CSV export, read as text."""
    assert rows
    failures, checked = focus_failures(Dataset.of_csv(header, rows))
    assert checked > 250  # the rule file was read and its static MUST rules evaluated
    assert not failures, failures
    for row in rows:
        for name in NOT_NULL:
            assert row[name] is not None, (name, row)
        if row["ChargeFrequency"] == "Usage-Based":
            assert row["PricingUnit"] == "Hours", row
        if row["PricingUnit"] == "Hours":
            assert row["ChargeFrequency"] == "Usage-Based"


def parquet_check(table: pa.Table) -> None:
    """The rules on a Parquet export, read with its types; ids as text."""
    failures, _checked = focus_failures(Dataset.of_arrow(table))
    assert not failures, failures
    for name in IDS:
        assert pa.types.is_string(table.schema.field(name).type), name


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def commitments_held(run, option: int) -> dict[str, float]:
    """The option's commitments, by the id their terms' ids start with, and the GPU-hours each
    holds a month: a committed option's, and every committed layer's of a mix held above 0."""
    plan = plan_build(run.inputs, run.gpus)
    options = run.inputs["options"]
    chosen = options[option]
    prefix = f"run-{run.pk}-option-{option + 1}"
    if chosen["type"] == "cloud" and chosen.get("billing") == "committed":
        gpus = int(chosen.get("committed_gpus") or 0)
        return {prefix: gpus * plan.hours_per_month} if gpus else {}
    if chosen["type"] != "mix":
        return {}
    by_name = {o["name"]: o for o in options}
    return {
        f"{prefix}-layer-{j + 1}": int(layer["size"]) * plan.hours_per_month
        for j, layer in enumerate(chosen["layers"])
        if by_name[layer["option"]].get("billing") == "committed" and int(layer["size"]) > 0
    }


def figures_check(run, rows, option: int, total_usd: float) -> None:
    """The run's own figures: totals, amortisation, committed hours per month."""
    billed = sum(number(r["BilledCost"]) for r in rows)
    effective = sum(number(r["EffectiveCost"]) for r in rows)
    assert close(billed, total_usd), (billed, total_usd)
    assert close(effective, billed), (effective, billed)
    horizon = plan_build(run.inputs, run.gpus).horizon_months
    held = commitments_held(run, option)
    by_month: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for row in rows:
        if row["CommitmentDiscountStatus"] is not None:
            found = COMMITMENT_TERM.match(row["CommitmentDiscountId"] or "")
            assert found is not None, row["CommitmentDiscountId"]
            key = (found["commitment"], row["x_PlanMonth"])
            status = row["CommitmentDiscountStatus"]
            assert status not in by_month[key]
            by_month[key][status] = number(row["CommitmentDiscountQuantity"])
    expected = {(c, str(m)) for c in held for m in range(1, horizon + 1)}
    assert set(by_month) == expected
    for (commitment, month), statuses in by_month.items():
        assert set(statuses) == {"Used", "Unused"}, month
        used_and_unused = statuses["Used"] + statuses["Unused"]
        assert close(used_and_unused, held[commitment]), (commitment, month, statuses)


def run_of(document: dict, owner=None):
    owner = owner or analyst("fin")
    scenario_row = ScenarioFactory(owner=owner, name="plan", document=document)
    run = pipeline.run_create(scenario=scenario_row)
    assert run.status == "succeeded", run.error
    run.refresh_from_db()
    return run


def download(client, run, **params) -> bytes:
    response = client.get(f"/api/v1/runs/{run.pk}/focus/", params)
    assert response.status_code == 200, response.content
    assert response.streaming
    return b"".join(response.streaming_content)


def cheapest_index(run) -> int:
    names = [o["name"] for o in run.result["options"]]
    return names.index(run.result["cheapest"])


@pytest.mark.parametrize("name", scenario_names())
def test_every_example_cheapest_option_passes_the_rules_and_adds_up(
    client, catalog, tasks_in_process, name
):
    document = scenario(name)
    if (document.get("simulation") or {}).get("paths"):
        document["simulation"] = {**document["simulation"], "paths": 3_000}
    run = run_of(document)
    client.force_login(run.scenario.owner)
    option = cheapest_index(run)
    body = download(client, run)
    header = next(csv.reader(io.StringIO(body.decode("utf-8"))))
    rows = csv_rows(body)
    rules_check(header, rows)
    assert {r["x_OptionName"] for r in rows} == {run.result["options"][option]["name"]}
    assert {r["x_RunId"] for r in rows} == {str(run.pk)}
    assert {r["x_Percentile"] for r in rows} == {None}
    figures_check(run, rows, option, run.result["options"][option]["total_usd"])

    parquet = pq.read_table(pa.BufferReader(download(client, run, format="parquet")))
    parquet_check(parquet)
    assert parquet.num_rows == len(rows)
    assert close(
        float(np.sum(parquet.column("BilledCost").to_numpy())),
        run.result["options"][option]["total_usd"],
    )


def test_the_percentile_exports_price_the_path_at_that_rank(client, catalog, tasks_in_process):
    document = scenario("uncertain-h100-fleet")
    document["simulation"] = {**document["simulation"], "paths": 2_500, "seed": 11}
    run = run_of(document)
    client.force_login(run.scenario.owner)
    stored = RunRisk.objects.get(run=run)
    totals = sorted_totals_from_payload(stored.sorted_totals)
    for option in range(len(run.result["options"])):
        for q in (50, 90):
            rows = csv_rows(download(client, run, option=str(option + 1), percentile=f"P{q}"))
            rank = int(np.floor((2_500 - 1) * q / 100 + 0.5))
            rules_check(list(rows[0]), rows)
            assert {r["x_Percentile"] for r in rows} == {f"P{q}"}
            (path,) = {r["x_PathIndex"] for r in rows}
            assert path is not None and 0 <= int(path) < 2_500
            figures_check(run, rows, option, float(totals[option][rank]))
    p90 = run.result["options"][cheapest_index(run)]["p90_usd"]
    rows = csv_rows(download(client, run, percentile="90"))
    billed = sum(number(r["BilledCost"]) for r in rows)
    assert abs(billed - p90) <= 0.01 * p90  # the path nearest the interpolated P90


def test_a_choice_it_cannot_answer_names_its_field(client, catalog, tasks_in_process):
    run = run_of(scenario("commitments-and-capacity"))
    client.force_login(run.scenario.owner)
    for params, field in (
        ({"option": "no such option"}, "option"),
        ({"option": "9"}, "option"),
        ({"percentile": "P90"}, "percentile"),
        ({"format": "xlsx"}, "format"),
        ({"percentile": "P100"}, "percentile"),
    ):
        response = client.get(f"/api/v1/runs/{run.pk}/focus/", params)
        assert response.status_code == 400, (params, response.content)
        assert [e["field"] for e in response.json()["errors"]] == [field], response.json()
        page = client.get(f"/runs/{run.pk}/focus/", params)
        assert page.status_code == 400 and page.content.decode().startswith(f"{field}:")
    response = client.get(f"/api/v1/runs/{run.pk}/focus/", {"budget": "1"})
    assert response.status_code == 400


def test_the_run_page_and_the_read_only_link_download_it(client, catalog, tasks_in_process):
    run = run_of(scenario("h100-fleet-buy-vs-rent"))
    owner = run.scenario.owner
    client.force_login(owner)
    page = client.get(f"/runs/{run.pk}/")
    assert b'id="focus-form"' in page.content
    response = client.get(f"/runs/{run.pk}/focus/", {"option": "2", "format": "csv"})
    assert response.status_code == 200
    assert 'filename="run-' in response["Content-Disposition"]
    rows = csv_rows(b"".join(response.streaming_content))
    figures_check(run, rows, 1, run.result["options"][1]["total_usd"])
    assert {r["PricingCategory"] for r in rows} >= {"Committed"}
    _link, key = links.run_link_create(run=run, user=owner)
    client.logout()
    shared = client.get(f"/shared/{key}/focus/", {"option": "2", "format": "parquet"})
    assert shared.status_code == 200
    assert shared["X-Robots-Tag"] == "noindex, nofollow"
    table = pq.read_table(pa.BufferReader(b"".join(shared.streaming_content)))
    assert table.num_rows == len(rows)
    assert b'id="focus-form"' in client.get(f"/shared/{key}/").content


def test_a_mix_lists_its_committed_layer_month_by_month(client, catalog, tasks_in_process):
    run = run_of(scenario("own-commit-rent-mix"))
    client.force_login(run.scenario.owner)
    option = next(i for i, o in enumerate(run.inputs["options"]) if o["type"] == "mix")
    body = download(client, run, option=str(option + 1))
    rows = csv_rows(body)
    rules_check(list(rows[0]), rows)
    figures_check(run, rows, option, run.result["options"][option]["total_usd"])
    assert set(commitments_held(run, option)) == {f"run-{run.pk}-option-{option + 1}-layer-2"}
    committed = [r for r in rows if r["CommitmentDiscountStatus"] is not None]
    assert {r["PricingCategory"] for r in committed} == {"Committed"}
    used = sum(
        number(r["CommitmentDiscountQuantity"])
        for r in committed
        if r["CommitmentDiscountStatus"] == "Used"
    )
    assert used > 0
    rest = [r for r in rows if r["x_CostCategory"] == "compute" and r["PricingUnit"] == "Hours"]
    rest = [r for r in rest if r["CommitmentDiscountStatus"] is None]
    assert rest and {r["PricingCategory"] for r in rest} == {"Standard"}
    parquet_check(
        pq.read_table(
            pa.BufferReader(download(client, run, option=str(option + 1), format="parquet"))
        )
    )


def spot_hours(rows) -> list[dict]:
    found = [r for r in rows if r["PricingCategory"] == "Dynamic"]
    assert found and {r["PricingUnit"] for r in found} == {"Hours"}
    return found


def test_spot_hours_list_at_the_on_demand_price_of_the_same_work(client, catalog, tasks_in_process):
    # typed prices: the plan's on-demand option on the same GPU ($6.88 against spot's $2.50)
    run = run_of(scenario("llm-train-and-serve"))
    client.force_login(run.scenario.owner)
    option = next(i for i, o in enumerate(run.inputs["options"]) if o.get("billing") == "spot")
    rows = csv_rows(download(client, run, option=str(option + 1)))
    rules_check(list(rows[0]), rows)
    for row in spot_hours(rows):
        rate = number(row["BilledCost"]) / number(row["PricingQuantity"])
        assert close(number(row["ListUnitPrice"]) / rate, 6.88 / (2.5 * 1.15))
        assert number(row["ListCost"]) > number(row["BilledCost"])

    # priced from an offer: that offer's on-demand price when the run was created
    spot = current_prices().filter(billing="spot").order_by("pk").first()
    on_demand = current_prices().get(offer=spot.offer, region=spot.region, billing="on_demand")
    document = scenario("llm-train-and-serve")
    document["options"] = [
        {
            "name": "Spot from the catalog",
            "type": "cloud",
            "billing": "spot",
            "offer": {
                "provider": spot.offer.provider.slug,
                "instance": spot.offer.instance_type,
                "region": spot.region.code,
            },
        }
    ]
    run = run_of(document, run.scenario.owner)
    rows = csv_rows(download(client, run, option="1"))
    rules_check(list(rows[0]), rows)
    overhead = run.inputs["options"][0]["interruption_overhead"]
    for row in spot_hours(rows):
        rate = number(row["BilledCost"]) / number(row["PricingQuantity"])
        spot_rate = float(spot.usd_per_gpu_hour) * (1 + overhead)
        assert close(
            number(row["ListUnitPrice"]) / rate, float(on_demand.usd_per_gpu_hour) / spot_rate
        )
