"""load_catalog: the shipped catalogs in the database with exact prices, idempotent reloads,
price history, and no damage from a bad file."""

import csv
import io
import re
import time
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Q

from hardware.catalog_load import CatalogLoadError, catalog_load
from hardware.data_files import EGRESS_PATH, SKYPILOT_DIR
from hardware.models import (
    DedicatedQuote,
    EgressTier,
    GpuModel,
    InstanceOffer,
    InstancePrice,
    Provider,
    PurchaseQuote,
    Region,
)
from hardware.selectors import current_prices

from .conftest import lambda_regions_of, load, shipped_rows

pytestmark = pytest.mark.django_db


def price(provider, instance, region, billing="on_demand"):
    return current_prices().get(
        offer__provider__slug=provider,
        offer__instance_type=instance,
        region__code=region,
        billing=billing,
    )


def offer_slug(provider, instance):
    return InstanceOffer.objects.get(provider__slug=provider, instance_type=instance).gpu.slug


def snapshot():
    return sorted(
        InstancePrice.objects.values_list(
            "offer__instance_type", "region__code", "billing", "usd_per_hour", "first_seen", "zone"
        )
    )


def test_lambda_8x_h100_sxm5_is_23_92_an_hour_and_2_99_a_gpu_hour_in_each_lambda_region(catalog):
    regions = Region.objects.filter(provider__slug="lambda")
    assert regions.count() == len(lambda_regions_of("gpu_8x_h100_sxm5")) > 1
    for region in regions:
        row = price("lambda", "gpu_8x_h100_sxm5", region.code)
        assert row.usd_per_hour == Decimal("23.92")
        assert row.usd_per_gpu_hour == Decimal("2.99")
        assert row.source_name == "skypilot-v8/lambda.csv" and len(row.source_sha256) == 64
    assert offer_slug("lambda", "gpu_8x_h100_sxm5") == "h100-sxm"


def test_aws_p5_48xlarge_in_us_east_1_is_55_04_with_the_lowest_zone_spot(catalog):
    on_demand = price("aws", "p5.48xlarge", "us-east-1")
    assert on_demand.usd_per_hour == Decimal("55.04")
    assert on_demand.usd_per_gpu_hour == Decimal("6.88") and on_demand.zone == ""
    spot = price("aws", "p5.48xlarge", "us-east-1", "spot")
    assert spot.usd_per_hour == Decimal("14.246") and spot.zone == "use1-az5"
    assert spot.usd_per_gpu_hour == Decimal("1.78075") and not spot.is_suspect
    assert (
        InstancePrice.objects.filter(
            offer__instance_type="p5.48xlarge", region__code="us-east-1"
        ).count()
        == 2
    )


def test_aws_p3_2xlarge_in_us_east_1_keeps_its_cheapest_zone(catalog):
    assert price("aws", "p3.2xlarge", "us-east-1").usd_per_hour == Decimal("3.06")
    spot = price("aws", "p3.2xlarge", "us-east-1", "spot")
    assert (spot.usd_per_hour, spot.zone) == (Decimal("0.4803"), "use1-az2")


def test_aws_ap_southeast_3_spot_a_tenth_of_on_demand_is_stored_and_flagged(catalog):
    spot = price("aws", "p5.48xlarge", "ap-southeast-3", "spot")
    assert spot.usd_per_hour == Decimal("7.5955") and spot.is_suspect
    assert "tenth" in spot.flag and spot.note == ""
    assert price("aws", "p5.48xlarge", "ap-southeast-3").usd_per_hour == Decimal("75.9552")


def test_aws_p5e_has_spot_prices_but_no_on_demand_price(catalog):
    p5e = InstancePrice.objects.filter(offer__instance_type="p5e.48xlarge")
    assert p5e.exists() and set(p5e.values_list("billing", flat=True)) == {"spot"}
    assert price("aws", "p5e.48xlarge", "ap-southeast-3", "spot").usd_per_hour == Decimal("8.7348")


