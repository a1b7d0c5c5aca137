"""The OpenAPI schema documents every catalog field, numbers with their unit, and every filter."""

import re

import pytest

UNIT = re.compile(r"\[[^\]]+\]")
NUMERIC = {"integer", "number"}


@pytest.mark.django_db
def test_every_field_of_the_catalog_is_described_and_numbers_carry_a_unit(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    missing, unitless = [], []
    for name, component in schema["components"]["schemas"].items():
        for field, spec in component.get("properties", {}).items():
            if field == "id":
                continue
            description = spec.get("description", "")
            if not description:
                missing.append(f"{name}.{field}")
            numeric = spec.get("type") in NUMERIC or spec.get("format") == "decimal"
            if numeric and not UNIT.search(description):
                unitless.append(f"{name}.{field}: {description}")
    assert not missing, missing
    assert not unitless, unitless


@pytest.mark.django_db
def test_the_price_filters_of_api_md_are_in_the_schema(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path in ("/api/v1/prices/", "/api/v1/prices/current/", "/api/v1/prices/current.csv"):
        names = {p["name"] for p in schema["paths"][path]["get"]["parameters"]}
        assert names >= {
            "gpu",
            "provider",
            "region",
            "billing",
            "gpu_count",
            "min_usd_per_gpu_hour",
            "max_usd_per_gpu_hour",
            "observed_after",
            "observed_before",
            "q",
            "ordering",
        }, path
    current = {p["name"] for p in schema["paths"]["/api/v1/prices/current/"]["get"]["parameters"]}
    assert {"as_of", "page", "page_size"} <= current
