"""Forms of the scenario builder (docs/scenario-format.md, version 1.1).

Every form field is made from the engine's field tables (:mod:`costapp.tco.schema`): one field
per field of the contract, its default and range shown from the table, never retyped. The forms
only parse (a number is a number, a choice is one of the choices); every rule of the contract is
the engine's, and :meth:`ScenarioBuilder.engine_errors` puts each of its messages back at the
form field its path names (``options[1].pue`` -> the PUE field of the second option). A field left
empty is absent from the document, so the contract's default applies.

A document becomes form data with :func:`document_form_data` and form data a document with
:meth:`ScenarioBuilder.document`; both ways keep every value exactly (``36`` stays ``36``, ``36.0``
stays ``36.0``), so a document opened in the form and saved gives the same ``inputs``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from django import forms
from django.forms import formset_factory

from costapp.tco import FieldError, FieldSpec, schema, swept_field
from hardware import selectors as catalog
from hardware.models import stale_before

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

# --- labels and help ----------------------------------------------------------------------------

_WORDS = {
    "usd": "USD",
    "gpu": "GPU",
    "gpus": "GPUs",
    "kw": "kW",
    "kwh": "kWh",
    "tb": "TB",
    "gb": "GB",
    "pue": "PUE",
    "mfu": "MFU",
    "apr": "APR",
    "npv": "NPV",
    "flops": "FLOPs",
}

LABELS = {
    "name": "Name",
    "gpu": "GPU model",
    "type": "Type",
    "horizon_months": "Horizon (months)",
    "discount_rate": "Discount rate (per year)",
    "egress_tb_per_month": "Egress (TB per month)",
    "baseline": "Baseline option",
    "params_billion": "Parameters (billions)",
    "tokens_billion": "Training tokens (billions)",
    "flops_per_run": "FLOPs per run",
    "mfu": "MFU (model FLOPs utilization)",
    "pue": "PUE",
    "usd_per_kwh": "USD per kWh",
    "server_kw": "Server power (kW)",
    "egress_tiers": "Egress tiers",
    "egress_provider": "Egress priced as provider",
    "offer_provider": "Offer: provider",
    "offer_instance": "Offer: instance type",
    "offer_region": "Offer: region",
    "dedicated_quote": "Dedicated-server quote",
    "purchase_quote": "Purchase quote",
    "financing_apr": "Financing: APR",
    "financing_term_months": "Financing: term (months)",
    "option": "Option to size",
    "min": "Smallest size",
    "max": "Largest size",
    "step": "Step",
    "paths": "Monte Carlo paths",
    "seed": "Random seed",
}

NOTES = {
    "gpu_workload": "the GPU the workload's figures are measured on",
    "gpu_option": "default: the offer's or quote's GPU, else the first workload's",
    "end_month": "default: the horizon",
    "baseline": "default: the first option",
    "flops_per_run": "default: 6 × parameters × tokens",
    "tokens_per_second_per_gpu": "default: estimated from the parameters",
    "cluster_gpus": "optional: GPUs a run holds at once",
    "usd_per_gpu_hour": "required unless an offer supplies it",
    "usd_per_server_month": "required unless a quote supplies it",
    "capex_usd_per_server": "required unless a quote supplies it",
    "server_kw": "required unless a quote supplies it",
    "servers": "default: sized from the demand",
    "committed_gpus": "default: the peak GPUs of the demand",
    "term_months": "default: the horizon; 12 or 36 take an offer's 1- or 3-year price",
    "on_demand_usd_per_gpu_hour": "default: the offer's on-demand price; bills work beyond the commitment",
    "bridge_usd_per_gpu_hour": "optional: buys the work before the servers are in service",
    "burst_usd_per_gpu_hour": "optional: buys work beyond capacity (else it is shortfall)",
    "egress_usd_per_gb": "flat price; give at most one of flat price, tiers or provider",
    "egress_tiers": "one tier a line: up to TB, USD per GB; the last line 'rest, USD per GB'",
    "egress_provider": "the provider's egress tiers from the catalog",
    "objective": "default: mean_npv with a simulation, else npv",
    "quote": "supplies the servers' figures the option does not give",
}


def _label(name: str) -> str:
    if name in LABELS:
        return LABELS[name]
    words = [_WORDS.get(word, word) for word in name.split("_")]
    text = " ".join(words)
    return text[0].upper() + text[1:]


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _range(spec: FieldSpec) -> str:
    if spec.kind not in ("whole", "number"):
        return ""
    low = None
    if spec.low is not None:
        low = f"> {_show(spec.low)}" if spec.low_open else f"≥ {_show(spec.low)}"
    high = None
    if spec.high is not None:
        high = f"< {_show(spec.high)}" if spec.high_open else f"≤ {_show(spec.high)}"
    parts = [part for part in (low, high) if part]
    if spec.kind == "whole":
        parts.insert(0, "whole number")
    return ", ".join(parts)


def _help(spec: FieldSpec, note: str | None) -> str:
    parts: list[str] = []
    if spec.required:
        parts.append("required")
    elif spec.default is not None:
        parts.append(f"default {_show(spec.default)}")
    if note:
        parts.append(note)
    bounds = _range(spec)
    if bounds:
        parts.append(bounds)
    return "; ".join(parts)


# --- field kinds ----------------------------------------------------------------------------------

_INTEGER = re.compile(r"[+-]?\d+")


class NumberField(forms.Field):
    """A number as typed: ``36`` is the integer 36 and ``36.0`` the float 36.0, so a value read
    from a document goes back into it unchanged; the contract's ranges are the engine's to check."""

    widget = forms.NumberInput(attrs={"step": "any"})
    default_error_messages = {"invalid": "Enter a number."}

    def to_python(self, value: Any) -> int | float | None:
        text = str(value).strip() if value is not None else ""
        if not text:
            return None
        if _INTEGER.fullmatch(text):
            return int(text)
        try:
            number = float(text)
        except ValueError:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None
        if not math.isfinite(number):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return number


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
    """A document's value as a form field shows it (``None``: empty; floats exactly)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
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
    help_text = _help(spec, note if note is not None else NOTES.get(name))
    label = _label(name)
    if spec.kind in ("whole", "number"):
        attrs = {"step": "any"}
        if spec.default is not None:
            attrs["placeholder"] = _show(spec.default)
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
    return forms.CharField(required=False, strip=False, label=label, help_text=help_text)


