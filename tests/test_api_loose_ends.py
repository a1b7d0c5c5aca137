"""Inputs that once answered 500 answer 400 at their field; a repeated query parameter is refused
rather than read as its last value; the schema types what the API returns."""

from decimal import Decimal

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.roles import ANALYST, CATALOG_EDITOR
from accounts.services import token_create
from hardware.models import TokenPrice
from tests.costapp.runs_helpers import post_json
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def client_for(role: str) -> APIClient:
    user = UserFactory(username=f"user-{role}", roles=[role])
    return APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")


def api_document(token_price) -> dict:
    return {
        "name": "by the token",
        "workloads": [
            {
                "type": "inference",
                "name": "chat",
                "gpu": "h100-sxm",
                "params_billion": 70,
                "tokens_per_second": 200,
            },
        ],
        "options": [{"type": "api", "name": "hosted", "token_price": token_price}],
    }


@pytest.mark.parametrize(
    ("token_price", "field"),
    [
        ({"provider": ["fireworks"], "model": "m"}, "provider"),
        ({"provider": "fireworks", "model": {"a": 1}}, "model"),
        ({"provider": 7, "model": [1, 2]}, "provider"),
    ],
)
def test_a_token_price_named_by_anything_but_text_is_a_400_at_its_field(
    catalog, token_price, field
):
    analyst = client_for(ANALYST)
    for url, body in (
        ("/api/v1/scenarios/", {"name": "x", "document": api_document(token_price)}),
        ("/api/v1/simulate/", api_document(token_price)),
    ):
        response = post_json(analyst, url, body)
        assert response.status_code == 400, (url, response.content[:300])
        fields = [e["field"] for e in response.json()["errors"]]
        assert any(f.endswith(f"options[0].token_price.{field}") for f in fields), fields


def test_a_token_price_edit_colliding_with_another_row_is_a_400_and_changes_nothing(db):
    now = timezone.now()
    prices = [
        TokenPrice.objects.create(
            provider="acme",
            model=model,
            usd_per_million_input_tokens=Decimal("0.1"),
            usd_per_million_output_tokens=Decimal("1"),
            source="test",
            first_seen=now,
            last_seen=now,
        )
        for model in ("acme/a", "acme/b")
    ]
    editor = client_for(CATALOG_EDITOR)
    response = editor.patch(
        f"/api/v1/token-prices/{prices[1].pk}/", {"model": "acme/a"}, format="json"
    )
    assert response.status_code == 400, response.content
    assert [e["field"] for e in response.json()["errors"]] == ["model"]
    prices[1].refresh_from_db()
    assert prices[1].model == "acme/b"
    moved = editor.patch(
        f"/api/v1/token-prices/{prices[1].pk}/", {"model": "acme/c"}, format="json"
    )
    assert moved.status_code == 200 and moved.json()["model"] == "acme/c"


@pytest.mark.parametrize("value", ["9" * 30, str(2**63), "-1", "0", "1.5", "abc"])
def test_a_runs_scenario_filter_out_of_range_is_a_400_at_its_field(db, value):
    response = client_for(ANALYST).get("/api/v1/runs/", {"scenario": value})
    assert response.status_code == 400, response.content
    assert [e["field"] for e in response.json()["errors"]] == ["scenario"]
    assert (
        client_for(ANALYST if False else CATALOG_EDITOR)
        .get("/api/v1/runs/", {"scenario": str(2**63 - 1)})
        .status_code
        == 200
    )


def test_a_repeated_query_parameter_is_a_400_naming_it(db):
    viewer = client_for(ANALYST)
    for query in (
        "billing=spot&billing=on_demand",
        "ordering=usd_per_hour&ordering=-gpu_count",
    ):
        response = viewer.get(f"/api/v1/prices/current/?{query}")
        assert response.status_code == 400, query
        error = response.json()["errors"][0]
        assert error["field"] == query.split("=")[0] and "given 2 times" in error["message"]
    assert viewer.get("/api/v1/prices/current/?ordering=usd_per_hour,-gpu_count").status_code == 200


def test_the_schema_types_what_the_api_returns(db):
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    offer = schema["components"]["schemas"]["MarketObservation"]["properties"]["offer"]
    assert offer["type"] == "integer" and offer["nullable"] is True
    runs = schema["paths"]["/api/v1/runs/"]["get"]["parameters"]
    scenario = next(p for p in runs if p["name"] == "scenario")
    assert scenario["schema"]["type"] == "integer"
    prices = schema["paths"]["/api/v1/prices/current/"]["get"]["parameters"]
    ordering = next(p for p in prices if p["name"] == "ordering")
    assert ordering["schema"]["type"] == "array" and ordering["explode"] is False