def test_vast_and_shadeform_rows_carry_their_exact_prices_and_hosts(catalog):
    assert price("vast", "1x-A100_PCIE-32-65536", "Oklahoma, US, NA").usd_per_hour == Decimal(
        "0.87"
    )
    h200 = price("vast", "4x-H200-32-65536", ", US, NA")
    assert h200.usd_per_hour == Decimal("10.35") and h200.usd_per_gpu_hour == Decimal("2.5875")
    nebius = price("shadeform", "nebius_H100-sxm5x8-NVLINK", "helsinki-finland-3")
    assert nebius.usd_per_hour == Decimal("23.99")
    assert nebius.offer.host == "nebius" and nebius.offer.provider.kind == "marketplace"


# One test per ambiguous name of aliases.csv, on the real rows.


def test_lambda_h100_pcie_is_the_pcie_card(catalog):
    assert offer_slug("lambda", "gpu_1x_h100_pcie") == "h100-pcie"
    assert price("lambda", "gpu_1x_h100_pcie", "us-east-1").usd_per_hour == Decimal("2.49")


def test_lambda_h100_sxm5_is_the_sxm_card(catalog):
    assert offer_slug("lambda", "gpu_1x_h100_sxm5") == "h100-sxm"
    assert offer_slug("aws", "p5.4xlarge") == "h100-sxm"


def test_vast_h100_nvl_is_the_nvl_card(catalog):
    assert offer_slug("vast", "1x-H100_NVL-32-65536") == "h100-nvl"
    assert price("vast", "1x-H100_NVL-32-65536", "Bulgaria, BG, EU").usd_per_hour == Decimal("1.87")


def test_shadeform_h100_with_nvlink_is_not_nvl_and_hyperstack_nvlink_is_pcie(catalog):
    assert offer_slug("shadeform", "nebius_H100-sxm5x8-NVLINK") == "h100-sxm"
    assert offer_slug("shadeform", "hyperstack_H100x8-NVLINK") == "h100-pcie"


def test_a100_40_gb_is_the_40_gb_sxm_card(catalog):
    assert offer_slug("aws", "p4d.24xlarge") == "a100-sxm-40gb"
    assert offer_slug("lambda", "gpu_8x_a100") == "a100-sxm-40gb"
    assert offer_slug("shadeform", "denvr_A100-sxm4") == "a100-sxm-40gb"


def test_a100_80_gb_is_the_80_gb_sxm_card(catalog):
    assert offer_slug("lambda", "gpu_8x_a100_80gb_sxm4") == "a100-sxm-80gb"
    assert offer_slug("shadeform", "denvr_A100-sxm4-80GB") == "a100-sxm-80gb"


def test_vast_a100_pcie_with_80_gib_is_the_80_gb_pcie_card(catalog):
    assert offer_slug("vast", "1x-A100_PCIE-32-65536") == "a100-pcie-80gb"


def test_lambda_rtx6000_is_the_24_gb_turing_card_not_the_ada(catalog):
    assert offer_slug("lambda", "gpu_1x_rtx6000") == "quadro-rtx-6000"
    assert price("lambda", "gpu_1x_rtx6000", "us-east-1").usd_per_hour == Decimal("0.5")
    assert offer_slug("vast", "1x-RTX_6000Ada-32-65536") == "rtx-6000-ada"


def test_aws_p4de_trusts_accelerator_name_a100_80gb_over_gpu_info(catalog):
    assert offer_slug("aws", "p4de.24xlarge") == "a100-sxm-80gb"
    assert price("aws", "p4de.24xlarge", "us-east-1").usd_per_hour == Decimal("27.44705")
    spot = price("aws", "p4de.24xlarge", "us-east-1", "spot")
    assert (spot.usd_per_hour, spot.zone) == (Decimal("9.7262"), "use1-az6")


def test_v100_16_and_32_gb_are_told_apart(catalog):
    assert offer_slug("aws", "p3.16xlarge") == "v100-sxm2-16gb"
    assert offer_slug("aws", "p3dn.24xlarge") == "v100-sxm2-32gb"


