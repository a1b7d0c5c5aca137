"""``token-prices/`` and ``assumptions/`` through the shared catalog API mixin (tests/api_crud.py),
on the loaded catalog for the figures of the shipped files, and in the OpenAPI schema."""

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from accounts.roles import CATALOG_EDITOR, VIEWER
from hardware.hosted.selectors import assumption_value, token_price_terms
from hardware.models import Assumption, TokenPrice
from tests.api_crud import CatalogCrudTests, role_clients

T0 = datetime(2026, 1, 1, tzinfo=UTC)
FIREWORKS_70B = "fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct"


def make_token_price(provider: str, model: str, output: str, **extra) -> TokenPrice:
    fields = {
        "usd_per_million_input_tokens": Decimal("0.1"),
        "usd_per_million_output_tokens": Decimal(output),
        "source": "test price page",
        "first_seen": T0,
        "last_seen": T0,
        **extra,
    }
    return TokenPrice.objects.create(provider=provider, model=model, **fields)


def make_assumption(key: str, value: str, **extra) -> Assumption:
    fields = {
        "unit": "ratio",
        "applies_to": "on_prem.pue",
        "source": "a survey",
        "confidence": "medium",
        "stated_on": date(2026, 6, 1),
        "first_seen": T0,
        "last_seen": T0,
        **extra,
    }
    return Assumption.objects.create(key=key, value=Decimal(value), **fields)


class TestTokenPrices(CatalogCrudTests):
    path = "/api/v1/token-prices/"

    def make(self, base, i):
        provider = "acme" if i % 2 else "other"
        return make_token_price(provider, f"{provider}/model-{i}", f"{i + 1}.5")

    def create_body(self, base):
        return {
            "provider": "acme",
            "model": "acme/new-model",
            "usd_per_million_input_tokens": "0.25",
            "usd_per_million_output_tokens": "1.25",
            "source": "acme.test/pricing",
            "stated_on": "2026-11-30",
        }

    def update_body(self, base, obj):
        return {"usd_per_million_output_tokens": "9.75"}

    def updated(self, obj):
        return obj.usd_per_million_output_tokens == Decimal("9.75")

    def filter_case(self, base, objects):
        return {"provider": "acme", "q": "model-3"}, {objects[3].pk}

    def test_the_list_holds_the_current_price_and_the_older_one_stays_readable(
        self, base, role_clients
    ):
        old = make_token_price("acme", "acme/m", "2.00")
        editor = role_clients[CATALOG_EDITOR]
        body = {**self.create_body(base), "model": "acme/m", "usd_per_million_output_tokens": "3"}
        created = editor.post(self.path, body, format="json").json()
        listed = role_clients[VIEWER].get(self.path, {"model": "acme/m"}).json()["results"]
        assert [row["id"] for row in listed] == [created["id"]]
        assert listed[0]["usd_per_million_output_tokens"] == "3.0000000000"
        assert listed[0]["stale"] is False and listed[0]["stated_on"] == "2026-11-30"
        older = role_clients[VIEWER].get(f"{self.path}{old.pk}/").json()
        assert older["usd_per_million_output_tokens"] == "2.0000000000" and older["stale"] is True

    def test_a_bad_price_is_refused_naming_the_field(self, base, role_clients):
        editor = role_clients[CATALOG_EDITOR]
        body = {**self.create_body(base), "usd_per_million_input_tokens": "-1"}
        response = editor.post(self.path, body, format="json")
        assert response.status_code == 400
        assert [e["field"] for e in response.json()["errors"]] == ["usd_per_million_input_tokens"]
        body = {**self.create_body(base), "currency": "EUR"}
        response = editor.post(self.path, body, format="json")
        assert [e["field"] for e in response.json()["errors"]] == ["currency"]
        assert not TokenPrice.objects.filter(model="acme/new-model").exists()