# --- the catalog pickers ------------------------------------------------------------------------


@dataclass
class CatalogChoices:
    """What the builder's pickers offer, each labelled with its price's date and flags."""

    gpus: list[tuple[str, str]] = field(default_factory=list)
    egress_providers: list[tuple[str, str]] = field(default_factory=list)
    dedicated_quotes: list[tuple[str, str]] = field(default_factory=list)
    purchase_quotes: list[tuple[str, str]] = field(default_factory=list)


def _money(value: Any) -> str:
    return f"{float(value):,.4g}" if float(value) < 100 else f"{float(value):,.0f}"


def _quote_label(quote: Any, expired: bool, price: str) -> str:
    flags = []
    if expired:
        flags.append("EXPIRED")
    if quote.status == "draft":
        flags.append("draft")
    if quote.is_demo:
        flags.append("demonstration data")
    valid = f"valid until {quote.valid_until.isoformat()}" if quote.valid_until else "no end date"
    text = (
        f"#{quote.pk} {quote.vendor} {quote.reference}: {quote.gpus_per_server}× "
        f"{quote.gpu.slug}, {price} ({valid}, {quote.get_status_display()})"
    )
    return text + (" · " + ", ".join(flags) if flags else "")


def catalog_choices(*, today: date) -> CatalogChoices:
    """The pickers' choices from the catalog: GPU models with today's cheapest on-demand price
    ("as stated by SOURCE on DATE", stale and unconfirmed-variant flags), providers with their
    egress tiers' date or "egress pricing unknown", and quotes with their validity and flags."""
    cheapest = {price.offer.gpu.slug: price for price in catalog.cheapest_current_prices()}
    stale_cutoff = stale_before(today)
    gpus = []
    for gpu in catalog.gpu_models_list():
        label = f"{gpu.name} ({gpu.slug}"
        if gpu.memory_gb is not None:
            label += f", {gpu.memory_gb.normalize():f} GB"
        label += ")"
        price = cheapest.get(gpu.slug)
        if price is not None:
            label += (
                f" · from {_money(price.usd_per_gpu_hour)} USD/GPU-h on-demand, as stated by "
                f"{price.source_name} on {price.stated_on.isoformat()}"
            )
            if price.stated_on < stale_cutoff:
                label += " · STALE"
            if not price.offer.gpu_confirmed:
                label += " · GPU variant unconfirmed"
        gpus.append((gpu.slug, label))
    egress = []
    tiers = catalog.egress_tier_standing()
    for provider in catalog.providers_list():
        known = tiers.get(provider.slug)
        if known is None:
            label = f"{provider.name} ({provider.slug}) · egress pricing unknown"
        else:
            stated = known["stated_on"].isoformat() if known["stated_on"] else "an unknown date"
            label = (
                f"{provider.name} ({provider.slug}) · {known['tiers']} egress tiers, as stated by "
                f"{known['source'] or 'the catalog'} on {stated}"
            )
        egress.append((provider.slug, label))
    quotes = catalog.quotes_list(today=today)
    dedicated = [
        (
            str(q.pk),
            _quote_label(q, expired, f"{_money(q.usd_per_server_month)} USD per server-month"),
        )
        for q, expired in quotes["dedicated"]
    ]
    purchase = [
        (str(q.pk), _quote_label(q, expired, f"{_money(q.capex_usd_per_server)} USD per server"))
        for q, expired in quotes["purchase"]
    ]
    return CatalogChoices(gpus, egress, dedicated, purchase)