def test_load_catalog_prints_rows_read_accepted_and_rejected_by_reason_per_file(catalog):
    def read(name: str) -> int:
        return len(shipped_rows(name))

    aws, lambda_, shadeform, vast = (
        read(f"{n}.csv") for n in ("aws", "lambda", "shadeform", "vast")
    )
    assert (
        f"skypilot-v8/aws.csv: {aws} rows read, {aws - 4} accepted, 4 rejected (no price: 4), "
        "0 unconfirmed" in catalog
    )
    assert (
        f"skypilot-v8/lambda.csv: {lambda_} rows read, {lambda_ - 17} accepted, 17 rejected "
        "(no GPU: 17), 0 unconfirmed" in catalog
    )
    assert (
        f"skypilot-v8/shadeform.csv: {shadeform} rows read, {shadeform - 5} accepted, 5 rejected "
        "(GPU variant not settled: 5), 34 unconfirmed" in catalog
    )
    assert (
        f"skypilot-v8/vast.csv: {vast} rows read, {vast - 2} accepted, 2 rejected "
        "(GPU variant not settled: 2), 0 unconfirmed" in catalog
    )
    assert "GPU variant not settled 'RTX4090' at line(s) 24" in catalog
    assert "unconfirmed GPU variant, filed as h100-pcie: cudo_H100," in catalog
    tiers = read("egress_tiers.csv")
    assert f"egress_tiers.csv: {tiers} rows read, {tiers} accepted, 0 rejected" in catalog
    assert f"current prices: {current_prices().count()}" in catalog


def test_loading_the_same_files_again_changes_no_row_and_no_date(catalog):
    before = snapshot()
    dates = list(InstancePrice.objects.values_list("pk", "stated_on", "first_seen", "last_seen"))
    tiers = list(EgressTier.objects.values_list("provider__slug", "up_to_tb", "usd_per_gb"))
    counts = [m.objects.count() for m in (Provider, Region, InstanceOffer, DedicatedQuote)]
    out = load()
    assert snapshot() == before
    assert f"current prices: {len(before)}" in out and " 0 new," in out
    assert (
        list(InstancePrice.objects.values_list("pk", "stated_on", "first_seen", "last_seen"))
        == dates
    )
    assert list(EgressTier.objects.values_list("provider__slug", "up_to_tb", "usd_per_gb")) == tiers
    assert [m.objects.count() for m in (Provider, Region, InstanceOffer, DedicatedQuote)] == counts


def test_loading_twice_stays_fast(db):
    start = time.monotonic()
    load()
    load()
    assert time.monotonic() - start < 10


