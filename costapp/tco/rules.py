"""The generic rules of scenario validation: one value, one object, one list at a time.

:class:`Rules` walks nothing by itself: it checks a scalar against its :class:`~.schema.FieldSpec`
(kind and range), reports unknown keys and fields of another type, reads the fields of a table,
checks egress tiers and distributions, and records every problem as a
:class:`~.errors.FieldError`. The walk over a whole document is
:class:`costapp.tco.validation.Checker`; catalog references are resolved by
:class:`costapp.tco.references.ReferenceRules`. The messages are part of the contract
(docs: scenario-format.md, "Validation").
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final

from . import schema
from .errors import FieldError, hidden_characters_error, item_path, join_path
from .schema import FieldSpec
from .types import GpuFigures


class Invalid:
    """A value that failed its check; the error is already recorded."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = Invalid()


def show(number: float) -> str:
    """A bound or a value as a message writes it: ``0``, ``1``, ``0.5``, ``1e+308``."""
    return f"{number:g}"


def given(value: Any) -> bool:
    """Given and valid (neither absent nor invalid)."""
    return value is not None and value is not INVALID


def field_owners(tables: Mapping[str, Mapping[str, FieldSpec]]) -> dict[str, str]:
    """Field name -> the first table key (type, billing, distribution) it belongs to."""
    owners: dict[str, str] = {}
    for owner, table in tables.items():
        for name in table:
            owners.setdefault(name, owner)
    return owners


WORKLOAD_OWNERS: Final = field_owners(schema.WORKLOAD_TYPE_FIELDS)
OPTION_OWNERS: Final = field_owners(schema.OPTION_TYPE_FIELDS)
BILLING_OWNERS: Final = field_owners(schema.BILLING_FIELDS)
DISTRIBUTION_OWNERS: Final = field_owners(schema.DISTRIBUTION_FIELDS)


def default(values: Mapping[str, Any], table: Mapping[str, FieldSpec], name: str) -> Any:
    """The checked value, or the table's default where the field was absent."""
    value = values.get(name)
    return table[name].default if value is None else value


def all_billing_specs() -> dict[str, FieldSpec]:
    """Every billing's fields in one table (for an option whose billing is invalid)."""
    specs: dict[str, FieldSpec] = {}
    for table in schema.BILLING_FIELDS.values():
        specs.update(table)
    return specs


def elsewhere(names: Iterable[str], where: str) -> dict[str, str]:
    """The message for each of ``names`` found where it does not belong."""
    return dict.fromkeys(names, f"does not apply to {where}")


def with_article(noun: str) -> str:
    """``noun`` with its indefinite article: "a steady workload", "an on_prem option"."""
    return ("an " if noun[0] in "aeio" else "a ") + noun


