"""Validation and normalisation of scenario documents (docs: scenario-format.md).

:func:`normalize` checks a whole document against the contract and either raises
:class:`~costapp.tco.errors.ScenarioError` listing every problem found, or returns the normalised
document: every default filled in, every catalog reference resolved into numbers, estimated values
written out. The normalised document is what a result shows as ``inputs``; fed back into
:func:`normalize` it gives the same document again.

Nothing is computed from an invalid document. The walk over the document (top level, workloads,
options, simulation) is :class:`Checker` here; the generic rules it applies to each value are in
:mod:`.rules`, and catalog references (``offer``, ``quote``, ``egress_provider``), looked up by
the caller beforehand and passed in as :class:`~.references.CatalogRefs`, are resolved in
:mod:`.references`: the engine never queries anything.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import schema
from .demand import (
    estimate_prefill_tokens_per_second_per_gpu,
    estimate_tokens_per_second_per_gpu,
    training_flops_per_run,
)
from .errors import FieldError, ScenarioError, item_path, join_path
from .jsonio import document_size_error
from .references import CatalogRefs, ReferenceRules
from .rules import (
    BILLING_OWNERS,
    INVALID,
    OPTION_OWNERS,
    WORKLOAD_OWNERS,
    all_billing_specs,
    default,
    elsewhere,
    given,
    show,
    with_article,
)
from .schema import FieldSpec
from .sizing import sizing_normalize
from .types import GpuFigures, GpuTable, gpu_figure

__all__ = ["CatalogRefs", "Normalized", "normalize"]


@dataclass(frozen=True)
class Normalized:
    """A valid scenario: the normalised document and the warnings raised while normalising it."""

    document: dict[str, Any]
    warnings: list[str]


def normalize(document: Any, gpus: GpuTable, catalog: CatalogRefs | None = None) -> Normalized:
    """Validate ``document`` against the contract and return it normalised.

    ``gpus`` maps every GPU slug of the catalog to its figures; ``catalog`` holds the catalog
    references the document makes, looked up beforehand (see :class:`CatalogRefs`). Raises
    :class:`ScenarioError` listing every problem found, in document order.
    """
    checker = Checker(gpus, catalog)
    result = checker.document(document)
    if checker.errors or result is None:
        raise ScenarioError(checker.errors or [FieldError(None, "the document is not valid")])
    return Normalized(result, checker.warnings)


class Checker(ReferenceRules):
    """Walks one document, collecting errors and warnings and building the normalised form."""

    def __init__(self, gpus: GpuTable, catalog: CatalogRefs | None) -> None:
        super().__init__(gpus, catalog)
        self.option_names: list[str | None] = []  # as given; None where not a valid name

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
        too_large = document_size_error(size)
        if too_large is not None:
            self.errors.append(too_large)
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
            given(baseline)
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
            "hours_per_month": default(top, schema.TOP_LEVEL_FIELDS, "hours_per_month"),
            "discount_rate": default(top, schema.TOP_LEVEL_FIELDS, "discount_rate"),
            "egress_tb_per_month": default(top, schema.TOP_LEVEL_FIELDS, "egress_tb_per_month"),
            "baseline": baseline,
            "workloads": workloads,
            "options": options,
            "simulation": simulation,
            "sizing": sizing,
        }

    # --- workloads -----------------------------------------------------------------------------

    def workloads(self, value: Any, months: int | None) -> list[dict[str, Any] | None]:
        """Check and normalise ``workloads``; ``None`` stands for an invalid one."""
        items = self.items(value, "workloads", schema.MAX_WORKLOADS, "workload")
        return [
            self.workload(raw, item_path("workloads", i), months) for i, raw in enumerate(items)
        ]

    def workload(self, value: Any, path: str, months: int | None) -> dict[str, Any] | None:
        """Check and normalise one workload."""
        raw = self.mapping(value, path)
        if raw is None:
            return None
        common = schema.WORKLOAD_COMMON_FIELDS
        kind = self.fields(raw, {"type": common["type"]}, path)["type"]
        if given(kind):
            table = {**common, **schema.WORKLOAD_TYPE_FIELDS[kind]}
            self.keys(
                raw, table, path, elsewhere(WORKLOAD_OWNERS, with_article(f"{kind} workload"))
            )
        else:
            self.keys(raw, {**common, **WORKLOAD_OWNERS}, path)
            table = dict(common)
        v = {"type": kind, **self.fields(raw, table, path, skip=("type",))}
        filled = {name: default(v, table, name) for name in table}

        gpu = filled["gpu"]
        figures = self.gpu_figures(gpu, join_path(path, "gpu")) if given(gpu) else None
        self.months(v, filled, path, months)

        if kind == "training":
            self.training(v, filled, path, gpu, figures)
        elif kind == "inference":
            self.inference(v, filled, path, gpu, figures)
            if v["min_replicas"] is None and isinstance(filled["name"], str):
                self.warnings.append(
                    f'Workload "{filled["name"]}": min_replicas is not given, so its figures '
                    "count one resident replica held in every active month (version 1.2); "
                    'set "min_replicas": 0 for the version 1.1 figure.'
                )
        if any(item is INVALID for item in filled.values()) or not given(kind):
            return None
        return filled

    def months(
        self, v: dict[str, Any], filled: dict[str, Any], path: str, months: int | None
    ) -> None:
        """``start_month ≤ end_month``, ``start_month ≤ H``; an ``end_month`` beyond ``H`` is cut."""
        start, end = filled["start_month"], v["end_month"]
        if months is None or not given(start):
            return
        if start > months:
            filled["start_month"] = self.error(
                join_path(path, "start_month"), f"must be ≤ horizon_months ({months})"
            )
            return
        if end is None:
            filled["end_month"] = months
        elif end is INVALID:
            return
        elif start > end:
            filled["end_month"] = self.error(
                join_path(path, "end_month"), f"must be ≥ start_month ({start})"
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
            if given(params) and given(tokens):
                flops = training_flops_per_run(params, tokens)
                if math.isfinite(flops) and flops <= schema.MAX_FLOPS_PER_RUN:
                    filled["flops_per_run"] = flops
                else:  # version 1.3: a derived count above the bound is an error at tokens_billion
                    shown = f"{flops:.3g}" if math.isfinite(flops) else "not a finite number"
                    filled["flops_per_run"] = self.error(
                        join_path(path, "tokens_billion"),
                        f"gives 6 × params_billion × tokens_billion = {shown} FLOPs a run; it "
                        f"must be ≤ {show(schema.MAX_FLOPS_PER_RUN)}",
                    )
            elif params is not INVALID and tokens is not INVALID:
                filled["flops_per_run"] = self.error(
                    join_path(path, "flops_per_run"),
                    "is required unless params_billion and tokens_billion are both given",
                )
        precision = filled["precision"]
        if figures is not None and given(precision):
            tflops = gpu_figure(figures, schema.tflops_key(precision))
            if tflops is None or tflops <= 0:
                filled["precision"] = self.error(
                    join_path(path, "precision"), f'{precision} is not available on the GPU "{gpu}"'
                )

    def inference(
        self,
        v: dict[str, Any],
        filled: dict[str, Any],
        path: str,
        gpu: Any,
        figures: GpuFigures | None,
    ) -> None:
        """Estimate ``tokens_per_second_per_gpu`` when absent (then ``params_billion`` is needed);
        version 1.3: the busiest hours of a day and the prefill rate."""
        self.peak_hours(v, filled, path)
        self.prefill(v, filled, path, gpu, figures)
        if v["tokens_per_second_per_gpu"] is not None:
            return
        params = v["params_billion"]
        where = join_path(path, "params_billion")
        if params is None:
            filled["params_billion"] = self.error(
                where, "is required when tokens_per_second_per_gpu is not given"
            )
            return
        if params is INVALID or figures is None:
            return
        estimate = estimate_tokens_per_second_per_gpu(params, figures)
        if estimate is not None and not math.isfinite(estimate):
            self.error(
                where, "is too small to estimate tokens_per_second_per_gpu from; give that rate"
            )
            filled["tokens_per_second_per_gpu"] = INVALID
            return
        if estimate is None:
            if params <= 0:
                self.error(where, "must be > 0 to estimate tokens_per_second_per_gpu")
            else:
                self.error(
                    join_path(path, "tokens_per_second_per_gpu"),
                    f'is required: the GPU "{gpu}" has no figures to estimate it from',
                )
            filled["tokens_per_second_per_gpu"] = INVALID
            return
        filled["tokens_per_second_per_gpu"] = estimate
        self.warnings.append(
            f'Workload "{filled["name"]}": tokens_per_second_per_gpu was estimated at '
            f"{estimate:.1f} tokens/s ({show(params)}B parameters on {gpu}, bandwidth-bound "
            f"decoding at 32 concurrent sequences); give it to use a measured figure."
        )

    def peak_hours(self, v: dict[str, Any], filled: dict[str, Any], path: str) -> None:
        """``peak_hours_per_day`` (version 1.3): default ``min(4, 24 / peak_to_average)``; a given
        one whose product with ``peak_to_average`` exceeds 24 is an error."""
        ratio = filled["peak_to_average"]
        hours = v["peak_hours_per_day"]
        if not isinstance(ratio, float | int) or isinstance(ratio, bool):
            return
        if hours is None:
            filled["peak_hours_per_day"] = min(4.0, 24.0 / ratio)
        elif hours is not INVALID and hours * ratio > 24.0:
            filled["peak_hours_per_day"] = self.error(
                join_path(path, "peak_hours_per_day"),
                f"× peak_to_average ({show(hours)} × {show(ratio)}) must be ≤ 24: the peak "
                "would hold more than the day's traffic",
            )

    def prefill(
        self,
        v: dict[str, Any],
        filled: dict[str, Any],
        path: str,
        gpu: Any,
        figures: GpuFigures | None,
    ) -> None:
        """``prefill_tokens_per_second_per_gpu`` (version 1.3): estimated when prompts are read
        (``input_tokens_per_output_token`` > 0) and it is absent; then ``params_billion`` above
        0 and a bf16 or fp16 figure on the workload's GPU are needed, else the field is required."""
        prompts = filled["input_tokens_per_output_token"]
        if v["prefill_tokens_per_second_per_gpu"] is not None or not (
            isinstance(prompts, float | int) and not isinstance(prompts, bool) and prompts > 0
        ):
            return
        where = join_path(path, "prefill_tokens_per_second_per_gpu")
        params = v["params_billion"]
        if params is INVALID or figures is None:
            return
        estimate = (
            None
            if params is None
            else estimate_prefill_tokens_per_second_per_gpu(float(params), figures)
        )
        if estimate is None or not math.isfinite(estimate):
            reason = (
                "params_billion above 0 is not given"
                if params is None or not params > 0
                else f'the GPU "{gpu}" has neither a bf16 nor an fp16 figure'
                if estimate is None
                else "params_billion is too small to estimate it from"
            )
            filled["prefill_tokens_per_second_per_gpu"] = self.error(
                where,
                f"is required when input_tokens_per_output_token is above 0 and {reason} "
                "to estimate it from",
            )
            return
        filled["prefill_tokens_per_second_per_gpu"] = estimate
        self.warnings.append(
            f'Workload "{filled["name"]}": prefill_tokens_per_second_per_gpu was estimated at '
            f"{estimate:.1f} prompt tokens/s ({show(params)}B parameters on {gpu}, compute-bound "
            f"reading at half the peak); give it to use a measured figure."
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
            path = item_path("options", index)
            option = self.option(raw, path, months, default_gpu)
            result.append(option)
            name = raw.get("name") if isinstance(raw, Mapping) else None
            valid_name = isinstance(name, str) and bool(name.strip())
            self.option_names.append(name if valid_name else None)
            if isinstance(name, str) and valid_name:
                if name in seen:
                    self.error(
                        join_path(path, "name"), f"repeats the name of options[{seen[name]}]"
                    )
                else:
                    seen[name] = index
        for index, option in enumerate(result):
            if (
                option is not None
                and option["type"] == "mix"
                and not self.mix_members(option, item_path("options", index), result)
            ):
                result[index] = None
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
        if not given(kind):
            self.keys(raw, {**common, **OPTION_OWNERS, **BILLING_OWNERS}, path)
            self.fields(raw, common, path, skip=("type",))
            return None
        if kind == "cloud":
            return self.cloud(raw, path, months, default_gpu)
        if kind == "api":
            return self.api(raw, path)
        if kind == "mix":
            return self.mix(raw, path)
        table = {**common, **schema.OPTION_TYPE_FIELDS[kind]}
        numbers = [
            name
            for name, spec in table.items()
            if spec.kind in ("number", "whole") and name != "quote"
        ]
        raw, failed = self.assumptions(raw, path, numbers)
        self.keys(
            raw,
            table,
            path,
            elsewhere([*OPTION_OWNERS, *BILLING_OWNERS], with_article(f"{kind} option")),
        )
        v = {"type": kind, **self.fields(raw, table, path, skip=("type",))}
        for name in failed:
            v[name] = INVALID
        quotes: Mapping[int, Mapping[str, object]] | None
        if kind == "dedicated":
            quotes = None if self.catalog is None else self.catalog.dedicated_quotes
            supplied = schema.DEDICATED_QUOTE_FIELDS
        else:
            quotes = None if self.catalog is None else self.catalog.purchase_quotes
            supplied = schema.PURCHASE_QUOTE_FIELDS
        self.quote(v, table, path, quotes, supplied)
        self.option_gpu(v, path, default_gpu)
        if kind == "on_prem":
            v["financing"] = self.financing(v["financing"], join_path(path, "financing"))
            lead = v["lead_time_months"]
            lead = 0 if lead is None else lead
            if months is not None and given(lead) and lead >= months:
                v["lead_time_months"] = self.error(
                    join_path(path, "lead_time_months"),
                    f"must be less than horizon_months ({months})",
                )
        filled = {name: default(v, table, name) for name in table}
        if any(item is INVALID for item in filled.values()):
            return None
        return filled

    def option_gpu(self, v: dict[str, Any], path: str, default_gpu: str | None) -> None:
        """An explicit ``gpu`` must exist; otherwise the first workload's GPU."""
        gpu = v["gpu"]
        if gpu is None:
            v["gpu"] = default_gpu if default_gpu is not None else INVALID
        elif gpu is not INVALID and self.gpu_figures(gpu, join_path(path, "gpu")) is None:
            v["gpu"] = INVALID

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
        misplaced = elsewhere(OPTION_OWNERS, "a cloud option")
        if billing is INVALID:
            table: dict[str, FieldSpec] = {**base, **all_billing_specs()}
        else:
            table = {**base, **schema.BILLING_FIELDS[billing]}
            misplaced.update(elsewhere(BILLING_OWNERS, f"{billing} billing"))
        raw, failed = self.assumptions(raw, path, ["gpu_mtbf_hours"])
        self.keys(raw, table, path, misplaced)
        v = {"type": "cloud", **self.fields(raw, table, path, skip=("type", "billing"))}
        v["billing"] = billing
        for name in failed:
            v[name] = INVALID

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
            "gpu_mtbf_hours",
        ]
        return {name: default(v, table, name) for name in ordered}

    # --- mix (version 1.3) ---------------------------------------------------------------------

    def mix(self, raw: Mapping[Any, Any], path: str) -> dict[str, Any] | None:
        """Check one ``mix`` option's own fields; its members are checked once every option is
        known (:meth:`mix_members`)."""
        table = {**schema.OPTION_COMMON_FIELDS, **schema.MIX_FIELDS}
        misplaced = elsewhere([*OPTION_OWNERS, *BILLING_OWNERS], "a mix option")
        raw, failed = self.assumptions(raw, path, ["gpu_mtbf_hours"])
        self.keys(raw, table, path, misplaced)
        v = {"type": "mix", **self.fields(raw, table, path, skip=("type",))}
        for name in failed:
            v[name] = INVALID
        v["layers"] = self.mix_layers(v["layers"], join_path(path, "layers"))
        if (
            v["gpu"] is not None
            and v["gpu"] is not INVALID
            and self.gpu_figures(v["gpu"], join_path(path, "gpu")) is None
        ):
            v["gpu"] = INVALID
        self.egress(raw, v, path, None)
        if any(item is INVALID for item in v.values()):
            return None
        ordered = [
            "type",
            "name",
            "gpu",
            "throughput_factor",
            "layers",
            "rest",
            "egress_usd_per_gb",
            "egress_tiers",
            "gpu_mtbf_hours",
        ]
        return {name: default(v, table, name) for name in ordered}

    def mix_layers(self, value: Any, path: str) -> Any:
        """``layers``: 1 to 3 entries, each a name or ``{"option", "size"}``; as objects."""
        if value is None or value is INVALID:
            return INVALID if value is INVALID else value
        items = self.sequence(value, path)
        if items is None:
            return INVALID
        if not 1 <= len(items) <= schema.MAX_MIX_LAYERS:
            return self.error(
                path, f"must list 1 to {schema.MAX_MIX_LAYERS} layers, not {len(items)}"
            )
        layers: list[dict[str, Any]] = []
        ok = True
        for j, item in enumerate(items):
            where = item_path(path, j)
            if isinstance(item, str):
                if not item.strip():
                    self.error(where, "must name an option")
                    ok = False
                    continue
                layers.append({"option": item, "size": None})
                continue
            entry = self.mapping(item, where)
            if entry is None:
                ok = False
                continue
            self.keys(entry, schema.MIX_LAYER_FIELDS, where)
            fields = self.fields(entry, schema.MIX_LAYER_FIELDS, where)
            if INVALID in fields.values():
                ok = False
                continue
            layers.append({"option": fields["option"], "size": fields["size"]})
        return layers if ok else INVALID

    def mix_members(
        self, option: dict[str, Any], path: str, options: list[dict[str, Any] | None]
    ) -> bool:
        """The members of a mix (version 1.3): each layer a committed cloud, dedicated or on_prem
        option named once, ``rest`` an elastic on-demand or spot cloud option, all on one GPU
        (the mix's ``gpu`` when given). False after recording a problem."""
        names = self.option_names
        ok = True
        first_gpu: str | None = None
        entries: list[tuple[str, str]] = []  # (path, member name) of the allowed members
        seen: set[str] = set()
        for j, layer in enumerate(option["layers"]):
            where = item_path(join_path(path, "layers"), j)
            name = layer["option"]
            member = options[names.index(name)] if name in names else None
            if name in seen:
                self.error(where, f'names "{name}" again: each option is named once')
                ok = False
                continue
            seen.add(name)
            if name not in names:
                self.error(where, f'names no option: "{name}"')
                ok = False
                continue
            if member is None:
                ok = False  # the option itself is invalid: its problems are recorded there
                continue
            kind = _member_kind(member)
            if kind not in ("committed", "dedicated", "on_prem"):
                self.error(
                    where,
                    f'names "{name}", {_described(kind)}: a layer is a committed cloud, a '
                    "dedicated or an on_prem option",
                )
                ok = False
                continue
            entries.append((where, name))
        rest = option["rest"]
        if rest is not None:
            where = join_path(path, "rest")
            member = options[names.index(rest)] if rest in names else None
            if rest not in names:
                self.error(where, f'names no option: "{rest}"')
                ok = False
            elif member is None:
                ok = False
            elif not (
                member["type"] == "cloud"
                and member["billing"] in ("on_demand", "spot")
                and member.get("scaling") == "elastic"
            ):
                self.error(
                    where,
                    f'names "{rest}", {_described(_member_kind(member))}: rest is a cloud '
                    "option billed on demand or spot with elastic scaling",
                )
                ok = False
            elif rest in seen:
                self.error(where, f'names "{rest}", already a layer: each option is named once')
                ok = False
            else:
                entries.append((where, rest))
        for where, name in entries:
            member_gpu = options[names.index(name)]["gpu"]  # type: ignore[index]
            if first_gpu is None:
                first_gpu = member_gpu
            elif member_gpu != first_gpu:
                self.error(
                    where,
                    f'runs on "{member_gpu}", not on "{first_gpu}" as the first member: a '
                    "mix's members name one GPU",
                )
                ok = False
        if option["gpu"] is None:
            option["gpu"] = first_gpu
        elif first_gpu is not None and option["gpu"] != first_gpu:
            self.error(
                join_path(path, "gpu"),
                f'must be its members\' GPU "{first_gpu}", not "{option["gpu"]}"',
            )
            ok = False
        return ok and option["gpu"] is not None

    # --- api (version 1.2) ---------------------------------------------------------------------

    def api(self, raw: Mapping[Any, Any], path: str) -> dict[str, Any] | None:
        """Check and normalise one ``api`` option: no ``gpu``, ``throughput_factor``,
        ``gpu_mtbf_hours`` or egress field; its prices given or from ``token_price``."""
        table = {**schema.API_COMMON_FIELDS, **schema.API_FIELDS}
        misplaced = elsewhere(
            [*schema.OPTION_COMMON_FIELDS, *OPTION_OWNERS, *BILLING_OWNERS], "an api option"
        )
        self.keys(raw, table, path, misplaced)
        v = {"type": "api", **self.fields(raw, table, path, skip=("type",))}
        self.token_price(v, table, path)
        filled = {name: default(v, table, name) for name in table}
        if any(item is INVALID for item in filled.values()):
            return None
        return filled

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
        result = {name: default(v, schema.SIMULATION_FIELDS, name) for name in v}
        for name in schema.SIMULATED_QUANTITIES:
            if raw.get(name) is not None:
                result[name] = self.distribution(raw[name], join_path("simulation", name))
        return result


def _member_kind(option: Mapping[str, Any]) -> str:
    """A cloud option's billing, else its type."""
    return str(option["billing"]) if option["type"] == "cloud" else str(option["type"])


def _described(kind: str) -> str:
    """An option kind in words."""
    if kind in ("on_demand", "spot", "committed"):
        return f"a cloud option with {kind} billing"
    return with_article(f"{kind} option")
