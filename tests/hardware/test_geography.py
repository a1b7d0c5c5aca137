"""Regions a buyer names (issue 41): every region mapped to a geography from its code, and
``?geography=`` on the prices page and ``GET /api/v1/prices/current/``."""

import pytest
from django.urls import reverse

from accounts.roles import CATALOG_EDITOR, VIEWER
from hardware.geography import AMERICAS, ASIA_PACIFIC, EUROPE, OTHER, region_geography
from hardware.models import Region
from hardware.selectors import current_prices
from tests.api_crud import role_clients
from tests.factories import UserFactory

from .factories import InstanceOfferFactory, InstancePriceFactory, ProviderFactory, RegionFactory

CURRENT = "/api/v1/prices/current/"


@pytest.mark.parametrize(
    ("code", "geography"),
    [
        ("us-east-1", AMERICAS),  # AWS, Lambda
        ("sa-east-1", AMERICAS),  # AWS São Paulo, not Saudi Arabia
        ("eu-west-1", EUROPE),
        ("ap-southeast-3", ASIA_PACIFIC),
        ("me-west-1", OTHER),  # Lambda's Middle East
        ("af-johannesburg-1", OTHER),  # Oracle
        ("uk-london-1", EUROPE),
        ("europe-central-1", EUROPE),  # Lambda, GCP
        ("northamerica-northeast1", AMERICAS),
        ("australia-east-1", ASIA_PACIFIC),
        ("it-fr2", EUROPE),  # Seeweb
        ("no-kristiansand-1", EUROPE),  # Cudo
        ("IN1", ASIA_PACIFIC),  # Jarvislabs
        ("DE", EUROPE),  # Lium, Prime Intellect
        ("NORWAY-1", EUROPE),  # Hyperstack
        ("frankfurt-germany-5", EUROPE),  # Shadeform
        ("london-uk-1", EUROPE),
        ("jerusalem-israel-1", OTHER),
        ("Hafnarfjarðarkaupstaður, IS, EU", EUROPE),  # Vast
        (", CN, AS", ASIA_PACIFIC),
        ("Texas, US, NA", AMERICAS),
        ("westeurope", EUROPE),  # Azure
        ("australiaeast", ASIA_PACIFIC),  # "us" inside, yet Australia
        ("uksouth", EUROPE),
        ("uaenorth", OTHER),
        ("southafricanorth", OTHER),
        ("eastus", AMERICAS),
        ("westus2", AMERICAS),
    ],
)
def test_a_region_code_says_its_geography(code, geography):
    assert region_geography(code) == geography


@pytest.mark.parametrize("code", ["earth", "", "zz-somewhere-1", "XX", "Nowhere, XX, ZZ"])
def test_a_code_that_does_not_say_where_it_is_maps_to_no_geography(code):
    assert region_geography(code) is None


def test_every_shipped_region_has_a_geography_but_daytonas_earth(catalog):
    unmapped = list(Region.objects.filter(geography="").values_list("provider__slug", "code"))
    assert unmapped == [("daytona", "earth")]
    assert Region.objects.get(provider__slug="lambda", code="me-west-1").geography == OTHER
    assert Region.objects.get(provider__slug="aws", code="eu-north-1").geography == EUROPE
    assert Region.objects.get(provider__slug="azure", code="westus2").geography == AMERICAS


@pytest.fixture
def one_price_per_geography(db):
    """One current price in a European, an American, an Asian and an unplaced region."""
    provider = ProviderFactory(slug="geo-cloud")
    offer = InstanceOfferFactory(provider=provider, instance_type="geo.8x")
    prices = {}
    for code in ("eu-west-1", "us-east-1", "ap-northeast-1", "earth"):
        region = RegionFactory(provider=provider, code=code)
        prices[code] = InstancePriceFactory(offer=offer, region=region)
    return prices


def test_the_current_prices_api_filters_by_geography(one_price_per_geography):
    viewer = role_clients()[VIEWER]
    answer = viewer.get(CURRENT, {"geography": "europe", "provider": "geo-cloud"})
    assert answer.status_code == 200, answer.content
    rows = answer.json()["results"]
    assert [(r["region"]["code"], r["region"]["geography"]) for r in rows] == [
        ("eu-west-1", "europe")
    ]
    rows = viewer.get(CURRENT, {"provider": "geo-cloud"}).json()["results"]
    assert {r["region"]["code"]: r["region"]["geography"] for r in rows} == {
        "eu-west-1": "europe",
        "us-east-1": "americas",
        "ap-northeast-1": "asia-pacific",
        "earth": "",
    }
    rows = viewer.get(CURRENT, {"geography": "asia-pacific", "provider": "geo-cloud"}).json()
    assert [r["region"]["code"] for r in rows["results"]] == ["ap-northeast-1"]


def test_an_unknown_geography_is_a_400_naming_the_filter(one_price_per_geography):
    answer = role_clients()[VIEWER].get(CURRENT, {"geography": "emea"})
    assert answer.status_code == 400
    assert "geography" in str(answer.json()) and "emea" in str(answer.json())


def test_the_prices_page_filters_by_geography_and_explains_a_bad_value(
    client, one_price_per_geography
):
    client.force_login(UserFactory(username="buyer", roles=[VIEWER]))
    page = client.get(reverse("prices"), {"geography": "americas", "provider": "geo-cloud"})
    body = page.content.decode()
    assert page.status_code == 200
    assert '<select name="geography"' in body and '<option value="europe">Europe</option>' in body
    table = body.split('id="price-table"', 1)[1].split("</table>", 1)[0]
    assert "us-east-1" in table and "eu-west-1" not in table and "earth" not in table
    bad = client.get(reverse("prices"), {"geography": "mars"}).content.decode()
    assert 'id="filter-errors"' in bad and "Geography" in bad
    # the bad filter is left out: every current price is counted
    assert f"<strong>{current_prices().count()}</strong> current prices" in bad


def test_a_region_made_without_a_geography_gets_its_codes_and_an_editor_may_set_one(db):
    provider = ProviderFactory(slug="new-cloud")
    editor = role_clients()[CATALOG_EDITOR]
    made = editor.post(
        "/api/v1/regions/", {"provider": "new-cloud", "code": "eu-west-9"}, format="json"
    )
    assert made.status_code == 201, made.content
    assert made.json()["geography"] == "europe"
    placed = editor.post(
        "/api/v1/regions/",
        {"provider": "new-cloud", "code": "earth", "geography": "other"},
        format="json",
    )
    assert placed.status_code == 201 and placed.json()["geography"] == "other"
    refused = editor.patch(
        f"/api/v1/regions/{placed.json()['id']}/", {"geography": "moon"}, format="json"
    )
    assert refused.status_code == 400 and "geography" in str(refused.json())
    assert Region.objects.get(provider=provider, code="earth").geography == "other"


def test_the_regions_api_lists_the_regions_no_geography_was_found_for(catalog):
    viewer = role_clients()[VIEWER]
    unplaced = viewer.get("/api/v1/regions/", {"geography": "none"}).json()
    assert [(r["provider"]["slug"], r["code"]) for r in unplaced["results"]] == [
        ("daytona", "earth")
    ]
    europe = viewer.get("/api/v1/regions/", {"geography": "europe", "provider": "aws"}).json()
    assert {r["code"] for r in europe["results"]} == {
        "eu-central-1", "eu-north-1", "eu-south-2", "eu-west-1", "eu-west-2"
    }  # fmt: skip
