"""The OpenAPI schema a generated client is built from (docs/api.md): every operation documents
the error envelope for the errors it may answer, each write takes JSON only, and the scenario and
result documents are typed from the engine's field tables."""

import pytest
from jsonschema import Draft4Validator
from rest_framework.test import APIClient

from costapp.scenarios import services
from costapp.tco import schema as tables
from tests.costapp.runs_helpers import SCENARIOS, scenario_document


@pytest.fixture(scope="module")
def openapi(django_db_blocker):
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def operations(openapi):
    for path, methods in openapi["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_operation_documents_its_errors_in_the_envelope(openapi):
    envelope = {"$ref": "#/components/schemas/Errors"}
    count = 0
    for path, method, operation in operations(openapi):
        count += 1
        responses = operation["responses"]
        expected = {"400", "401", "403", "406", "429"}
        if "{" in path:
            expected.add("404")
        if "requestBody" in operation:
            expected |= {"413", "415"}
        assert expected <= set(responses), (method, path, sorted(responses))
        for code, response in responses.items():
            if code[0] in "45":
                assert response["content"]["application/json"]["schema"] == envelope, (path, code)
        assert "Retry-After" in responses["429"]["headers"]
    assert count >= 50
    conflicts = {
        ("post", "/api/v1/refresh-runs/{id}/approve/"),
        ("post", "/api/v1/refresh-runs/{id}/discard/"),
        ("post", "/api/v1/runs/{id}/cancel/"),
        ("get", "/api/v1/runs/{id}/monthly.csv"),
    }
    for method, path in conflicts:
        assert "409" in openapi["paths"][path][method]["responses"], (method, path)
    assert "503" in openapi["paths"]["/api/v1/scenarios/{id}/runs/"]["post"]["responses"]
    errors = openapi["components"]["schemas"]["Errors"]
    assert errors["required"] == ["errors"]
    assert errors["properties"]["errors"]["items"]["required"] == ["field", "message"]


def test_every_write_takes_one_content_type_json(openapi):
    writes = [
        (path, method, operation["requestBody"]["content"])
        for path, method, operation in operations(openapi)
        if "requestBody" in operation
    ]
    assert writes
    assert [w for w in writes if list(w[2]) != ["application/json"]] == []


def test_the_documents_are_typed_from_the_engines_tables(openapi):
    schemas = openapi["components"]["schemas"]
    document = schemas["ScenarioDocument"]
    assert set(document["properties"]) == set(tables.TOP_LEVEL_FIELDS)
    assert set(document["required"]) == {
        name for name, spec in tables.TOP_LEVEL_FIELDS.items() if spec.required
    }
    option = document["properties"]["options"]["items"]
    assert set(tables.CLOUD_FIELDS) <= set(option["properties"])
    assert option["properties"]["type"]["enum"] == list(tables.OPTION_COMMON_FIELDS["type"].choices)
    assert set(option["properties"]["offer"]["properties"]) == set(tables.OFFER_FIELDS)
    assert schemas["Scenario"]["properties"]["document"]["allOf"] == [
        {"$ref": "#/components/schemas/ScenarioDocument"}
    ]
    assert schemas["Run"]["properties"]["result"]["allOf"] == [
        {"$ref": "#/components/schemas/ResultDocument"}
    ]
    simulate = openapi["paths"]["/api/v1/simulate/"]["post"]
    assert simulate["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ScenarioDocument"
    }
    assert simulate["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ResultDocument"
    }


def json_schema(node, components, *, closed):
    """An OpenAPI 3.0 schema as a draft-4 JSON schema (``$ref`` inlined, ``nullable`` as a
    ``null`` type); ``closed``: every object with properties takes no other field, so a field the
    engine writes but the schema does not name fails too."""
    if isinstance(node, list):
        return [json_schema(item, components, closed=closed) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return json_schema(components[node["$ref"].rsplit("/", 1)[1]], components, closed=closed)
    out = {key: json_schema(value, components, closed=closed) for key, value in node.items()}
    if key_is_properties := ("properties" in node and isinstance(node["properties"], dict)):
        out["properties"] = {
            name: json_schema(value, components, closed=closed)
            for name, value in node["properties"].items()
        }
    if closed and key_is_properties and "additionalProperties" not in node:
        out["additionalProperties"] = False
    if out.pop("nullable", False):
        if "type" in out:
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


SHIPPED = sorted(path.stem for path in SCENARIOS.glob("*.json"))


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_scenario_and_its_result_fit_the_typed_documents(openapi, catalog, name):
    """The result of each shipped scenario (a simulation of 300 paths where it has one) fits
    ``ResultDocument`` with no field left unnamed, its inputs included; the document itself fits
    ``ScenarioDocument``."""
    components = openapi["components"]["schemas"]
    document = scenario_document(name)
    if document.get("simulation", {}).get("paths"):
        document["simulation"]["paths"] = 300
    result = services.scenario_simulate(document=document)
    for schema, value in (("ResultDocument", result), ("ScenarioDocument", document)):
        checker = Draft4Validator(json_schema(components[schema], components, closed=True))
        problems = [
            f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
            for error in checker.iter_errors(value)
        ]
        assert problems == [], (schema, problems[:10])
    assert result["options"] and "simulation" in result or name != "uncertain-h100-fleet"
    assert "sizing" in result or name != "size-the-fleet"


def test_a_sourced_number_fits_the_scenario_document_where_the_engine_reads_one(openapi):
    components = openapi["components"]["schemas"]
    checker = Draft4Validator(json_schema(components["ScenarioDocument"], components, closed=True))
    document = scenario_document("uncertain-h100-fleet")
    on_prem = document["options"][4]
    assert on_prem["type"] == "on_prem"
    on_prem["pue"] = {"assumption": "colo-pue"}
    document["options"][0]["gpu_mtbf_hours"] = {"assumption": "h100-mtbf"}
    assert list(checker.iter_errors(document)) == []
    document["options"][0]["usd_per_gpu_hour"] = {"assumption": "a-price"}  # no such reference
    document["options"][3]["setup_usd"] = {"key": "a-price"}
    paths = sorted(".".join(map(str, e.absolute_path)) for e in checker.iter_errors(document))
    assert paths == ["options.0.usd_per_gpu_hour", "options.3.setup_usd"]
