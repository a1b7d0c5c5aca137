"""The refresh feeds' parsers: SkyPilot catalogs of any cloud, the AWS bulk offer file (streamed)
and AWS Pricing API GetProducts pages. No database."""

import hashlib
import json
from decimal import Decimal
from pathlib import Path

import pytest

from bench.aws_offer_file import write_offer_file
from hardware.gpu_table import read_gpu_table
from hardware.sources.aliases import read_aliases
from hardware.sources.aws import (
    KEEP_REJECTIONS,
    parse_aws_offer_file,
    parse_aws_pricing_pages,
    term_price,
)
from hardware.sources.common import SourceError
from hardware.sources.skypilot import parse_skypilot_vms

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "aws"  # copies of the shared samples
BULK_SAMPLE = SAMPLES / "ec2_offer_fragment_c4large_bulk_shape.json"
PAGE_SAMPLES = [
    SAMPLES / "pricing_getproducts_page_as_dicts.json",
    SAMPLES / "pricing_getproducts_page_as_strings.json",
]


@pytest.fixture(scope="module")
def aliases():
    return read_aliases(known_slugs={row.slug for row in read_gpu_table()})


def test_samples_are_there():
    assert BULK_SAMPLE.is_file(), f"missing sample {BULK_SAMPLE}"
    assert all(p.is_file() for p in PAGE_SAMPLES)


# --- SkyPilot, any cloud ----------------------------------------------------------------------


def test_a_skypilot_catalog_of_an_unseen_cloud_with_its_own_column_order_loads(tmp_path, aliases):
    path = tmp_path / "nimbus.csv"
    path.write_text(
        "Region,SpotPrice,Price,ExtraColumn,AcceleratorCount,InstanceType,AcceleratorName\n"
        "eu-north,,19.92,whatever,8,nb-8xh100,H100\n"
        "eu-north,0.55,1.10,x,1,nb-1xl4,L4\n"
        "us-east,,2.49,y,1,nb-1xh100-pcie,H100\n"
    )
    rows, report = parse_skypilot_vms(path, cloud="nimbus", aliases=aliases)
    got = {(r.instance_type, r.region, r.billing): (r.gpu_slug, r.gpu_count, r.usd_per_hour)
           for r in rows}  # fmt: skip
    assert got == {
        # An H100 the name does not settle is filed under the slower variant, unconfirmed.
        ("nb-8xh100", "eu-north", "on_demand"): ("h100-pcie", 8, Decimal("19.92")),
        ("nb-1xl4", "eu-north", "on_demand"): ("l4", 1, Decimal("1.10")),
        ("nb-1xl4", "eu-north", "spot"): ("l4", 1, Decimal("0.55")),
        ("nb-1xh100-pcie", "us-east", "on_demand"): ("h100-pcie", 1, Decimal("2.49")),
    }
    assert not next(r for r in rows if r.instance_type == "nb-8xh100").gpu_confirmed
    assert {r.provider for r in rows} == {"nimbus"}
    assert (report.rows_read, report.rows_accepted, report.rejections) == (3, 3, [])


def test_a_skypilot_catalog_without_any_price_column_is_broken(tmp_path, aliases):
    path = tmp_path / "nimbus.csv"
    path.write_text("InstanceType,AcceleratorName,AcceleratorCount,Region\na,H100,8,r\n")
    with pytest.raises(SourceError, match="nimbus.csv: missing column.*Price or SpotPrice"):
        parse_skypilot_vms(path, cloud="nimbus", aliases=aliases)


def test_a_cloud_name_that_is_not_a_slug_is_refused(tmp_path, aliases):
    path = tmp_path / "x.csv"
    path.write_text("InstanceType,AcceleratorName,AcceleratorCount,Region,Price\n")
    with pytest.raises(SourceError, match="x.csv: .Bad Cloud. is not a provider slug"):
        parse_skypilot_vms(path, cloud="Bad Cloud", aliases=aliases)


# --- AWS bulk offer file ----------------------------------------------------------------------


def test_bulk_sample_terms_read_to_the_exact_prices_they_state():
    sample = json.loads(BULK_SAMPLE.read_text())
    prices = {}
    for kind in ("OnDemand", "Reserved"):
        for term in sample["terms"][kind]["4C7N4APU9GEUZ6H6"].values():
            price = term_price(term, kind)
            if price is not None:
                prices[price.billing] = price.usd_per_hour
    # on-demand $0.1; the one standard no-upfront term is 1 year at $0.063; the 3-year terms
    # are partial upfront or convertible: left out
    assert prices == {"on_demand": Decimal("0.1000000000"), "commit_1y": Decimal("0.0630000000")}


