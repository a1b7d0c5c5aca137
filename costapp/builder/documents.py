"""A scenario document as form data (as a browser would post it), and the fields the form cannot
show, each as an error at its path; :meth:`costapp.builder.aggregate.ScenarioBuilder.document`
is the way back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from costapp.tco import FieldError, schema

if TYPE_CHECKING:
    pass
from costapp.builder.catalog import token_price_value
from costapp.builder.fields import layers_text, ranges_text, tiers_text, value_text
from costapp.builder.forms import (
    BILLING_OWNERS,
    DIST_PARAMS,
    GROWTH_A_YEAR,
    OPTION_FORM_FIELDS,
    QUOTE_FIELDS,
    ScenarioForm,
)
from costapp.builder.labels import ASSUMPTION_SUFFIX
from costapp.scenarios.growth import yearly_text


def _row_data(
    prefix: str, index: int, item: Mapping[str, Any], allowed: Iterable[str]
) -> tuple[dict[str, str], list[str]]:
    data: dict[str, str] = {}
    leftovers: list[str] = []
    allowed = set(allowed)
    for key, value in item.items():
        if key not in allowed:
            leftovers.append(key)
        elif prefix == "options" and key == "token_price" and isinstance(value, Mapping):
            data[f"{prefix}-{index}-{key}"] = token_price_value(
                value.get("provider"), value.get("model")
            )
        elif prefix == "options" and key == "layers":  # format 1.3: a mix, one layer a line
            data[f"{prefix}-{index}-{key}"] = layers_text(value)
        elif prefix == "sizing" and key == "layers":  # a joint sizing, one range a line
            data[f"{prefix}-{index}-{key}"] = ranges_text(value)
        elif (
            prefix == "options"
            and isinstance(value, Mapping)
            and list(value) == ["assumption"]
            and isinstance(value["assumption"], str)
        ):  # {"assumption": KEY}: the picker beside the number, the number left empty
            data[f"{prefix}-{index}-{key}{ASSUMPTION_SUFFIX}"] = value["assumption"]
        else:
            data[f"{prefix}-{index}-{key}"] = value_text(value)
    return data, leftovers


def document_form_data(
    document: Mapping[str, Any], *, description: str = "", shared: bool = False
) -> tuple[dict[str, str], list[FieldError]]:
    """The form data showing ``document`` (as a browser would post it), and the fields the
    form cannot show (unknown fields, fields of another type), each as an error at its path."""
    data: dict[str, str] = {"description": description}
    if shared:
        data["shared"] = "on"
    leftovers: list[FieldError] = []

    def leftover(path: str, what: str = "is not a field of the scenario format") -> None:
        leftovers.append(FieldError(path, f"{what}; the form leaves it out"))

    for key, value in document.items():
        if key in (*ScenarioForm.TOP, "baseline"):
            data[key] = value_text(value)
        elif key not in ("workloads", "options", "simulation", "sizing"):
            leftover(key)
    sections = {
        "workloads": (set(schema.WORKLOAD_COMMON_FIELDS), schema.WORKLOAD_TYPE_FIELDS),
        "options": (set(schema.OPTION_COMMON_FIELDS), schema.OPTION_TYPE_FIELDS),
    }
    for section, (common, by_type) in sections.items():
        items = document.get(section)
        items = items if isinstance(items, list) else []
        if section in document and not isinstance(document.get(section), list | type(None)):
            leftover(section, "must be a list")
        for i, item in enumerate(items):
            path = f"{section}[{i}]"
            if not isinstance(item, Mapping):
                leftover(path, "must be an object")
                continue
            kind = item.get("type")
            own = by_type.get(kind, {}) if isinstance(kind, str) else {}
            allowed = set(common) | set(own)
            if section == "options" and kind == "cloud":
                billing = item.get("billing") or "on_demand"
                allowed |= set(schema.BILLING_FIELDS.get(billing, {}))
            if kind not in by_type:  # no type (or an unknown one): show every field it has
                allowed |= {k for table in by_type.values() for k in table}
                if section == "options":
                    allowed |= set(BILLING_OWNERS)
            plain = allowed - {"offer", "financing", "quote", "egress_tiers"}
            row, rest = _row_data(section, i, item, plain)
            data.update(row)
            growth = item.get("monthly_growth")
            if (
                section == "workloads"
                and isinstance(growth, int | float)
                and not isinstance(growth, bool)
            ):  # shown a year too, converted
                data[f"workloads-{i}-{GROWTH_A_YEAR}"] = yearly_text(float(growth))
            for key in rest:
                value = item[key]
                field_path = f"{path}.{key}"
                if key not in allowed:
                    leftover(field_path, f"is not a field of {kind or 'this'} {section[:-1]}")
                elif key == "egress_tiers":
                    data[f"{section}-{i}-egress_tiers"] = tiers_text(value)
                elif key == "quote":
                    form_name = QUOTE_FIELDS.get(str(kind), "dedicated_quote")
                    data[f"{section}-{i}-{form_name}"] = value_text(value)
                elif key in OPTION_FORM_FIELDS:
                    members = dict(
                        zip(
                            schema.OFFER_FIELDS if key == "offer" else schema.FINANCING_FIELDS,
                            OPTION_FORM_FIELDS[key],
                            strict=True,
                        )
                    )
                    if value is None:
                        continue
                    if not isinstance(value, Mapping):
                        leftover(field_path, "must be an object")
                        continue
                    for member, member_value in value.items():
                        if member in members:
                            data[f"{section}-{i}-{members[member]}"] = value_text(member_value)
                        else:
                            leftover(f"{field_path}.{member}")
        data[f"{section}-TOTAL_FORMS"] = str(len(items))
        data[f"{section}-INITIAL_FORMS"] = "0"
    simulation = document.get("simulation")
    if isinstance(simulation, Mapping):
        data["simulate"] = "on"
        for key, value in simulation.items():
            if key in schema.SIMULATION_FIELDS:
                data[key] = value_text(value)
            elif key in schema.SIMULATED_QUANTITIES and isinstance(value, Mapping):
                for param, param_value in value.items():
                    if param == "dist":
                        data[f"{key}_dist"] = value_text(param_value)
                    elif param in DIST_PARAMS:
                        data[f"{key}_{param}"] = value_text(param_value)
                    else:
                        leftover(f"simulation.{key}.{param}")
            elif key in schema.SIMULATED_QUANTITIES and value is None:
                continue
            else:
                leftover(f"simulation.{key}")
    elif simulation is not None:
        leftover("simulation", "must be an object")
    sweeps = document.get("sizing")
    sweeps = sweeps if isinstance(sweeps, list) else []
    for i, sweep in enumerate(sweeps):
        if not isinstance(sweep, Mapping):
            leftover(f"sizing[{i}]", "must be an object")
            continue
        row, rest = _row_data("sizing", i, sweep, schema.SWEEP_FIELDS)
        data.update(row)
        for key in rest:
            leftover(f"sizing[{i}].{key}")
    data["sizing-TOTAL_FORMS"] = str(len(sweeps))
    data["sizing-INITIAL_FORMS"] = "0"
    return data, leftovers
