"""The scenario and result documents in the OpenAPI schema, typed from the engine's field tables
(``costapp/tco/schema.py``) when the schema is generated: a drf-spectacular postprocessing hook
adds the components ``ScenarioDocument`` and ``ResultDocument`` and points the scenario's
``document``, the run's ``result`` and ``simulate/``'s body and answer at them.

The types say what each field takes (kind, range, choices) so generated clients get models; the
rules across fields (which fields a reference supplies, which a type requires) stay the engine's,
whose refusals are 400s with their paths."""

from collections.abc import Mapping
from typing import Any

from costapp.tco import FieldSpec
from costapp.tco import schema as tables

REF = "#/components/schemas/"


def field_schema(spec: FieldSpec, nested: dict[str, Any] | None = None) -> dict[str, Any]:
    """One field of a table as a JSON schema (``nested``: the schema of an object's or a list
    item's own table)."""
    out: dict[str, Any]
    if spec.kind in ("whole", "number"):
        out = {"type": "integer" if spec.kind == "whole" else "number"}
        if spec.low is not None:
            out["minimum"] = spec.low
            if spec.low_open:
                out["exclusiveMinimum"] = True
        if spec.high is not None:
            out["maximum"] = spec.high
            if spec.high_open:
                out["exclusiveMaximum"] = True
    elif spec.kind == "text":
        out = {"type": "string", "minLength": 1}
    elif spec.kind == "choice":
        out = {"type": "string", "enum": list(spec.choices)}
    elif spec.kind == "list":
        out = {"type": "array", "items": nested or {"type": "object"}}
    else:
        out = nested or {"type": "object"}
    if spec.default is not None:
        out["default"] = spec.default
    unit = " [unit as docs/scenario-format.md gives it]" if spec.kind in ("whole", "number") else ""
    out.setdefault("description", f"{spec.kind}{' (required)' if spec.required else ''}{unit}")
    return out


def table_schema(
    *tables_: Mapping[str, FieldSpec], nested: Mapping[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """An object of the fields of ``tables_`` (the first one's required fields required)."""
    properties: dict[str, Any] = {}
    for table in tables_:
        for name, spec in table.items():
            properties.setdefault(name, field_schema(spec, (nested or {}).get(name)))
    required = [name for name, spec in tables_[0].items() if spec.required]
    return {
        "type": "object",
        "properties": properties,
        **({"required": required} if required else {}),
    }


def _union(families: Mapping[str, Mapping[str, FieldSpec]]) -> list[Mapping[str, FieldSpec]]:
    return list(families.values())


def scenario_document_schema() -> dict[str, Any]:
    """``ScenarioDocument``: docs/scenario-format.md, from the engine's tables."""
    tier = table_schema(tables.EGRESS_TIER_FIELDS)
    option = table_schema(
        tables.OPTION_COMMON_FIELDS,
        *_union(tables.OPTION_TYPE_FIELDS),
        *_union(tables.BILLING_FIELDS),
        nested={
            "offer": table_schema(tables.OFFER_FIELDS),
            "egress_tiers": tier,
            "financing": table_schema(tables.FINANCING_FIELDS),
        },
    )
    workload = table_schema(tables.WORKLOAD_COMMON_FIELDS, *_union(tables.WORKLOAD_TYPE_FIELDS))
    document = table_schema(
        tables.TOP_LEVEL_FIELDS,
        nested={
            "workloads": workload,
            "options": option,
            "simulation": table_schema(tables.SIMULATION_FIELDS),
            "sizing": table_schema(tables.SWEEP_FIELDS),
        },
    )
    document["description"] = "a scenario document (docs/scenario-format.md)"
    return document


RESULT_DOCUMENT = {
    "type": "object",
    "description": 'a result document (docs/scenario-format.md, "Result"): every option priced'
    " month by month, with the inputs used",
    "properties": {
        "format_version": {"type": "string", "description": "the format's version"},
        "engine_version": {"type": "string", "description": "the engine's version"},
        "inputs": {
            "allOf": [{"$ref": f"{REF}ScenarioDocument"}],
            "description": "the normalised document priced",
        },
        "options": {
            "type": "array",
            "items": {"type": "object"},
            "description": "each option's figures",
        },
        "warnings": {"type": "array", "items": {}, "description": "what may not hold"},
    },
}


def documents_hook(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict:
    """drf-spectacular postprocessing: the documents typed (see the module)."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["ScenarioDocument"] = scenario_document_schema()
    schemas["ResultDocument"] = RESULT_DOCUMENT
    scenario = {"$ref": f"{REF}ScenarioDocument"}
    for name in ("Scenario", "ScenarioRequest", "PatchedScenarioRequest"):
        properties = schemas.get(name, {}).get("properties", {})
        if "document" in properties:
            properties["document"] = {**scenario_with(properties["document"])}
    for name in ("Run",):
        properties = schemas.get(name, {}).get("properties", {})
        if "result" in properties:
            properties["result"] = {
                "allOf": [{"$ref": f"{REF}ResultDocument"}],
                "nullable": True,
                "description": properties["result"].get("description", ""),
            }
    simulate = result.get("paths", {}).get("/api/v1/simulate/", {}).get("post")
    if simulate is not None:
        body = simulate.get("requestBody", {}).get("content", {})
        for media in body.values():
            media["schema"] = scenario
        answer = simulate.get("responses", {}).get("200", {}).get("content", {})
        for media in answer.values():
            media["schema"] = {"$ref": f"{REF}ResultDocument"}
    return result


def scenario_with(field: dict[str, Any]) -> dict[str, Any]:
    """The scenario document's reference, keeping ``field``'s description."""
    return {
        "allOf": [{"$ref": f"{REF}ScenarioDocument"}],
        "description": field.get("description", ""),
    }