def test_bulk_sample_c4_large_is_left_out_as_not_a_gpu_instance(aliases):
    rows, report = parse_aws_offer_file(BULK_SAMPLE, aliases=aliases)
    assert rows == []
    assert [(r.reason, r.subject) for r in report.rejections] == [
        ("not a GPU instance", "4C7N4APU9GEUZ6H6")
    ]
    assert report.rows_read == 1
    assert report.bytes_read == BULK_SAMPLE.stat().st_size
    assert report.sha256 == hashlib.sha256(BULK_SAMPLE.read_bytes()).hexdigest()


def test_bulk_sample_made_a_gpu_instance_gives_its_exact_prices(tmp_path, aliases):
    sample = json.loads(BULK_SAMPLE.read_text())
    attributes = sample["products"]["4C7N4APU9GEUZ6H6"]["attributes"]
    attributes.update(instanceType="p5.48xlarge", gpu="8")
    path = tmp_path / "offer.json"
    path.write_text(json.dumps(sample, indent=2))
    rows, report = parse_aws_offer_file(path, aliases=aliases)
    got = {(r.instance_type, r.region, r.billing, r.gpu_slug, r.gpu_count): r.usd_per_hour
           for r in rows}  # fmt: skip
    assert got == {
        ("p5.48xlarge", "us-east-1", "on_demand", "h100-sxm", 8): Decimal("0.1000000000"),
        ("p5.48xlarge", "us-east-1", "commit_1y", "h100-sxm", 8): Decimal("0.0630000000"),
    }
    assert report.rejections == []
    assert [r.vcpus for r in rows] == [Decimal(2), Decimal(2)]
    assert [r.memory_gib for r in rows] == [Decimal("3.75"), Decimal("3.75")]


def test_a_generated_bulk_file_parses_to_exactly_the_prices_written(tmp_path, aliases):
    offer = write_offer_file(tmp_path / "index.json", target_bytes=2_000_000, seed=7)
    rows, report = parse_aws_offer_file(offer.path, aliases=aliases)
    got = {(r.instance_type, r.region, r.billing): r.usd_per_hour for r in rows}
    assert len(got) == len(rows)
    assert got == offer.expected
    assert report.rows_read == offer.products
    assert report.rows_accepted == offer.gpu_products
    reasons = report.rejected_by_reason
    assert {"capacity reservation", "not a GPU instance", "not Linux"} <= set(reasons)
    assert sum(reasons.values()) == offer.products - offer.gpu_products
    assert len(report.rejections) == KEEP_REJECTIONS
    assert report.sha256 == hashlib.sha256(offer.path.read_bytes()).hexdigest()
    assert report.bytes_read == offer.bytes_written == offer.path.stat().st_size
    assert str(report.stated_on) == "2026-11-01"
    assert {r.stated_on for r in rows} == {report.stated_on}


def test_a_bulk_file_in_another_key_order_reads_the_same(tmp_path, aliases):
    offer = write_offer_file(tmp_path / "index.json", target_bytes=300_000, seed=3)
    document = json.loads(offer.path.read_text())
    reordered = {
        "terms": {"Reserved": document["terms"]["Reserved"],
                  "OnDemand": document["terms"]["OnDemand"]},
        "products": document["products"],
        "formatVersion": "v1.0",
    }  # fmt: skip
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(reordered))
    rows, report = parse_aws_offer_file(path, aliases=aliases)
    assert {(r.instance_type, r.region, r.billing): r.usd_per_hour for r in rows} == offer.expected
    assert report.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert report.bytes_read == path.stat().st_size


@pytest.mark.parametrize("cut", [0.3, 0.95])
def test_a_truncated_bulk_file_is_refused_whole(tmp_path, aliases, cut):
    offer = write_offer_file(tmp_path / "index.json", target_bytes=300_000, seed=5)
    data = offer.path.read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(SourceError, match="cut.json: not a whole JSON offer file"):
        parse_aws_offer_file(path, aliases=aliases)


def test_a_corrupted_bulk_file_is_refused_whole(tmp_path, aliases):
    offer = write_offer_file(tmp_path / "index.json", target_bytes=300_000, seed=5)
    data = bytearray(offer.path.read_bytes())
    middle = len(data) * 2 // 3
    data[middle : middle + 40] = b"@" * 40
    path = tmp_path / "bad.json"
    path.write_bytes(bytes(data))
    with pytest.raises(SourceError, match="bad.json"):
        parse_aws_offer_file(path, aliases=aliases)


