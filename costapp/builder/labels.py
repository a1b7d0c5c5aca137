"""The scenario builder's words: each field's label, its note, its range and default shown from the
engine's tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from costapp.tco import FieldSpec

if TYPE_CHECKING:
    pass


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
    "token_price": "Hosted model's published price",
    "gpu_mtbf_hours": "GPU MTBF (GPU-hours)",
    "usd_per_million_tokens": "USD per million output tokens",
    "usd_per_million_input_tokens": "USD per million input tokens",
    "usd_per_million_training_tokens": "USD per million training tokens",
    "seed": "Random seed",
}

ASSUMPTION_SUFFIX = "_assumption"
"""The form field beside a number that picks a sourced figure for it (``pue_assumption``)."""

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
}


def label_of(name: str) -> str:
    if name.endswith(ASSUMPTION_SUFFIX):
        return f"{label_of(name[: -len(ASSUMPTION_SUFFIX)])}: sourced figure"
    if name in LABELS:
        return LABELS[name]
    words = [_WORDS.get(word, word) for word in name.split("_")]
    text = " ".join(words)
    return text[0].upper() + text[1:]


def shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def range_text(spec: FieldSpec) -> str:
    if spec.kind not in ("whole", "number"):
        return ""
    low = None
    if spec.low is not None:
        low = f"> {shown(spec.low)}" if spec.low_open else f"≥ {shown(spec.low)}"
    high = None
    if spec.high is not None:
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
