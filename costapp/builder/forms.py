"""The builder's forms: the scenario's own fields, and one form per row (a workload, an option, a
sizing sweep), their fields from the engine's tables.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django import forms
from django.conf import settings
from django.forms import formset_factory

from costapp.tco import FieldSpec, schema, swept_field

if TYPE_CHECKING:
    pass
from costapp.builder.catalog import CatalogChoices
from costapp.builder.fields import (
    INTEGER,
    NumberField,
    RangesField,
    TiersField,
    lists_of,
    lists_share,
    spec_field,
)
from costapp.builder.labels import ASSUMPTION_SUFFIX, NOTES, label_of
from costapp.reports.field_labels import QUANTITY_LABELS
from costapp.scenarios.growth import agree, growth_words, monthly_from_yearly, typed_note
from hardware.display.figures import plain_number

DIST_PARAMS = ("low", "mode", "high", "mean", "sd")
GROWTH_A_YEAR = "growth_per_year"
"""A workload's growth a year in percent: the builder's way to give ``monthly_growth``."""


def _with_value(choices: list[tuple[str, str]], value: Any, what: str) -> list[tuple[str, str]]:
    """The choices, plus the bound value when the catalog lacks it (the engine then says so)."""
    if value and all(value != key for key, label_of in choices):
        return [*choices, (str(value), f"{value} ({what} not in the catalog)")]
    return choices


class ScenarioForm(forms.Form):
    """The top level of a scenario, the scenario's own description and sharing, and the
    ``simulation`` block."""

    description = forms.CharField(
        required=False,
        label="Description",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="free text for the readers of the scenario (not part of the document)",
    )
    shared = forms.BooleanField(
        required=False,
        label="Shared with every role",
        help_text="every role may read it (viewers included), analysts run copies of it; only you change it",
    )
    simulate = forms.BooleanField(
        required=False,
        label="Simulate uncertainty (Monte Carlo)",
        help_text="adds the simulation block: paths, seed and the distributions below",
    )

    TOP = ("name", "horizon_months", "hours_per_month", "discount_rate", "egress_tb_per_month")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in (*self.TOP, "baseline"):
            self.fields[name] = spec_field(name, schema.TOP_LEVEL_FIELDS[name])
        rate = settings.DISCOUNT_RATE
        self.fields["discount_rate"].help_text = (
            f"a new scenario starts at {plain_number(rate)} ({plain_number(100 * rate)} % a "
            "year), the site's rate, as Ask's plans do; left empty, 0 (no discounting); ≥ 0"
        )
        self.fields["name"].required = False
        for name, spec in schema.SIMULATION_FIELDS.items():
            self.fields[name] = spec_field(name, spec)
        for quantity in schema.SIMULATED_QUANTITIES:
            label = QUANTITY_LABELS[quantity]
            self.fields[f"{quantity}_dist"] = forms.ChoiceField(
                required=False,
                label=f"{label}: distribution",
                choices=[("", "(none: as in the document)")]
                + [(d, d) for d in schema.DISTRIBUTIONS],
            )
            for param in DIST_PARAMS:
                self.fields[f"{quantity}_{param}"] = NumberField(
                    required=False, label=f"{label}: {param}"
                )

    def top_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in (*self.TOP, "baseline", "description", "shared")]

    def distributions(self) -> list[dict[str, Any]]:
        """Per simulated quantity: its label, its distribution field and its parameter fields
        (with the distributions each belongs to)."""
        found = []
        for quantity in schema.SIMULATED_QUANTITIES:
            params = []
            for param in DIST_PARAMS:
                dists = [d for d, table in schema.DISTRIBUTION_FIELDS.items() if param in table]
                params.append((self[f"{quantity}_{param}"], " ".join(dists)))
            found.append(
                {
                    "label": QUANTITY_LABELS[quantity],
                    "dist": self[f"{quantity}_dist"],
                    "params": params,
                }
            )
        return found


def _owners(tables: Mapping[str, Mapping[str, FieldSpec]]) -> dict[str, list[str]]:
    owners: dict[str, list[str]] = {}
    for kind, table in tables.items():
        for key in table:
            owners.setdefault(key, []).append(kind)
    return owners


class RowForm(forms.Form):
    """A row of a formset whose visible fields depend on its type (and billing)."""

    section = ""
    """The formset's prefix (``options``): the key of the page's lists and its empty row."""
    types: tuple[str, ...] = ()
    """The row's types: a row of one of them is written with its type's fields only."""

    def __init__(self, *args: Any, catalog: CatalogChoices | None = None, **kwargs: Any) -> None:
        self.catalog = catalog or CatalogChoices()
        super().__init__(*args, **kwargs)

    def share_lists(self) -> None:
        """Its catalog pickers as ``ListSelect``s (``costapp.builder.fields.lists_share``)."""
        lists_share(self.fields, self.section)

    def lists(self) -> list[tuple[str, list[Any]]]:
        """The page's lists of this formset's pickers, from its empty row: (key, choices)."""
        return lists_of(self.fields)

    @functools.cached_property
    def _page_rows(self) -> tuple[list[tuple[forms.BoundField, str, str]], bool]:
        """``page_layout`` and whether it leaves fields out, laid out once for both."""
        kind = str(self.value("type") or "")
        rows = self.layout()
        if kind not in self.types:
            return rows, False
        kept = [
            (bound, types, billings)
            for bound, types, billings in rows
            if not types
            or kind in types.split()
            or bound.errors
            or bound.value() not in (None, "", False, [])
        ]
        return kept, len(kept) < len(rows)

    def page_layout(self) -> list[tuple[forms.BoundField, str, str]]:
        """``layout`` as the page writes the row: a row of a known type without the fields of
        the other types (the page's script brings them from the empty row when the type is
        changed), except those holding a value or an error, which the row says are not saved;
        a row without a type, or of an unknown one, whole."""
        return self._page_rows[0]

    def is_partial(self) -> bool:
        """Whether the page writes fewer fields of the row than it has (``page_layout``)."""
        return self._page_rows[1]

    def value(self, name: str) -> Any:
        """The bound, raw value of a field (before cleaning)."""
        if self.is_bound:
            return self.data.get(self.add_prefix(name))
        return self.initial.get(name)

    def is_blank(self) -> bool:
        """Nothing typed in this row (a row added and left empty is not part of the document)."""
        return not any(
            self[name].value() not in (None, "", False) for name in self.fields if name != "DELETE"
        )

    def shows(self, name: str) -> bool:
        """Whether field ``name`` is shown for this row's type and billing (the page hides the
        others, so an error must not be put there)."""
        kind = str(self.value("type") or "")
        billing = str(self.value("billing") or "on_demand")
        for bound, types, billings in self.layout():
            if bound.name == name:
                return (not types or kind in types.split()) and (
                    not billings or billing in billings.split()
                )
        return False

    def layout(self) -> list[tuple[forms.BoundField, str, str]]:
        raise NotImplementedError

    def unsaved(self) -> list[tuple[str, str]]:
        """The values typed into fields of another type or billing than the row's: (label,
        value as typed), in order. The page hides those fields and the document leaves them out,
        so the row says which values will not be saved (the page's script keeps it current)."""
        found = []
        for bound, _types, _billings in self.layout():
            value = self.value(bound.name)
            text = value.strip() if isinstance(value, str) else value
            if text in (None, "") or self.shows(bound.name):
                continue
            found.append((str(bound.label), str(text)))
        return found

    def unsaved_values(self) -> str:
        """:meth:`unsaved` as "label = value, …" ("" when there are none)."""
        return ", ".join(f"{label} = {value}" for label, value in self.unsaved())

    def unsaved_text(self) -> str:
        """:meth:`unsaved` in words, shown next to the type ("" when nothing is left out)."""
        unsaved = self.unsaved()
        if not unsaved:
            return ""
        what = "type and billing" if "billing" in self.fields else "type"
        them = "them" if len(unsaved) > 1 else "it"
        return f"Not saved with this {what}: {self.unsaved_values()}. Switch back to keep {them}."

    def is_removed(self) -> bool:
        return bool(self.is_bound and self["DELETE"].value() not in (None, "", "false", False))


WORKLOAD_OWNERS = _owners(schema.WORKLOAD_TYPE_FIELDS)


class WorkloadForm(RowForm):
    """One workload: the common fields and those of each type (shown for its type)."""

    section = "workloads"
    types = tuple(schema.WORKLOAD_TYPE_FIELDS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, spec in schema.WORKLOAD_COMMON_FIELDS.items():
            if name == "gpu":
                choices = _with_value(self.catalog.gpus, self.value("gpu"), "GPU")
                self.fields[name] = spec_field(
                    name, spec, note=NOTES["gpu_workload"], choices=choices
                )
            else:
                self.fields[name] = spec_field(name, spec)
        for table in schema.WORKLOAD_TYPE_FIELDS.values():
            for name, spec in table.items():
                if name not in self.fields:
                    self.fields[name] = spec_field(name, spec)
        # growth given a year or a month (the document takes it a month), the year first
        fields: dict[str, forms.Field] = {}
        for name, field in self.fields.items():
            if name == "monthly_growth":
                fields[GROWTH_A_YEAR] = NumberField(
                    required=False,
                    label=label_of(GROWTH_A_YEAR),
                    help_text=NOTES[GROWTH_A_YEAR],
                )
            fields[name] = field
        self.fields = fields
        self.fields["DELETE"] = forms.BooleanField(required=False, widget=forms.HiddenInput)
        self.share_lists()

    def clean(self) -> dict[str, Any]:
        """Growth a year into the document's growth a month, (1 + g)^(1/12) − 1, when the rate
        a month is empty; both given, they must say the same growth."""
        data = super().clean() or {}
        per_year, monthly = data.get(GROWTH_A_YEAR), data.get("monthly_growth")
        if per_year is None:
            return data
        if per_year <= -100:
            self.add_error(GROWTH_A_YEAR, "Must be above −100 % a year (−100 % leaves no work).")
        elif monthly is None:
            data["monthly_growth"] = monthly_from_yearly(per_year)
        elif not agree(monthly, per_year):
            self.add_error(
                GROWTH_A_YEAR,
                f"Says {growth_words(monthly_from_yearly(per_year))}, but the growth per month "
                f"says {growth_words(monthly)}: clear one of them.",
            )
        return data

    def growth_note(self) -> str:
        """The growth as typed, a month and a year (shown under the rate a month)."""
        return typed_note(self.value("monthly_growth"), self.value(GROWTH_A_YEAR))

    def layout(self) -> list[tuple[forms.BoundField, str, str]]:
        """(field, the types it belongs to or "" for all, billings ""), in order."""
        return [
            (self[name], " ".join(WORKLOAD_OWNERS.get(name, [])), "")
            for name in self.fields
            if name != "DELETE"
        ]

    def workload(self) -> dict[str, Any]:
        """The workload's document: the fields of its type that are filled in."""
        data = self.cleaned_data
        kind = data.get("type") or ""
        keys = list(schema.WORKLOAD_COMMON_FIELDS)
        keys += list(schema.WORKLOAD_TYPE_FIELDS.get(kind, {}))
        return {key: data[key] for key in keys if data.get(key) not in (None, "")}


OPTION_OWNERS = _owners(schema.OPTION_TYPE_FIELDS)
BILLING_OWNERS = _owners(schema.BILLING_FIELDS)

OPTION_FORM_FIELDS: dict[str, tuple[str, ...]] = {
    "offer": ("offer_provider", "offer_instance", "offer_region"),
    "financing": ("financing_apr", "financing_term_months"),
}
"""Nested objects of an option and the form fields of their members."""

QUOTE_FIELDS = {"dedicated": "dedicated_quote", "on_prem": "purchase_quote"}

GPU_OPTION_TYPES = tuple(kind for kind in schema.OPTION_TYPES if kind != "api")
"""The option types that hold GPUs: the common fields ``gpu`` and ``throughput_factor`` are
theirs (an ``api`` option has neither, version 1.2)."""


def assumption_target(kind: str, name: str) -> str | None:
    """What a sourced figure for field ``name`` of a ``kind`` option fills (its ``applies_to``:
    ``on_prem.pue``, ``option.gpu_mtbf_hours``), or None where the format takes no assumption."""
    if name == "gpu_mtbf_hours":
        return "option.gpu_mtbf_hours"
    if kind in schema.ASSUMPTION_OPTION_TYPES:
        return f"{kind}.{name}"
    return None


class OptionForm(RowForm):
    """One option: the common fields, those of each type and cloud billing (shown for its type
    and billing), the offer and financing objects as their members' fields, and the quote as a
    picker of dedicated-server or purchase quotes."""

    section = "options"
    types = tuple(schema.OPTION_TYPES)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owners: dict[str, tuple[list[str], list[str]]] = {}
        for name, spec in schema.OPTION_COMMON_FIELDS.items():
            if name == "gpu":
                choices = _with_value(self.catalog.gpus, self.value("gpu"), "GPU")
                self.fields[name] = spec_field(
                    name, spec, note=NOTES["gpu_option"], choices=choices
                )
            else:
                self.fields[name] = spec_field(name, spec)
            types = list(GPU_OPTION_TYPES) if name in ("gpu", "throughput_factor") else []
            self.owners[name] = (types, [])
        billing_specs = {k: v for table in schema.BILLING_FIELDS.values() for k, v in table.items()}
        for kind, table in schema.OPTION_TYPE_FIELDS.items():
            for name, spec in table.items():
                self._add(kind, name, spec)
                if kind == "cloud" and name == "billing":
                    for key, key_spec in billing_specs.items():
                        self._add("cloud", key, key_spec, billings=BILLING_OWNERS[key])
        # where the price comes from first: the quote pickers right after the common fields
        first = [*schema.OPTION_COMMON_FIELDS, "billing", *QUOTE_FIELDS.values(), "token_price"]
        self.fields = {
            **{name: self.fields[name] for name in first},
            **{name: f for name, f in self.fields.items() if name not in first},
        }
        self.fields["DELETE"] = forms.BooleanField(required=False, widget=forms.HiddenInput)
        self.share_lists()

    def _add(
        self, kind: str, name: str, spec: FieldSpec, billings: list[str] | None = None
    ) -> None:
        if name in self.owners:
            self.owners[name][0].append(kind)
            if name + ASSUMPTION_SUFFIX in self.owners:
                self.owners[name + ASSUMPTION_SUFFIX][0].append(kind)
            return
        if name == "token_price":
            current = self.value(name)
            choices = _with_value(self.catalog.token_prices, current, "token price")
            self.fields[name] = forms.ChoiceField(
                required=False,
                label=label_of(name),
                help_text=NOTES["token_price"],
                choices=[("", "(none: type the prices)"), *choices],
                widget=forms.Select(attrs={"class": "catalog-figure"}),
            )
            self.owners[name] = ([kind], [])
            return
        if name == "offer":
            for member, key in zip(OPTION_FORM_FIELDS["offer"], schema.OFFER_FIELDS, strict=True):
                self.fields[member] = forms.CharField(
                    required=False,
                    strip=False,
                    label=label_of(member),
                    help_text=f"the catalog's {key}; use “Find offers” to pick one",
                )
                self.owners[member] = ([kind], [])
            return
        if name == "financing":
            for member, key in zip(
                OPTION_FORM_FIELDS["financing"], schema.FINANCING_FIELDS, strict=True
            ):
                self.fields[member] = spec_field(
                    member, schema.FINANCING_FIELDS[key], note="optional: a loan for the capex"
                )
                self.fields[member].help_text = self.fields[member].help_text.replace(
                    "required", "required with financing", 1
                )
                self.owners[member] = ([kind], [])
            return
        if name == "quote":
            form_name = QUOTE_FIELDS[kind]
            if kind == "dedicated":
                choices = _with_value(self.catalog.dedicated_quotes, self.value(form_name), "quote")
            else:
                choices = _with_value(self.catalog.purchase_quotes, self.value(form_name), "quote")
            self.fields[form_name] = forms.ChoiceField(
                required=False,
                label=label_of(form_name),
                help_text=NOTES["quote"],
                choices=[("", "(none)"), *choices],
            )
            self.owners[form_name] = ([kind], [])
            return
        if name == "egress_provider":
            choices = _with_value(self.catalog.egress_providers, self.value(name), "provider")
            self.fields[name] = spec_field(name, spec, choices=choices)
        elif name == "egress_tiers":
            self.fields[name] = TiersField(
                required=False, label=label_of(name), help_text=NOTES["egress_tiers"]
            )
        else:
            self.fields[name] = spec_field(name, spec)
        self.owners[name] = ([kind], list(billings or []))
        target = assumption_target(kind, name) if spec.kind in ("number", "whole") else None
        figures = self.catalog.assumptions.get(target or "", [])
        picker = name + ASSUMPTION_SUFFIX
        if target and (figures or self.value(picker)):  # a reference is never dropped
            choices = _with_value(figures, self.value(picker), "assumption")
            self.fields[picker] = forms.ChoiceField(
                required=False,
                label=label_of(picker),
                help_text=NOTES["assumption"],
                choices=[("", "(none: the number, or its default)"), *choices],
                widget=forms.Select(attrs={"class": "catalog-figure"}),
            )
            self.owners[picker] = ([kind], list(billings or []))

    def layout(self) -> list[tuple[forms.BoundField, str, str]]:
        return [
            (self[name], " ".join(self.owners[name][0]), " ".join(self.owners[name][1]))
            for name in self.fields
            if name != "DELETE"
        ]

    def form_name(self, key: str) -> str | list[str]:
        """The form field(s) of an option's document ``key`` for this option's type."""
        if key in OPTION_FORM_FIELDS:
            return list(OPTION_FORM_FIELDS[key])
        if key == "quote":
            return QUOTE_FIELDS.get(self.cleaned_type(), "dedicated_quote")
        return key

    def cleaned_type(self) -> str:
        data = getattr(self, "cleaned_data", None) or {}
        return str(data.get("type") or self.value("type") or "")

    def option(self) -> dict[str, Any]:
        """The option's document: the fields of its type and billing that are filled in."""
        data = self.cleaned_data
        kind = data.get("type") or ""
        keys = list(schema.OPTION_COMMON_FIELDS) + list(schema.OPTION_TYPE_FIELDS.get(kind, {}))
        if kind == "cloud":
            keys += list(schema.BILLING_FIELDS.get(data.get("billing") or "on_demand", {}))
        found: dict[str, Any] = {}
        for key in keys:
            if key == "offer":
                members = dict(zip(schema.OFFER_FIELDS, OPTION_FORM_FIELDS["offer"], strict=True))
                offer = {k: data[m] for k, m in members.items() if data.get(m)}
                if offer:
                    found["offer"] = offer
            elif key == "financing":
                members = dict(
                    zip(schema.FINANCING_FIELDS, OPTION_FORM_FIELDS["financing"], strict=True)
                )
                financing = {k: data[m] for k, m in members.items() if data.get(m) is not None}
                if financing:
                    found["financing"] = financing
            elif key == "quote":
                quote = data.get(QUOTE_FIELDS[kind])
                if quote:
                    found["quote"] = int(quote) if INTEGER.fullmatch(quote) else quote
            elif key == "token_price":
                if data.get(key):
                    found[key] = json.loads(data[key])
            elif data.get(key) not in (None, ""):
                found[key] = data[key]
            elif data.get(key + ASSUMPTION_SUFFIX) and self.shows(key + ASSUMPTION_SUFFIX):
                found[key] = {"assumption": data[key + ASSUMPTION_SUFFIX]}
        return found

    def offer_reference(self) -> tuple[str, str, str] | None:
        """The offer this option names (provider, instance, region), if all three are given."""
        values = tuple(str(self.value(m) or "").strip() for m in OPTION_FORM_FIELDS["offer"])
        return values if all(values) else None  # type: ignore[return-value]


def unsizable_reason(option_type: object, billing: object = None) -> str | None:
    """Why a sweep cannot size an option of this type and billing (as a sweep's choice says it:
    "on-demand cloud"), or None when it can: the engine's own rule (``swept_field``)."""
    if swept_field(option_type, billing) is not None:
        return None
    if option_type == "cloud":
        return f"{str(billing or 'on_demand').replace('_', '-')} cloud"
    return "no type chosen" if not option_type else f"{option_type} option"


def sizable_table() -> dict[str, dict[str, str]]:
    """``unsizable_reason`` for every option type (and none) × billing (and none), "" where a
    sweep can size it: the page's script looks a row's type and billing up in it, so the rule is
    written once."""
    return {
        option_type: {
            billing: unsizable_reason(option_type, billing) or ""
            for billing in ("", *schema.BILLINGS)
        }
        for option_type in ("", *schema.OPTION_TYPES)
    }


class SweepForm(RowForm):
    """One sizing sweep (version 1.1). Its option is picked from the names of the scenario's
    options that a sweep can size (``option_names``, the options bound to the builder, with
    ``unsizable``: why each option that cannot be sized cannot; the page's script keeps the list
    current as options are added, removed, renamed or change type or billing), plus the sweep's
    own value when no option that can be sized has that name, marked with why (the engine then
    says so at the field)."""

    def __init__(
        self,
        *args: Any,
        option_names: Sequence[str] = (),
        unsizable: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        unsizable = unsizable or {}
        choices = [(name, name) for name in option_names if name not in unsizable]
        current = self.value("option")
        if current and current in unsizable:
            choices.append((str(current), f"{current} (cannot be sized: {unsizable[current]})"))
        elif current and current not in option_names:
            choices.append((str(current), f"{current} (no option of that name)"))
        for name, spec in schema.SWEEP_FIELDS.items():
            if name == "option":
                self.fields[name] = spec_field(name, spec, choices=choices)
                self.fields[name].widget.attrs["data-option-names"] = ""
                self.fields[name].widget.attrs["data-sizable"] = json.dumps(sizable_table())
            elif name == "layers":  # format 1.3: a mix sized jointly, a range per layer
                self.fields[name] = RangesField(
                    required=False,
                    strip=False,
                    label="Ranges of the mix's layers",
                    help_text="a mix only, instead of min, max and step: one line per layer, in "
                    "the mix's order, 'min-max' or 'min-max by step' (at most 1,000 combinations)",
                )
            else:
                self.fields[name] = spec_field(name, spec)
        self.fields[
            "option"
        ].help_text = (
            "required: a committed cloud, dedicated or on-prem option of this scenario, or a mix"
        )
        self.fields["DELETE"] = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def layout(self) -> list[tuple[forms.BoundField, str, str]]:
        return [(self[name], "", "") for name in self.fields if name != "DELETE"]

    def sweep(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {key: data[key] for key in schema.SWEEP_FIELDS if data.get(key) not in (None, "")}


WorkloadFormSet = formset_factory(WorkloadForm, extra=0, max_num=schema.MAX_WORKLOADS)
SweepFormSet = formset_factory(SweepForm, extra=0, max_num=schema.MAX_SWEEPS)
OptionFormSet = formset_factory(OptionForm, extra=0, max_num=schema.MAX_OPTIONS)
