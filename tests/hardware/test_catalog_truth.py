"""Catalog truth: what each price buys, where it came from and when (issue "catalog truth").

Pinned by value on the shipped catalog, and with factory-built rows where a case needs a price
the snapshot does not hold (a fresh one, a provider with no egress pricing)."""

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from django.test import override_settings
from django.urls import reverse

from accounts.roles import VIEWER
from costapp.scenarios.services import scenario_simulate
from hardware.gpu_table import read_gpu_table
from hardware.models import EgressTier, InstanceOffer, InstancePrice, Provider
from hardware.selectors import cheapest_prices, providers_list
from hardware.services import gpu_models_load, instance_prices_load
from hardware.sources.aliases import read_aliases
from hardware.sources.common import PriceRow, RowRejected, read_csv
from hardware.sources.seed import read_stated_on
from tests.factories import UserFactory

from .conftest import shipped_rows
from .factories import EgressTierFactory, InstancePriceFactory

NEW_GPUS = {
    "rtx-a5000", "rtx-a4000", "a16", "rtx-5090", "rtx-pro-6000", "rtx-4000-ada", "rtx-3090",
    "rtx-3060", "rtx-3070",
}  # fmt: skip
FIGURES = (
    "memory_gb", "memory_bandwidth_tb_s", "bf16_dense_tflops", "fp16_dense_tflops",
    "fp8_dense_tflops", "fp4_dense_tflops", "tf32_dense_tflops", "int8_dense_tops", "fp32_tflops", "tdp_w",
    "release_date",
)  # fmt: skip


def offer(provider, instance):
    return InstanceOffer.objects.select_related("gpu").get(
        provider__slug=provider, instance_type=instance
    )


# --- GPU variants ---------------------------------------------------------------------------


def test_lambda_1x_2x_4x_a100_are_stored_as_the_40_gb_pcie_card_all_51_prices(catalog):
    for instance in ("gpu_1x_a100", "gpu_2x_a100", "gpu_4x_a100"):
        found = offer("lambda", instance)
        assert (found.gpu.slug, found.gpu_confirmed) == ("a100-pcie-40gb", True)
        assert "40 GB PCIe" in found.gpu_evidence
    a100s = ["gpu_1x_a100", "gpu_2x_a100", "gpu_4x_a100"]
    prices = InstancePrice.objects.filter(
        offer__provider__slug="lambda", offer__instance_type__in=a100s
    )
    shipped = [r for r in shipped_rows("lambda.csv") if r["InstanceType"] in a100s and r["Price"]]
    assert prices.count() == len(shipped) > 0
    assert set(prices.values_list("offer__gpu__slug", flat=True)) == {"a100-pcie-40gb"}
    assert offer("lambda", "gpu_8x_a100").gpu.slug == "a100-sxm-40gb"


def test_shadeform_lambdalabs_and_hyperstack_h100_are_the_pcie_card_on_evidence(catalog):
    for instance in (
        "lambdalabs_H100", "hyperstack_H100", "hyperstack_H100x2", "hyperstack_H100x4",
        "hyperstack_H100x8-NVLINK",
    ):  # fmt: skip
        found = offer("shadeform", instance)
        assert (found.gpu.slug, found.gpu_confirmed) == ("h100-pcie", True), instance
    assert offer("shadeform", "hyperstack_H100-sxm5x8").gpu.slug == "h100-sxm"
    assert "PCIe" in offer("shadeform", "hyperstack_H100").gpu_evidence


def test_an_ambiguous_h100_name_is_unconfirmed_with_its_reason_never_the_sxm_card(catalog):
    found = offer("shadeform", "latitude_H100")
    assert (found.gpu.slug, found.gpu_confirmed) == ("h100-pcie", False)
    assert "variant not stated" in found.gpu_evidence
    assert not InstanceOffer.objects.filter(gpu__slug="h100-sxm", gpu_confirmed=False).exists()
    sxm = set(
        InstancePrice.objects.filter(offer__gpu__slug="h100-sxm").values_list(
            "offer__instance_type", flat=True
        )
    )
    assert not {"latitude_H100", "hyperstack_H100", "lambdalabs_H100"} & sxm


def test_a_48_gb_rtx_4090_is_refused_with_its_reason_not_filed_as_the_24_gb_card(catalog):
    regions = set(
        InstancePrice.objects.filter(
            offer__provider__slug="vast", offer__instance_type="1x-RTX_4090-32-65536"
        ).values_list("region__code", flat=True)
    )
    assert "Germany, DE, EU" in regions and "Hong Kong, HK, AS" not in regions
    assert "GPU variant not settled 'RTX4090' at line(s) 24" in catalog
    aliases = read_aliases()
    with pytest.raises(RowRejected, match="modified card") as info:
        aliases.resolve_variant("RTX4090", Decimal(48), "1x-RTX_4090-32-65536")
    assert info.value.reason == "GPU variant not settled"


