"""The fields of a scenario document, their kinds, ranges and defaults, in one place.

docs: scenario-format.md. Every table maps a field name to a :class:`FieldSpec`, in the order the
field appears in a normalised document. ``default=None`` on an optional field means "no value"
unless the table's comment says it is filled in from elsewhere (the horizon, the first option, a
catalog reference, the demand). The computation reads the normalised document, where every field
of the table is present; these tables say what each one defaults to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

Kind = Literal[
    "whole",  # a whole number: 36 or 36.0, not 36.5, "36" or true; becomes int
    "number",  # a finite number, not a boolean; becomes float
    "text",  # a non-empty string
    "choice",  # one of ``choices``
    "object",  # a nested object checked by its own table (offer, financing, distributions)
    "list",  # a list checked item by item (workloads, options, egress_tiers)
]


@dataclass(frozen=True)
class FieldSpec:
    """What one field accepts and what it defaults to.

    Numbers must satisfy ``low`` (``> low`` when ``low_open``, else ``≥ low``) and ``high``
    (``< high`` when ``high_open``, else ``≤ high``); ``None`` means unbounded on that side. The
    contract's rule "every other number is ≥ 0" is the default ``low=0``.
    """

    kind: Kind
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    low: float | None = 0
    low_open: bool = False
    high: float | None = None
    high_open: bool = False


MAX_NUMBER: Final = 1e12
"""Version 1.2: every number without a bound of its own is at most this (larger is a typo)."""

MAX_COUNT: Final = 10_000_000
"""Version 1.2: the counts (GPUs, servers, replicas, runs per year) are at most this."""

MAX_FLOPS_PER_RUN: Final = 1e30
"""Version 1.2: the bound of ``flops_per_run`` [FLOP]."""


def _whole(
    default: int | None = None, *, low: float | None = 0, high: float | None = MAX_NUMBER, **kw: Any
) -> FieldSpec:
    return FieldSpec("whole", default, low=low, high=high, **kw)


def _count(default: int | None = None, *, low: float | None = 0, **kw: Any) -> FieldSpec:
    """A whole count of GPUs, servers or replicas: at most :data:`MAX_COUNT`."""
    return FieldSpec("whole", default, low=low, high=MAX_COUNT, **kw)


def _number(
    default: float | None = None, *, high: float | None = MAX_NUMBER, **kw: Any
) -> FieldSpec:
    return FieldSpec("number", default, high=high, **kw)


def _fraction(default: float | None = None, **kw: Any) -> FieldSpec:
    """A share in [0, 1] (fields named ``*_fraction``, ``utilization``)."""
    return FieldSpec("number", default, high=1, **kw)


def _choice(default: str | None, *choices: str, required: bool = False) -> FieldSpec:
    return FieldSpec("choice", default, required=required, choices=choices)


DEFAULT_GPU: Final = "h100-sxm"
"""The GPU a workload's figures are measured on when it names none."""

MAX_HORIZON_MONTHS: Final = 120
MAX_WORKLOADS: Final = 50
MAX_OPTIONS: Final = 50
MAX_PATHS: Final = 100_000

WORKLOAD_TYPES: Final = ("steady", "training", "inference")
OPTION_TYPES: Final = ("cloud", "dedicated", "on_prem", "api", "mix")
GPU_OPTION_TYPES: Final = ("cloud", "dedicated", "on_prem")
"""The option types that run work on GPUs of their own (``api`` buys tokens instead)."""
BILLINGS: Final = ("on_demand", "committed", "spot")
SCALINGS: Final = ("elastic", "fixed")
PRECISIONS: Final = ("bf16", "fp16", "fp8", "tf32")
DISTRIBUTIONS: Final = ("triangular", "normal", "uniform")


def tflops_key(precision: str) -> str:
    """The GPU figure holding dense TFLOPS at ``precision``: ``bf16`` -> ``bf16_dense_tflops``."""
    return f"{precision}_dense_tflops"


# --- top level ---------------------------------------------------------------------------------

TOP_LEVEL_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "name": FieldSpec("text", required=True),
    "horizon_months": _whole(36, low=1, high=MAX_HORIZON_MONTHS),
    "hours_per_month": _number(730.0, low=1),  # version 1.3: at least 1
    "discount_rate": _number(0.0),
    "egress_tb_per_month": _number(0.0),
    "baseline": FieldSpec("text"),  # default: the first option's name
    "workloads": FieldSpec("list", required=True),
    "options": FieldSpec("list", required=True),
    "simulation": FieldSpec("object"),  # None: no simulation
    "sizing": FieldSpec("list"),  # None: no sweeps (version 1.1)
}

