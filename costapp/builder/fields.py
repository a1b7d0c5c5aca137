"""The builder's kinds of form field, each made from a field of the engine's tables
(:mod:`costapp.tco.schema`), and values written as the form shows them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django import forms

from costapp.tco import FieldSpec

if TYPE_CHECKING:
    pass
from costapp.builder.labels import (
    ASSUMPTION_SUFFIX,
    NOTES,
    exact_decimal,
    field_help,
    label_of,
    shown,
)

INTEGER = re.compile(r"[+-]?\d+")
"""A whole number as the form takes it (a sign, digits)."""


class NumberField(forms.Field):
    """A number as typed: ``36`` is the integer 36 and ``36.0`` the float 36.0, so a value read
    from a document goes back into it unchanged; the contract's ranges are the engine's to check."""

    widget = forms.NumberInput(attrs={"step": "any"})
    default_error_messages = {"invalid": "Enter a number."}

    def to_python(self, value: Any) -> int | float | None:
        text = str(value).strip() if value is not None else ""
        if not text:
            return None
        if INTEGER.fullmatch(text):
            return int(text)
        try:
            number = float(text)
        except ValueError:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None
        if not math.isfinite(number):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return number


class JsonListField(forms.CharField):
    """A list field of the contract written as JSON (a mix's ``layers``, format 1.3, and a mix's
    joint sizing): the cleaned value is the parsed list, so the document round-trips."""

    widget = forms.Textarea(attrs={"rows": 2, "cols": 40})

    # The cleaned value is the parsed list, not the text: a deliberate change of CharField's type.
    def to_python(self, value: Any) -> list[Any] | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text or not text.strip():
            return None
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"is not JSON: {exc.msg} at character {exc.pos}") from None
        if not isinstance(parsed, list):
            raise forms.ValidationError("must be a JSON list, in [ ]")
        return parsed


LAYER_LINE = re.compile(r"^(?P<name>.*?\S)\s*=\s*(?P<size>\d+)\s*$")
RANGE_LINE = re.compile(
    r"^(?P<low>\d+)\s*(?:(?:-|–|to)\s*(?P<high>\d+))?(?:\s*(?:by|step)\s*(?P<step>\d+))?$"
)


class LayersField(forms.CharField):
    """A mix's layers (format 1.3), one a line, bottom first: an option's name, or ``NAME = N``
    to hold it at N committed GPUs or servers in the mix."""

    widget = forms.Textarea(attrs={"rows": 3, "cols": 40})

    # The cleaned value is the parsed layers, not the text: a deliberate change of CharField's type.
    def to_python(self, value: Any) -> list[Any] | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text or not text.strip():
            return None
        layers: list[Any] = []
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            found = LAYER_LINE.match(line)
            if found:
                layers.append({"option": found["name"], "size": int(found["size"])})
            else:
                layers.append(line)
        return layers


def layers_text(layers: Any) -> str:
    """The text of the layers field for a mix's ``layers``."""
    if not isinstance(layers, list):
        return json.dumps(layers)
    lines = []
    for layer in layers:
        if isinstance(layer, str):
            lines.append(layer)
        elif isinstance(layer, Mapping) and set(layer) <= {"option", "size"}:
            size = layer.get("size")
            lines.append(str(layer.get("option")) + ("" if size is None else f" = {size}"))
        else:
            return json.dumps(layers)
    return "\n".join(lines)


