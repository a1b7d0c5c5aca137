"""Validation and normalisation of scenario documents (docs: scenario-format.md).

:func:`normalize` checks a whole document against the contract and either raises
:class:`~costapp.tco.errors.ScenarioError` listing every problem found, or returns the normalised
document: every default filled in, every catalog reference resolved into numbers, estimated values
written out. The normalised document is what a result shows as ``inputs``; fed back into
:func:`normalize` it gives the same document again.

Nothing is computed from an invalid document. Catalog references (``offer``, ``quote``,
``egress_provider``) are looked up by the caller beforehand and passed in as :class:`CatalogRefs`:
the engine never queries anything.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from . import schema
from .errors import FieldError, ScenarioError
from .jsonio import MAX_DOCUMENT_BYTES
from .schema import FieldSpec
from .sizing import sizing_normalize

GpuFigures = Mapping[str, float | None]
"""One GPU's figures: ``memory_gb`` [GB], ``memory_bandwidth_tb_s`` [TB/s] and
``bf16_dense_tflops``, ``fp16_dense_tflops``, ``fp8_dense_tflops``, ``tf32_dense_tflops``
[TFLOPS]; ``None`` where the GPU lacks that precision."""

OfferRef = tuple[str, str, str]
"""``(provider, instance, region)``."""


@dataclass(frozen=True)
class CatalogRefs:
    """Catalog references already looked up by the Django side (the engine never queries).

    ``offers``: ``(provider, instance, region)`` -> ``{"gpu": slug, "gpu_count": int,
    "usd_per_gpu_hour": {"on_demand", "spot", "commit_1y", "commit_3y"} (only the billings it
    has) [USD/GPU-hour], "egress_tiers": [{"up_to_tb", "usd_per_gb"}, ...] or None}``.
    ``dedicated_quotes``: id -> ``{"gpu", "gpus_per_server", "usd_per_server_month", "setup_usd",
    "included_egress_tb", "overage_usd_per_tb"}``. ``purchase_quotes``: id -> ``{"gpu",
    "gpus_per_server", "capex_usd_per_server", "server_kw", "lead_time_months",
    "support_fraction_per_year"}``. ``egress_providers``: provider slug -> tiers.

    A reference missing from these mappings is an error. When :func:`normalize` is given no
    ``CatalogRefs`` at all (``catalog=None``), references are not looked up: the document must then
    give every field a reference would have to supply (as a normalised document does).
    """

    offers: Mapping[OfferRef, Mapping[str, Any]] = field(default_factory=dict)
    dedicated_quotes: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    purchase_quotes: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    egress_providers: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Normalized:
    """A valid scenario: the normalised document and the warnings raised while normalising it."""

    document: dict[str, Any]
    warnings: list[str]


def normalize(
    document: Any, gpus: Mapping[str, GpuFigures], catalog: CatalogRefs | None = None
) -> Normalized:
    """Validate ``document`` against the contract and return it normalised.

    ``gpus`` maps every GPU slug of the catalog to its figures; ``catalog`` holds the catalog
    references the document makes, looked up beforehand (see :class:`CatalogRefs`). Raises
    :class:`ScenarioError` listing every problem found, in document order.
    """
    checker = _Checker(gpus, catalog)
    result = checker.document(document)
    if checker.errors or result is None:
        raise ScenarioError(checker.errors or [FieldError(None, "the document is not valid")])
    return Normalized(result, checker.warnings)


def estimate_tokens_per_second_per_gpu(params_billion: float, figures: GpuFigures) -> float | None:
    """Decoding throughput of one GPU [tokens/s] for a model of ``params_billion`` parameters.

    Bandwidth-bound decoding at 32 concurrent sequences, capped by half the compute:
    ``min(32 × bandwidth × 1e12 / (2 × params), 0.5 × bf16_tflops × 1e12 / (2 × params))`` with
    ``params = params_billion × 1e9``; fp16 TFLOPS stand in where the GPU has no bf16 figure.
    ``None`` when the GPU has neither a bandwidth nor a compute figure or ``params_billion`` is 0.
    """
    params = params_billion * 1e9
    if params <= 0:
        return None
    candidates: list[float] = []
    bandwidth = figures.get("memory_bandwidth_tb_s")
    if bandwidth:
        candidates.append(32 * bandwidth * 1e12 / (2 * params))
    tflops = figures.get("bf16_dense_tflops") or figures.get("fp16_dense_tflops")
    if tflops:
        candidates.append(0.5 * tflops * 1e12 / (2 * params))
    return min(candidates) if candidates else None


# --- implementation ----------------------------------------------------------------------------


class _Invalid:
    """A value that failed its check; the error is already recorded."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = _Invalid()