# --- workloads ---------------------------------------------------------------------------------

WORKLOAD_COMMON_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "type": _choice(None, *WORKLOAD_TYPES, required=True),
    "name": FieldSpec("text", required=True),
    "gpu": FieldSpec("text", DEFAULT_GPU),
    "start_month": _whole(1, low=1),
    "end_month": _whole(low=1),  # default: horizon_months (and cut to it)
    "monthly_growth": _number(0.0, low=-1, low_open=True),
}

WORKLOAD_TYPE_FIELDS: Final[Mapping[str, Mapping[str, FieldSpec]]] = {
    "steady": {
        "gpus": _number(required=True, high=MAX_COUNT),
        "utilization": _fraction(1.0),
    },
    "training": {
        "runs_per_year": _number(required=True, high=MAX_COUNT),
        # filled in as 6 × params_billion·1e9 × tokens_billion·1e9 [FLOP] when absent
        "flops_per_run": _number(high=MAX_FLOPS_PER_RUN),
        "params_billion": _number(),
        "tokens_billion": _number(),
        "mfu": _fraction(0.4, low_open=True),
        "precision": _choice("bf16", *PRECISIONS),
        "cluster_gpus": _count(),
        "checkpoint_hours": _number(0.0),  # version 1.2: δ, one checkpoint write [h]
        "restart_hours": _number(0.0),  # version 1.2: R, a failure until the job runs again [h]
    },
    "inference": {
        "tokens_per_second": _number(required=True),
        "peak_to_average": _number(1.0, low=1),
        # filled in with the estimate of estimate_tokens_per_second_per_gpu when absent
        "tokens_per_second_per_gpu": _number(low_open=True),
        "params_billion": _number(),
        # version 1.2: prompt tokens read per token generated (billed by api options)
        "input_tokens_per_output_token": _number(0.0),
        # version 1.2: replicas held ready whatever the traffic
        "min_replicas": _count(1),
        # version 1.3: prompt tokens read a second on one GPU; filled in with the prefill
        # estimate when absent and input_tokens_per_output_token > 0
        "prefill_tokens_per_second_per_gpu": _number(low_open=True),
        # version 1.3: the hours of each day the traffic stands at its peak; default
        # min(4, 24 / peak_to_average)
        "peak_hours_per_day": _number(low_open=True, high=24),
    },
}

# --- options -----------------------------------------------------------------------------------

OPTION_COMMON_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "type": _choice(None, *OPTION_TYPES, required=True),
    "name": FieldSpec("text", required=True),
    "gpu": FieldSpec("text"),  # default: the offer's or quote's GPU, else the first workload's
    "throughput_factor": _number(1.0, low_open=True),
}

CLOUD_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "billing": _choice("on_demand", *BILLINGS),
    "usd_per_gpu_hour": _number(),  # required unless the offer supplies it
    "price_change_per_year": _number(0.0, low=-1, low_open=True),
    "support_fraction": _fraction(0.0),
    "egress_usd_per_gb": _number(),
    "egress_tiers": FieldSpec("list"),
    "egress_provider": FieldSpec("text"),  # resolved into egress_tiers, never normalised
    "offer": FieldSpec("object"),
    "gpu_mtbf_hours": _number(low_open=True),  # version 1.2: M₁ [GPU-h]; None: no failures
}

BILLING_FIELDS: Final[Mapping[str, Mapping[str, FieldSpec]]] = {
    "on_demand": {
        "scaling": _choice("elastic", *SCALINGS),
    },
    "spot": {
        "scaling": _choice("elastic", *SCALINGS),
        "interruption_overhead": _number(0.1),
    },
    "committed": {
        "committed_gpus": _count(),  # None: the computation commits max peak_o
        "term_months": _whole(low=1),  # default: horizon_months
        "upfront_usd": _number(0.0),
        "on_demand_usd_per_gpu_hour": _number(),  # default: the offer's on-demand price, else None
    },
}

EGRESS_FIELDS: Final = ("egress_usd_per_gb", "egress_tiers", "egress_provider")
"""A cloud option gives at most one of these."""

EGRESS_TIER_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "up_to_tb": _number(),  # cumulative upper bound; None only on the last tier
    "usd_per_gb": _number(required=True),
}

OFFER_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "provider": FieldSpec("text", required=True),
    "instance": FieldSpec("text", required=True),
    "region": FieldSpec("text", required=True),
}

