"""The price-source parsers: plain rows from files, every trap of the data README met."""

from decimal import Decimal
from pathlib import Path

import pytest

from hardware.data_files import SKYPILOT_DIR
from hardware.gpu_table import read_gpu_table
from hardware.sources.aliases import read_aliases
from hardware.sources.common import PriceRow, SourceError
from hardware.sources.egress import parse_egress_tiers, tier_order_problem
from hardware.sources.registry import HTTP_SOURCES, PRICE_SOURCES, SKYPILOT_CLOUDS
from hardware.sources.skypilot import parse_skypilot_vms

from ..conftest import shipped_rows

HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region"
)


@pytest.fixture(scope="module")
def aliases():
    return read_aliases(known_slugs={row.slug for row in read_gpu_table()})


def parse(cloud, aliases, path=None):
    return parse_skypilot_vms(path or SKYPILOT_DIR / f"{cloud}.csv", cloud=cloud, aliases=aliases)


def write(tmp_path: Path, name: str, *lines: str, newline="\n") -> Path:
    path = tmp_path / name
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    return path


def test_alias_table_names_only_slugs_of_the_gpu_table(aliases):
    slugs = {row.slug for row in read_gpu_table()}
    named = {a.slug for a in aliases.aliases if a.status != "rejected"}
    assert aliases.aliases and named <= slugs


def test_alias_row_naming_a_slug_outside_the_gpu_table_breaks_the_table(tmp_path):
    path = write(
        tmp_path,
        "aliases.csv",
        "source,accelerator_name,memory_gib_per_gpu,instance_pattern,slug,status,evidence",
        "skypilot,H100,,sxm,h100-sxm,confirmed,",
        "skypilot,X9,,,no-such-gpu,confirmed,",
    )
    with pytest.raises(SourceError, match=r"aliases.csv:3: slug 'no-such-gpu'"):
        read_aliases(path, known_slugs={row.slug for row in read_gpu_table()})


def test_a100_40_gb_with_pcie_in_the_instance_name_is_the_pcie_40_gb_card(aliases):
    assert aliases.resolve("A100", Decimal(40), "1x-A100_PCIE-32-65536") == "a100-pcie-40gb"


def test_lambda_1x_2x_4x_a100_are_the_40_gb_pcie_card_by_lambdas_descriptions(aliases):
    for instance in ("gpu_1x_a100", "gpu_2x_a100", "gpu_4x_a100"):
        found = aliases.resolve_variant("A100", Decimal(40), instance)
        assert (found.slug, found.confirmed) == ("a100-pcie-40gb", True)
        assert "40 GB PCIe" in found.evidence
    assert aliases.resolve("A100", Decimal(40), "gpu_8x_a100") == "a100-sxm-40gb"
    assert aliases.resolve("A100", Decimal("79.6"), "1x-A100_SXM4") == "a100-sxm-80gb"


def test_an_a100_whose_name_says_no_variant_is_unconfirmed_never_the_sxm_card(aliases):
    found = aliases.resolve_variant("A100", Decimal("74.5"), "crusoe_A100-80GB")
    assert (found.slug, found.confirmed) == ("a100-pcie-80gb", False)
    assert "variant not stated" in found.evidence


def test_nvlink_in_an_instance_name_is_not_the_h100_nvl_card(aliases):
    assert aliases.resolve("H100", Decimal(80), "nebius_H100-sxm5x8-NVLINK") == "h100-sxm"
    assert aliases.resolve("H100", Decimal("93.6"), "1x-H100_NVL-32-65536") == "h100-nvl"


def test_a_known_name_with_memory_no_row_allows_is_unknown_not_guessed(aliases):
    from hardware.sources.common import RowRejected

    with pytest.raises(RowRejected, match="matches no row") as info:
        aliases.resolve("A100", Decimal(60), "x")
    assert info.value.reason == "unknown GPU name"