def test_a_json_file_that_is_not_an_offer_file_is_refused(tmp_path, aliases):
    path = tmp_path / "other.json"
    path.write_text('{"hello": [1, 2, 3]}')
    with pytest.raises(SourceError, match="other.json"):
        parse_aws_offer_file(path, aliases=aliases)


# --- AWS GetProducts pages --------------------------------------------------------------------


@pytest.mark.parametrize("path", PAGE_SAMPLES, ids=lambda p: p.stem)
def test_getproducts_sample_prices_read_exactly(path):
    page = json.loads(path.read_text())
    items = [json.loads(i) if isinstance(i, str) else i for i in page["PriceList"]]
    stated = {
        item["product"]["sku"]: term_price(term, "OnDemand").usd_per_hour
        for item in items
        for term in item["terms"]["OnDemand"].values()
    }
    assert stated == {
        "23HFESK6ZBDQ53EN": Decimal("2.1570000000"),
        "23HJ4NUSYQBPWZQN": Decimal("0.0000000000"),
    }


@pytest.mark.parametrize("path", PAGE_SAMPLES, ids=lambda p: p.stem)
def test_getproducts_sample_reservation_and_dedicated_products_are_left_out_with_reason(
    path, aliases
):
    rows, report = parse_aws_pricing_pages([path], aliases=aliases)
    assert rows == []
    assert [(r.line_no, r.reason, r.subject) for r in report.rejections] == [
        (1, "capacity reservation", "23HFESK6ZBDQ53EN"),
        (2, "capacity reservation", "23HJ4NUSYQBPWZQN"),
    ]
    assert str(report.stated_on) == "2019-03-29"


def test_getproducts_dedicated_tenancy_in_use_is_left_out_as_dedicated(tmp_path, aliases):
    page = json.loads(PAGE_SAMPLES[0].read_text())
    page["PriceList"][1]["product"]["attributes"]["capacitystatus"] = "Used"
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    _, report = parse_aws_pricing_pages([path], aliases=aliases)
    assert report.rejections[1].reason == "dedicated tenancy"


def test_getproducts_shared_linux_gpu_item_gives_its_price_and_zero_is_refused(tmp_path, aliases):
    page = json.loads(PAGE_SAMPLES[0].read_text())
    item = page["PriceList"][1]
    item["product"]["attributes"].update(capacitystatus="Used", tenancy="Shared")
    twin = json.loads(json.dumps(item))
    twin["product"]["attributes"]["location"] = "US East (N. Virginia)"
    twin["product"]["sku"] = "TWINSKU000000001"
    (term,) = twin["terms"]["OnDemand"].values()
    term["sku"] = "TWINSKU000000001"
    (dimension,) = term["priceDimensions"].values()
    dimension["pricePerUnit"]["USD"] = "3.0600000000"
    page["PriceList"].append(json.dumps(twin))  # items may also be JSON strings
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    rows, report = parse_aws_pricing_pages([path], aliases=aliases)
    assert [(r.instance_type, r.region, r.billing, r.gpu_slug, r.usd_per_hour) for r in rows] == [
        ("p3.2xlarge", "us-east-1", "on_demand", "v100-sxm2-16gb", Decimal("3.0600000000"))
    ]
    assert [(r.line_no, r.reason) for r in report.rejections] == [
        (1, "capacity reservation"),
        (2, "zero price"),
    ]


def test_a_page_that_is_not_json_is_refused_naming_the_file(tmp_path, aliases):
    path = tmp_path / "page.json"
    path.write_text('{"PriceList": [')
    with pytest.raises(SourceError, match="page.json: not a JSON GetProducts page"):
        parse_aws_pricing_pages([path], aliases=aliases)


def test_a_products_member_named_terms_does_not_mislead_the_section_search(tmp_path, aliases):
    offer = write_offer_file(tmp_path / "index.json", target_bytes=300_000, seed=4)
    document = json.loads(offer.path.read_text())
    first = next(iter(document["products"].values()))
    first["extra"] = {"note": "x"}
    first["terms"] = {"Reserved": {"looks": "like a section"}}  # after a member ending in }
    path = tmp_path / "nested.json"
    path.write_text(json.dumps(document, indent=2))
    rows, report = parse_aws_offer_file(path, aliases=aliases)
    assert {(r.instance_type, r.region, r.billing): r.usd_per_hour for r in rows} == offer.expected
    assert report.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
