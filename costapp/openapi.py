"""The scenario and result documents in the OpenAPI schema, typed when the schema is generated: a
drf-spectacular postprocessing hook adds the components ``ScenarioDocument`` (from the engine's
field tables, ``costapp/tco/schema.py``) and ``ResultDocument`` (docs/scenario-format.md, "The
result document", with the engine's cost categories, option types and sweep fields), the parts
both share (``Simulation``, ``Distribution``, ``AssumptionReference``), and points the scenario's
``document``, the run's ``result`` and ``simulate/``'s body and answer at them.

The types say what each field takes (kind, range, choices; ``null`` wherever the contract lets
a field be absent) so generated clients get models; the rules across fields (which fields a
reference supplies, which a type requires) stay the engine's, whose refusals are 400s with their
paths."""

from collections.abc import Mapping
from typing import Any

from costapp.tco import CATEGORIES, GPU_FIGURE_NAMES, FieldSpec, swept_field
from costapp.tco import schema as tables

REF = "#/components/schemas/"


def field_schema(spec: FieldSpec, nested: dict[str, Any] | None = None) -> dict[str, Any]:
    """One field of a table as a JSON schema (``nested``: the schema of an object's or a list
    item's own table); an optional field may be ``null``, the same as absent."""
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
        out = dict(nested or {"type": "object"})
    if spec.default is not None:
        out["default"] = spec.default
    if not spec.required:
        out["nullable"] = True
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
            "token_price": table_schema(tables.TOKEN_PRICE_FIELDS),
            # format 1.3: a mix's layer, an option's name or {"option", "size"}
            "layers": {
                "oneOf": [
                    {"type": "string", "minLength": 1},
                    table_schema(tables.MIX_LAYER_FIELDS),
                ]
            },
        },
    )
    for name in sourced_numbers():
        option["properties"][name] = number_or_assumption(option["properties"][name])
    workload = table_schema(tables.WORKLOAD_COMMON_FIELDS, *_union(tables.WORKLOAD_TYPE_FIELDS))
    document = table_schema(
        tables.TOP_LEVEL_FIELDS,
        nested={
            "workloads": workload,
            "options": option,
            "simulation": {
                "allOf": [{"$ref": f"{REF}Simulation"}],
                "nullable": True,
                "description": "object: none means no simulation",
            },
            "sizing": table_schema(
                tables.SWEEP_FIELDS,
                nested={"layers": table_schema(tables.SWEEP_LAYER_FIELDS)},
            ),
        },
    )
    document["description"] = "a scenario document (docs/scenario-format.md)"
    return document


def sourced_numbers() -> list[str]:
    """The option fields a number may be given for as ``{"assumption": KEY}`` (version 1.2): the
    numbers of a dedicated or on-prem option, and ``gpu_mtbf_hours``, as the engine reads them."""
    names = ["gpu_mtbf_hours"]
    for kind in tables.ASSUMPTION_OPTION_TYPES:
        table = {**tables.OPTION_COMMON_FIELDS, **tables.OPTION_TYPE_FIELDS[kind]}
        names += [n for n, spec in table.items() if spec.kind in ("number", "whole")]
    return [name for name in dict.fromkeys(names) if name != "quote"]


def number_or_assumption(number: dict[str, Any]) -> dict[str, Any]:
    """A number field that may instead name a sourced assumption (``AssumptionReference``)."""
    own = {k: v for k, v in number.items() if k not in ("default", "nullable", "description")}
    wrapped = {"anyOf": [own, {"$ref": f"{REF}AssumptionReference"}]}
    wrapped.update({k: number[k] for k in ("default", "nullable") if k in number})
    wrapped["description"] = number["description"] + ', or {"assumption": KEY}'
    return wrapped