@pytest.mark.parametrize(
    ("name", "memory", "instance", "slug"),
    [
        ("NVIDIA A100-SXM4-40GB", None, "x", "a100-sxm-40gb"),
        ("Tesla A100 80GB PCIE", None, "x", "a100-pcie-80gb"),
        ("A100-80GB", Decimal(80), "denvr_A100-sxm4-80GB", "a100-sxm-80gb"),
        ("NVIDIA H100 PCIe", None, "x", "h100-pcie"),
        ("H100 NVL", None, "x", "h100-nvl"),
        ("Tesla T4", None, "x", "t4"),
        ("NVIDIA RTX A5000", None, "x", "rtx-a5000"),
        ("RTX A4000", Decimal(16), "x", "rtx-a4000"),
        ("NVIDIA GeForce RTX 3090", Decimal(24), "x", "rtx-3090"),
        ("RTX PRO 6000 WS", Decimal(96), "x", "rtx-pro-6000"),
        ("NVIDIA RTX 6000 Ada", None, "x", "rtx-6000-ada"),
    ],
)
def test_names_as_other_catalogs_spell_them_resolve_to_the_right_model(
    name, memory, instance, slug
):
    assert read_aliases().resolve(name, memory, instance) == slug


# --- missing GPUs and their sources -----------------------------------------------------------


def test_the_missing_gpus_are_in_the_table_and_every_figure_has_its_source():
    rows = {row.slug: row for row in read_gpu_table()}
    assert rows.keys() >= NEW_GPUS
    _, records = read_csv(
        read_gpu_table.__globals__["GPU_TABLE_PATH"].parent / "gpu_specs_sources.csv",
        ("slug", "figure", "value", "source"),
    )
    sources = {(r["slug"], r["figure"]): (r["value"], r["source"]) for _, r in records}
    for slug in NEW_GPUS:
        for figure in FIGURES:
            value = getattr(rows[slug], figure)
            if value is None:
                assert (slug, figure) not in sources, (slug, figure)
                continue
            stated, source = sources[(slug, figure)]
            assert source.strip(), (slug, figure)
            if isinstance(value, date):
                assert date.fromisoformat(stated) == value
            else:
                assert Decimal(stated) == Decimal(value), (slug, figure)
    assert rows["rtx-3090"].bf16_dense_tflops == Decimal(71)
    assert rows["a16"].memory_gb == Decimal(16) and rows["a16"].tdp_w is None


def test_the_shipped_prices_of_the_new_gpus_now_load(catalog):
    loaded = set(InstancePrice.objects.values_list("offer__gpu__slug", flat=True))
    assert loaded >= NEW_GPUS
    vultr = InstancePrice.objects.get(
        offer__instance_type="vultr_A16x4", region__code="chicago-usa-1"
    )
    assert vultr.offer.gpu.slug == "a16" and vultr.usd_per_gpu_hour == Decimal("0.5125")


# --- dates ------------------------------------------------------------------------------------


def test_shipped_prices_say_when_their_source_stated_them_apart_from_the_load(catalog):
    price = InstancePrice.objects.get(
        offer__instance_type="gpu_8x_h100_sxm5", region__code="us-east-1"
    )
    assert price.stated_on == date(2025, 10, 1)
    assert price.first_seen.date() > price.stated_on
    assert price.stale
    with override_settings(PRICE_STALE_DAYS=100_000):
        assert not price.stale


def test_the_stated_on_dates_are_those_the_data_readme_gives_per_file(catalog):
    readme = (read_gpu_table.__globals__["GPU_TABLE_PATH"].parent / "README.md").read_text()
    table = {
        cells[1].strip(): cells[4].strip()
        for line in readme.splitlines()
        if line.startswith("| prices/") and (cells := line.split("|"))
    }
    stated = read_stated_on()
    # files whose rows state their own dates are not in stated_on.csv
    dated_rows = {name for name, cell in table.items() if cell.startswith("each row's own date")}
    assert dated_rows == {"prices/committed/published.csv", "prices/epoch_hardware_prices.csv"}
    assert set(stated) == set(table) - dated_rows
    for name, day in stated.items():
        assert table[name].startswith(day.isoformat()), name
    by_file = dict(
        InstancePrice.objects.values_list("source_name", "stated_on").distinct().order_by()
    )
    new_clouds = ("cudo", "daytona", "hyperstack", "jarvislabs", "lium", "mithril")
    new_clouds += ("primeintellect", "seeweb", "yotta")
    assert by_file == {
        **{
            f"skypilot-v8/{c}.csv": date(2025, 10, 1)
            for c in ("aws", "lambda", "shadeform", "vast")
        },
        **{f"skypilot-v8/{c}.csv": date(2025, 1, 1) for c in new_clouds},
        "prices/committed/published.csv": date(2026, 2, 4),  # its rows' stated_on
        "prices/epoch_hardware_prices.csv": date(2025, 3, 2),  # lines 478-479, the AWS p4d/p4de
    }