def _join(path: str | None, key: str) -> str:
    return key if path is None else f"{path}.{key}"


def _item(path: str, index: int) -> str:
    return f"{path}[{index}]"


def _show(number: float) -> str:
    return f"{number:g}"


def _ok(value: Any) -> bool:
    """Given and valid (neither absent nor invalid)."""
    return value is not None and value is not INVALID


def _all_fields(tables: Mapping[str, Mapping[str, FieldSpec]]) -> dict[str, str]:
    """Field name -> the first table key (type, billing, distribution) it belongs to."""
    owners: dict[str, str] = {}
    for owner, table in tables.items():
        for name in table:
            owners.setdefault(name, owner)
    return owners


_WORKLOAD_OWNERS: Final = _all_fields(schema.WORKLOAD_TYPE_FIELDS)
_OPTION_OWNERS: Final = _all_fields(schema.OPTION_TYPE_FIELDS)
_BILLING_OWNERS: Final = _all_fields(schema.BILLING_FIELDS)
_DISTRIBUTION_OWNERS: Final = _all_fields(schema.DISTRIBUTION_FIELDS)


class _Checker:
    """Walks one document, collecting errors and warnings and building the normalised form."""

    def __init__(self, gpus: Mapping[str, GpuFigures], catalog: CatalogRefs | None) -> None:
        self.gpus = gpus
        self.catalog = catalog
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []
        self.option_names: list[str | None] = []  # as given; None where not a valid name

    # --- primitives ----------------------------------------------------------------------------

    def error(self, path: str | None, message: str) -> _Invalid:
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
                self.error(path, f"{prefix}must be > {_show(spec.low)}")
                return False
            if not spec.low_open and not number >= spec.low:
                self.error(path, f"{prefix}must be ≥ {_show(spec.low)}")
                return False
        if spec.high is not None:
            if spec.high_open and not number < spec.high:
                self.error(path, f"{prefix}must be < {_show(spec.high)}")
                return False
            if not spec.high_open and not number <= spec.high:
                self.error(path, f"{prefix}must be ≤ {_show(spec.high)}")
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
                self.error(_join(path, name), elsewhere[key])
            else:
                self.error(_join(path, name), "unknown field")

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
            where = _join(path, name)
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

    # --- the document --------------------------------------------------------------------------

    def document(self, document: Any) -> dict[str, Any] | None:
        """Check the top level and everything under it; the normalised document, or ``None``."""
        if not isinstance(document, Mapping):
            self.error(None, "the scenario must be a JSON object")
            return None
        try:
            text = json.dumps(document, ensure_ascii=False, default=repr)
            size = len(text.encode("utf-8", "surrogatepass"))
        except (TypeError, ValueError, RecursionError):
            size = 0  # the walk below reports what cannot be written as JSON
        if size > MAX_DOCUMENT_BYTES:
            self.error(None, f"the document is {size} bytes; at most 1 000 000 bytes of JSON")
            return None

        self.keys(document, schema.TOP_LEVEL_FIELDS, None)
        top = self.fields(document, schema.TOP_LEVEL_FIELDS, None)
        horizon = top["horizon_months"]
        horizon = schema.TOP_LEVEL_FIELDS["horizon_months"].default if horizon is None else horizon
        months: int | None = horizon if isinstance(horizon, int) else None

        workloads = self.workloads(top["workloads"], months)
        default_gpu: str | None = None
        if workloads and isinstance(workloads[0], dict):
            default_gpu = workloads[0]["gpu"]
        options = self.options(top["options"], months, default_gpu)

        baseline = top["baseline"]
        names = self.option_names
        if baseline is None:
            baseline = names[0] if names else None
        elif (
            _ok(baseline)
            and names
            and all(name is not None for name in names)
            and baseline not in names
        ):
            self.error("baseline", f'names no option: "{baseline}"')

        simulation = self.simulation(top["simulation"])
        # version 1.1: the sweeps (costapp.tco.sizing checks them against the options)
        sizing = sizing_normalize(self, top["sizing"], options, self.option_names, simulation)

        if self.errors:
            return None
        return {
            "name": top["name"],
            "horizon_months": months,
            "hours_per_month": _default(top, schema.TOP_LEVEL_FIELDS, "hours_per_month"),
            "discount_rate": _default(top, schema.TOP_LEVEL_FIELDS, "discount_rate"),
            "egress_tb_per_month": _default(top, schema.TOP_LEVEL_FIELDS, "egress_tb_per_month"),
            "baseline": baseline,
            "workloads": workloads,
            "options": options,
            "simulation": simulation,
            "sizing": sizing,
        }

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

    # --- workloads -----------------------------------------------------------------------------

    def workloads(self, value: Any, months: int | None) -> list[dict[str, Any] | None]:
        """Check and normalise ``workloads``; ``None`` stands for an invalid one."""
        items = self.items(value, "workloads", schema.MAX_WORKLOADS, "workload")
        return [self.workload(raw, _item("workloads", i), months) for i, raw in enumerate(items)]

    def workload(self, value: Any, path: str, months: int | None) -> dict[str, Any] | None:
        """Check and normalise one workload."""
        raw = self.mapping(value, path)
        if raw is None:
            return None
        common = schema.WORKLOAD_COMMON_FIELDS
        kind = self.fields(raw, {"type": common["type"]}, path)["type"]
        if _ok(kind):
            table = {**common, **schema.WORKLOAD_TYPE_FIELDS[kind]}
            self.keys(raw, table, path, _elsewhere(_WORKLOAD_OWNERS, _a(f"{kind} workload")))
        else:
            self.keys(raw, {**common, **_WORKLOAD_OWNERS}, path)
            table = dict(common)
        v = {"type": kind, **self.fields(raw, table, path, skip=("type",))}
        filled = {name: _default(v, table, name) for name in table}

        gpu = filled["gpu"]
        figures = self.gpu_figures(gpu, _join(path, "gpu")) if _ok(gpu) else None
        self.months(v, filled, path, months)

        if kind == "training":
            self.training(v, filled, path, gpu, figures)
        elif kind == "inference":
            self.inference(v, filled, path, gpu, figures)
        if any(item is INVALID for item in filled.values()) or not _ok(kind):
            return None
        return filled

    def gpu_figures(self, gpu: str, path: str, prefix: str = "") -> GpuFigures | None:
        """The figures of GPU ``gpu``, or ``None`` after recording that the catalog lacks it."""
        figures = self.gpus.get(gpu)
        if figures is None:
            self.error(path, f'{prefix}unknown GPU "{gpu}"')
        return figures

    def months(
        self, v: dict[str, Any], filled: dict[str, Any], path: str, months: int | None
    ) -> None:
        """``start_month ≤ end_month``, ``start_month ≤ H``; an ``end_month`` beyond ``H`` is cut."""
        start, end = filled["start_month"], v["end_month"]
        if months is None or not _ok(start):
            return
        if start > months:
            filled["start_month"] = self.error(
                _join(path, "start_month"), f"must be ≤ horizon_months ({months})"
            )
            return
        if end is None:
            filled["end_month"] = months
        elif end is INVALID:
            return
        elif start > end:
            filled["end_month"] = self.error(
                _join(path, "end_month"), f"must be ≥ start_month ({start})"
            )
        elif end > months:
            filled["end_month"] = months
            self.warnings.append(
                f'Workload "{filled["name"]}": end_month {end} is beyond the {months}-month '
                f"horizon and was cut to {months}."
            )

    def training(
        self,
        v: dict[str, Any],
        filled: dict[str, Any],
        path: str,
        gpu: Any,
        figures: GpuFigures | None,
    ) -> None:
        """``flops_per_run`` or both sizes; the precision must exist on the workload's GPU."""
        flops, params, tokens = v["flops_per_run"], v["params_billion"], v["tokens_billion"]
        if flops is None:
            if _ok(params) and _ok(tokens):
                filled["flops_per_run"] = 6 * (params * 1e9) * (tokens * 1e9)
            elif params is not INVALID and tokens is not INVALID:
                filled["flops_per_run"] = self.error(
                    _join(path, "flops_per_run"),
                    "is required unless params_billion and tokens_billion are both given",
                )
        precision = filled["precision"]
        if figures is not None and _ok(precision):
            tflops = figures.get(schema.tflops_key(precision))
            if tflops is None or tflops <= 0:
                filled["precision"] = self.error(
                    _join(path, "precision"), f'{precision} is not available on the GPU "{gpu}"'
                )

    def inference(
        self,
        v: dict[str, Any],
        filled: dict[str, Any],
        path: str,
        gpu: Any,
        figures: GpuFigures | None,
    ) -> None:
        """Estimate ``tokens_per_second_per_gpu`` when absent (then ``params_billion`` is needed)."""
        if v["tokens_per_second_per_gpu"] is not None:
            return
        params = v["params_billion"]
        where = _join(path, "params_billion")
        if params is None:
            filled["params_billion"] = self.error(
                where, "is required when tokens_per_second_per_gpu is not given"
            )
            return
        if params is INVALID or figures is None:
            return
        estimate = estimate_tokens_per_second_per_gpu(params, figures)
        if estimate is None:
            if params <= 0:
                self.error(where, "must be > 0 to estimate tokens_per_second_per_gpu")
            else:
                self.error(
                    _join(path, "tokens_per_second_per_gpu"),
                    f'is required: the GPU "{gpu}" has no figures to estimate it from',
                )
            filled["tokens_per_second_per_gpu"] = INVALID
            return
        filled["tokens_per_second_per_gpu"] = estimate
        self.warnings.append(
            f'Workload "{filled["name"]}": tokens_per_second_per_gpu was estimated at '
            f"{estimate:.1f} tokens/s ({_show(params)}B parameters on {gpu}, bandwidth-bound "
            f"decoding at 32 concurrent sequences); give it to use a measured figure."
        )

    # --- options -------------------------------------------------------------------------------

    def options(
        self, value: Any, months: int | None, default_gpu: str | None
    ) -> list[dict[str, Any] | None]:
        """Check and normalise ``options``; ``None`` stands for an invalid one."""
        items = self.items(value, "options", schema.MAX_OPTIONS, "option")
        result: list[dict[str, Any] | None] = []
        seen: dict[str, int] = {}
        for index, raw in enumerate(items):
            path = _item("options", index)
            option = self.option(raw, path, months, default_gpu)
            result.append(option)
            name = raw.get("name") if isinstance(raw, Mapping) else None
            valid_name = isinstance(name, str) and bool(name.strip())
            self.option_names.append(name if valid_name else None)
            if isinstance(name, str) and valid_name:
                if name in seen:
                    self.error(_join(path, "name"), f"repeats the name of options[{seen[name]}]")
                else:
                    seen[name] = index
        return result

    def option(
        self, value: Any, path: str, months: int | None, default_gpu: str | None
    ) -> dict[str, Any] | None:
        """Check and normalise one option."""
        raw = self.mapping(value, path)
        if raw is None:
            return None
        common = schema.OPTION_COMMON_FIELDS
        kind = self.fields(raw, {"type": common["type"]}, path)["type"]
        if not _ok(kind):
            self.keys(raw, {**common, **_OPTION_OWNERS, **_BILLING_OWNERS}, path)
            self.fields(raw, common, path, skip=("type",))
            return None
        if kind == "cloud":
            return self.cloud(raw, path, months, default_gpu)
        table = {**common, **schema.OPTION_TYPE_FIELDS[kind]}
        self.keys(
            raw, table, path, _elsewhere([*_OPTION_OWNERS, *_BILLING_OWNERS], _a(f"{kind} option"))
        )
        v = {"type": kind, **self.fields(raw, table, path, skip=("type",))}
        if kind == "dedicated":
            quotes = None if self.catalog is None else self.catalog.dedicated_quotes
            supplied = schema.DEDICATED_QUOTE_FIELDS
        else:
            quotes = None if self.catalog is None else self.catalog.purchase_quotes
            supplied = schema.PURCHASE_QUOTE_FIELDS
        self.quote(v, table, path, quotes, supplied)
        self.option_gpu(v, path, default_gpu)
        if kind == "on_prem":
            v["financing"] = self.financing(v["financing"], _join(path, "financing"))
            lead = v["lead_time_months"]
            lead = 0 if lead is None else lead
            if months is not None and _ok(lead) and lead >= months:
                v["lead_time_months"] = self.error(
                    _join(path, "lead_time_months"),
                    f"must be less than horizon_months ({months})",
                )
        filled = {name: _default(v, table, name) for name in table}
        if any(item is INVALID for item in filled.values()):
            return None
        return filled

    def option_gpu(self, v: dict[str, Any], path: str, default_gpu: str | None) -> None:
        """An explicit ``gpu`` must exist; otherwise the first workload's GPU."""
        gpu = v["gpu"]
        if gpu is None:
            v["gpu"] = default_gpu if default_gpu is not None else INVALID
        elif gpu is not INVALID and self.gpu_figures(gpu, _join(path, "gpu")) is None:
            v["gpu"] = INVALID

    def referenced_gpu(
        self, v: dict[str, Any], path: str, supplied: Any, ref_path: str, what: str
    ) -> None:
        """Reconcile an explicit ``gpu`` with the GPU an offer or quote names."""
        if not isinstance(supplied, str) or not supplied:
            return
        gpu = v["gpu"]
        if gpu is None:
            if self.gpu_figures(supplied, ref_path, f"the {what} names an ") is None:
                v["gpu"] = INVALID
            else:
                v["gpu"] = supplied
        elif _ok(gpu) and gpu != supplied:
            v["gpu"] = self.error(_join(path, "gpu"), f'contradicts the {what}\'s GPU "{supplied}"')

    def quote(
        self,
        v: dict[str, Any],
        table: Mapping[str, FieldSpec],
        path: str,
        quotes: Mapping[int, Mapping[str, Any]] | None,
        supplied: tuple[str, ...],
    ) -> None:
        """Fill the fields a dedicated or purchase quote supplies; check the required ones."""
        quote_id = v["quote"]
        ref_path = _join(path, "quote")
        required = schema.REQUIRED_UNLESS_REFERENCED[v["type"]]
        if _ok(quote_id):
            if quotes is None:
                missing = [n for n in ("gpu", *required) if v[n] is None]
                if missing:
                    self.error(
                        ref_path,
                        "cannot be resolved without the catalog: give " + ", ".join(missing),
                    )
                    for name in missing:
                        v[name] = INVALID
                return
            quote = quotes.get(quote_id)
            if quote is None:
                self.error(ref_path, f"no such quote in the catalog: {quote_id}")
                for name in (*supplied, "gpu"):
                    if v[name] is None:
                        v[name] = INVALID
                return
            self.referenced_gpu(v, path, quote.get("gpu"), ref_path, "quote")
            for name in supplied:
                if v[name] is None and quote.get(name) is not None:
                    v[name] = self.scalar(quote[name], table[name], ref_path, f"its {name} ")
        elif quote_id is INVALID:
            for name in required:
                if v[name] is None:
                    v[name] = INVALID
        for name in required:
            if v[name] is None:
                v[name] = self.error(_join(path, name), "is required")

    def financing(self, value: Any, path: str) -> Any:
        """``{"apr", "term_months"}``, both required, or ``None``."""
        if value is None:
            return None
        raw = self.mapping(value, path)
        if raw is None:
            return INVALID
        self.keys(raw, schema.FINANCING_FIELDS, path)
        v = self.fields(raw, schema.FINANCING_FIELDS, path)
        return INVALID if INVALID in v.values() else v

    # --- cloud ---------------------------------------------------------------------------------

    def cloud(
        self, raw: Mapping[Any, Any], path: str, months: int | None, default_gpu: str | None
    ) -> dict[str, Any] | None:
        """Check and normalise one cloud option."""
        common = schema.OPTION_COMMON_FIELDS
        base = {**common, **schema.CLOUD_FIELDS}
        billing = self.fields(raw, {"billing": base["billing"]}, path)["billing"]
        billing = "on_demand" if billing is None else billing
        elsewhere = _elsewhere(_OPTION_OWNERS, "a cloud option")
        if billing is INVALID:
            table: dict[str, FieldSpec] = {**base, **_all_billing_specs()}
        else:
            table = {**base, **schema.BILLING_FIELDS[billing]}
            elsewhere.update(_elsewhere(_BILLING_OWNERS, f"{billing} billing"))
        self.keys(raw, table, path, elsewhere)
        v = {"type": "cloud", **self.fields(raw, table, path, skip=("type", "billing"))}
        v["billing"] = billing

        offer = self.offer(v, path)
        self.option_gpu(v, path, default_gpu)
        self.cloud_price(v, path, months, billing, offer)
        self.egress(raw, v, path, offer)
        if billing is INVALID or any(item is INVALID for item in v.values()):
            return None

        ordered = [
            "type",
            "name",
            "gpu",
            "throughput_factor",
            "billing",
            "usd_per_gpu_hour",
            *schema.BILLING_FIELDS[billing],
            "price_change_per_year",
            "support_fraction",
            "egress_usd_per_gb",
            "egress_tiers",
            "offer",
        ]
        return {name: _default(v, table, name) for name in ordered}

    def offer(self, v: dict[str, Any], path: str) -> Mapping[str, Any] | None:
        """Check ``offer`` and look it up; the catalog's entry, or ``None``.

        ``v["offer"]`` becomes the normalised reference (or :data:`INVALID`), and the fields the
        offer must supply are marked :data:`INVALID` when it cannot be found, so that their
        absence is not reported twice.
        """
        value = v["offer"]
        if value is None:
            return None
        ref_path = _join(path, "offer")
        raw = self.mapping(value, ref_path)
        if raw is None:
            v["offer"] = INVALID
            return None
        self.keys(raw, schema.OFFER_FIELDS, ref_path)
        ref = self.fields(raw, schema.OFFER_FIELDS, ref_path)
        if INVALID in ref.values():
            v["offer"] = INVALID
            for name in ("gpu", "usd_per_gpu_hour"):
                if v[name] is None:
                    v[name] = INVALID
            return None
        v["offer"] = ref
        key = (ref["provider"], ref["instance"], ref["region"])
        if self.catalog is None:
            missing = [n for n in ("gpu", "usd_per_gpu_hour") if v[n] is None]
            if missing:
                self.error(
                    ref_path, "cannot be resolved without the catalog: give " + ", ".join(missing)
                )
                for name in missing:
                    v[name] = INVALID
            return None
        entry = self.catalog.offers.get(key)
        if entry is None:
            self.error(
                ref_path,
                f"no such offer in the catalog: {key[0]} {key[1]} in {key[2]}",
            )
            for name in ("gpu", "usd_per_gpu_hour"):
                if v[name] is None:
                    v[name] = INVALID
            return None
        self.referenced_gpu(v, path, entry.get("gpu"), ref_path, "offer")
        return entry

    def cloud_price(
        self,
        v: dict[str, Any],
        path: str,
        months: int | None,
        billing: Any,
        offer: Mapping[str, Any] | None,
    ) -> None:
        """``usd_per_gpu_hour`` (and a committed option's on-demand rate) from the offer."""
        spec = schema.CLOUD_FIELDS["usd_per_gpu_hour"]
        where = _join(path, "usd_per_gpu_hour")
        ref_path = _join(path, "offer")
        prices: Mapping[str, Any] = (offer or {}).get("usd_per_gpu_hour") or {}
        if billing == "committed":
            if v["term_months"] is None and months is not None:
                v["term_months"] = months
            od = v["on_demand_usd_per_gpu_hour"]
            if od is None and offer is not None and prices.get("on_demand") is not None:
                v["on_demand_usd_per_gpu_hour"] = self.scalar(
                    prices["on_demand"], spec, ref_path, "its on-demand price "
                )
        if v["usd_per_gpu_hour"] is not None:
            return
        if offer is None:
            if v["offer"] is None:
                v["usd_per_gpu_hour"] = self.error(where, "is required")
            return
        if billing is INVALID:
            return
        if billing == "committed":
            term = v["term_months"]
            if not _ok(term):
                return
            key = schema.COMMITTED_PRICE_KEYS.get(term)
            if key is None:
                v["usd_per_gpu_hour"] = self.error(
                    where,
                    f"is required for a {term}-month term: the offer has committed prices "
                    "for 12- and 36-month terms only",
                )
                return
        else:
            key = schema.OFFER_PRICE_KEYS[billing]
        if prices.get(key) is None:
            v["usd_per_gpu_hour"] = self.error(
                where, f"is required: the offer has no {key.replace('_', '-')} price"
            )
            return
        v["usd_per_gpu_hour"] = self.scalar(prices[key], spec, ref_path, f"its {key} price ")

    def egress(
        self,
        raw: Mapping[Any, Any],
        v: dict[str, Any],
        path: str,
        offer: Mapping[str, Any] | None,
    ) -> None:
        """At most one of the egress fields; a provider's or the offer's tiers resolved."""
        given = [name for name in schema.EGRESS_FIELDS if raw.get(name) is not None]
        if len(given) > 1:
            self.error(
                path,
                "gives more than one of egress_usd_per_gb, egress_tiers and egress_provider",
            )
        tiers = v["egress_tiers"]
        if tiers is not None:
            v["egress_tiers"] = self.tiers(tiers, _join(path, "egress_tiers"))
        provider = v.pop("egress_provider")
        ref_path = _join(path, "egress_provider")
        if _ok(provider):
            if self.catalog is None:
                self.error(ref_path, "cannot be resolved without the catalog")
            elif provider not in self.catalog.egress_providers:
                self.error(ref_path, f'unknown egress provider "{provider}"')
            elif v["egress_tiers"] is None:
                v["egress_tiers"] = self.tiers(
                    self.catalog.egress_providers[provider], ref_path, "the provider's tiers: "
                )
        elif not given and offer is not None and offer.get("egress_tiers") is not None:
            v["egress_tiers"] = self.tiers(
                offer["egress_tiers"], _join(path, "offer"), "the offer's egress tiers: "
            )

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
            where = _item(path, index)
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
            up_path = at(_join(where, "up_to_tb"))
            if up_to is None and index != last:
                up_to = self.error(up_path, f"{label}must be a number: only the last tier is null")
            elif up_to is not None and up_to is not INVALID and index == last:
                up_to = self.error(up_path, f"{label}must be null: the last tier has no bound")
            elif _ok(up_to) and previous is not None and up_to <= previous:
                up_to = self.error(
                    up_path, f"{label}must be greater than the previous tier's ({_show(previous)})"
                )
            if _ok(up_to):
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

    # --- simulation ----------------------------------------------------------------------------

    def simulation(self, value: Any) -> dict[str, Any] | None:
        """``{"paths", "seed", …distributions}``, or ``None`` without a simulation."""
        if value is None or value is INVALID:
            return None
        raw = self.mapping(value, "simulation")
        if raw is None:
            return None
        allowed = {**schema.SIMULATION_FIELDS, **dict.fromkeys(schema.SIMULATED_QUANTITIES)}
        self.keys(raw, allowed, "simulation")
        v = self.fields(raw, schema.SIMULATION_FIELDS, "simulation")
        result = {name: _default(v, schema.SIMULATION_FIELDS, name) for name in v}
        for name in schema.SIMULATED_QUANTITIES:
            if raw.get(name) is not None:
                result[name] = self.distribution(raw[name], _join("simulation", name))
        return result

    def distribution(self, value: Any, path: str) -> Any:
        """``{"dist": "triangular", "low", "mode", "high"}``, ``normal`` or ``uniform``."""
        raw = self.mapping(value, path)
        if raw is None:
            return INVALID
        spec = FieldSpec("choice", required=True, choices=schema.DISTRIBUTIONS)
        dist = self.fields(raw, {"dist": spec}, path)["dist"]
        if not _ok(dist):
            self.keys(raw, {"dist": spec, **_DISTRIBUTION_OWNERS}, path)
            return INVALID
        table = schema.DISTRIBUTION_FIELDS[dist]
        self.keys(
            raw,
            {"dist": spec, **table},
            path,
            _elsewhere(_DISTRIBUTION_OWNERS, _a(f"{dist} distribution")),
        )
        v = self.fields(raw, table, path)
        if INVALID in v.values():
            return INVALID
        if dist in ("triangular", "uniform") and v["low"] > v["high"]:
            return self.error(_join(path, "high"), f"must be ≥ low ({_show(v['low'])})")
        if dist == "triangular" and not v["low"] <= v["mode"] <= v["high"]:
            return self.error(_join(path, "mode"), "must be between low and high")
        return {"dist": dist, **v}


def _default(values: Mapping[str, Any], table: Mapping[str, FieldSpec], name: str) -> Any:
    """The checked value, or the table's default where the field was absent."""
    value = values.get(name)
    return table[name].default if value is None else value


def _all_billing_specs() -> dict[str, FieldSpec]:
    specs: dict[str, FieldSpec] = {}
    for table in schema.BILLING_FIELDS.values():
        specs.update(table)
    return specs


def _elsewhere(names: Iterable[str], where: str) -> dict[str, str]:
    """The message for each of ``names`` found where it does not belong."""
    return dict.fromkeys(names, f"does not apply to {where}")


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: "a steady workload", "an on_prem option"."""
    return ("an " if noun[0] in "aeio" else "a ") + noun
