"""Committed prices with their term, the nine new SkyPilot catalogs, and history that is history.

Figures pinned here are read from the shipped files (hardware/data/prices/), not from the
application's output.
"""

import csv
import io
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from accounts.roles import VIEWER
from costapp.scenarios.catalog import offer_terms
from costapp.scenarios.services import scenario_simulate
from hardware.data_files import COMMITTED_PATH, EPOCH_PATH
from hardware.models import InstanceOffer, InstancePrice, MarketObservation, Provider
from hardware.services import instance_prices_load
from hardware.sources.aliases import read_aliases
from hardware.sources.skypilot import AUCTION_NOTE, parse_skypilot_vms
from tests.factories import UserFactory

from .conftest import load

SKYPILOT = Path(COMMITTED_PATH).parents[1] / "skypilot-v8"
HISTORY = Path(__file__).parent / "feed_samples" / "skypilot-history" / "mithril"
NEW_CLOUDS = (
    "cudo", "daytona", "hyperstack", "jarvislabs", "lium", "mithril", "primeintellect",
    "seeweb", "yotta",
)  # fmt: skip
AZURE = {"provider": "azure", "instance": "Standard_ND96isr_H100_v5", "region": "eastus"}


def published_rows() -> list[dict]:
    with open(COMMITTED_PATH, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def prices_snapshot() -> list[tuple]:
    return list(
        InstancePrice.objects.order_by("pk").values_list(
            "pk", "usd_per_hour", "stated_on", "first_seen", "last_seen", "flag"
        )
    )


def test_azure_committed_prices_load_with_their_term_and_a_scenario_finds_them(catalog):
    rows = {(r["billing"], r["term_months"]): r for r in published_rows()}
    per_gpu = {
        "on_demand": Decimal(rows[("on_demand", "")]["usd_per_instance_hour"]) / 8,
        "commit_1y": Decimal(rows[("committed", "12")]["usd_per_instance_hour"]) / 8,
        "commit_3y": Decimal(rows[("committed", "36")]["usd_per_instance_hour"]) / 8,
        "commit_5y": Decimal(rows[("committed", "60")]["usd_per_instance_hour"]) / 8,
    }
    assert per_gpu["commit_1y"] == Decimal("7.865") and per_gpu["commit_5y"] == Decimal("4.915")
    stored = InstancePrice.objects.filter(
        offer__provider__slug="azure", offer__instance_type=AZURE["instance"]
    )
    assert {p.billing: p.usd_per_gpu_hour for p in stored} == per_gpu
    assert {p.region.code for p in stored} == {"eastus"}
    assert {p.stated_on for p in stored} == {date(2026, 2, 4)}
    assert stored.get(billing="commit_5y").get_billing_display() == "5-year commitment"
    offer = stored.first().offer
    assert offer.gpu.slug == "h100-sxm" and offer.gpu_count == 8 and offer.gpu_confirmed
    # What a committed option referencing the offer reads (costapp.scenarios.catalog.offer_terms):
    terms = offer_terms(**AZURE)
    assert terms is not None
    assert terms["usd_per_gpu_hour"]["commit_1y"] == 62.92 / 8
    assert terms["usd_per_gpu_hour"]["commit_5y"] == 39.32 / 8
    assert "prices/committed/published.csv: 4 rows read, 4 accepted, 0 rejected" in catalog


def test_epoch_rows_load_as_dated_committed_observations_and_the_rest_are_reported(catalog):
    with open(EPOCH_PATH, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        by_line = {}
        for record in reader:
            by_line[reader.line_num - record["Notes"].count("\n")] = record
    # line 84: AWS p4d.24xlarge, 2021-06-15, 2.40 (1 year) and 1.45 (3 years) per chip-hour
    assert by_line[84]["Notes"] == "p4d.24xlarge"
    p4d = MarketObservation.objects.filter(line_no=84)
    assert {o.billing: o.usd_per_gpu_hour for o in p4d} == {
        "commit_1y": Decimal(by_line[84]["Price per chip-hour (1-year CUD)"]),
        "commit_3y": Decimal(by_line[84]["Price per chip-hour (3-year CUD)"]),
    }
    assert {(o.provider.slug, o.region.code, o.gpu.slug, o.stated_on) for o in p4d} == {
        ("aws", "us-east-1", "a100-sxm-40gb", date(2021, 6, 15))
    }
    assert {o.offer.instance_type for o in p4d} == {"p4d.24xlarge"}
    # Azure's ND96asr A100 v4 (line 85): no such offer in the catalog, kept as an observation
    nd96 = MarketObservation.objects.get(line_no=85, billing="commit_3y")
    assert nd96.offer is None and nd96.gpu.slug == "a100-sxm-40gb" and nd96.region.code == "westus2"
    # A100 committed prices on at least two providers
    a100 = MarketObservation.objects.filter(gpu__slug__startswith="a100")
    assert set(a100.values_list("provider__slug", flat=True)) >= {"aws", "azure", "gcp"}
    # The latest attached observation is the offer's committed price, per instance-hour
    latest = InstancePrice.objects.get(
        offer__instance_type="p4d.24xlarge", region__code="us-east-1", billing="commit_1y"
    )
    assert latest.usd_per_hour == Decimal("2.40") * 8 and latest.stated_on == date(2025, 3, 2)
    # Rows not loaded are listed with their reason
    assert "GPU variant not settled 'NVIDIA A100 SXM4 80 GB' at line(s) 480" in catalog
    assert "GPU variant not settled 'NVIDIA A100' at line(s) 82, 87, 88" in catalog
    assert "provider not settled at line(s) 392, 393" in catalog
    assert "unknown GPU name 'Google TPU v3'" in catalog


def test_market_observations_show_on_the_gpu_page_and_in_the_api(client, catalog):
    client.force_login(UserFactory(username="buyer", roles=[VIEWER]))
    body = client.get(reverse("gpu-cheapest-page", args=["a100-sxm-40gb"])).content.decode()
    assert 'id="observations-table"' in body and "3-year commitment" in body
    assert "westus2" in body and "p4d.24xlarge" in body
    answer = client.get("/api/v1/market-observations/", {"gpu": "a100-pcie-80gb"}).json()
    found = answer["results"]
    assert found and {r["gpu"] for r in found} == {"a100-pcie-80gb"}
    first = found[0]
    assert first["term"] in ("1-year commitment", "3-year commitment")
    assert first["term_months"] in (12, 36) and first["provider"] == "azure"
    prices = client.get("/api/v1/prices/current/", {"billing": "commit_5y"}).json()
    assert [r["billing"] for r in prices["results"]] == ["commit_5y"]
    # the prices page and the cheapest page give the term in words beside on-demand and spot
    page = client.get(reverse("prices"), {"billing": "commit_5y"}).content.decode()
    page = page.replace("<wbr>", "")  # an instance name may wrap after its separators
    assert "5-year commitment" in page and "Standard_ND96isr_H100_v5" in page
    page = client.get(reverse("gpu-cheapest-page", args=["h100-sxm"])).content.decode()
    table = page.split('id="cheapest-table"', 1)[1].split("</table>", 1)[0]
    for words in (
        "on-demand",
        "spot",
        "1-year commitment",
        "3-year commitment",
        "5-year commitment",
    ):
        assert f'data-label="Billing">{words}<' in table, words


def test_new_clouds_load_with_flagged_auction_prices_and_every_gpu_settled_or_unconfirmed(
    client, catalog
):
    with_prices = Provider.objects.filter(offers__prices__isnull=False).distinct()
    assert with_prices.count() >= 12
    assert set(with_prices.values_list("slug", flat=True)) >= set(NEW_CLOUDS)
    priced = set(InstancePrice.objects.values_list("offer__gpu__slug", flat=True))
    assert {"mi355x", "rtx-5090", "rtx-pro-6000"} <= priced
    # Daytona's 1x-MI355X: on-demand 8.0132, spot 4.61 (daytona.csv)
    mi355x = InstancePrice.objects.filter(offer__instance_type="1x-MI355X")
    assert {p.billing: p.usd_per_hour for p in mi355x} == {
        "on_demand": Decimal("8.0132"),
        "spot": Decimal("4.61"),
    }
    # Cudo writes 0.36979999999999996: read at the catalog's precision
    assert InstancePrice.objects.filter(
        offer__provider__slug="cudo", usd_per_hour=Decimal("0.3698")
    ).exists()
    # Hyperstack's GpuInfo holds null; its rows load
    assert InstanceOffer.objects.filter(provider__slug="hyperstack").count() == 24
    mithril = InstancePrice.objects.filter(offer__provider__slug="mithril")
    assert mithril.count() == 8 and set(mithril.values_list("flag", flat=True)) == {AUCTION_NOTE}
    for offer in InstanceOffer.objects.filter(prices__isnull=False).distinct():
        assert offer.gpu_confirmed or offer.gpu_evidence, offer
    # Mithril's H200 at 1.0 per GPU-hour is the lowest, but never the page's headline
    client.force_login(UserFactory(username="buyer", roles=[VIEWER]))
    body = client.get(reverse("gpu-cheapest-page", args=["h200"])).content.decode()
    assert "ccs-h200.sxm.1x" in body  # listed, flagged
    headline = body.split('id="cheapest-summary"', 1)[1].split("</p>", 1)[0]
    assert "mithril" not in headline and "ccs-h200" not in headline
    assert "not a list price" in body


def test_load_catalog_twice_changes_nothing_with_the_new_files(catalog):
    before = prices_snapshot()
    observations = list(MarketObservation.objects.order_by("pk").values())
    again = load()
    assert prices_snapshot() == before
    assert list(MarketObservation.objects.order_by("pk").values()) == observations
    for cloud in NEW_CLOUDS:
        line = again.split(f"skypilot-v8/{cloud}.csv:", 1)[1].split("\n  ")[0:99]
        summary = next(part for part in line if "prices stated on" in part)
        assert " 0 new," in summary, (cloud, summary)
    assert "4 prices (on-demand, 1-, 3- and 5-year commitments): 0 new, 4 unchanged" in again
    assert "72 dated committed prices per GPU-hour: 0 new, 0 updated, 72 unchanged" in again


@pytest.mark.django_db
def test_a_newer_snapshot_adds_a_point_per_changed_price_dated_by_its_source(tmp_path):
    call_command("load_catalog", "--no-demo", verbosity=0, stdout=io.StringIO())
    InstancePrice.objects.filter(offer__provider__slug="mithril").delete()
    aliases = read_aliases()
    older, newer = HISTORY / "f3799650d3e0.csv", HISTORY / "1f9eb0c264f9.csv"
    start = datetime(2026, 3, 1, tzinfo=UTC)

    def feed(path: Path, day: date, at: datetime):
        rows, report = parse_skypilot_vms(path, cloud="mithril", aliases=aliases)
        return instance_prices_load(
            rows=rows,
            source_name=f"mithril/{path.name}",
            source_sha256=report.sha256,
            observed_at=at,
            stated_on=day,
        )

    feed(older, date(2025, 6, 1), start)
    key = {"offer__instance_type": "h100-80gb.sxm.8x", "billing": "on_demand"}
    assert InstancePrice.objects.filter(**key).count() == 1
    counts = feed(newer, date(2025, 11, 1), start + timedelta(days=1))
    # h100-80gb.sxm.8x is 8.0 in both files: no new point, its source stated it again later
    points = InstancePrice.objects.filter(**key)
    assert points.count() == 1 and points.get().stated_on == date(2025, 11, 1)
    # the newer file's other instances are new points stated on its date
    new = InstancePrice.objects.filter(offer__instance_type="ccs-h200.sxm.8x")
    assert {p.stated_on for p in new} == {date(2025, 11, 1)} and counts.created == 6
    # a price that changes adds a point, dated by its source's date; the old one stays
    changed = tmp_path / "mithril-next.csv"
    text = newer.read_text()
    assert "h100-80gb.sxm.8x,H100,8,168,1814,8.0,8.0," in text
    line = "h100-80gb.sxm.8x,H100,8,168,1814,"
    changed.write_text(text.replace(f"{line}8.0,8.0,", f"{line}16.0,8.0,"))
    feed(changed, date(2026, 1, 15), start + timedelta(days=2))
    points = InstancePrice.objects.filter(**key).order_by("first_seen")
    assert [(p.usd_per_hour, p.stated_on) for p in points] == [
        (Decimal("8.0"), date(2025, 11, 1)),
        (Decimal("16.0"), date(2026, 1, 15)),
    ]
    spot = InstancePrice.objects.filter(offer__instance_type="h100-80gb.sxm.8x", billing="spot")
    assert spot.count() == 1


@pytest.mark.parametrize(
    "term_months,usd_per_instance_hour", [(12, "62.92"), (36, "43.16"), (60, "39.32")]
)
def test_a_committed_option_referencing_the_azure_offer_takes_the_price_of_its_term(
    catalog, term_months, usd_per_instance_hour
):
    # The published file's per-instance-hour figure for the term, over the offer's 8 GPUs.
    with open(COMMITTED_PATH, newline="", encoding="utf-8") as handle:
        published = {
            int(row["term_months"]): row["usd_per_instance_hour"]
            for row in csv.DictReader(handle)
            if row["term_months"]
        }
    assert published[term_months] == usd_per_instance_hour
    document = {
        "name": "Azure H100 commitment",
        "horizon_months": 12,
        "workloads": [
            {"type": "steady", "name": "fleet", "gpu": "h100-sxm", "gpus": 8, "utilization": 0.5}
        ],
        "options": [
            {
                "type": "cloud",
                "name": "Azure committed",
                "billing": "committed",
                "term_months": term_months,
                "committed_gpus": 8,
                "offer": AZURE,
            }
        ],
    }
    result = scenario_simulate(document=document)
    option = result["inputs"]["options"][0]
    assert option["usd_per_gpu_hour"] == float(Decimal(usd_per_instance_hour) / 8)
    assert result["options"][0]["feasible"]
