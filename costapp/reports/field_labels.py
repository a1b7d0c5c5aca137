"""A scenario field's words: the label the builder shows at the field and the comparison of two
runs writes its differences with ("Utilization", "USD per GPU hour", "Monte Carlo paths").

Pure: no Django. ``costapp.builder.labels`` takes them from here.
"""

from __future__ import annotations

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
    "growth_per_year": "Growth per year (%)",
    "monthly_growth": "Growth per month",
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
    "dist": "Distribution",
    "layers": "Layers, bottom first",
    "rest": "Rest: rented by the hour",
    "peak_hours_per_day": "Busiest hours a day",
    "prefill_tokens_per_second_per_gpu": "Prompt tokens read per second per GPU",
    "tail_fraction": "Worst share of paths (tail)",
}

ASSUMPTION_SUFFIX = "_assumption"
"""The form field beside a number that picks a sourced figure for it (``pue_assumption``)."""


def label_of(name: str) -> str:
    if name.endswith(ASSUMPTION_SUFFIX):
        return f"{label_of(name[: -len(ASSUMPTION_SUFFIX)])}: sourced figure"
    if name in LABELS:
        return LABELS[name]
    words = [_WORDS.get(word, word) for word in name.split("_")]
    text = " ".join(words)
    return text[0].upper() + text[1:]


QUANTITY_LABELS = {
    "demand_multiplier": "Demand multiplier",
    "cloud_price_change_per_year": "Cloud price change per year",
    "usd_per_kwh_multiplier": "Electricity price multiplier",
    "interruption_overhead": "Spot interruption overhead",
    "api_price_change_per_year": "Token price change per year",  # format 1.2
}
"""The uncertain quantities of a ``simulation``, by key."""
