"""The Azure, GCP and Oracle price parsers: every price of the shipped samples named by value."""

import copy
import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from hardware.gpu_table import read_gpu_table
from hardware.models import InstancePrice
from hardware.services import instance_prices_load
from hardware.sources.azure import azure_feed_prices, parse_azure_retail_prices
from hardware.sources.common import SourceError
from hardware.sources.gcp import gcp_feed_prices, parse_gcp_skus
from hardware.sources.instances import read_instances
from hardware.sources.oracle import parse_oracle_prices

SAMPLES = Path(__file__).resolve().parents[1] / "feed_samples"
AZURE_PREVIEW = SAMPLES / "retail_prices_eastus_standard_d2s_v3_preview.json"
AZURE_SPOT = SAMPLES / "retail_prices_eastus_standard_d2s_v3_spot_filter.json"
GCP_PAGE = SAMPLES / "opencost_cloudbilling_skus_page.json"
ORACLE_LIST = SAMPLES / "opencost_oracle_prices_usd.json"
D = Decimal


def table(provider):
    return read_instances(provider=provider, known_slugs={row.slug for row in read_gpu_table()})


def load_json(path: Path) -> dict:
    return json.loads(path.read_text())


def dump(document: dict) -> bytes:
    return json.dumps(document).encode()


# --- the instance table ------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["azure", "gcp", "oracle"])
def test_instance_table_names_only_gpus_of_the_gpu_table(provider):
    assert table(provider).instances


def test_instance_table_with_a_repeated_instance_type_is_refused(tmp_path):
    path = tmp_path / "cloud_instances.csv"
    path.write_text(
        "provider,instance_type,gpu_slug,gpu_count,vcpus,memory_gib,price_key,family\n"
        "azure,Standard_X,h100-sxm,8,,,,\n"
        "azure,Standard_X,h100-sxm,4,,,,\n"
    )
    with pytest.raises(SourceError, match=r"cloud_instances.csv:3: instance_type 'Standard_X'"):
        read_instances(path, provider="azure")


# --- Azure -------------------------------------------------------------------------------------


def test_azure_preview_page_prices_each_item_or_says_why_not():
    prices, report = azure_feed_prices([AZURE_PREVIEW])
    assert report.rows_read == 9
    assert {(p.line_no, p.billing, p.usd, p.stated_on, p.region) for p in prices} == {
        (4, "spot", D("0.018816"), date(2026, 6, 1), "eastus"),
        (7, "on_demand", D("0.096"), date(2017, 12, 15), "eastus"),
        (7, "commit_1y", D("0.06624"), date(2017, 12, 15), "eastus"),
        (7, "commit_3y", D("0.04512"), date(2017, 12, 15), "eastus"),
    }
    assert {p.sku for p in prices} == {"Standard_D2s_v3"}
    reasons = {r.line_no: (r.reason, r.detail) for r in report.rejections}
    assert {n: reason for n, (reason, _) in reasons.items()} == {
        1: "not Linux",
        2: "dev/test price",
        3: "low priority",
        5: "not Linux",
        6: "dev/test price",
        8: "not Linux",
        9: "dev/test price",
    }
    # each rejection names the price it leaves out
    stated = {1: "0.075", 2: "0.019", 3: "0.019", 5: "0.036848", 6: "0.018816", 8: "0.188"}
    for line_no, value in stated.items():
        assert f" {value})" in reasons[line_no][1]
    assert "DevTestConsumption 0.096)" in reasons[9][1]


def test_azure_spot_filter_page_prices_spot_and_on_demand_for_linux_only():
    prices, report = azure_feed_prices([AZURE_SPOT])
    assert report.rows_read == 6
    assert {(p.line_no, p.billing, p.usd) for p in prices} == {
        (3, "spot", D("0.018816")),
        (5, "on_demand", D("0.096")),
    }
    assert {r.line_no: r.reason for r in report.rejections} == {
        1: "not Linux",
        2: "low priority",
        4: "not Linux",
        6: "not Linux",
    }


def test_azure_vm_size_without_gpus_gives_no_price_row_and_says_so():
    rows, report = parse_azure_retail_prices([AZURE_PREVIEW], instances=table("azure"))
    assert rows == []
    unknown = [r for r in report.rejections if r.reason == "not a known GPU instance"]
    assert sorted((r.line_no, r.detail) for r in unknown) == [
        (4, "Standard_D2s_v3 in eastus (spot 0.018816 USD/h) is not in cloud_instances.csv"),
        (7, "Standard_D2s_v3 in eastus (commit_1y 0.06624 USD/h) is not in cloud_instances.csv"),
        (7, "Standard_D2s_v3 in eastus (commit_3y 0.04512 USD/h) is not in cloud_instances.csv"),
        (7, "Standard_D2s_v3 in eastus (on_demand 0.096 USD/h) is not in cloud_instances.csv"),
    ]
    assert report.rows_accepted == 0


