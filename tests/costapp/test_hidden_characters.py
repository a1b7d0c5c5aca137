"""Names that read otherwise than they are (direction overrides, zero-width characters) are
refused at their field, in a scenario's name and every name of its document."""

import pytest

from costapp.models import Scenario
from costapp.tco import hidden_characters_error

from .runs_helpers import analyst, post_json, scenario_document

pytestmark = pytest.mark.django_db

RLO = "invoice\u202egpj.exe"
ZERO_WIDTH = "H100\u200b fleet"


def test_the_rule_names_each_hidden_character():
    assert hidden_characters_error("H100 fleet — 64 × GPUs, 東京") == ""
    assert hidden_characters_error(RLO) == (
        "must not contain direction overrides or invisible characters (U+202E)"
    )
    assert "U+200B" in hidden_characters_error(ZERO_WIDTH)
    assert "U+2066" in hidden_characters_error("a\u2066b\u2069") and "U+FEFF" in (
        hidden_characters_error("\ufeffname")
    )


def test_the_api_refuses_them_at_each_field_and_stores_nothing(client, catalog):
    client.force_login(analyst("alice"))
    document = scenario_document()
    document["options"][0]["name"] = RLO
    document["workloads"][0]["name"] = ZERO_WIDTH
    response = post_json(client, "/api/v1/scenarios/", {"name": RLO, "document": document})
    assert response.status_code == 400
    errors = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert errors["name"].endswith("(U+202E)"), errors
    document_errors = {
        e["field"]: e["message"]
        for e in post_json(
            client, "/api/v1/scenarios/", {"name": "fleet", "document": document}
        ).json()["errors"]
    }
    assert document_errors == {
        "document.workloads[0].name": "must not contain direction overrides or invisible "
        "characters (U+200B)",
        "document.options[0].name": "must not contain direction overrides or invisible "
        "characters (U+202E)",
    }
    assert Scenario.objects.count() == 0
    document["options"][0]["name"] = "rent"
    document["workloads"][0]["name"] = "fleet"
    assert (
        post_json(client, "/api/v1/scenarios/", {"name": "fleet", "document": document}).status_code
        == 201
    )


def test_the_catalog_api_refuses_them_at_each_field(db):
    from rest_framework.test import APIClient

    from accounts.roles import CATALOG_EDITOR
    from accounts.services import token_create
    from hardware.models import Provider
    from tests.factories import UserFactory

    editor = UserFactory(username="ed", roles=[CATALOG_EDITOR])
    api = APIClient(HTTP_AUTHORIZATION=f"Token {token_create(user=editor)[1]}")
    body = {"slug": "evil", "name": "Cloud\u202eduolC", "kind": "gpu-cloud"}
    response = api.post("/api/v1/providers/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [
        {
            "field": "name",
            "message": "must not contain direction overrides or invisible characters (U+202E)",
        }
    ]
    assert not Provider.objects.filter(slug="evil").exists()
    body["name"] = "Cloud, Inc."
    assert api.post("/api/v1/providers/", body, format="json").status_code == 201


def test_the_catalog_admin_refuses_them_at_each_field(admin_client):
    from hardware.models import Provider

    body = {"slug": "evil", "name": "Cloud\u200b Inc", "kind": "gpu-cloud"}
    page = admin_client.post("/admin/hardware/provider/add/", body)
    assert page.status_code == 200  # the form again, with the error at the field
    assert "must not contain direction overrides or invisible characters (U+200B)" in (
        page.content.decode()
    )
    assert not Provider.objects.filter(slug="evil").exists()
    body["name"] = "Cloud Inc"
    assert admin_client.post("/admin/hardware/provider/add/", body).status_code == 302
    assert Provider.objects.filter(slug="evil", name="Cloud Inc").exists()


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("region", "europe\u202e", "U+202E"),
        ("serve_model", "llama-3.1-8b\u200b", "U+200B"),
        ("tokens_per_day", "2000\u200d000", "U+200D"),
        ("kinds", ["gpu-cloud", "\u2066marketplace\u2069"], "U+2066, U+2069"),
        ("serve", "on\ufeff", "U+FEFF"),
    ],
)
def test_asks_form_refuses_them_at_each_field_and_stores_nothing(
    client, catalog, field, value, code
):
    from costapp.ask.presets import EXAMPLE_QUESTION
    from costapp.models import Question

    client.force_login(analyst("lead"))
    response = client.post("/ask/", {**EXAMPLE_QUESTION, field: value})
    assert response.status_code == 200
    message = f"Must not contain direction overrides or invisible characters ({code})."
    assert response.context["form"].errors == {field: [message]}  # alone, at its field
    page = response.content.decode()
    at_field = page[page.index(f'id="field-{field}"') + 1 :].split('id="field-')[0]
    assert message in at_field
    assert not Question.objects.exists() and not Scenario.objects.exists()
    valid = {**EXAMPLE_QUESTION, field: value}
    valid[field] = EXAMPLE_QUESTION.get(field) or "americas"
    assert client.post("/ask/", valid).status_code == 302