OFFER_PRICE_KEYS: Final[Mapping[str, str]] = {"on_demand": "on_demand", "spot": "spot"}
"""The offer's price used for each non-committed billing."""

COMMITTED_PRICE_KEYS: Final[Mapping[int, str]] = {
    12: "commit_1y",
    36: "commit_3y",
    60: "commit_5y",  # version 1.2
}
"""The offer's price used for a committed option, by ``term_months``."""

DEDICATED_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "gpus_per_server": _count(8, low=1),
    "servers": _count(),  # None: the computation sizes it from the demand
    "usd_per_server_month": _number(),  # required unless the quote supplies it
    "setup_usd": _number(0.0),
    "included_egress_tb": _number(0.0),
    "overage_usd_per_tb": _number(0.0),
    "burst_usd_per_gpu_hour": _number(),
    "gpu_mtbf_hours": _number(low_open=True),  # version 1.2: M₁ [GPU-h]; None: no failures
    "quote": _whole(),
}

DEDICATED_QUOTE_FIELDS: Final = (
    "gpus_per_server",
    "usd_per_server_month",
    "setup_usd",
    "included_egress_tb",
    "overage_usd_per_tb",
)
"""Fields a dedicated-server quote supplies where the option does not give them (besides ``gpu``)."""

FINANCING_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "apr": _number(required=True),
    "term_months": _whole(required=True, low=0, low_open=True),
}

ON_PREM_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "gpus_per_server": _count(8, low=1),
    "servers": _count(),  # None: the computation sizes it from the demand
    "capex_usd_per_server": _number(),  # required unless the quote supplies it
    "server_kw": _number(),  # required unless the quote supplies it
    "lead_time_months": _whole(0),  # and < horizon_months
    "bridge_usd_per_gpu_hour": _number(),
    "burst_usd_per_gpu_hour": _number(),
    "idle_power_fraction": _fraction(0.3),
    "pue": _number(1.3, low=1),
    "usd_per_kwh": _number(0.10),
    "colo_usd_per_kw_month": _number(0.0),
    "support_fraction_per_year": _number(0.0),
    "staff_usd_per_month": _number(0.0),
    "residual_fraction": _fraction(0.0),
    "egress_usd_per_tb": _number(0.0),
    "financing": FieldSpec("object"),
    "gpu_mtbf_hours": _number(low_open=True),  # version 1.2: M₁ [GPU-h]; None: no failures
    "quote": _whole(),
}

PURCHASE_QUOTE_FIELDS: Final = (
    "gpus_per_server",
    "capex_usd_per_server",
    "server_kw",
    "lead_time_months",
    "support_fraction_per_year",
)
"""Fields a purchase quote supplies where the option does not give them (besides ``gpu``)."""

API_COMMON_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "type": OPTION_COMMON_FIELDS["type"],
    "name": OPTION_COMMON_FIELDS["name"],
}
"""Version 1.2: an ``api`` option has no ``gpu`` and no ``throughput_factor``."""

API_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "usd_per_million_tokens": _number(),  # required unless token_price supplies it
    "usd_per_million_input_tokens": _number(),  # default 0 unless token_price supplies it
    "usd_per_million_training_tokens": _number(),  # None: training cannot be bought this way
    "price_change_per_year": _number(0.0, low=-1, low_open=True),
    "support_fraction": _fraction(0.0),
    "token_price": FieldSpec("object"),  # catalog reference {"provider", "model"}
}
"""Version 1.2: tokens bought by the million from a hosted model."""

TOKEN_PRICE_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "provider": FieldSpec("text", required=True),
    "model": FieldSpec("text", required=True),
}

TOKEN_PRICE_KEYS: Final = ("usd_per_million_tokens", "usd_per_million_input_tokens")
"""Fields a ``token_price`` reference supplies where the option does not give them."""

ASSUMPTION_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "assumption": FieldSpec("text", required=True),
}
"""Version 1.2: ``{"assumption": "KEY"}``, a number of a dedicated or on-prem option (and
``gpu_mtbf_hours``) taken from the deployment's table of sourced figures."""

ASSUMPTION_OPTION_TYPES: Final = ("dedicated", "on_prem")
"""The option types whose number fields may be written as an assumption (besides
``gpu_mtbf_hours`` on every GPU option)."""

