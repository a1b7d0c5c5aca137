"""A confidence for every price, judged when read (``hardware.confidence``): the rule, the same
rule in SQL, and ``?confidence=`` on the prices API and page."""

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

import openpyxl
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.roles import VIEWER
from accounts.services import token_create
from hardware.confidence import (
    HIGH,
    LOW,
    MEDIUM,
    confidence_of,
    price_confidence,
    token_price_confidence_of,
    with_confidence,
)
from hardware.models import EgressTier, InstanceOffer, ProviderKind
from hardware.selectors import current_prices
from tests.api_crud import make_gpu
from tests.factories import UserFactory
from tests.hardware.factories import InstancePriceFactory, ProviderFactory, RegionFactory
from tests.roles import user_with_role

TODAY = timezone.localdate()


def judged(**changes):
    facts = {
        "stated_on": TODAY - timedelta(days=3),
        "flag": "",
        "provider_kind": ProviderKind.HYPERSCALER,
        "egress_known": True,
        "gpu_confirmed": True,
        "today": TODAY,
    }
    return confidence_of(**{**facts, **changes})


def test_no_concern_is_high_one_is_medium_two_or_a_flag_is_low(settings):
    settings.PRICE_STALE_DAYS = 30
    high = judged()
    assert high.level == HIGH
    assert high.reasons[0] == "stated 3 days ago, within the 30-day limit"
    assert high.words.startswith("High confidence: stated 3 days ago")
    stale = judged(stated_on=TODAY - timedelta(days=45))
    assert (stale.level, stale.reasons) == (
        MEDIUM,
        ("stated 45 days ago, beyond the 30-day limit (stale)",),
    )
    assert judged(provider_kind=ProviderKind.MARKETPLACE).level == MEDIUM
    assert judged(egress_known=False).reasons == ("its provider's egress price is unknown",)
    assert judged(gpu_confirmed=False).level == MEDIUM
    assert judged(stated_on=None).reasons == ("stated on no known day (unknown age)",)
    old_listing = judged(
        stated_on=TODAY - timedelta(days=700),
        provider_kind=ProviderKind.MARKETPLACE,
        egress_known=False,
    )
    assert old_listing.level == LOW and len(old_listing.reasons) == 3
    flagged = judged(flag="not a list price: an auction placeholder")
    assert flagged.level == LOW
    assert flagged.reasons == ("flagged: not a list price: an auction placeholder",)


@pytest.fixture
def one_of_each_kind(db):
    """One price of each kind, all H100 on-demand at 10 USD/h: only the first is high and in
    Europe."""
    gpu = make_gpu("h100-test")
    cloud = ProviderFactory(slug="bigcloud", name="Big", kind=ProviderKind.HYPERSCALER)
    market = ProviderFactory(slug="bazaar", name="Bazaar", kind=ProviderKind.MARKETPLACE)
    no_egress = ProviderFactory(slug="quietcloud", name="Quiet", kind=ProviderKind.GPU_CLOUD)
    for provider in (cloud, market):
        EgressTier.objects.create(provider=provider, up_to_tb=None, usd_per_gb=Decimal("0.05"))
    now = timezone.now()

    def price(provider, region_code, *, confirmed=True, **fields):
        region = RegionFactory(provider=provider, code=region_code)
        offer, _ = InstanceOffer.objects.get_or_create(
            provider=provider,
            instance_type=f"h100x1-{'ok' if confirmed else 'unsure'}",
            defaults={"gpu": gpu, "gpu_count": 1, "gpu_confirmed": confirmed},
        )
        values = {
            "billing": "on_demand",
            "usd_per_hour": Decimal("10"),
            "stated_on": TODAY - timedelta(days=2),
            "first_seen": now,
            "last_seen": now,
            "source_name": "test",
            **fields,
        }
        return InstancePriceFactory(offer=offer, region=region, **values)

    return {
        "high": price(cloud, "eu-west-1"),
        "americas": price(cloud, "us-east-1"),
        "stale": price(cloud, "eu-central-1", stated_on=TODAY - timedelta(days=400)),
        "flagged": price(cloud, "eu-north-1", flag="spot is a tenth of on-demand 100: suspect"),
        "marketplace": price(market, "eu-west-2"),
        "egress unknown": price(no_egress, "europe-west4"),
        "unconfirmed": price(cloud, "eu-south-1", confirmed=False),
    }


