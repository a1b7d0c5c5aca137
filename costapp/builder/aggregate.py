"""The scenario builder as one: its forms together (docs/scenario-format.md, version 1.1).

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

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django import forms
from django.conf import settings

from costapp.tco import FieldError, schema

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise
from costapp.builder.catalog import CatalogChoices
from costapp.builder.documents import document_form_data
from costapp.builder.forms import (
    DIST_PARAMS,
    OptionFormSet,
    RowForm,
    ScenarioForm,
    SweepFormSet,
    WorkloadFormSet,
    unsizable_reason,
)

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
        # a new scenario starts at the site's discount rate, the one Ask's plans take
        self.scenario = ScenarioForm(
            data, initial=None if data is not None else {"discount_rate": settings.DISCOUNT_RATE}
        )
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
