"""The scenario builder's words: each field's label (``costapp.reports.field_labels``, which the
comparison of two runs writes its differences with too), its note, its range and default shown
from the engine's tables.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from costapp.reports.field_labels import ASSUMPTION_SUFFIX, LABELS, label_of
from costapp.tco import FieldSpec

if TYPE_CHECKING:
    pass

__all__ = ["ASSUMPTION_SUFFIX", "LABELS", "NOTES", "field_help", "label_of", "range_text", "shown"]


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
    "term_months": "default: the horizon; 12, 36 or 60 take an offer's 1-, 3- or 5-year price",
    "on_demand_usd_per_gpu_hour": "default: the offer's on-demand price; bills work beyond the commitment",
    "bridge_usd_per_gpu_hour": "optional: buys the work before the servers are in service",
    "burst_usd_per_gpu_hour": "optional: buys work beyond capacity (else it is shortfall)",
    "egress_usd_per_gb": "flat price; give at most one of flat price, tiers or provider",
    "egress_tiers": "one tier a line: up to TB, USD per GB; the last line 'rest, USD per GB'",
    "egress_provider": "the provider's egress tiers from the catalog",
    "objective": "default: mean_npv with a simulation, else npv",
    "quote": "supplies the servers' figures the option does not give",
    "token_price": "supplies the output and input prices the option does not give",
    "usd_per_million_tokens": "required unless a hosted model's price supplies it",
    "usd_per_million_input_tokens": "default 0, or the hosted model's price",
    "usd_per_million_training_tokens": "optional: buys training by the token (else it is shortfall)",
    "assumption": "a sourced figure from the catalog; leave the number empty to use it",
    "layers": "a mix: one option of this scenario a line, bottom first (committed, dedicated or "
    "on-prem); 'NAME = N' holds it at N committed GPUs or servers in the mix",
    "rest": "a mix: the name of an elastic on-demand or spot cloud option that buys the rest",
    "peak_hours_per_day": "default: min(4, 24 / peak to average); the hours the traffic peaks",
    "prefill_tokens_per_second_per_gpu": "default: estimated from the parameters (prompts read "
    "at half the peak compute); read only with input tokens",
    "tail_fraction": "default 0.1: tail NPV is the mean NPV of this worst share of paths",
    "growth_per_year": "or per month below, either one: 50 means 1.5 times a year, "
    "3.437 % a month; the page converts it",
    "monthly_growth": "a fraction a month (0.0343661 is 50 % a year), or give it a year above",
}


def exact_decimal(value: float) -> str:
    """A float exactly as Python writes it back (``36.0``, ``0.034366``), but never in exponent
    form: ``4.2359999999999993e+20`` as ``423599999999999930000.0``, ``1e-05`` as ``0.00001``."""
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else text + ".0"  # read back as a float, not a whole number


def shown(value: Any) -> str:
    """A default or bound as a hint shows it: whole floats without ``.0``, never in exponent
    form (``1e-06`` as ``0.000001``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return exact_decimal(value)
    return str(value)


TYPO_GUARD = 1e6
"""A bound this large (in magnitude: ten million GPUs or servers, a trillion dollars) guards
against a slip of the keyboard rather than says what a plan may hold: validation keeps it, the
page does not show it as a hint."""


def range_text(spec: FieldSpec) -> str:
    """The bounds of a number field a person plans within ("≥ 0, ≤ 1"), without typo guards."""
    if spec.kind not in ("whole", "number"):
        return ""
    low = None
    if spec.low is not None and abs(float(spec.low)) < TYPO_GUARD:
        low = f"> {shown(spec.low)}" if spec.low_open else f"≥ {shown(spec.low)}"
    high = None
    if spec.high is not None and abs(float(spec.high)) < TYPO_GUARD:
        high = f"< {shown(spec.high)}" if spec.high_open else f"≤ {shown(spec.high)}"
    parts = [part for part in (low, high) if part]
    if spec.kind == "whole":
        parts.insert(0, "whole number")
    return ", ".join(parts)


def field_help(spec: FieldSpec, note: str | None) -> str:
    parts: list[str] = []
    if spec.required:
        parts.append("required")
    elif spec.default is not None:
        parts.append(f"default {shown(spec.default)}")
    if note:
        parts.append(note)
    bounds = range_text(spec)
    if bounds:
        parts.append(bounds)
    return "; ".join(parts)