@pytest.fixture
def viewer_api(db) -> APIClient:
    user = UserFactory(username="v", roles=[VIEWER])
    return APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")


def test_high_confidence_in_europe_is_the_fresh_unflagged_egress_known_cloud_price(
    one_of_each_kind, viewer_api
):
    answer = viewer_api.get("/api/v1/prices/current/?confidence=high&geography=europe")
    assert answer.status_code == 200, answer.content
    rows = answer.json()["results"]
    assert [r["id"] for r in rows] == [one_of_each_kind["high"].pk]
    assert rows[0]["confidence"] == "high"
    assert "egress known" in rows[0]["confidence_reasons"]
    europe = viewer_api.get("/api/v1/prices/current/?geography=europe").json()["results"]
    levels = {r["id"]: r["confidence"] for r in europe}
    expected = {
        "high": "high",
        "stale": "medium",
        "flagged": "low",
        "marketplace": "medium",
        "egress unknown": "medium",
        "unconfirmed": "medium",
    }
    assert levels == {one_of_each_kind[kind].pk: level for kind, level in expected.items()}
    low = viewer_api.get("/api/v1/prices/current/?confidence=low").json()["results"]
    assert [r["id"] for r in low] == [one_of_each_kind["flagged"].pk]
    assert low[0]["confidence_reasons"][0].startswith("flagged: suspect")


def test_a_bad_confidence_is_refused_naming_the_field(one_of_each_kind, viewer_api):
    answer = viewer_api.get("/api/v1/prices/current/?confidence=certain")
    assert answer.status_code == 400
    assert [e["field"] for e in answer.json()["errors"]] == ["confidence"]


def test_the_prices_page_says_each_confidence_and_filters_by_it(client, one_of_each_kind):
    client.force_login(user_with_role("viewer", VIEWER))
    html = client.get("/prices/?geography=europe").content.decode()
    # each row's, and the filter's choice
    assert html.count("<strong>Medium confidence</strong>") == 4
    assert html.count("<strong>Low confidence</strong>") == 1
    assert html.count("<strong>High confidence</strong>") == 1
    high = client.get("/prices/?confidence=high&geography=europe").content.decode()
    assert "<strong>1</strong> current price matches the filters" in high
    assert "<strong>High confidence</strong>" in high
    assert "<strong>Medium confidence</strong>" not in high


def test_the_sql_rule_and_the_python_rule_agree_on_every_shipped_price(catalog):
    rows = list(with_confidence(current_prices()))
    assert len(rows) > 1000
    seen = set()
    for price in rows:
        assert price.confidence == price_confidence(price).level, price
        seen.add(price.confidence)
    assert seen == {HIGH, MEDIUM, LOW} or seen == {MEDIUM, LOW}


def test_every_page_showing_a_price_says_its_confidence_in_words(client, one_of_each_kind):
    client.force_login(user_with_role("viewer", VIEWER))
    high = one_of_each_kind["high"]
    cheapest = client.get("/gpus/h100-test/cheapest/").content.decode()
    start = cheapest.index('id="cheapest-summary"')
    headline = cheapest[start : cheapest.index("</div>", start)]
    # the cheapest unflagged is the marketplace's (all cost the same; by provider slug)
    assert "<strong>Medium confidence</strong>: a marketplace listing" in headline
    row = '<strong>Medium confidence</strong><span class="sub">egress unknown</span>'
    assert row in cheapest  # rows say it briefly: each says its reasons at length already
    dashboard = client.get("/").content.decode()
    assert "<strong>Medium confidence</strong>: a marketplace listing" in dashboard
    offer = client.get(f"/offers/{high.offer_id}/").content.decode()
    assert offer.count("<strong>High confidence</strong>") == 2  # eu-west-1, us-east-1
    assert "stated 400 days ago, beyond the 30-day limit (stale)" in offer