def test_unknown_gpu_name_is_reported_with_file_and_line(tmp_path, aliases):
    gpu_info = "\"{'Gpus': [{'Name': 'X', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}]}\""
    path = write(
        tmp_path,
        "vast.csv",
        HEADER,
        "1x-H200-32-65536,H200,1,32,64.0,\"{'Gpus': [{'Name': 'H200', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 143771}}]}\",2.82,0.00,\"Texas, US, NA\"",
        f'1x-RTX_9999-32-65536,RTX9999,1,32,64.0,{gpu_info},0.40,0.00,"Texas, US, NA"',
    )
    rows, report = parse("vast", aliases, path)
    assert [r.instance_type for r in rows] == ["1x-H200-32-65536"]
    assert report.rows_read == 2 and report.rows_accepted == 1
    (rejection,) = report.rejections
    assert (rejection.file_name, rejection.line_no, rejection.reason) == (
        "vast.csv",
        3,
        "unknown GPU name",
    )
    assert "RTX9999" in str(rejection) and str(rejection).startswith("vast.csv:3:")


def test_vast_memory_is_the_total_of_the_instance_so_2x_a100_sxm4_is_the_40_gb_card(aliases):
    rows, _ = parse("vast", aliases)
    two = {r.gpu_slug for r in rows if r.instance_type == "2x-A100_SXM4-32-65536"}
    assert two == {"a100-sxm-40gb"}
    assert not any(r.instance_type == "2x-Tesla_V100-32-65536" for r in rows)


def test_vast_zero_spot_price_means_no_spot_price_and_regions_keep_their_text(aliases):
    rows, report = parse("vast", aliases)
    assert {r.billing for r in rows} == {"on_demand"}
    regions = {r.region for r in rows}
    assert ", US, NA" in regions and "Oklahoma, US, NA" in regions
    assert report.rows_read == len(shipped_rows("vast.csv"))


def test_vast_region_with_a_non_ascii_city_is_kept_as_written(tmp_path, aliases):
    info = "\"{'Gpus': [{'Name': 'H200', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 143771}}]}\""
    path = write(
        tmp_path,
        "vast.csv",
        HEADER,
        f'1x-H200-32-65536,H200,1,32,64.0,{info},2.82,0.00,"Hafnarfjarðarkaupstaður, IS, EU"',
        newline="\r\n",
    )
    (row,), _ = parse("vast", aliases, path)
    assert row.region == "Hafnarfjarðarkaupstaður, IS, EU"
    assert row.usd_per_hour == Decimal("2.82") and row.gpu_slug == "h200"


def test_shadeform_host_is_the_instance_name_prefix_and_memory_is_gb(aliases):
    rows, _ = parse("shadeform", aliases)
    by_name = {r.instance_type: r for r in rows}
    assert by_name["lambdalabs_H100-sxm5x8"].host == "lambdalabs"
    assert by_name["nebius_H100-sxm5x8-NVLINK"].host == "nebius"
    assert by_name["denvr_A100-sxm4"].gpu_slug == "a100-sxm-40gb"
    assert "paperspace_V100-32GB" not in by_name  # V100 PCIe or SXM2: not settled, refused
    assert all(r.host for r in rows)


def test_lambda_cpu_instances_are_skipped_as_having_no_gpu(aliases):
    rows, report = parse("lambda", aliases)
    assert report.rejected_by_reason == {"no GPU": 17}
    assert not any(r.instance_type.startswith("cpu_") for r in rows)
    assert len(rows) == len(shipped_rows("lambda.csv")) - 17
    assert {r.billing for r in rows} == {"on_demand"}


def test_aws_zone_rows_fold_into_one_on_demand_and_the_lowest_zone_spot(aliases):
    rows, report = parse("aws", aliases)
    p5 = [r for r in rows if (r.instance_type, r.region) == ("p5.48xlarge", "us-east-1")]
    assert sorted((r.billing, r.usd_per_hour, r.zone) for r in p5) == [
        ("on_demand", Decimal("55.04"), ""),
        ("spot", Decimal("14.246"), "use1-az5"),
    ]
    assert report.rejected_by_reason == {"no price": 4}


def test_aws_p5e_without_on_demand_keeps_its_spot_price_only(aliases):
    rows, _ = parse("aws", aliases)
    p5e = [r for r in rows if r.instance_type == "p5e.48xlarge"]
    assert p5e and {r.billing for r in p5e} == {"spot"}


def test_aws_spot_exactly_a_tenth_of_on_demand_is_kept_and_flagged(aliases):
    rows, _ = parse("aws", aliases)
    flagged = {(r.instance_type, r.region, r.usd_per_hour) for r in rows if r.is_suspect}
    assert ("p5.48xlarge", "ap-southeast-3", Decimal("7.595500")) in flagged
    assert ("p5en.48xlarge", "ap-southeast-3", Decimal("8.734800")) in flagged
    assert ("p5e.48xlarge", "ap-southeast-3", Decimal("8.734800")) in flagged  # by its sibling
    assert all(r.billing == "spot" for r in rows if r.is_suspect)
    assert len(flagged) == 5