class TestAssumptions(CatalogCrudTests):
    path = "/api/v1/assumptions/"
    lookup = "key"

    def make(self, base, i):
        confidence = "high" if i % 2 else "low"
        return make_assumption(f"key_{i}", f"1.{i}", confidence=confidence)

    def create_body(self, base):
        return {
            "key": "colo_test",
            "value": "150.5",
            "unit": "USD per kW-month",
            "applies_to": "on_prem.colo_usd_per_kw_month",
            "source": "a broker's report",
            "stated_on": "2026-10-01",
            "confidence": "medium",
        }

    def update_body(self, base, obj):
        return {"value": "1.42"}

    def updated(self, obj):
        return obj.value == Decimal("1.42")

    def filter_case(self, base, objects):
        return {"confidence": "high", "q": "key_3"}, {"key_3"}

    def test_a_newer_statement_of_a_key_is_a_new_row_and_the_old_one_stays(
        self, base, role_clients
    ):
        make_assumption("colo_test", "140")
        response = role_clients[CATALOG_EDITOR].post(
            self.path, self.create_body(base), format="json"
        )
        assert response.status_code == 201, response.content
        assert Assumption.objects.filter(key="colo_test").count() == 2
        got = role_clients[VIEWER].get(f"{self.path}colo_test/").json()
        assert got["value"] == "150.5000000000" and got["stale"] is False
        assert assumption_value("colo_test").value == 150.5

    def test_bad_fields_are_refused_naming_them(self, base, role_clients):
        body = {**self.create_body(base), "applies_to": "colo", "confidence": "sure", "key": "A B"}
        response = role_clients[CATALOG_EDITOR].post(self.path, body, format="json")
        assert response.status_code == 400
        fields = sorted(e["field"] for e in response.json()["errors"])
        assert fields == ["applies_to", "confidence", "key"]
        renamed = role_clients[CATALOG_EDITOR].patch(
            f"{self.path}{self.make(base, 0).key}/", {"key": "key_9"}, format="json"
        )
        assert renamed.status_code == 400 and renamed.json()["errors"][0]["field"] == "key"
        assert not Assumption.objects.filter(key="key_9").exists()


@pytest.mark.django_db
def test_the_loaded_figures_answer_a_viewer_and_writes_need_a_catalog_editor(catalog):
    clients = role_clients()
    viewer, editor = clients[VIEWER], clients[CATALOG_EDITOR]
    listed = viewer.get("/api/v1/token-prices/", {"provider": "fireworks", "model": FIREWORKS_70B})
    assert listed.status_code == 200
    (row,) = listed.json()["results"]
    assert row["usd_per_million_input_tokens"] == row["usd_per_million_output_tokens"]
    assert row["usd_per_million_output_tokens"] == "0.9000000000"
    assert row["stated_on"] is None and row["stale"] is True
    assert row["source"].startswith("BerriAI/litellm")
    assert viewer.get("/api/v1/token-prices/").json()["count"] == 35
    colo = viewer.get("/api/v1/assumptions/colo_usd_per_kw_month/")
    assert colo.status_code == 200
    assert colo.json()["value"] == "184.0600000000" and colo.json()["source"].startswith("CBRE")
    assert viewer.get("/api/v1/assumptions/").json()["count"] == 11
    assert viewer.get("/api/v1/assumptions/no_such_key/").status_code == 404

    url = f"/api/v1/token-prices/{row['id']}/"
    assert (
        viewer.patch(url, {"usd_per_million_output_tokens": "1"}, format="json").status_code == 403
    )
    assert (
        editor.patch(url, {"usd_per_million_output_tokens": "1"}, format="json").status_code == 200
    )
    assert token_price_terms("fireworks", FIREWORKS_70B).usd_per_million_output_tokens == 1.0
    url = "/api/v1/assumptions/colo_usd_per_kw_month/"
    assert viewer.patch(url, {"value": "200"}, format="json").status_code == 403
    assert editor.patch(url, {"value": "200"}, format="json").status_code == 200
    history = Assumption.history.filter(key="colo_usd_per_kw_month").order_by("history_date")
    assert [h.history_user.username if h.history_user else None for h in history] == [
        None,
        "user-catalog-editor",
    ]


@pytest.mark.django_db
def test_both_paths_and_their_filters_are_in_the_openapi_schema(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    params = {p["name"] for p in schema["paths"]["/api/v1/token-prices/"]["get"]["parameters"]}
    assert {"provider", "model", "q"} <= params
    assert "/api/v1/assumptions/{key}/" in schema["paths"]
    props = schema["components"]["schemas"]["Assumption"]["properties"]
    assert {"key", "value", "unit", "applies_to", "source", "stated_on", "confidence"} <= set(props)
    props = schema["components"]["schemas"]["TokenPrice"]["properties"]
    assert {"provider", "model", "usd_per_million_input_tokens", "usd_per_million_output_tokens",
            "source", "stated_on", "stale"} <= set(props)  # fmt: skip


def test_stale_marks_move_with_the_day(db):
    recent = make_token_price("acme", "acme/r", "1", stated_on=date.today() - timedelta(days=2))
    assert recent.stale is False
    assert make_token_price("acme", "acme/old", "1", stated_on=date(2020, 1, 1)).stale is True