REQUIRED_UNLESS_REFERENCED: Final[Mapping[str, tuple[str, ...]]] = {
    "api": ("usd_per_million_tokens",),
    "cloud": ("usd_per_gpu_hour",),
    "dedicated": ("usd_per_server_month",),
    "on_prem": ("capex_usd_per_server", "server_kw"),
}
"""Fields an option must give unless its ``offer`` or ``quote`` supplies them."""

MAX_MIX_LAYERS: Final = 3
"""Version 1.3: a mix holds 1 to this many layers."""

MIX_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "layers": FieldSpec("list", required=True),  # 1 … 3 names or {"option", "size"}
    "rest": FieldSpec("text"),  # an elastic on-demand or spot cloud option's name
    "gpu_mtbf_hours": _number(low_open=True),
    "egress_usd_per_gb": _number(),
    "egress_tiers": FieldSpec("list"),
    "egress_provider": FieldSpec("text"),  # resolved into egress_tiers, never normalised
}
"""Version 1.3: one plan made of other options of the document (besides ``type``, ``name``,
``gpu`` and ``throughput_factor``)."""

MIX_LAYER_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "option": FieldSpec("text", required=True),
    "size": _count(),  # None: the option's own committed_gpus or servers
}
"""Version 1.3: a layer written as an object."""

OPTION_TYPE_FIELDS: Final[Mapping[str, Mapping[str, FieldSpec]]] = {
    "cloud": CLOUD_FIELDS,
    "dedicated": DEDICATED_FIELDS,
    "on_prem": ON_PREM_FIELDS,
    "api": API_FIELDS,
    "mix": MIX_FIELDS,
}

# --- simulation --------------------------------------------------------------------------------

SIMULATION_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "paths": _whole(0, high=MAX_PATHS),
    "seed": _whole(0),
    "tail_fraction": _fraction(0.1, low_open=True),  # version 1.3: the worst paths' share
}

SIMULATED_QUANTITIES: Final = (
    "demand_multiplier",
    "cloud_price_change_per_year",
    "usd_per_kwh_multiplier",
    "interruption_overhead",
    "api_price_change_per_year",  # version 1.2 (last: the streams before it keep their numbers)
)
"""The uncertain quantities a ``simulation`` may give a distribution for: the one list of them.

The order is the order they appear in when normalised and the order that numbers their random
streams (:mod:`.montecarlo`); :class:`~.core.Futures` has one field for each, in this order."""

SIMULATED_CLIP_LOW: Final[Mapping[str, float]] = {
    "demand_multiplier": 0.0,
    "cloud_price_change_per_year": -0.99,
    "usd_per_kwh_multiplier": 0.0,
    "interruption_overhead": 0.0,
    "api_price_change_per_year": -0.99,
}
"""Lower bound each drawn value is clipped to (the contract's "clipped at ≥ …")."""

DISTRIBUTION_FIELDS: Final[Mapping[str, Mapping[str, FieldSpec]]] = {
    "triangular": {
        "low": _number(required=True, low=-MAX_NUMBER),
        "mode": _number(required=True, low=-MAX_NUMBER),
        "high": _number(required=True, low=-MAX_NUMBER),
    },
    "normal": {
        "mean": _number(required=True, low=-MAX_NUMBER),
        "sd": _number(required=True),
    },
    "uniform": {
        "low": _number(required=True, low=-MAX_NUMBER),
        "high": _number(required=True, low=-MAX_NUMBER),
    },
}

# --- sizing (version 1.1) ----------------------------------------------------------------------

MAX_SWEEPS: Final = 10
MAX_SWEEP_CANDIDATES: Final = 1000
MAX_SWEEP_WORK: Final = 20_000_000
"""At most this many candidates × max(paths, 1), summed over the sweeps."""

OBJECTIVES: Final = ("npv", "mean_npv", "p90_npv", "tail_npv")

SWEEP_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "option": FieldSpec("text", required=True),
    "min": _whole(),  # required, except for a mix (version 1.3), which gives layers
    "max": _whole(),
    "step": _whole(1, low=1),
    "objective": _choice(None, *OBJECTIVES),  # default: mean_npv with a simulation, else npv
    "max_shortfall_probability": _fraction(0.0),
    "layers": FieldSpec("list"),  # version 1.3: one {"min", "max", "step"} per layer of a mix
}

SWEEP_LAYER_FIELDS: Final[Mapping[str, FieldSpec]] = {
    "min": _whole(required=True),
    "max": _whole(required=True),
    "step": _whole(1, low=1),
}
"""Version 1.3: one layer's range in a mix's joint sizing."""