def test_aws_spot_a_hair_above_on_demand_is_kept_unflagged(tmp_path, aliases):
    header = HEADER + ",AvailabilityZone,Arch"
    info = "\"{'Gpus': [{'Name': 'V100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 16384}}]}\""
    path = write(
        tmp_path,
        "aws.csv",
        header,
        f"p3.16xlarge,V100,8.0,64.0,488.0,{info},27.43298,27.433,us-east-1,use1-az1,x86_64",
    )
    rows, _ = parse("aws", aliases, path)
    spot = next(r for r in rows if r.billing == "spot")
    assert spot.usd_per_hour == Decimal("27.433") and not spot.is_suspect
    assert "above on-demand" in spot.note


def test_a_row_with_a_bad_number_is_rejected_alone(tmp_path, aliases):
    info = "\"{'Gpus': [{'Name': 'H200', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 143771}}]}\""
    path = write(
        tmp_path,
        "vast.csv",
        HEADER,
        f'1x-H200-32-65536,H200,1,32,64.0,{info},2.8x,0.00,"Texas, US, NA"',
        f'1x-H200-32-65536,H200,1,32,64.0,{info},-1,0.00,"Ohio, US, NA"',
        f'1x-H200-32-65536,H200,1,32,64.0,{info},2.82,0.00,"Michigan, US, NA"',
    )
    rows, report = parse("vast", aliases, path)
    assert [r.region for r in rows] == ["Michigan, US, NA"]
    assert report.rejected_by_reason == {"bad number": 2}
    assert [r.line_no for r in report.rejections] == [2, 3]


def test_a_file_without_a_required_column_is_a_broken_table_naming_the_file(tmp_path, aliases):
    path = write(tmp_path, "lambda.csv", "InstanceType,AcceleratorName,Region", "a,b,c")
    with pytest.raises(SourceError, match=r"lambda.csv: missing column\(s\) AcceleratorCount"):
        parse("lambda", aliases, path)


def test_an_unreadable_file_is_a_broken_table_naming_the_file(tmp_path, aliases):
    path = tmp_path / "aws.csv"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SourceError, match="aws.csv"):
        parse("aws", aliases, path)
    with pytest.raises(SourceError, match="missing.csv"):
        parse("aws", aliases, tmp_path / "missing.csv")


def test_egress_tiers_resolve_same_source_and_keep_stated_zero_prices():
    from hardware.management.commands.load_catalog import EGRESS_PATH

    rows, report = parse_egress_tiers(EGRESS_PATH)
    assert report.rows_read == len(shipped_rows("egress_tiers.csv")) and not report.rejections
    aws = [r for r in rows if r.provider == "aws"]
    assert [(r.up_to_tb, r.usd_per_gb) for r in aws] == [
        (Decimal("0.1"), Decimal("0")),
        (Decimal("10"), Decimal("0.09")),
        (Decimal("50"), Decimal("0.085")),
        (Decimal("150"), Decimal("0.07")),
        (None, Decimal("0.05")),
    ]
    assert all(r.source and r.source != "same" for r in rows)


def test_egress_tiers_out_of_order_are_rejected_for_that_provider(tmp_path):
    path = write(
        tmp_path,
        "egress.csv",
        "provider,up_to_tb,usd_per_gb,scope,source,observed",
        "aws,10,0.09,,x,2025",
        "aws,5,0.08,,x,2025",
        "aws,,0.05,,x,2025",
        "lambda,,0,,y,2025",
    )
    rows, report = parse_egress_tiers(path)
    assert [r.provider for r in rows] == ["lambda"]
    assert report.rejected_by_reason == {"tiers out of order": 3}