def gpu_page(path: Path, arm_sku: str = "Standard_NC24ads_A100_v4") -> dict:
    """A sample page with its VM size renamed to a GPU size of the instance table."""
    document = load_json(path)
    for item in document["Items"]:
        item["armSkuName"] = arm_sku
    return document


def test_azure_gpu_size_gives_rows_at_the_stated_prices_with_its_gpus():
    rows, report = parse_azure_retail_prices(
        [dump(gpu_page(AZURE_PREVIEW))], instances=table("azure")
    )
    got = {(r.billing, r.usd_per_hour, r.stated_on) for r in rows}
    assert got == {
        ("on_demand", D("0.096"), date(2017, 12, 15)),
        ("spot", D("0.018816"), date(2026, 6, 1)),
        ("commit_1y", D("0.06624"), date(2017, 12, 15)),
        ("commit_3y", D("0.04512"), date(2017, 12, 15)),
    }
    assert {(r.provider, r.instance_type, r.gpu_slug, r.gpu_count, r.region) for r in rows} == {
        ("azure", "Standard_NC24ads_A100_v4", "a100-pcie-80gb", 1, "eastus")
    }
    assert report.rows_accepted == 2  # items 4 and 7


def test_azure_pages_are_read_in_order_with_item_numbers_running_across_them():
    pages = [dump(gpu_page(AZURE_SPOT)), dump(gpu_page(AZURE_PREVIEW, "Standard_ND96isr_H100_v5"))]
    rows, report = parse_azure_retail_prices(pages, instances=table("azure"))
    assert report.rows_read == 15
    assert {(r.instance_type, r.billing, r.line_no) for r in rows} >= {
        ("Standard_NC24ads_A100_v4", "spot", 3),
        ("Standard_ND96isr_H100_v5", "spot", 10),
        ("Standard_ND96isr_H100_v5", "on_demand", 13),
    }
    assert len(report.sha256.split(",")) == 2


def reservation(template: dict, term: str, total_usd: str) -> dict:
    item = copy.deepcopy(template)
    item.pop("savingsPlan", None)
    item.update(type="Reservation", reservationTerm=term, retailPrice=json.loads(total_usd))
    return item


def test_azure_reservation_is_the_term_price_spread_over_its_hours_and_the_lower_term_price_wins():
    document = gpu_page(AZURE_PREVIEW)
    on_demand = document["Items"][6]
    document["Items"] += [
        reservation(on_demand, "1 Year", "504"),  # 504 / 8760 = 0.0575342466 < 0.06624
        reservation(on_demand, "3 Years", "1300"),  # 1300 / 26280 = 0.0494672755 > 0.04512
    ]
    rows, _ = parse_azure_retail_prices([dump(document)], instances=table("azure"))
    by_billing = {r.billing: r for r in rows}
    assert by_billing["commit_1y"].usd_per_hour == D("0.0575342466")
    assert "1 Year reservation: 504 USD for the term" in by_billing["commit_1y"].note
    assert "savings plan 0.06624" in by_billing["commit_1y"].note
    assert by_billing["commit_3y"].usd_per_hour == D("0.04512")


def test_azure_two_different_on_demand_prices_for_one_size_and_region_are_both_rejected():
    document = gpu_page(AZURE_PREVIEW)
    twin = copy.deepcopy(document["Items"][6])
    twin.update(retailPrice=0.1, savingsPlan=[])
    document["Items"].append(twin)
    rows, report = parse_azure_retail_prices([dump(document)], instances=table("azure"))
    assert "on_demand" not in {r.billing for r in rows}
    conflicts = [r for r in report.rejections if r.reason == "conflicting prices"]
    assert {r.line_no for r in conflicts} == {7, 10}
    assert "on_demand 0.096, 0.1" in conflicts[0].detail


def test_azure_price_in_another_currency_is_rejected_not_taken_as_usd():
    document = gpu_page(AZURE_SPOT)
    for item in document["Items"]:
        item["currencyCode"] = "EUR"
    rows, report = parse_azure_retail_prices([dump(document)], instances=table("azure"))
    assert rows == []
    assert report.rejected_by_reason["not USD"] == 6