# --- suspect prices, spot zones, cheapest -----------------------------------------------------


def test_a_spot_price_with_no_on_demand_is_flagged_against_its_sibling_instance(catalog):
    spot = InstancePrice.objects.get(
        offer__instance_type="p5e.48xlarge", region__code="ap-southeast-3", billing="spot"
    )
    assert spot.usd_per_hour == Decimal("8.7348")
    assert "p5en.48xlarge" in spot.flag and "tenth" in spot.flag


def test_a_region_spot_price_carries_its_zone_and_the_spread_across_zones(catalog):
    spot = InstancePrice.objects.get(
        offer__instance_type="p5.48xlarge", region__code="ap-southeast-2", billing="spot"
    )
    assert spot.zone == "apse2-az3" and spot.zone_count == 3
    assert (spot.zone_min_usd_per_hour, spot.zone_median_usd_per_hour, spot.zone_max_usd_per_hour) == (
        Decimal("26.6558"), Decimal("71.552"), Decimal("71.552"),
    )  # fmt: skip
    assert spot.usd_per_hour == spot.zone_min_usd_per_hour


def test_cheapest_h200_spot_says_it_is_flagged(catalog):
    spot = [row for row in cheapest_prices(gpu="h200") if row["billing"] == "spot"]
    # Mithril's auction placeholder (1.0 per GPU, mithril.csv) is listed, as not a list price
    mithril = [row for row in spot if row["provider"] == "mithril"]
    assert mithril[0]["usd_per_gpu_hour"] == Decimal("1.0")
    assert mithril[0]["flag"].startswith("not a list price")
    spot = [row for row in spot if row["provider"] == "aws"]  # the new clouds' are lower
    assert spot[0]["usd_per_gpu_hour"] == Decimal("1.09185")
    assert spot[0]["flag"] and "tenth" in spot[0]["flag"]
    assert spot[0]["stale"] and spot[0]["stated_on"] == date(2025, 10, 1)


# --- egress -----------------------------------------------------------------------------------


def test_providers_without_egress_tiers_are_marked_and_say_why(catalog):
    known = {p.slug: p.egress_known for p in providers_list()}
    assert known["aws"] and known["lambda"]
    assert not known["shadeform"] and not known["vast"]
    assert "host" in Provider.objects.get(slug="shadeform").egress_note
    assert set(EgressTier.objects.values_list("stated_on", flat=True)) == {date(2025, 1, 1)}


# --- scenario warnings ------------------------------------------------------------------------


def scenario(option, *, egress_tb=0, gpu="h100-sxm"):
    return {
        "name": "catalog truth",
        "horizon_months": 12,
        "egress_tb_per_month": egress_tb,
        "workloads": [{"type": "steady", "name": "serve", "gpu": gpu, "gpus": 8}],
        "options": [{"type": "cloud", "name": "rented", **option}],
    }


def test_a_run_on_a_stale_price_is_warned_with_its_source_and_date(catalog):
    result = scenario_simulate(
        document=scenario({"offer": {"provider": "aws", "instance": "p5.48xlarge",
                                     "region": "us-east-1"}})
    )  # fmt: skip
    assert any(
        "on-demand price of aws p5.48xlarge in us-east-1 as stated by skypilot-v8/aws.csv on "
        "2025-10-01, more than 30 days ago" in w
        for w in result["warnings"]
    ), result["warnings"]


def test_a_run_on_a_fresh_price_of_a_provider_with_egress_tiers_has_no_catalog_warning(db):
    price = InstancePriceFactory(offer__gpu__slug="h100-sxm", offer__instance_type="fresh_8x")
    EgressTierFactory(provider=price.offer.provider)
    ref = {"provider": price.offer.provider.slug, "instance": "fresh_8x",
           "region": price.region.code}  # fmt: skip
    result = scenario_simulate(document=scenario({"offer": ref}, egress_tb=100))
    assert not [w for w in result["warnings"] if "rented" in w], result["warnings"]


def test_a_run_on_a_flagged_price_is_warned_naming_it(catalog):
    option = {
        "billing": "spot",
        "offer": {"provider": "aws", "instance": "p5.48xlarge", "region": "ap-southeast-3"},
    }
    result = scenario_simulate(document=scenario(option))
    assert any(
        "spot price of aws p5.48xlarge in ap-southeast-3, which is flagged as looking wrong: "
        "spot is a tenth of on-demand" in w
        for w in result["warnings"]
    ), result["warnings"]


