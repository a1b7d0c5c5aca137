"""Hostile input to the API (docs/api.md, "Basics"): every malformed query, path or body is a 4xx in
the error format naming what is wrong, never a 500 and never silently ignored."""

import json

import pytest
from rest_framework.test import APIClient

from accounts.roles import ANALYST, CATALOG_EDITOR
from accounts.services import token_create
from tests.api_crud import make_base, make_price
from tests.factories import UserFactory

LISTS = (
    "/api/v1/gpus/",
    "/api/v1/providers/",
    "/api/v1/regions/",
    "/api/v1/offers/",
    "/api/v1/prices/",
    "/api/v1/prices/current/",
    "/api/v1/egress-tiers/",
    "/api/v1/dedicated-quotes/",
    "/api/v1/purchase-quotes/",
    "/api/v1/scenarios/",
    "/api/v1/runs/",
    "/api/v1/auth/tokens/",
)
ORDERED_LISTS = (
    "/api/v1/gpus/",
    "/api/v1/offers/",
    "/api/v1/prices/",
    "/api/v1/prices/current/",
    "/api/v1/dedicated-quotes/",
    "/api/v1/purchase-quotes/",
)


def client_for(*roles: str, name: str = "hostile") -> APIClient:
    user = UserFactory(username=name, roles=list(roles))
    _, key = token_create(user=user)
    client = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    client.raise_request_exception = False
    return client


def the_error(response, status: int) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/json")
    errors = response.json()["errors"]
    assert len(errors) == 1, errors
    assert set(errors[0]) == {"field", "message"}
    return errors[0]


@pytest.fixture
def editor(db):
    base = make_base()
    make_price(base.offer, base.region, "23.92")
    return client_for(CATALOG_EDITOR, ANALYST)


@pytest.mark.parametrize("path", ORDERED_LISTS)
def test_an_empty_ordering_name_is_a_400_naming_ordering(editor, path):
    for ordering in (",", "usd_per_gpu_hour,", ",-tdp_w"):
        response = editor.get(path, {"ordering": ordering})
        assert response.status_code == 400, (ordering, response.content[:300])
        fields = {error["field"] for error in response.json()["errors"]}
        assert fields == {"ordering"}


@pytest.mark.parametrize("path", LISTS)
def test_an_unknown_query_parameter_on_any_list_is_a_400_naming_it(editor, path):
    error = the_error(editor.get(path, {"gpu_model": "h100"}), 400)
    assert error["field"] == "gpu_model"
    assert error["message"].startswith("unknown query parameter")
    assert "page_size" in error["message"]
    assert editor.get(path, {"page": 1, "page_size": 5}).status_code == 200


def test_a_lists_own_filters_are_still_taken(editor):
    response = editor.get("/api/v1/prices/current/", {"gpu": "h100-test", "as_of": "2026-06-01"})
    assert response.status_code == 200, response.content[:300]
    error = the_error(editor.get("/api/v1/prices/", {"as_of": "2026-06-01"}), 400)
    assert error["field"] == "as_of"  # the history has no day to stand at
    assert editor.get("/api/v1/prices/changes/", {"since": "2026-01-01"}).status_code == 200
    error = the_error(editor.get("/api/v1/prices/changes/", {"since": "2026-01-01", "x": 1}), 400)
    assert error["field"] == "x"
    error = the_error(editor.get("/api/v1/gpus/h100-test/cheapest/", {"vendor": "nvidia"}), 400)
    assert error["field"] == "vendor"


def test_deeply_nested_json_is_a_400_anonymously_on_tokens_and_on_a_catalog_write(editor):
    anonymous = APIClient()
    anonymous.raise_request_exception = False
    for depth in (100_000, 1_000, 40):
        body = "[" * depth + "]" * depth
        error = the_error(
            anonymous.post("/api/v1/auth/tokens/", body, content_type="application/json"), 400
        )
        assert "nested" in error["message"], error
        error = the_error(
            editor.post("/api/v1/providers/", body, content_type="application/json"), 400
        )
        assert "nested" in error["message"], error
    unclosed = "[" * 100_000
    error = the_error(
        anonymous.post("/api/v1/auth/tokens/", unclosed, content_type="application/json"), 400
    )
    assert error["field"] is None