def test_azure_price_from_a_usage_threshold_on_is_rejected_as_tiered():
    document = gpu_page(AZURE_SPOT)
    document["Items"][4]["tierMinimumUnits"] = 100.0
    rows, report = parse_azure_retail_prices([dump(document)], instances=table("azure"))
    assert "on_demand" not in {r.billing for r in rows}
    assert {r.line_no: r.reason for r in report.rejections}[5] == "tiered price"


def test_azure_document_without_items_is_refused_whole():
    with pytest.raises(SourceError, match=r"azure retail prices page 2: not an Azure Retail"):
        azure_feed_prices([AZURE_SPOT, b'{"value": []}'])
    with pytest.raises(SourceError, match="page 1: not a JSON document"):
        azure_feed_prices([b"<html>"])


# --- GCP ---------------------------------------------------------------------------------------

GCP_US = ("us-central1", "us-east1", "us-west1")


def test_gcp_page_prices_every_sku_by_region_in_usd():
    prices, report = gcp_feed_prices([GCP_PAGE])
    assert report.rows_read == 7 and report.rejections == []
    got = {(p.sku, p.region, p.unit, p.usd, p.stated_on) for p in prices}
    expected = set()
    for region in GCP_US:
        expected |= {
            ("039F-D0DA-4055", region, "hour", D("2.933908"), date(2023, 3, 24)),  # A100
            ("2390-DCAF-DA38", region, "GiB-hour", D("0.004237"), date(2023, 3, 24)),  # A2 RAM
            ("2922-40C5-B19F", region, "hour", D("0.031611"), date(2023, 3, 24)),  # A2 core
            # IDR: 327.173848364 / 14999.999925 and 43.852949780 / 14999.999925
            ("CF4E-A0C7-E3BF", region, "hour", D("0.0218115900"), date(2023, 8, 9)),
            ("F449-33EC-A5EF", region, "GiB-hour", D("0.0029235300"), date(2023, 8, 9)),
        }
    expected |= {  # IDR: 68.204999658 / 14999.999925 and 508.934997455 / 14999.999925
        ("4756-01E4-0F32", "asia-southeast1", "GiB-hour", D("0.0045470000"), date(2023, 8, 10)),
        ("9E37-EAF4-1576", "asia-southeast1", "hour", D("0.0339290000"), date(2023, 8, 10)),
    }
    assert got == expected
    assert {p.billing for p in prices} == {"on_demand"}


def test_gcp_idr_price_is_divided_by_the_conversion_rate_never_multiplied():
    prices, _ = gcp_feed_prices([GCP_PAGE])
    core = next(p for p in prices if p.sku == "9E37-EAF4-1576")
    idr = D("508.934997455")
    rate = D("14999.999925")
    assert abs(core.usd * rate - idr) < D("0.000002")  # USD x IDR-per-USD gives the IDR back
    assert core.usd < 1 < idr  # neither the IDR figure nor IDR x rate (7.6 million)
    assert core.note == "508.934997455 IDR / 14999.999925 IDR per USD"


def test_gcp_a2_machine_types_are_gpus_plus_cores_plus_ram_at_the_listed_prices():
    rows, report = parse_gcp_skus([GCP_PAGE], instances=table("gcp"))
    got = {(r.instance_type, r.region): r.usd_per_hour for r in rows}
    # 2.933908 x GPUs + 0.031611 x vCPUs + 0.004237 x GiB (a2-highgpu-1g: 12 vCPUs, 85 GiB)
    per_region = {
        "a2-highgpu-1g": D("3.673385"),
        "a2-highgpu-2g": D("7.346770"),
        "a2-highgpu-4g": D("14.693540"),
        "a2-highgpu-8g": D("29.387080"),
        "a2-megagpu-16g": D("55.739504"),
    }
    assert got == {(t, region): usd for t, usd in per_region.items() for region in GCP_US}
    one = next(r for r in rows if r.instance_type == "a2-highgpu-1g")
    assert (one.gpu_slug, one.gpu_count, one.vcpus, one.memory_gib) == ("a100-sxm-40gb", 1, 12, 85)
    assert one.billing == "on_demand" and one.stated_on == date(2023, 3, 24)
    assert "1 x 2.933908 (GPU 039F-D0DA-4055) + 12 x 0.031611" in one.note
    # the T2D and E2 SKUs price no GPU machine type: reported, not dropped silently
    assert {r.line_no: r.reason for r in report.rejections} == {
        n: "not part of a GPU machine type" for n in (4, 5, 6, 7)
    }
    assert "0.0339290000 USD per hour" in report.rejections[1].detail
    assert report.rows_accepted == 3