def test_a_gpu_s_cheapest_prices_in_the_api_say_their_confidence(one_of_each_kind, viewer_api):
    body = viewer_api.get("/api/v1/gpus/h100-test/cheapest/").json()
    levels = {(r["provider"]["slug"], r["confidence"]) for r in body["results"]}
    assert ("bazaar", "medium") in levels and ("quietcloud", "medium") in levels
    bazaar = next(r for r in body["results"] if r["provider"]["slug"] == "bazaar")
    assert bazaar["confidence_reasons"] == ["a marketplace listing, not a provider's list price"]


def test_the_price_exports_carry_each_price_s_confidence_and_filter_by_it(
    one_of_each_kind, viewer_api
):
    response = viewer_api.get("/api/v1/prices/current.csv", {"geography": "europe"})
    assert response.status_code == 200, response.content
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_id = {int(r["price_id"]): r for r in rows}
    assert by_id[one_of_each_kind["high"].pk]["confidence"] == "high"
    market = by_id[one_of_each_kind["marketplace"].pk]
    assert market["confidence"] == "medium"
    assert market["confidence_reasons"] == "a marketplace listing, not a provider's list price"
    flagged = by_id[one_of_each_kind["flagged"].pk]
    assert flagged["confidence"] == "low" and flagged["confidence_reasons"].startswith("flagged")
    high = viewer_api.get("/api/v1/prices/current.xlsx", {"confidence": "high"})
    sheet = openpyxl.load_workbook(io.BytesIO(high.content))["prices"]
    header = [c.value for c in sheet[1]]
    assert header[-2:] == ["confidence", "confidence_reasons"]
    cells = [[c.value for c in row] for row in sheet.iter_rows(min_row=2)]
    assert {row[header.index("price_id")] for row in cells} == {
        one_of_each_kind["high"].pk,
        one_of_each_kind["americas"].pk,
    }
    assert {row[header.index("confidence")] for row in cells} == {"high"}
    assert cells[0][header.index("confidence_reasons")].startswith("stated 2 days ago")


def test_a_token_price_is_judged_by_its_age_and_flag_and_its_page_says_so(
    settings, client, catalog
):
    settings.PRICE_STALE_DAYS = 30
    fresh = token_price_confidence_of(stated_on=TODAY - timedelta(days=1), flag="", today=TODAY)
    assert (fresh.level, fresh.reasons) == (
        HIGH,
        ("stated 1 days ago, within the 30-day limit", "unflagged"),
    )
    unknown = token_price_confidence_of(stated_on=None, flag="", today=TODAY)
    assert (unknown.level, unknown.short) == (MEDIUM, ("unknown age",))
    flagged = token_price_confidence_of(stated_on=TODAY, flag="billed in DBUs", today=TODAY)
    assert (flagged.level, flagged.reasons) == (LOW, ("flagged: billed in DBUs",))
    # the shipped token prices state no day: each row of the page says so in words, and a
    # flagged one is low
    client.force_login(user_with_role("viewer", VIEWER))
    html = client.get("/token-prices/").content.decode()
    rows = html.count('<td class="num" data-catalog-price data-label="USD per million input')
    flagged_rows = html.count('<tr class="suspect"')
    assert rows == 35 and flagged_rows >= 1
    medium = '<strong>Medium confidence</strong><span class="sub">unknown age</span>'
    low = '<strong>Low confidence</strong><span class="sub">flagged, unknown age</span>'
    assert (html.count(medium), html.count(low)) == (rows - flagged_rows, flagged_rows)


def test_a_dated_committed_price_on_a_gpu_s_page_says_its_confidence(settings, client, catalog):
    from hardware.committed.selectors import market_observations
    from hardware.confidence import observation_confidence

    settings.PRICE_STALE_DAYS = 30
    rows = list(market_observations(gpu="h100-sxm"))
    assert rows and all(observation_confidence(r).level != HIGH for r in rows)  # 2021-2025
    client.force_login(user_with_role("viewer", VIEWER))
    html = client.get("/gpus/h100-sxm/cheapest/").content.decode()
    table = html[html.index('id="observations-table"') :]
    table = table[: table.index("</table>")]
    said = re.findall(r'<span class="confidence confidence-(\w+)"', table)
    assert said == [observation_confidence(r).level for r in rows]
    assert "stale" in table[table.index("confidence-") :]