def test_a_run_on_an_unconfirmed_gpu_variant_is_warned_with_the_reason(catalog):
    option = {"offer": {"provider": "shadeform", "instance": "latitude_H100",
                        "region": "dallas-usa-1"}}  # fmt: skip
    result = scenario_simulate(document=scenario(option, gpu="h100-pcie"))
    assert any(
        "shadeform latitude_H100 in dallas-usa-1, whose GPU is filed as h100-pcie but its "
        "variant is not confirmed: variant not stated" in w
        for w in result["warnings"]
    ), result["warnings"]


def test_egress_through_a_provider_with_no_egress_pricing_is_warned_and_costs_0(catalog):
    option = {"offer": {"provider": "shadeform", "instance": "hyperstack_H100x8-NVLINK",
                        "region": "montreal-canada-2"}}  # fmt: skip
    result = scenario_simulate(document=scenario(option, egress_tb=100, gpu="h100-pcie"))
    assert any(
        'Option "rented" sends 100 TB of egress a month through shadeform, whose egress price '
        "is unknown" in w
        for w in result["warnings"]
    ), result["warnings"]
    assert result["options"][0]["breakdown_usd"]["egress"] == 0
    quiet = scenario_simulate(document=scenario(option, egress_tb=0, gpu="h100-pcie"))
    assert not [w for w in quiet["warnings"] if "egress" in w]


def test_an_option_priced_by_hand_is_not_warned_about_the_offers_price(catalog):
    option = {
        "billing": "spot",
        "usd_per_gpu_hour": 2.0,
        "offer": {"provider": "aws", "instance": "p5.48xlarge", "region": "ap-southeast-3"},
    }
    result = scenario_simulate(document=scenario(option))
    assert not [w for w in result["warnings"] if "flagged" in w or "stated by" in w]


# --- pages ------------------------------------------------------------------------------------


def test_the_prices_page_says_source_date_staleness_variant_egress_and_zone_spread(client, catalog):
    client.force_login(UserFactory(username="reader", roles=[VIEWER]))
    body = client.get(
        reverse("prices"), {"provider": "aws", "q": "p5.48xlarge", "billing": "spot"}
    ).content.decode()
    assert "skypilot-v8/aws.csv, <time" in body and '<time datetime="2025-10-01"' in body
    assert "Stale" in body
    assert "3 zones: lowest $26.66, median $71.55, highest $71.55 an hour" in body
    body = client.get(reverse("prices"), {"q": "latitude_H100"}).content.decode()
    assert "GPU variant unconfirmed" in body and "egress price unknown" in body


def test_the_cheapest_page_says_the_cheapest_h200_spot_price_is_flagged(client, catalog):
    client.force_login(UserFactory(username="buyer", roles=[VIEWER]))
    body = client.get(reverse("gpu-cheapest-page", args=["h200"])).content.decode()
    # primeintellect.csv: datacrunch__1xH200_141GB__44__182__SPOT, SpotPrice 0.94 for 1 GPU
    # (Mithril's 1.0 placeholders are not list prices: never the headline)
    headline = body.split('id="cheapest-summary"', 1)[1].split("</div>", 1)[0]
    assert 'Cheapest unflagged: <strong class="figure">$0.940</strong> per GPU-hour' in headline
    assert "datacrunch__1xH200_141GB__44__182__SPOT" in headline
    # AWS's flagged spot price (1.09185) is listed with its flag in words
    assert "$1.09" in body and "p5en.48xlarge" in body
    assert "<strong>Flagged</strong>: suspect, as this spot price is exactly a tenth" in body
    assert client.get(reverse("gpu-cheapest-page", args=["no-such-gpu"])).status_code == 404
    client.logout()
    assert client.get(reverse("gpu-cheapest-page", args=["h200"])).status_code == 302


def test_a_feed_that_states_no_date_is_taken_as_stating_its_prices_the_day_they_were_seen(db):
    row = PriceRow(
        provider="lambda", instance_type="gpu_1x_h100_pcie", gpu_slug="h100-pcie", gpu_count=1,
        vcpus=None, memory_gib=None, host="", region="us-east-1", zone="", billing="on_demand",
        usd_per_hour=Decimal("2.49"), line_no=2,
    )  # fmt: skip
    gpu_models_load(rows=read_gpu_table())
    seen = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
    counts = instance_prices_load(
        rows=[row], source_name="feed", source_sha256="x", observed_at=seen
    )
    assert counts.created == 1
    price = InstancePrice.objects.get(offer__instance_type="gpu_1x_h100_pcie")
    assert price.stated_on == date(2026, 11, 2) and price.first_seen == seen