class RangesField(forms.CharField):
    """A joint sizing's ranges (format 1.3), one a line in the mix's layer order: ``MIN-MAX`` or
    ``MIN-MAX by STEP`` (a single number: that size alone)."""

    widget = forms.Textarea(attrs={"rows": 3, "cols": 24})

    # The cleaned value is the parsed ranges, not the text: a deliberate change of CharField's type.
    def to_python(self, value: Any) -> list[dict[str, int]] | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text or not text.strip():
            return None
        ranges: list[dict[str, int]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            line = line.strip()
            if not line:
                continue
            found = RANGE_LINE.match(line)
            if not found:
                raise forms.ValidationError(
                    f"line {number}: write 'min-max' or 'min-max by step', not {line!r}"
                )
            low = int(found["low"])
            entry = {"min": low, "max": int(found["high"]) if found["high"] else low}
            if found["step"]:
                entry["step"] = int(found["step"])
            ranges.append(entry)
        return ranges


def ranges_text(ranges: Any) -> str:
    """The text of the ranges field for a joint sizing's ``layers``."""
    if not isinstance(ranges, list) or not all(
        isinstance(r, Mapping) and set(r) <= {"min", "max", "step"} for r in ranges
    ):
        return json.dumps(ranges)
    lines = []
    for r in ranges:
        line = f"{r.get('min')}-{r.get('max')}"
        if r.get("step") not in (None, 1):
            line += f" by {r['step']}"
        lines.append(line)
    return "\n".join(lines)


class TiersField(forms.CharField):
    """Egress tiers, one a line: ``up to TB, USD per GB``; ``rest`` (or ``-``) for the last,
    unbounded tier."""

    widget = forms.Textarea(attrs={"rows": 3, "cols": 28})
    OPEN = {"rest", "-", "none", "null"}

    # The cleaned value is the parsed tiers, not the text: a deliberate change of CharField's type.
    def to_python(self, value: Any) -> list[dict[str, Any]] | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return None
        tiers: list[dict[str, Any]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            parts = [part for part in re.split(r"[,\s;]+", line.strip()) if part]
            if not parts:
                continue
            if len(parts) > 2:
                raise forms.ValidationError(
                    f"line {number}: write 'up to TB, USD per GB', not {line.strip()!r}"
                )
            tier: dict[str, Any] = {}
            for key, part in zip(("up_to_tb", "usd_per_gb"), parts, strict=False):
                if key == "up_to_tb" and part.lower() in self.OPEN:
                    tier[key] = None
                    continue
                try:
                    tier[key] = NumberField().to_python(part)
                except forms.ValidationError:
                    raise forms.ValidationError(
                        f"line {number}: {part!r} is not a number"
                    ) from None
            tiers.append(tier)
        return tiers or None


def tiers_text(tiers: Any) -> str:
    """The text of the tiers field for a document's ``egress_tiers``."""
    if not isinstance(tiers, list):
        return json.dumps(tiers)
    lines = []
    for tier in tiers:
        if not isinstance(tier, dict):
            lines.append(json.dumps(tier))
            continue
        up = tier.get("up_to_tb")
        lines.append(
            ", ".join(
                ["rest" if up is None else value_text(up), value_text(tier.get("usd_per_gb"))]
            )
        )
    return "\n".join(lines)


def value_text(value: Any) -> str:
    """A document's value as a form field shows it (``None``: empty; floats exactly, never in
    exponent form)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return exact_decimal(value)
    if isinstance(value, int | str):
        return str(value)
    return json.dumps(value)


def spec_field(
    name: str,
    spec: FieldSpec,
    *,
    note: str | None = None,
    choices: Sequence[tuple[str, str]] | None = None,
) -> forms.Field:
    """The form field of one contract field: empty allowed (absent: the default applies), its
    default as the placeholder and its default and range as help text."""
    help_text = field_help(spec, note if note is not None else NOTES.get(name))
    label = label_of(name)
    if spec.kind in ("whole", "number"):
        attrs = {"step": "any"}
        if spec.default is not None:
            attrs["placeholder"] = shown(spec.default)
        return NumberField(
            required=False, label=label, help_text=help_text, widget=forms.NumberInput(attrs)
        )
    if spec.kind == "choice" or choices is not None:
        if spec.default is not None:
            empty = f"(default: {spec.default})"
        elif spec.required:
            empty = "(choose)"
        else:
            empty = "(default)"
        options = list(choices) if choices is not None else [(c, c) for c in spec.choices]
        return forms.ChoiceField(
            required=False, label=label, help_text=help_text, choices=[("", empty), *options]
        )
    if spec.kind == "list" and name == "layers":
        return LayersField(required=False, strip=False, label=label, help_text=help_text)
    if spec.kind == "list":
        return JsonListField(required=False, strip=False, label=label, help_text=help_text)
    return forms.CharField(required=False, strip=False, label=label, help_text=help_text)


class ListSelect(forms.Select):
    """A select whose long list of choices (a catalog's GPUs, token prices, quotes, sourced
    figures) the page writes once, in ``<template id="list-KEY">`` (``RowForm.lists``), for
    every row that picks from it: the select itself carries its empty choice and the chosen one
    only, and ``static/js/builder.js`` puts the list in when the page loads or a row is added.
    Without the script the chosen value is still posted as it was."""

    def __init__(self, key: str, attrs: Mapping[str, Any] | None = None) -> None:
        super().__init__(attrs={**(attrs or {}), "data-list": key})

    def optgroups(self, name: str, value: Any, attrs: Any = None) -> list[Any]:
        kept = []
        for group, options, index in super().optgroups(name, value, attrs):
            chosen = [o for o in options if o["selected"] or o["value"] in ("", None)]
            if chosen:
                kept.append((group, chosen, index))
        return kept


LISTED = ("gpu", "token_price", "egress_provider", "dedicated_quote", "purchase_quote")
"""The pickers of a row whose choices are a catalog's long list, with the sourced figures'
pickers (``…_assumption``): a page writes each list once, not once per row."""


def lists_share(fields: Mapping[str, forms.Field], section: str) -> None:
    """A row's catalog pickers (``LISTED``, the sourced figures') as ``ListSelect``s keyed by
    the formset's prefix ``section`` and the field's name (``options-gpu``)."""
    for name, field in fields.items():
        if isinstance(field, forms.ChoiceField) and (
            name in LISTED or name.endswith(ASSUMPTION_SUFFIX)
        ):
            widget = ListSelect(f"{section}-{name}", field.widget.attrs)
            widget.choices = field.widget.choices
            field.widget = widget


def lists_of(fields: Mapping[str, forms.Field]) -> list[tuple[str, list[Any]]]:
    """The lists of a row's ``ListSelect``s, (key, choices): from a formset's empty row, whose
    choices are the catalog's alone, what the page writes once."""
    return [
        (field.widget.attrs["data-list"], list(field.choices))  # type: ignore[attr-defined]
        for field in fields.values()
        if isinstance(field.widget, ListSelect)
    ]