def gcp_page() -> dict:
    return load_json(GCP_PAGE)


@pytest.mark.parametrize(
    ("rate", "reason"),
    [(1, "no conversion rate"), (0, "no conversion rate"), (None, "no conversion rate")],
)
def test_gcp_idr_price_without_a_usable_rate_is_rejected_with_the_reason(rate, reason):
    document = gcp_page()
    info = document["skus"][4]["pricingInfo"][0]
    if rate is None:
        del info["currencyConversionRate"]
    else:
        info["currencyConversionRate"] = rate
    prices, report = gcp_feed_prices([dump(document)])
    assert "9E37-EAF4-1576" not in {p.sku for p in prices}
    (rejection,) = report.rejections
    assert (rejection.line_no, rejection.reason) == (5, reason)
    assert "priced in IDR" in rejection.detail


def test_gcp_usd_price_with_a_conversion_rate_other_than_one_is_rejected():
    document = gcp_page()
    document["skus"][0]["pricingInfo"][0]["currencyConversionRate"] = 15000
    prices, report = gcp_feed_prices([dump(document)])
    assert "039F-D0DA-4055" not in {p.sku for p in prices}
    assert [r.reason for r in report.rejections] == ["conflicting conversion rate"]


def test_gcp_units_and_nanos_preemptible_and_commitments():
    document = gcp_page()
    gpu = document["skus"][0]
    gpu["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"].update(
        units="1", nanos=500000000
    )
    gpu["category"]["usageType"] = "Preemptible"
    gpu["description"] = "Spot Preemptible Nvidia Tesla A100 GPU running in Americas"
    document["skus"][1]["category"]["usageType"] = "Commit1Yr"
    prices, report = gcp_feed_prices([dump(document)])
    spot = {p.usd for p in prices if p.sku == "039F-D0DA-4055" and p.billing == "spot"}
    assert spot == {D("1.5")}
    assert {r.line_no: r.reason for r in report.rejections} == {2: "commitment"}


def test_gcp_tiered_rates_are_each_kept_and_a_tiered_part_prices_no_machine_type():
    document = gcp_page()
    rates = document["skus"][0]["pricingInfo"][0]["pricingExpression"]["tieredRates"]
    rates.append(
        {"startUsageAmount": 100, "unitPrice": {"currencyCode": "USD", "units": "2", "nanos": 0}}
    )
    prices, _ = gcp_feed_prices([dump(document)])
    tiers = {(p.tier_start, p.usd) for p in prices if p.sku == "039F-D0DA-4055"}
    assert tiers == {(0, D("2.933908")), (100, D("2"))}
    rows, report = parse_gcp_skus([dump(document)], instances=table("gcp"))
    assert rows == []
    assert report.rejected_by_reason["tiered or conflicting prices"] == 15  # 5 types x 3 regions


def test_gcp_page_without_skus_is_refused_whole():
    with pytest.raises(SourceError, match="gcp skus page 1: not a Cloud Billing Catalog page"):
        gcp_feed_prices([b'{"services": []}'])


# --- Oracle ------------------------------------------------------------------------------------


def test_oracle_gpu_shapes_are_gpus_times_the_gpu_hour_price():
    rows, _, report = parse_oracle_prices(ORACLE_LIST, instances=table("oracle"))
    got = {(r.instance_type, r.gpu_slug, r.gpu_count, r.usd_per_hour, r.line_no) for r in rows}
    assert got == {
        ("BM.GPU3.8", "v100-sxm2-16gb", 8, D("23.60"), 52),  # B89734: 2.95 per GPU-hour
        ("VM.GPU3.1", "v100-sxm2-16gb", 1, D("2.95"), 52),
        ("VM.GPU3.2", "v100-sxm2-16gb", 2, D("5.90"), 52),
        ("VM.GPU3.4", "v100-sxm2-16gb", 4, D("11.80"), 52),
        ("BM.GPU4.8", "a100-sxm-40gb", 8, D("24.40"), 167),  # B92740: 3.05
        ("BM.GPU.A100-v2.8", "a100-sxm-80gb", 8, D("32"), 383),  # B95907: 4
        ("VM.GPU.A10.1", "a10", 1, D("2"), 384),  # B95909: 2
        ("VM.GPU.A10.2", "a10", 2, D("4"), 384),
        ("BM.GPU.A10.4", "a10", 4, D("8"), 384),
        ("BM.GPU.H100.8", "h100-sxm", 8, D("80"), 448),  # B98415: 10
    }
    assert {(r.provider, r.region, r.billing) for r in rows} == {("oracle", "global", "on_demand")}
    assert report.rows_read == 450