@pytest.mark.parametrize(
    ("bounds", "why"),
    [
        (["10", "10", ""], "up_to_tb must rise from tier to tier: 10 TB comes after 10 TB"),
        (["10", "5", ""], "up_to_tb must rise from tier to tier: 5 TB comes after 10 TB"),
        (["", "10"], "only the last tier may have no limit"),
        (["5", "10"], "the last tier must have no limit (empty up_to_tb)"),
    ],
    ids=["equal bounds", "decreasing bounds", "open tier not last", "no open tier"],
)
def test_egress_tiers_breaking_the_formats_order_are_rejected_with_why(tmp_path, bounds, why):
    lines = [f"aws,{bound},0.09,,x" for bound in bounds]
    path = write(tmp_path, "egress.csv", "provider,up_to_tb,usd_per_gb,scope,source", *lines)
    rows, report = parse_egress_tiers(path)
    assert rows == []
    assert report.rejected_by_reason == {"tiers out of order": len(bounds)}
    assert {r.detail for r in report.rejections} == {f"aws: {why}"}


def test_the_tier_order_rule_names_the_first_tier_at_fault():
    d = Decimal
    assert tier_order_problem([d("0.1"), d(10), None]) is None
    assert tier_order_problem([]) is None
    assert tier_order_problem([d(10), d(10), None])[0] == 1
    assert tier_order_problem([d(10), d(5), None])[0] == 1
    assert tier_order_problem([None, d(10)])[0] == 0
    assert tier_order_problem([d(5), d(10)]) == (
        1,
        "the last tier must have no limit (empty up_to_tb)",
    )
    # a part of a provider's tiers (added to stored ones) need not end without limit
    assert tier_order_problem([d(5), d(10)], complete=False) is None
    assert tier_order_problem([d(10), d(5)], complete=False)[0] == 1


# --- the registry of formats ---------------------------------------------------------------------

SAMPLES = Path(__file__).resolve().parents[1]  # tests/hardware: data/ and feed_samples/
FORMAT_SAMPLES = {
    "skypilot": ([SKYPILOT_DIR / "lambda.csv"], "lambda"),
    "aws": ([SAMPLES / "data" / "aws" / "ec2_offer_fragment_c4large_bulk_shape.json"], "aws"),
    "aws-pricing-api": ([SAMPLES / "data" / "aws" / "pricing_getproducts_page_as_dicts.json"], "aws"),
    "azure": ([SAMPLES / "feed_samples" / "retail_prices_eastus_standard_d2s_v3_preview.json"], "azure"),
    "gcp": ([SAMPLES / "feed_samples" / "opencost_cloudbilling_skus_page.json"], "gcp"),
    "oracle": ([SAMPLES / "feed_samples" / "opencost_oracle_prices_usd.json"], "oracle"),
    # each SkyPilot cloud's scheduled source: its shipped file, as the fetched bytes
    **{
        f"skypilot-{cloud}": ([(SKYPILOT_DIR / f"{cloud}.csv").read_bytes()], cloud)
        for cloud in SKYPILOT_CLOUDS
    },
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FORMAT_SAMPLES))
def test_every_registered_format_parses_into_the_one_row_type_and_its_billings(name):
    assert set(FORMAT_SAMPLES) == set(PRICE_SOURCES)
    pages, provider = FORMAT_SAMPLES[name]
    source = PRICE_SOURCES[name]
    known = {row.slug for row in read_gpu_table()}
    parsed = source.parse(pages, provider=provider, known_slugs=known, file_name="")
    assert parsed.report.rows_read > 0 and parsed.report.file_name
    assert all(type(row) is PriceRow for row in parsed.rows)
    assert {row.billing for row in parsed.rows} <= source.billings
    assert {row.provider for row in parsed.rows} <= {provider}
    if name.startswith("skypilot") or name in ("gcp", "oracle"):  # the others price no GPU
        assert parsed.rows


def test_the_registry_names_each_http_formats_settings_and_only_those():
    assert sorted(HTTP_SOURCES) == ["aws", "azure", "gcp", "oracle"] + sorted(
        f"skypilot-{cloud}" for cloud in SKYPILOT_CLOUDS
    )
    assert PRICE_SOURCES["gcp"].settings == (
        "PRICE_SOURCE_GCP_URL",
        "PRICE_SOURCE_GCP_INTERVAL_MINUTES",
        "PRICE_SOURCE_GCP_INTERVAL_SECONDS",
    )
    assert PRICE_SOURCES["aws-pricing-api"].settings == ()
    assert all(
        s.paging or s.name == "oracle" or s.csv_feed or s.spooled for s in HTTP_SOURCES.values()
    )
    assert PRICE_SOURCES["skypilot-vast"].settings[0] == "PRICE_SOURCE_SKYPILOT_VAST_URL"