def simulation_schema() -> dict[str, Any]:
    """``Simulation``, the ``simulation`` section: ``paths``, ``seed`` and a ``Distribution``
    per uncertain quantity (docs/scenario-format.md, "Uncertainty")."""
    section = table_schema(tables.SIMULATION_FIELDS)
    for quantity in tables.SIMULATED_QUANTITIES:
        section["properties"][quantity] = {
            "allOf": [{"$ref": f"{REF}Distribution"}],
            "nullable": True,
            "description": f"the distribution of {quantity}, drawn once per path",
        }
    section["description"] = "the Monte Carlo paths, their seed and the uncertain quantities"
    return section


def distribution_schema() -> dict[str, Any]:
    """``Distribution``: triangular, normal or uniform, each with its own parameters."""
    dist = {"dist": FieldSpec("choice", required=True, choices=tables.DISTRIBUTIONS)}
    distribution = table_schema(dist, *_union(tables.DISTRIBUTION_FIELDS))
    distribution["description"] = "low, mode, high (triangular); mean, sd (normal); low, high"
    distribution["description"] += " (uniform); in the unit of the quantity it describes"
    return distribution


# --- the result document (docs/scenario-format.md, "The result document") ---------------------


def _value(kind: str, description: str, *, nullable: bool = False) -> dict[str, Any]:
    """A figure of the result: ``kind`` a JSON schema type, or ``number[]`` and the like."""
    if kind.endswith("[]"):
        out: dict[str, Any] = {"type": "array", "items": {"type": kind[:-2]}}
    else:
        out = {"type": kind}
    if nullable:
        out["nullable"] = True
    out["description"] = description
    return out


def _object(
    properties: Mapping[str, dict[str, Any]], optional: tuple[str, ...] = (), **more: Any
) -> dict[str, Any]:
    """An object of ``properties``, every one required but the ``optional`` ones."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": [name for name in properties if name not in optional],
        **more,
    }


SIMULATED_OPTION_FIELDS = {
    "p10_usd": _value("number", "10th percentile of total_usd over the paths [USD]"),
    "p50_usd": _value("number", "median of total_usd over the paths [USD]"),
    "p90_usd": _value("number", "90th percentile of total_usd over the paths [USD]"),
    "cumulative_p10_usd": _value("number[]", "per month, P10 of the cumulative cost [USD]"),
    "cumulative_p50_usd": _value("number[]", "per month, P50 of the cumulative cost [USD]"),
    "cumulative_p90_usd": _value("number[]", "per month, P90 of the cumulative cost [USD]"),
    "mean_npv_usd": _value("number", "mean NPV over the paths [USD]"),
    "p90_npv_usd": _value("number", "90th percentile of the NPV over the paths [USD]"),
    "tail_npv_usd": _value(
        "number",
        "format 1.3: mean NPV of the worst simulation.tail_fraction of the paths [USD]",
    ),
    "probability_cheapest": _value(
        "number", "share of paths on which it has the lowest NPV [fraction]"
    ),
}
"""The figures an option carries with a simulation only (``simulation.paths`` > 0)."""


def result_option_schema() -> dict[str, Any]:
    """One option's figures (``options[]`` of the result)."""
    breakdown = _object(
        {
            category: _value("number", f"{category} over the horizon [USD]")
            for category in CATEGORIES
        },
        description="totals by cost category, every category present, 0 where unused [USD]",
    )
    return _object(
        {
            "name": _value("string", "the option's name, as in the scenario"),
            "type": {"type": "string", "enum": list(tables.OPTION_TYPES), "description": "type"},
            "gpu": _value(
                "string", "the GPU's slug as resolved; null for an api option", nullable=True
            ),
            "monthly_usd": _value("number[]", "the cost of months 0 … H, month 0 first [USD]"),
            "cumulative_usd": _value("number[]", "running sum of monthly_usd [USD]"),
            "breakdown_usd": breakdown,
            "total_usd": _value("number", "sum of monthly_usd, nominal [USD]"),
            "npv_usd": _value("number", "discounted sum of monthly_usd [USD]"),
            "busy_gpu_hours": _value("number", "work on this option's GPU [GPU-h]"),
            "provisioned_gpus": _value("integer", "GPUs bought, leased or committed [GPUs]"),
            "average_utilization": _value("number", "busy over capacity [fraction]"),
            "usd_per_busy_gpu_hour": _value(
                "number", "total_usd / busy_gpu_hours; null when no work [USD/GPU-h]", nullable=True
            ),
            "shortfall_gpu_hours": _value("number", "work not done [GPU-h]"),
            "feasible": _value("boolean", "false when there is shortfall"),
            "savings_vs_baseline_pct": _value(
                "number",
                "saving against the baseline's total; null when it costs 0 [%]",
                nullable=True,
            ),
            "break_even_month": _value(
                "number",
                "simple payback against the baseline; null if never [months]",
                nullable=True,
            ),
            "break_even_utilization": _value(
                "number",
                "the utilization at which it costs the baseline's total [fraction]",
                nullable=True,
            ),
            "all_in_usd_per_million_tokens": _value(
                "number",
                "total_usd per million tokens served; null without tokens [USD/Mtok]",
                nullable=True,
            ),
            "goodput": _value(
                "number",
                "training work without failures over with them; null without training [fraction]",
                nullable=True,
            ),
            "warnings": _value("string[]", "what may not hold for this option, in words"),
            "layers": {
                "type": "array",
                "items": mix_layer_schema(),
                "description": "format 1.3, mix options only: what each layer and rest serve "
                "and cost",
            },
            **SIMULATED_OPTION_FIELDS,
        },
        optional=("layers", *SIMULATED_OPTION_FIELDS),
        description="one option's figures, in the order of the scenario",
    )