def test_oracle_outbound_transfer_becomes_egress_tiers_in_the_contracts_form():
    _, tiers, _ = parse_oracle_prices(ORACLE_LIST, instances=table("oracle"))
    # B88327: 0 .. 10,240 GB free, then 0.0085 USD/GB
    assert [(t.up_to_tb, t.usd_per_gb) for t in tiers] == [
        (D("10.24"), D("0")),
        (None, D("0.0085")),
    ]
    assert {(t.provider, t.scope, t.line_no) for t in tiers} == {
        ("oracle", "North America, Europe, and UK", 15)
    }
    _, apac, _ = parse_oracle_prices(
        ORACLE_LIST, instances=table("oracle"), egress_origin="APAC, Japan, and South America"
    )
    assert [(t.up_to_tb, t.usd_per_gb) for t in apac] == [(D("10.24"), D("0")), (None, D("0.025"))]


def test_oracle_rejections_name_the_gpu_parts_without_a_shape_and_the_other_egress_origins():
    _, _, report = parse_oracle_prices(ORACLE_LIST, instances=table("oracle"))
    named = {
        r.line_no: (r.reason, r.detail)
        for r in report.rejections
        if r.reason != "not a GPU or egress price"
    }
    assert named == {
        26: ("unknown GPU part", "B88517 'Compute - Bare Metal GPU Standard - X7' (1.275 USD per GPU-hour) prices no shape of cloud_instances.csv"),
        27: ("unknown GPU part", "B88518 'Compute - Virtual Machine GPU Standard - X7' (1.275 USD per GPU-hour) prices no shape of cloud_instances.csv"),
        222: ("other egress origin", "B93455 'Outbound Data Transfer - Originating in APAC, Japan, and South America': 0 up to 10.24 TB, 0.025 up to no limit TB"),
        223: ("other egress origin", "B93456 'Outbound Data Transfer - Originating in Middle East and Africa': 0 up to 10.24 TB, 0.05 up to no limit TB"),
    }  # fmt: skip
    assert report.rejected_by_reason["not a GPU or egress price"] == 440
    assert report.rows_accepted == 450 - 444


def test_oracle_egress_tiers_with_a_gap_are_rejected():
    document = load_json(ORACLE_LIST)
    item = next(i for i in document["items"] if i["partNumber"] == "B88327")
    item["currencyCodeLocalizations"][0]["prices"][1]["rangeMin"] = 20000
    _, tiers, report = parse_oracle_prices(dump(document), instances=table("oracle"))
    assert tiers == []
    (gap,) = [r for r in report.rejections if r.line_no == 15]
    assert gap.reason == "tiers out of order"


def test_oracle_document_without_items_is_refused_whole():
    with pytest.raises(SourceError, match="oracle prices: not an Oracle price list"):
        parse_oracle_prices(b"[]", instances=table("oracle"))


# --- the rows are the catalog's rows -----------------------------------------------------------


def test_parsed_feed_rows_load_into_the_catalog_as_they_are(catalog):
    observed_at = datetime(2026, 11, 30, tzinfo=UTC)
    gcp_rows, gcp_report = parse_gcp_skus([GCP_PAGE], instances=table("gcp"))
    oracle_rows, _, _ = parse_oracle_prices(ORACLE_LIST, instances=table("oracle"))
    for rows, name in ((gcp_rows, "gcp skus"), (oracle_rows, "oracle prices")):
        counts = instance_prices_load(
            rows=rows, source_name=name, source_sha256=gcp_report.sha256, observed_at=observed_at
        )
        assert counts.created == len(rows) and not counts.rejections
    price = InstancePrice.objects.get(
        offer__provider__slug="gcp", offer__instance_type="a2-highgpu-8g", region__code="us-east1"
    )
    assert (price.usd_per_hour, price.usd_per_gpu_hour) == (D("29.387080"), D("3.673385"))
    h100 = InstancePrice.objects.get(offer__instance_type="BM.GPU.H100.8")
    assert (h100.usd_per_hour, h100.usd_per_gpu_hour, h100.region.code) == (
        D("80"),
        D("10"),
        "global",
    )