class Rules:
    """Collects the problems (and warnings) found while checking one document."""

    def __init__(self, gpus: Mapping[str, GpuFigures]) -> None:
        self.gpus = gpus
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []

    # --- primitives ----------------------------------------------------------------------------

    def error(self, path: str | None, message: str) -> Invalid:
        """Record a problem; return :data:`INVALID` for the caller to store."""
        self.errors.append(FieldError(path, message))
        return INVALID

    def scalar(self, value: Any, spec: FieldSpec, path: str, prefix: str = "") -> Any:
        """Check and convert one non-null value of kind whole, number, text or choice."""
        if spec.kind == "whole":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                return self.error(path, f"{prefix}must be a whole number")
            try:
                number = float(value)
            except OverflowError:  # an int beyond any float: no cost can be computed with it
                return self.error(path, f"{prefix}must be a finite number")
            if not math.isfinite(number):
                return self.error(path, f"{prefix}must be a finite number")
            if not number.is_integer():
                return self.error(path, f"{prefix}must be a whole number")
            whole = int(value) if isinstance(value, numbers.Integral) else int(number)
            if not self.in_range(whole, spec, path, prefix):
                return INVALID
            return whole
        if spec.kind == "number":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                return self.error(path, f"{prefix}must be a number")
            try:
                number = float(value)
            except OverflowError:
                return self.error(path, f"{prefix}must be a finite number")
            if not math.isfinite(number):
                return self.error(path, f"{prefix}must be a finite number")
            if not self.in_range(number, spec, path, prefix):
                return INVALID
            return number
        if spec.kind == "text":
            if not isinstance(value, str) or not value.strip():
                return self.error(path, f"{prefix}must be a non-empty string")
            if hidden := hidden_characters_error(value):
                return self.error(path, f"{prefix}{hidden}")
            return value
        if spec.kind == "choice":
            if not isinstance(value, str) or value not in spec.choices:
                return self.error(path, f"{prefix}must be one of {', '.join(spec.choices)}")
            return value
        raise AssertionError(f"{spec.kind} is not a scalar kind")  # pragma: no cover

    def in_range(self, number: float, spec: FieldSpec, path: str, prefix: str) -> bool:
        """Check ``spec``'s bounds; record the first one broken."""
        if spec.low is not None:
            if spec.low_open and not number > spec.low:
                self.error(path, f"{prefix}must be > {show(spec.low)}")
                return False
            if not spec.low_open and not number >= spec.low:
                self.error(path, f"{prefix}must be ≥ {show(spec.low)}")
                return False
        if spec.high is not None:
            if spec.high_open and not number < spec.high:
                self.error(path, f"{prefix}must be < {show(spec.high)}")
                return False
            if not spec.high_open and not number <= spec.high:
                self.error(path, f"{prefix}must be ≤ {show(spec.high)}")
                return False
        return True

    def keys(
        self,
        raw: Mapping[Any, Any],
        allowed: Collection[str],
        path: str | None,
        elsewhere: Mapping[str, str] | None = None,
    ) -> None:
        """Report every key not in ``allowed``: ``elsewhere[key]`` (such as "does not apply to
        spot billing") when it belongs to another type, billing or distribution, else
        "unknown field"."""
        for key in raw:
            if key in allowed:
                continue
            name = key if isinstance(key, str) else repr(key)
            if elsewhere is not None and key in elsewhere:
                self.error(join_path(path, name), elsewhere[key])
            else:
                self.error(join_path(path, name), "unknown field")

    def fields(
        self,
        raw: Mapping[Any, Any],
        table: Mapping[str, FieldSpec],
        path: str | None,
        skip: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Check the scalar fields of ``table`` present in ``raw``; absent (or null) ones are
        ``None`` (or an error when required), nested ones are returned as given."""
        values: dict[str, Any] = {}
        for name, spec in table.items():
            if name in skip:
                continue
            value = raw.get(name)
            where = join_path(path, name)
            if value is None:
                values[name] = self.error(where, "is required") if spec.required else None
            elif spec.kind in ("object", "list"):
                values[name] = value
            else:
                values[name] = self.scalar(value, spec, where)
        return values

    def mapping(self, value: Any, path: str | None) -> Mapping[Any, Any] | None:
        """``value`` as an object, or ``None`` after recording that it is not one."""
        if isinstance(value, Mapping):
            return value
        self.error(path, "must be an object")
        return None

    def sequence(self, value: Any, path: str) -> Sequence[Any] | None:
        """``value`` as a list, or ``None`` after recording that it is not one."""
        if isinstance(value, list | tuple):
            return value
        self.error(path, "must be a list")
        return None

    def items(self, value: Any, path: str, limit: int, noun: str) -> Sequence[Any]:
        """The items of a required, non-empty list of at most ``limit`` items."""
        if value is INVALID:
            return ()
        items = self.sequence(value, path)
        if items is None:
            return ()
        if not items:
            self.error(path, f"must have at least one {noun}")
        elif len(items) > limit:
            self.error(path, f"must have at most {limit} {noun}s, not {len(items)}")
        return items

    def gpu_figures(self, gpu: str, path: str, prefix: str = "") -> GpuFigures | None:
        """The figures of GPU ``gpu``, or ``None`` after recording that the catalog lacks it."""
        figures = self.gpus.get(gpu)
        if figures is None:
            self.error(path, f'{prefix}unknown GPU "{gpu}"')
        return figures

    # --- egress tiers and distributions ---------------------------------------------------------

    def tiers(self, value: Any, path: str, context: str = "") -> Any:
        """Egress tiers: cumulative ``up_to_tb`` strictly increasing, only the last one null.

        With ``context`` (tiers from the catalog), every problem is reported at ``path`` (the
        reference) with ``context`` before the message.
        """

        def at(sub: str) -> str:
            return path if context else sub

        if not isinstance(value, list | tuple):
            return self.error(path, f"{context}must be a list")
        if not value:
            return self.error(path, f"{context}must have at least one tier")
        result: list[dict[str, Any]] = []
        valid = True
        previous: float | None = None
        last = len(value) - 1
        for index, item in enumerate(value):
            where = item_path(path, index)
            if not isinstance(item, Mapping):
                self.error(at(where), f"{context}tier {index} must be an object")
                valid = False
                continue
            if context:
                tier = self.catalog_tier(item, path, context, index)
            else:
                self.keys(item, schema.EGRESS_TIER_FIELDS, where)
                tier = self.fields(item, schema.EGRESS_TIER_FIELDS, where)
            up_to = tier["up_to_tb"]
            label = f"{context}tier {index}'s up_to_tb " if context else ""
            up_path = at(join_path(where, "up_to_tb"))
            if up_to is None and index != last:
                up_to = self.error(up_path, f"{label}must be a number: only the last tier is null")
            elif up_to is not None and up_to is not INVALID and index == last:
                up_to = self.error(up_path, f"{label}must be null: the last tier has no bound")
            elif given(up_to) and previous is not None and up_to <= previous:
                up_to = self.error(
                    up_path, f"{label}must be greater than the previous tier's ({show(previous)})"
                )
            if given(up_to):
                previous = up_to
            tier["up_to_tb"] = up_to
            if INVALID in tier.values():
                valid = False
            result.append({"up_to_tb": tier["up_to_tb"], "usd_per_gb": tier["usd_per_gb"]})
        return result if valid else INVALID

    def catalog_tier(
        self, item: Mapping[Any, Any], path: str, context: str, index: int
    ) -> dict[str, Any]:
        """One tier from the catalog, its problems reported at the reference's ``path``."""
        tier: dict[str, Any] = {}
        for name, spec in schema.EGRESS_TIER_FIELDS.items():
            value = item.get(name)
            prefix = f"{context}tier {index}'s {name} "
            if value is None:
                tier[name] = self.error(path, f"{prefix}is required") if spec.required else None
            else:
                tier[name] = self.scalar(value, spec, path, prefix)
        return tier

    def distribution(self, value: Any, path: str) -> Any:
        """``{"dist": "triangular", "low", "mode", "high"}``, ``normal`` or ``uniform``."""
        raw = self.mapping(value, path)
        if raw is None:
            return INVALID
        spec = FieldSpec("choice", required=True, choices=schema.DISTRIBUTIONS)
        dist = self.fields(raw, {"dist": spec}, path)["dist"]
        if not given(dist):
            self.keys(raw, {"dist": spec, **DISTRIBUTION_OWNERS}, path)
            return INVALID
        table = schema.DISTRIBUTION_FIELDS[dist]
        self.keys(
            raw,
            {"dist": spec, **table},
            path,
            elsewhere(DISTRIBUTION_OWNERS, with_article(f"{dist} distribution")),
        )
        v = self.fields(raw, table, path)
        if INVALID in v.values():
            return INVALID
        if dist in ("triangular", "uniform") and v["low"] > v["high"]:
            return self.error(join_path(path, "high"), f"must be ≥ low ({show(v['low'])})")
        if dist == "triangular" and not v["low"] <= v["mode"] <= v["high"]:
            return self.error(join_path(path, "mode"), "must be between low and high")
        if dist in ("triangular", "uniform") and not math.isfinite(v["high"] - v["low"]):
            return self.error(
                join_path(path, "high"),
                f"is too far from low ({show(v['low'])}): high − low must be a finite number",
            )
        return {"dist": dist, **v}
