"""The FOCUS forward plan: every shipped example's cheapest option, run through the pipeline,
exported as CSV and Parquet and checked against the FOCUS 1.2 rules the export claims (the
mandatory columns present and typed, ids as text, no null ``ListCost`` or ``ContractedCost``,
``Hours`` for hourly charges, the values each column allows), and against the run's own figures:
ΣEffectiveCost == ΣBilledCost over the horizon, per month Used + Unused committed hours == the
committed hours, ΣBilledCost == ``total_usd`` (at a percentile, the total of that path, read from
the run's stored sorted totals)."""

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
from tests.tco.helpers import scenario, scenario_names

from .factories import ScenarioFactory
from .runs_helpers import analyst

pytestmark = pytest.mark.django_db

# FOCUS 1.2's columns this export must carry (the mandatory ones, and the conditional ones its
# rows need: commitments, SKUs, regions, consumed quantities) with the type the specification
# gives each, and the 1.3 provider names beside the 1.2 ones.
MANDATORY = {
    "BilledCost": "decimal",
    "BillingAccountId": "string",
    "BillingAccountName": "string",
    "BillingCurrency": "string",
    "BillingPeriodEnd": "datetime",
    "BillingPeriodStart": "datetime",
    "ChargeCategory": "string",
    "ChargeClass": "string",
    "ChargeDescription": "string",
    "ChargePeriodEnd": "datetime",
    "ChargePeriodStart": "datetime",
    "CommitmentDiscountCategory": "string",
    "CommitmentDiscountId": "string",
    "CommitmentDiscountQuantity": "decimal",
    "CommitmentDiscountStatus": "string",
    "CommitmentDiscountType": "string",
    "CommitmentDiscountUnit": "string",
    "ConsumedQuantity": "decimal",
    "ConsumedUnit": "string",
    "ContractedCost": "decimal",
    "ContractedUnitPrice": "decimal",
    "EffectiveCost": "decimal",
    "InvoiceIssuerName": "string",
    "ListCost": "decimal",
    "ListUnitPrice": "decimal",
    "PricingCategory": "string",
    "PricingCurrency": "string",
    "PricingQuantity": "decimal",
    "PricingUnit": "string",
    "ProviderName": "string",
    "PublisherName": "string",
    "ServiceProviderName": "string",
    "HostProviderName": "string",
    "RegionId": "string",
    "RegionName": "string",
    "ServiceCategory": "string",
    "ServiceName": "string",
    "SkuId": "string",
    "SkuPriceId": "string",
    "SubAccountId": "string",
    "SubAccountName": "string",
}
NOT_NULL = [
    "BilledCost",
    "BillingAccountId",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeDescription",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "ProviderName",
    "PublisherName",
    "ServiceProviderName",
    "HostProviderName",
    "ServiceCategory",
    "ServiceName",
]
ALLOWED = {
    "ChargeCategory": {"Usage", "Purchase", "Tax", "Credit", "Adjustment"},
    "ChargeFrequency": {"One-Time", "Recurring", "Usage-Based"},
    "PricingCategory": {"Standard", "Dynamic", "Committed", "Other"},
    "CommitmentDiscountStatus": {"Used", "Unused"},
    "CommitmentDiscountCategory": {"Spend", "Usage"},
    "ServiceCategory": {
        "AI and Machine Learning",
        "Analytics",
        "Business Applications",
        "Compute",
        "Databases",
        "Developer Tools",
        "Multicloud",
        "Identity",
        "Integration",
        "Internet of Things",
        "Management and Governance",
        "Media",
        "Migration",
        "Mobile",
        "Networking",
        "Security",
        "Storage",
        "Web",
        "Other",
    },
}
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def csv_rows(body: bytes) -> list[dict[str, str | None]]:
    rows = list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
    return [{k: (v if v != "" else None) for k, v in row.items()} for row in rows]


def number(value: str | None) -> float:
    assert value is not None
    return float(value)


def rules_check(header: list[str], rows: list[dict[str, str | None]]) -> None:
    """The FOCUS 1.2 rules on a CSV export, read as text."""
    missing = [name for name in MANDATORY if name not in header]
    assert not missing, missing
    assert rows
    for row in rows:
        for name in NOT_NULL:
            assert row[name] is not None, (name, row)
        for name, kind in MANDATORY.items():
            value = row[name]
            if value is None:
                continue
            if kind == "decimal":
                assert math.isfinite(float(value)), (name, value)
            elif kind == "datetime":
                assert ISO_UTC.match(value), (name, value)
        for name, allowed in ALLOWED.items():
            assert row[name] is None or row[name] in allowed, (name, row[name])
        assert row["ChargePeriodStart"] < row["ChargePeriodEnd"]
        assert row["BillingCurrency"] == "USD"
        category = row["ChargeCategory"]
        if category in ("Usage", "Purchase"):
            assert row["PricingCategory"] is not None
            assert row["PricingQuantity"] is not None and row["PricingUnit"] is not None
        if row["ChargeFrequency"] == "Usage-Based":
            assert row["PricingUnit"] == "Hours", row
        if row["PricingUnit"] == "Hours":
            assert row["ChargeFrequency"] == "Usage-Based"
        if row["CommitmentDiscountStatus"] is not None:
            assert category == "Usage" and row["CommitmentDiscountId"] is not None
            assert row["CommitmentDiscountQuantity"] is not None
            assert row["PricingCategory"] == "Committed"
        if category == "Usage" and row["CommitmentDiscountStatus"] != "Unused":
            assert row["ConsumedQuantity"] is not None and row["ConsumedUnit"] is not None
        else:
            assert row["ConsumedQuantity"] is None
        if category == "Purchase":
            assert number(row["EffectiveCost"]) == 0.0
        if category == "Credit":
            assert number(row["BilledCost"]) <= 0.0


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def figures_check(run, rows, option: int, total_usd: float) -> None:
    """The run's own figures: totals, amortisation, committed hours per month."""
    billed = sum(number(r["BilledCost"]) for r in rows)
    effective = sum(number(r["EffectiveCost"]) for r in rows)
    assert close(billed, total_usd), (billed, total_usd)
    assert close(effective, billed), (effective, billed)
    plan = plan_build(run.inputs, run.gpus)
    document_option = run.result["inputs"]["options"][option]
    committed = (
        document_option["type"] == "cloud"
        and document_option.get("billing") == "committed"
        and int(document_option.get("committed_gpus") or 0) > 0
    )
    by_month: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        if row["CommitmentDiscountStatus"] is not None:
            status = row["CommitmentDiscountStatus"]
            assert status not in by_month[row["x_PlanMonth"]]
            by_month[row["x_PlanMonth"]][status] = number(row["CommitmentDiscountQuantity"])
    if not committed:
        assert not by_month
        return
    held = int(document_option["committed_gpus"]) * plan.hours_per_month
    assert sorted(by_month, key=int) == [str(m) for m in range(1, plan.horizon_months + 1)]
    for month, statuses in by_month.items():
        assert set(statuses) == {"Used", "Unused"}, month
        assert close(statuses["Used"] + statuses["Unused"], held), (month, statuses)


def run_of(document: dict):
    scenario_row = ScenarioFactory(owner=analyst("fin"), name="plan", document=document)
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
    schema = parquet.schema
    for column, kind in MANDATORY.items():
        field = schema.field(column)
        if kind == "string":
            assert pa.types.is_string(field.type), column
        elif kind == "decimal":
            assert pa.types.is_floating(field.type), column
        else:
            assert pa.types.is_timestamp(field.type) and field.type.tz == "UTC", column
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