def mix_layer_schema() -> dict[str, Any]:
    """One entry of a mix's ``layers`` (docs/scenario-format.md, ``mix``)."""
    return _object(
        {
            "name": _value("string", "the member option's name"),
            "role": {"type": "string", "enum": ["layer", "rest"], "description": "its role"},
            "provisioned_gpus": _value(
                "integer", "a layer's size in GPUs; null for rest [GPUs]", nullable=True
            ),
            "served_gpu_hours": _value("number", "what it serves, in supply hours [GPU-h]"),
            "total_usd": _value("number", "its part of the mix's total, egress aside [USD]"),
        }
    )


def _size(description: str, *, nullable: bool = False) -> dict[str, Any]:
    """A sweep's size: a whole number, or (a mix, format 1.3) a list of the layers' sizes."""
    out: dict[str, Any] = {
        "oneOf": [
            {"type": "integer"},
            {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
        ],
        "description": description,
    }
    if nullable:
        out["nullable"] = True
    return out


SWEPT = sorted(
    {
        field
        for kind in tables.OPTION_TYPES
        for billing in tables.BILLINGS
        if (field := swept_field(kind, billing)) is not None
    }
)
"""The fields a sizing sweep sets (``committed_gpus``, ``servers``, a mix's ``layers``), by the
engine's rule."""
SIMULATED_SWEEP_FIELDS = ("mean_npv_usd", "p90_npv_usd", "tail_npv_usd", "shortfall_probability")


def sizing_entry_schema() -> dict[str, Any]:
    """One sweep of the result's ``sizing`` (docs/scenario-format.md, "Sizing")."""
    return _object(
        {
            "option": _value("string", "the swept option's name"),
            "field": {"type": "string", "enum": SWEPT, "description": "the field the sweep sets"},
            "objective": {
                "type": "string",
                "enum": list(tables.OBJECTIVES),
                "description": "the objective used",
            },
            "candidates": {
                "type": "array",
                "items": _size("a size (a mix's: its layers' sizes)"),
                "description": "the sizes, in order; every list is aligned with it",
            },
            "npv_usd": _value("number[]", "per candidate, NPV on the document's values [USD]"),
            "total_usd": _value("number[]", "per candidate, total on the document's values [USD]"),
            "feasible": _value("boolean[]", "per candidate, no shortfall"),
            "mean_npv_usd": _value("number[]", "per candidate, with a simulation: mean NPV [USD]"),
            "p90_npv_usd": _value("number[]", "per candidate, with a simulation: P90 NPV [USD]"),
            "tail_npv_usd": _value(
                "number[]", "per candidate, with a simulation: worst-tail mean NPV [USD]"
            ),
            "shortfall_probability": _value(
                "number[]", "per candidate, with a simulation: share of paths short [fraction]"
            ),
            "best": _size("the best qualifying size; null when none", nullable=True),
            "best_objective_usd": _value(
                "number", "the objective at best; null with it [USD]", nullable=True
            ),
        },
        optional=SIMULATED_SWEEP_FIELDS,
    )


SOURCE_FLAGS = (
    "stale",
    "flagged",
    "unconfirmed_variant",
    "egress_unknown",
    "demo",
    "draft",
    "expired",
)


def source_schema() -> dict[str, Any]:
    """One figure a catalog reference supplied (``sources[]``, version 1.2)."""
    return _object(
        {
            "path": _value("string", "the field of inputs it filled (options[1].usd_per_gpu_hour)"),
            "value": {
                "anyOf": [
                    {"type": "number"},
                    {"type": "array", "items": table_schema(tables.EGRESS_TIER_FIELDS)},
                ],
                "nullable": True,
                "description": "the number (or egress tiers) written there; null when unknown",
            },
            "source": _value("string", "where the catalog got it"),
            "stated_on": {
                "type": "string",
                "format": "date",
                "nullable": True,
                "description": "the day its source stated it; null when unknown",
            },
            "flags": {
                "type": "array",
                "items": {"type": "string", "enum": list(SOURCE_FLAGS)},
                "description": "what may not hold for it",
            },
        }
    )


def result_document_schema() -> dict[str, Any]:
    """``ResultDocument``: every option priced month by month, with the inputs used."""
    figures = _object(
        {name: _value("number", name, nullable=True) for name in GPU_FIGURE_NAMES},
        description="one GPU's catalog figures, null where it has none",
    )
    return _object(
        {
            "name": _value("string", "the scenario's name"),
            "cheapest": _value(
                "string",
                "the feasible option with the lowest npv_usd; null when none",
                nullable=True,
            ),
            "baseline": _value("string", "the baseline option's name"),
            "options": {
                "type": "array",
                "items": result_option_schema(),
                "description": "each option's figures",
            },
            "inputs": {
                "allOf": [{"$ref": f"{REF}ScenarioDocument"}],
                "description": "the normalised scenario priced: every default filled in, every"
                " catalog reference resolved; fed back in, it gives the same result",
            },
            "gpus": {
                "type": "object",
                "additionalProperties": figures,
                "description": "the catalog figures used, by GPU slug",
            },
            "warnings": _value("string[]", "what may not hold, in words"),
            "engine_version": _value("string", "the engine's version"),
            "sources": {
                "type": "array",
                "items": source_schema(),
                "description": "every figure a catalog reference supplied, in option order",
            },
            "simulation": {
                "allOf": [{"$ref": f"{REF}Simulation"}],
                "description": "the simulation section used, with a simulation only",
            },
            "sizing": {
                "type": "array",
                "items": sizing_entry_schema(),
                "description": "one entry per sweep, when the document has sweeps",
            },
        },
        optional=("simulation", "sizing"),
        description='a result document (docs/scenario-format.md, "The result document")',
    )


def documents_hook(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict:
    """drf-spectacular postprocessing: the documents typed (see the module)."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["ScenarioDocument"] = scenario_document_schema()
    schemas["Simulation"] = simulation_schema()
    schemas["AssumptionReference"] = {
        **table_schema(tables.ASSUMPTION_FIELDS),
        "description": "a number taken from the deployment's sourced assumptions, by its key",
    }
    schemas["Distribution"] = distribution_schema()
    schemas["ResultDocument"] = result_document_schema()
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