def edit_csv(path, change):
    """Rewrite a CSV through ``change(rows)`` keeping its header order and CRLF endings."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, list(reader)
    change(rows)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)


def test_a_changed_price_adds_a_row_and_the_old_row_stays_as_it_was(catalog, skypilot_copy):
    old = price("lambda", "gpu_8x_h100_sxm5", "us-east-1")

    def raise_price(rows):
        for row in rows:
            if (row["InstanceType"], row["Region"]) == ("gpu_8x_h100_sxm5", "us-east-1"):
                row["Price"] = "25.52"

    edit_csv(skypilot_copy / "lambda.csv", raise_price)
    out = load(skypilot_dir=skypilot_copy)
    assert "340 prices stated on 2025-10-01: 1 new, 339 unchanged" in out
    history = InstancePrice.objects.filter(
        offer__instance_type="gpu_8x_h100_sxm5", region__code="us-east-1", billing="on_demand"
    ).order_by("first_seen")
    assert [p.usd_per_hour for p in history] == [Decimal("23.92"), Decimal("25.52")]
    kept = history[0]
    assert (kept.pk, kept.first_seen, kept.last_seen) == (old.pk, old.first_seen, old.last_seen)
    new = price("lambda", "gpu_8x_h100_sxm5", "us-east-1")
    assert new.usd_per_gpu_hour == Decimal("3.19") and new.first_seen > old.last_seen
    assert new.source_sha256 != old.source_sha256
    assert current_prices(as_of=old.last_seen).get(pk=old.pk).usd_per_hour == Decimal("23.92")
    assert price("lambda", "gpu_8x_h100_sxm5", "us-west-1").pk != new.pk


def test_a_file_missing_a_column_fails_the_command_naming_it_and_changes_no_price(
    catalog, skypilot_copy
):
    before = snapshot()
    last_seen = sorted(InstancePrice.objects.values_list("pk", "last_seen"))
    path = skypilot_copy / "shadeform.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    keep = [i for i, name in enumerate(header) if name != "AcceleratorCount"]
    path.write_text(
        "\n".join(",".join(line.split(",")[i] for i in keep) for line in lines[:1]) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(CommandError, match=r"shadeform.csv: missing column\(s\) AcceleratorCount"):
        load(skypilot_dir=skypilot_copy)
    assert snapshot() == before
    assert sorted(InstancePrice.objects.values_list("pk", "last_seen")) == last_seen


def test_an_unreadable_file_fails_the_command_naming_it(catalog, skypilot_copy):
    (skypilot_copy / "vast.csv").write_bytes(b"\xff\xfe\x00\x01 not text")
    with pytest.raises(CommandError, match="vast.csv"):
        load(skypilot_dir=skypilot_copy)


def test_a_row_with_a_bad_price_is_rejected_and_its_stored_price_stays(catalog, skypilot_copy):
    before = snapshot()

    def spoil(rows):
        for row in rows:
            if row["InstanceType"] == "gpu_8x_h100_sxm5" and row["Region"] == "us-east-1":
                row["Price"] = "23,92"

    edit_csv(skypilot_copy / "lambda.csv", spoil)
    out = load(skypilot_dir=skypilot_copy)
    assert "357 rows read, 339 accepted, 18 rejected (no GPU: 17, bad number: 1)" in out
    assert "Price '23,92' is not a number" in out
    assert snapshot() == before
    assert price("lambda", "gpu_8x_h100_sxm5", "us-east-1").usd_per_hour == Decimal("23.92")


def test_demo_has_providers_prices_egress_tiers_and_no_unstated_zero_price(db):
    call_command("demo", no_serve=True, stdout=io.StringIO())
    assert Provider.objects.count() >= 6
    assert {"aws", "azure", "gcp", "oracle", "lambda", "shadeform", "vast"} <= set(
        Provider.objects.values_list("slug", flat=True)
    )
    assert current_prices().count() >= 500
    with_tiers = set(EgressTier.objects.values_list("provider__slug", flat=True))
    assert {"aws", "azure", "gcp", "oracle", "lambda"} <= with_tiers
    assert not InstancePrice.objects.filter(Q(usd_per_hour=0) | Q(usd_per_gpu_hour=0)).exists()
    with open(EGRESS_PATH, newline="", encoding="utf-8") as handle:
        stated_zero = {
            (row["provider"], Decimal(row["up_to_tb"]) if row["up_to_tb"] else None)
            for row in csv.DictReader(handle)
            if Decimal(row["usd_per_gb"]) == 0
        }
    zero_tiers = set(
        EgressTier.objects.filter(usd_per_gb=0).values_list("provider__slug", "up_to_tb")
    )
    assert zero_tiers == stated_zero and ("lambda", None) in zero_tiers
    assert not InstancePrice.objects.filter(
        offer__provider__slug__in=["lambda", "shadeform", "vast"], billing="spot"
    ).exists()
    assert DedicatedQuote.objects.filter(is_demo=True).count() == 3
    assert PurchaseQuote.objects.filter(is_demo=True).count() == 2


def test_provider_kinds_follow_the_api_contract(catalog):
    kinds = dict(Provider.objects.values_list("slug", "kind"))
    assert kinds == {
        "aws": "hyperscaler",
        "azure": "hyperscaler",
        "gcp": "hyperscaler",
        "oracle": "hyperscaler",
        "lambda": "gpu-cloud",
        "shadeform": "marketplace",
        "vast": "marketplace",
        "cudo": "gpu-cloud",
        "daytona": "gpu-cloud",
        "hyperstack": "gpu-cloud",
        "jarvislabs": "gpu-cloud",
        "lium": "marketplace",
        "mithril": "gpu-cloud",
        "primeintellect": "marketplace",
        "seeweb": "gpu-cloud",
        "yotta": "gpu-cloud",
    }


def test_demo_quotes_load_once_by_their_reference_and_keep_hand_edits(catalog):
    quote = PurchaseQuote.objects.get(reference="DEMO-P-H100-8")
    assert quote.capex_usd_per_server == Decimal("265000") and quote.server_kw == Decimal("10.2")
    quote.status = "accepted"
    quote.save()
    out = load()
    assert "demo quotes: 0 created, 5 already there" in out
    assert PurchaseQuote.objects.get(reference="DEMO-P-H100-8").status == "accepted"


def test_a_row_whose_gpu_count_differs_from_its_stored_offer_is_refused(catalog, skypilot_copy):
    before = snapshot()

    def halve(rows):
        for row in rows:
            if row["InstanceType"] == "gpu_8x_h100_sxm5":
                row["AcceleratorCount"] = "4.0"
                row["Price"] = "11.96"

    edit_csv(skypilot_copy / "lambda.csv", halve)
    out = load(skypilot_dir=skypilot_copy)
    assert "offer differs from the catalog: 17" in out
    assert snapshot() == before
    assert InstanceOffer.objects.get(instance_type="gpu_8x_h100_sxm5").gpu_count == 8


def test_a_changed_egress_tier_is_updated_with_the_load_in_its_history(catalog, tmp_path):
    path = tmp_path / "egress_tiers.csv"
    text = EGRESS_PATH.read_text(encoding="utf-8")
    path.write_text(text.replace("oracle,,0.0085,", "oracle,,0.0087,"), encoding="utf-8")
    out = load(egress=path)
    assert "egress tiers: 0 created, 1 updated, 15 unchanged, 0 removed" in out
    tier = EgressTier.objects.get(provider__slug="oracle", up_to_tb=None)
    assert tier.usd_per_gb == Decimal("0.0087")
    assert [h.usd_per_gb for h in tier.history.order_by("history_date")] == [
        Decimal("0.0085"),
        Decimal("0.0087"),
    ]
    assert tier.history.latest().history_change_reason == "loaded from egress_tiers.csv"


def test_catalog_load_with_no_arguments_loads_the_shipped_catalog_and_says_what_it_did(db):
    done = catalog_load()
    assert done.current_prices == current_prices().count() > 0
    assert [f.report.file_name for f in done.price_files] == [
        f"{SKYPILOT_DIR.name}/{path.name}" for path in sorted(SKYPILOT_DIR.glob("*.csv"))
    ]
    assert done.gpus.created == GpuModel.objects.count() and done.demo_quotes.created > 0
    assert done.lines()[0].startswith(f"gpus.csv: {done.gpu_rows} rows read")
    assert f"current prices: {done.current_prices}" in done.lines()
    assert [report.file_name for report in done.market] == [
        "models/token_prices.csv",
        "assumptions.csv",
    ]
    again = catalog_load()
    assert [f.counts.created for f in again.price_files] == [0] * len(done.price_files)
    assert again.gpus.unchanged == done.gpu_rows and again.demo_quotes.created == 0


def test_catalog_load_of_an_unusable_folder_names_it_and_writes_nothing(db, tmp_path):
    with pytest.raises(
        CatalogLoadError, match=re.escape(f"nothing loaded: {tmp_path}: no <cloud>.csv file")
    ):
        catalog_load(skypilot_dir=tmp_path)
    assert not GpuModel.objects.exists()