def test_a_nested_value_too_deep_inside_a_document_names_its_path(editor):
    deep: list = []
    for _ in range(40):
        deep = [deep]
    body = json.dumps({"name": "deep", "document": {"options": deep}})
    response = editor.post("/api/v1/scenarios/", body, content_type="application/json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"].startswith("document.options[0]") and "nested deeper" in error["message"]


def test_a_nul_in_a_slug_is_a_400_naming_the_field_in_the_path_and_the_body(editor):
    error = the_error(editor.get("/api/v1/gpus/h1%0000/"), 400)
    assert error["field"] == "slug" and "NUL" in error["message"]
    error = the_error(editor.patch("/api/v1/providers/a%00b/", {}, format="json"), 400)
    assert error["field"] == "slug"
    body = {"slug": "new\x00cloud", "name": "New", "kind": "gpu-cloud"}
    error = the_error(editor.post("/api/v1/providers/", body, format="json"), 400)
    assert error["field"] == "slug" and "NUL" in error["message"]
    body = {"provider": "lambda\x00", "instance_type": "x", "gpu": "h100", "gpu_count": 1}
    error = the_error(editor.post("/api/v1/offers/", body, format="json"), 400)
    assert error["field"] == "provider"
    error = the_error(editor.get("/api/v1/prices/", {"gpu": "h\x00100"}), 400)
    assert error["field"] == "gpu"


def test_nul_and_lone_surrogates_in_a_scenario_document_are_400s_naming_the_field(editor):
    for text, said in (("nul\x00", "NUL"), ("lone \ud800", "lone surrogate")):
        document = {"name": "hostile", "options": [{"name": text}]}
        body = json.dumps({"name": "ok", "document": document})  # \ud800 travels escaped
        error = the_error(
            editor.post("/api/v1/scenarios/", body, content_type="application/json"), 400
        )
        assert error["field"] == "document.options[0].name" and said in error["message"]
        error = the_error(
            editor.post("/api/v1/simulate/", json.dumps(document), content_type="application/json"),
            400,
        )
        assert error["field"] == "document.options[0].name"
    body = json.dumps({"name": "a\ud800", "document": {}})
    assert (
        the_error(editor.post("/api/v1/scenarios/", body, content_type="application/json"), 400)[
            "field"
        ]
        == "name"
    )


def test_a_body_over_the_limit_is_a_413_in_json(editor):
    eleven_mb = b'{"name": "' + b"x" * (11 * 1024 * 1024) + b'"}'
    for path in ("/api/v1/providers/", "/api/v1/scenarios/", "/api/v1/auth/tokens/"):
        error = the_error(editor.post(path, eleven_mb, content_type="application/json"), 413)
        assert error["field"] is None and "bytes" in error["message"]
    two_mb = b'{"name": "' + b"x" * (2 * 1000 * 1000) + b'"}'  # under Django's limit, over ours
    error = the_error(
        editor.post("/api/v1/simulate/", two_mb, content_type="application/json"), 413
    )
    assert "bytes" in error["message"]


def test_a_write_takes_json_only(editor):
    response = editor.post(
        "/api/v1/providers/", {"slug": "x", "name": "X", "kind": "gpu-cloud"}, format="multipart"
    )
    error = the_error(response, 415)
    assert "multipart/form-data" in error["message"]


def test_a_4xx_from_django_itself_is_in_the_error_format(editor, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    query = "&".join(f"q{n}=1" for n in range(20))
    error = the_error(editor.get(f"/api/v1/gpus/?{query}"), 400)
    assert error["field"] is None
