"""prices/current.csv and .xlsx, and gpus/{slug}/cheapest/ (docs/api.md, "Catalog")."""

import csv
import io
from datetime import timedelta
from decimal import Decimal

import openpyxl
import pytest
from rest_framework.test import APIClient

from accounts.roles import VIEWER
from accounts.services import token_create
from hardware.models import Billing, InstanceOffer, Provider, ProviderKind, Region
from tests.api_crud import T0, make_base, make_price
from tests.factories import UserFactory


@pytest.fixture
def viewer(db) -> APIClient:
    user = UserFactory(username="v", roles=[VIEWER])
    return APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")


@pytest.fixture
def market(db):
    base = make_base()
    other = Provider.objects.create(slug="bigcloud", name="Big", kind=ProviderKind.HYPERSCALER)
    region = Region.objects.create(provider=other, code="eu-1")
    big8 = InstanceOffer.objects.create(
        provider=other, instance_type="big8", gpu=base.gpu, gpu_count=8
    )
    big1 = InstanceOffer.objects.create(
        provider=other, instance_type="big1", gpu=base.gpu, gpu_count=1
    )
    small = InstanceOffer.objects.create(
        provider=base.provider, instance_type="l4", gpu=base.other_gpu, gpu_count=1
    )
    prices = {
        "cloudco_od": make_price(base.offer, base.region, "24"),  # 3.00 per GPU-hour
        "cloudco_spot": make_price(base.offer, base.region, "8", billing=Billing.SPOT),
        "big8_od_old": make_price(big8, region, "16"),  # 2.00, replaced below
        "big8_od": make_price(
            big8,
            region,
            "40",
            first_seen=T0 + timedelta(days=20),
            last_seen=T0 + timedelta(days=21),
        ),  # 5.00
        "big1_od": make_price(big1, region, "4.5"),  # 4.50
        "l4": make_price(small, base.region, "0.8"),
    }
    return base, prices


def test_cheapest_gives_the_lowest_current_price_per_provider_and_billing(market, viewer):
    base, prices = market
    body = viewer.get("/api/v1/gpus/h100-test/cheapest/").json()
    assert body["gpu"] == {"slug": "h100-test", "name": "H100-TEST"}
    got = [
        (r["provider"]["slug"], r["billing"], r["usd_per_gpu_hour"], r["price_id"])
        for r in body["results"]
    ]
    assert got == [
        ("bigcloud", "on_demand", "4.5000000000", prices["big1_od"].pk),
        ("cloudco", "on_demand", "3.0000000000", prices["cloudco_od"].pk),
        ("cloudco", "spot", "1.0000000000", prices["cloudco_spot"].pk),
    ]
    assert body["results"][0]["offer"]["instance_type"] == "big1"
    assert body["results"][0]["region"]["code"] == "eu-1"
    then = viewer.get("/api/v1/gpus/h100-test/cheapest/", {"as_of": "2026-01-05"}).json()
    assert then["results"][0]["price_id"] == prices["big8_od_old"].pk
    assert viewer.get("/api/v1/gpus/nope/cheapest/").status_code == 404


def test_the_csv_holds_the_filtered_current_prices_with_exact_money(market, viewer):
    base, prices = market
    response = viewer.get(
        "/api/v1/prices/current.csv", {"gpu": "h100-test", "ordering": "usd_per_gpu_hour"}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["price_id"] for r in rows] == [
        str(prices[k].pk) for k in ("cloudco_spot", "cloudco_od", "big1_od", "big8_od")
    ]
    assert (
        rows[3]["usd_per_hour"] == "40.0000000000" and rows[3]["usd_per_gpu_hour"] == "5.0000000000"
    )
    assert rows[0]["first_seen_utc"] == "2026-01-01T00:00:00Z"
    bad = viewer.get("/api/v1/prices/current.csv", {"billing": "monthly"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "billing"


def test_the_workbook_has_typed_cells_a_frozen_header_and_filters(market, viewer):
    base, prices = market
    response = viewer.get("/api/v1/prices/current.xlsx", {"provider": "bigcloud"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    sheet = openpyxl.load_workbook(io.BytesIO(response.content))["prices"]
    header = [c.value for c in sheet[1]]
    assert header[:4] == ["provider", "instance_type", "gpu", "gpu_count"]
    assert sheet.freeze_panes == "A2"
    assert sheet.auto_filter.ref == f"A1:{sheet.cell(1, len(header)).column_letter}3"
    rows = [
        dict(zip(header, (c.value for c in row), strict=True)) for row in sheet.iter_rows(min_row=2)
    ]
    assert {r["instance_type"] for r in rows} == {"big1", "big8"}
    big8 = next(r for r in rows if r["instance_type"] == "big8")
    assert big8["usd_per_gpu_hour"] == 5.0 and big8["usd_per_hour"] == 40
    money_columns = [header.index("usd_per_hour") + 1, header.index("usd_per_gpu_hour") + 1]
    for row in sheet.iter_rows(min_row=2):
        assert all(row[i - 1].data_type == "n" for i in money_columns)
        assert row[header.index("first_seen_utc")].is_date
    assert isinstance(big8["gpu_count"], int) and big8["gpu_count"] == 8
    assert big8["first_seen_utc"].isoformat() == "2026-01-21T00:00:00"
    assert Decimal(str(big8["usd_per_hour"])) == Decimal(40)


def test_current_prices_take_the_same_queries_whatever_the_page_size(market, viewer):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for page_size in (1, 500):
        with CaptureQueriesContext(connection) as queries:
            response = viewer.get("/api/v1/prices/current/", {"page_size": page_size})
        assert response.status_code == 200
        assert len(response.json()["results"]) == (1 if page_size == 1 else 5)
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 6, counts