# --- the forms ----------------------------------------------------------------------------------

QUANTITY_LABELS = {
    "demand_multiplier": "Demand multiplier",
    "cloud_price_change_per_year": "Cloud price change per year",
    "usd_per_kwh_multiplier": "Electricity price multiplier",
    "interruption_overhead": "Spot interruption overhead",
    "api_price_change_per_year": "Token price change per year",  # format 1.2
}

DIST_PARAMS = ("low", "mode", "high", "mean", "sd")


def _with_value(choices: list[tuple[str, str]], value: Any, what: str) -> list[tuple[str, str]]:
    """The choices, plus the bound value when the catalog lacks it (the engine then says so)."""
    if value and all(value != key for key, _label in choices):
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
        label="Shared with every analyst",
        help_text="others may read, run copies of, but not change it",
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

    def __init__(self, *args: Any, catalog: CatalogChoices | None = None, **kwargs: Any) -> None:
        self.catalog = catalog or CatalogChoices()
        super().__init__(*args, **kwargs)

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
        self.fields["DELETE"] = forms.BooleanField(required=False, widget=forms.HiddenInput)

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


class OptionForm(RowForm):
    """One option: the common fields, those of each type and cloud billing (shown for its type
    and billing), the offer and financing objects as their members' fields, and the quote as a
    picker of dedicated-server or purchase quotes."""

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
            self.owners[name] = ([], [])
        billing_specs = {k: v for table in schema.BILLING_FIELDS.values() for k, v in table.items()}
        for kind, table in schema.OPTION_TYPE_FIELDS.items():
            for name, spec in table.items():
                self._add(kind, name, spec)
                if kind == "cloud" and name == "billing":
                    for key, key_spec in billing_specs.items():
                        self._add("cloud", key, key_spec, billings=BILLING_OWNERS[key])
        # where the price comes from first: the quote pickers right after the common fields
        first = [*schema.OPTION_COMMON_FIELDS, "billing", *QUOTE_FIELDS.values()]
        self.fields = {
            **{name: self.fields[name] for name in first},
            **{name: f for name, f in self.fields.items() if name not in first},
        }
        self.fields["DELETE"] = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def _add(
        self, kind: str, name: str, spec: FieldSpec, billings: list[str] | None = None
    ) -> None:
        if name in self.owners:
            self.owners[name][0].append(kind)
            return
        if name == "offer":
            for member, key in zip(OPTION_FORM_FIELDS["offer"], schema.OFFER_FIELDS, strict=True):
                self.fields[member] = forms.CharField(
                    required=False,
                    strip=False,
                    label=_label(member),
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
                label=_label(form_name),
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
                required=False, label=_label(name), help_text=NOTES["egress_tiers"]
            )
        else:
            self.fields[name] = spec_field(name, spec)
        self.owners[name] = ([kind], list(billings or []))

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
                    found["quote"] = int(quote) if _INTEGER.fullmatch(quote) else quote
            elif data.get(key) not in (None, ""):
                found[key] = data[key]
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
            else:
                self.fields[name] = spec_field(name, spec)
        self.fields[
            "option"
        ].help_text = "required: a committed cloud, dedicated or on-prem option of this scenario"
        self.fields["DELETE"] = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def layout(self) -> list[tuple[forms.BoundField, str, str]]:
        return [(self[name], "", "") for name in self.fields if name != "DELETE"]

    def sweep(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {key: data[key] for key in schema.SWEEP_FIELDS if data.get(key) not in (None, "")}


WorkloadFormSet = formset_factory(WorkloadForm, extra=0, max_num=schema.MAX_WORKLOADS)
SweepFormSet = formset_factory(SweepForm, extra=0, max_num=schema.MAX_SWEEPS)
OptionFormSet = formset_factory(OptionForm, extra=0, max_num=schema.MAX_OPTIONS)


# --- the builder: forms <-> document, engine errors at their fields -------------------------------

_PATH = re.compile(r"(?P<list>workloads|options|sizing)\[(?P<index>\d+)\](?:\.(?P<rest>.*))?$")


@dataclass
class Placed:
    """An engine error put at a form field: where it went and what the summary says."""

    anchor: str
    label: StrOrPromise
    message: str
    path: str | None


class ScenarioBuilder:
    """The builder's forms together: the scenario form and the workloads, options and sizing
    formsets; the document they make; the engine's errors placed at their fields."""

    PREFIXES = {"workloads": "workloads", "options": "options", "sizing": "sizing"}

    def __init__(
        self, data: Mapping[str, Any] | None = None, *, catalog: CatalogChoices | None = None
    ) -> None:
        self.catalog = catalog or CatalogChoices()
        form_kwargs = {"catalog": self.catalog}
        self.scenario = ScenarioForm(data)
        if data is None:
            self.workloads = WorkloadFormSet(
                prefix="workloads", initial=[{}], form_kwargs=form_kwargs
            )
            self.options = OptionFormSet(
                prefix="options", initial=[{}, {}], form_kwargs=form_kwargs
            )
            self.sizing = SweepFormSet(prefix="sizing", form_kwargs=form_kwargs)
        else:
            self.workloads = WorkloadFormSet(data, prefix="workloads", form_kwargs=form_kwargs)
            self.options = OptionFormSet(data, prefix="options", form_kwargs=form_kwargs)
            self.sizing = SweepFormSet(
                data,
                prefix="sizing",
                form_kwargs={
                    **form_kwargs,
                    "option_names": self.option_names(),
                    "unsizable": self.unsizable_options(),
                },
            )
        self.section_errors: dict[str, list[str]] = {"workloads": [], "options": [], "sizing": []}
        self.summary: list[Placed] = []
        self._rows: dict[str, list[RowForm]] = {}

    @classmethod
    def from_document(
        cls,
        document: Mapping[str, Any],
        *,
        catalog: CatalogChoices | None = None,
        description: str = "",
        shared: bool = False,
    ) -> ScenarioBuilder:
        """The builder showing ``document``; what the form cannot show is reported as errors
        (the engine rejects such a document anyway)."""
        data, leftovers = document_form_data(document, description=description, shared=shared)
        builder = cls(data, catalog=catalog)
        if leftovers:
            builder.is_valid()
            builder.engine_errors(leftovers)
        return builder

    def _named_options(self) -> dict[str, Any]:
        """The option rows by the name given to them (as typed, removed rows left out; the first
        row of a name counts), in order."""
        named: dict[str, Any] = {}
        for form in self.options.forms:
            name = form.value("name")
            if isinstance(name, str) and name and not form.is_removed():
                named.setdefault(name, form)
        return named

    def option_names(self) -> list[str]:
        """The names given to the options (as typed, removed rows left out, each once), in
        order: what a sizing sweep's option is picked from."""
        return list(self._named_options())

    def unsizable_options(self) -> dict[str, str]:
        """Why a sweep cannot size each named option that it cannot (``unsizable_reason`` of its
        type and billing as typed; the first option of a name counts, as in ``option_names``)."""
        reasons = {
            name: unsizable_reason(form.value("type"), form.value("billing"))
            for name, form in self._named_options().items()
        }
        return {name: reason for name, reason in reasons.items() if reason is not None}

    def is_valid(self) -> bool:
        """Whether every field parses (the contract's own rules are the engine's)."""
        valid = [
            self.scenario.is_valid(),
            self.workloads.is_valid(),
            self.options.is_valid(),
            self.sizing.is_valid(),
        ]
        return all(valid)

    def rows(self, section: str) -> list[RowForm]:
        """The rows of a formset that make the document's list, in order (removed and blank
        rows left out): item ``i`` of the document's list is ``rows(section)[i]``."""
        if section not in self._rows:
            formset = getattr(self, section)
            self._rows[section] = [
                form for form in formset.forms if not form.is_removed() and not form.is_blank()
            ]
        return self._rows[section]

    def unsaved(self) -> list[str]:
        """Per workload or option of the document whose row holds values of another type or
        billing (left out of the document): which, in words (after :meth:`is_valid`)."""
        found = []
        for section in ("workloads", "options"):
            for number, form in enumerate(self.rows(section), start=1):
                typed = form.unsaved_values()
                if typed:
                    name = str(form.value("name") or "").strip()
                    named = f" “{name}”" if name else ""
                    found.append(f"{section[:-1]} {number}{named} ({typed})")
        return found

    def document(self) -> dict[str, Any]:
        """The scenario document the forms make (after :meth:`is_valid`); fields left empty are
        absent."""
        data = self.scenario.cleaned_data
        document: dict[str, Any] = {}
        for name in ScenarioForm.TOP:
            if data.get(name) not in (None, ""):
                document[name] = data[name]
        document["workloads"] = [form.workload() for form in self.rows("workloads")]  # type: ignore[attr-defined]
        document["options"] = [form.option() for form in self.rows("options")]  # type: ignore[attr-defined]
        if data.get("baseline"):
            document["baseline"] = data["baseline"]
        if data.get("simulate"):
            simulation: dict[str, Any] = {}
            for name in schema.SIMULATION_FIELDS:
                if data.get(name) is not None:
                    simulation[name] = data[name]
            for quantity in schema.SIMULATED_QUANTITIES:
                dist = data.get(f"{quantity}_dist")
                if not dist:
                    continue
                drawn: dict[str, Any] = {"dist": dist}
                for param in schema.DISTRIBUTION_FIELDS[dist]:
                    if data.get(f"{quantity}_{param}") is not None:
                        drawn[param] = data[f"{quantity}_{param}"]
                simulation[quantity] = drawn
            document["simulation"] = simulation
        sweeps = [form.sweep() for form in self.rows("sizing")]  # type: ignore[attr-defined]
        if sweeps:
            document["sizing"] = sweeps
        return document

    def meta(self) -> dict[str, Any]:
        """The scenario's own fields (not in the document): description and sharing."""
        data = self.scenario.cleaned_data
        return {"description": data.get("description") or "", "shared": bool(data.get("shared"))}

    # --- errors ---

    def _place(self, form: forms.Form, name: str | None, message: str, path: str | None) -> None:
        if name is not None and name in form.fields:
            form.add_error(name, message)
            bound = form[name]
            self.summary.append(Placed(bound.auto_id, bound.label, message, path))
        else:
            text = f"{path}: {message}" if path else message
            form.add_error(None, text)
            self.summary.append(Placed("", "", text, None))

    def engine_errors(self, errors: Iterable[FieldError]) -> None:
        """Put each of the engine's errors at the form field its path names."""
        for error in errors:
            self._engine_error(error.field, error.message)

    def _engine_error(self, path: str | None, message: str) -> None:
        name: str | None  # the form field the error goes to (None: the form's own errors)
        if path is None:
            self._place(self.scenario, None, message, None)
            return
        match = _PATH.match(path)
        if match is None:
            head, _, rest = path.partition(".")
            if head in self.PREFIXES:  # "workloads", "options", "sizing" themselves
                self.section_errors[head].append(message)
                self.summary.append(Placed(f"{head}-section", head.title(), message, path))
                return
            if head == "simulation":
                quantity, _, param = rest.partition(".")
                if not quantity:
                    name = "simulate"
                elif quantity in schema.SIMULATED_QUANTITIES:
                    name = f"{quantity}_{param}" if param in DIST_PARAMS else f"{quantity}_dist"
                else:
                    name = quantity
                self._place(self.scenario, name, message, path)
                return
            self._place(
                self.scenario, head if head in self.scenario.fields else None, message, path
            )
            return
        section, index, rest = match["list"], int(match["index"]), match["rest"]
        rows = self.rows(section)
        if index >= len(rows):
            self.section_errors[section].append(f"{path}: {message}")
            self.summary.append(Placed(f"{section}-section", section.title(), message, path))
            return
        form = rows[index]
        if not rest:
            self._place(form, None, message, path)
            return
        key = re.split(r"[.\[]", rest, maxsplit=1)[0]
        name = key
        if section == "options":
            found = form.form_name(key)  # type: ignore[attr-defined]
            if isinstance(found, list):
                member = rest[len(key) + 1 :].split(".")[0] if rest.startswith(key + ".") else ""
                name = next((m for m in found if m.endswith("_" + member)), found[0])
            else:
                name = found
        if name is not None and not form.shows(name):
            name = None
        self._place(form, name, message, path)

    def has_errors(self) -> bool:
        return bool(self.summary)


def _row_data(
    prefix: str, index: int, item: Mapping[str, Any], allowed: Iterable[str]
) -> tuple[dict[str, str], list[str]]:
    data: dict[str, str] = {}
    leftovers: list[str] = []
    allowed = set(allowed)
    for key, value in item.items():
        if key in allowed:
            data[f"{prefix}-{index}-{key}"] = value_text(value)
        else:
            leftovers.append(key)
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
