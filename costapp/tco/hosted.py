"""Tokens bought by the million from a hosted model: the ``api`` option type (version 1.2).

No GPUs of one's own: generated tokens and prompt tokens are billed at their prices, a training
workload that gives ``tokens_billion`` at the training-token price where the option has one, and
every other kind of work (steady work, training without that price or without ``tokens_billion``)
cannot be bought this way: its ``busy`` (on the workload's own GPU) is shortfall. Every cost is an
array over months ``0 … H`` (last axis, length ``H + 1``), with a leading path axis ``P`` where it
depends on the path (docs: scenario-format.md, "api").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .cloud import paths_column
from .demand import TOKENS_PER_BILLION, WorkloadDemand, tokens_per_month
from .finance import trend_factor

Array = NDArray[np.float64]
TOKENS_PER_MILLION = 1e6


@dataclass(frozen=True, eq=False)
class ApiRates:
    """Prices of one ``api`` option and what the scenario's work costs at today's prices."""

    usd_per_million_tokens: float  # [USD per 1e6 generated tokens]
    usd_per_million_input_tokens: float  # [USD per 1e6 prompt tokens]
    usd_per_million_training_tokens: float | None  # [USD per 1e6 training tokens]; None: unpriced
    price_change_per_year: float  # c [1/year]
    support_fraction: float  # share of compute [dimensionless]
    usd_per_month: Array  # (H + 1,), month 0 zero: the tokens at today's prices [USD/month]
    unbought_gpu_hours: Array  # (H + 1,), month 0 zero: work it cannot buy [GPU-h/month]


def token_usd_per_month(
    tokens: Array, input_tokens: Array, usd_per_million: float, usd_per_million_input: float
) -> Array:
    """``(tokens × usd_per_million_tokens + input_tokens × usd_per_million_input_tokens) / 1e6``
    [USD/month] before the price trend."""
    return (tokens * usd_per_million + input_tokens * usd_per_million_input) / TOKENS_PER_MILLION


def training_token_usd_per_month(
    tokens_billion: float, runs_per_year: float, growth: Array, usd_per_million: float
) -> Array:
    """``tokens_billion × 1e3 × runs_per_year / 12 × f × usd_per_million_training_tokens``
    [USD/month] before the price trend (``tokens_billion × 1e3`` millions of tokens a run)."""
    millions = tokens_billion * (TOKENS_PER_BILLION / TOKENS_PER_MILLION)
    return millions * runs_per_year / 12.0 * growth * usd_per_million


def buys_training(workload: Mapping[str, Any], usd_per_million_training: float | None) -> bool:
    """True when an ``api`` option can buy a training workload: it gives ``tokens_billion`` and
    the option has a training-token price."""
    return (
        workload["type"] == "training"
        and usd_per_million_training is not None
        and workload.get("tokens_billion") is not None
    )


def api_rates(
    option: Mapping[str, Any],
    workloads: Sequence[Mapping[str, Any]],
    demands: Sequence[WorkloadDemand],
    hours_per_month: float,
) -> ApiRates:
    """The rates of a normalised ``api`` option and its monthly token bill at today's prices."""
    out_price = float(option["usd_per_million_tokens"])
    in_price = float(option["usd_per_million_input_tokens"])
    training = option.get("usd_per_million_training_tokens")
    training_price = None if training is None else float(training)
    horizon = len(demands[0].busy_gpu_hours) if demands else 0
    tokens = np.zeros(horizon)
    input_tokens = np.zeros(horizon)
    training_usd = np.zeros(horizon)
    unbought = np.zeros(horizon)
    for workload, demand in zip(workloads, demands, strict=True):
        growth = demand.growth if demand.growth is not None else np.zeros(horizon)
        if workload["type"] == "inference":
            generated = tokens_per_month(workload, growth, hours_per_month)
            tokens = tokens + generated
            input_tokens = input_tokens + generated * float(
                workload["input_tokens_per_output_token"]
            )
        elif buys_training(workload, training_price):
            assert training_price is not None
            training_usd = training_usd + training_token_usd_per_month(
                float(workload["tokens_billion"]),
                float(workload["runs_per_year"]),
                growth,
                training_price,
            )
        else:
            unbought = unbought + demand.busy_gpu_hours
    usd = token_usd_per_month(tokens, input_tokens, out_price, in_price) + training_usd
    return ApiRates(
        usd_per_million_tokens=out_price,
        usd_per_million_input_tokens=in_price,
        usd_per_million_training_tokens=training_price,
        price_change_per_year=float(option["price_change_per_year"]),
        support_fraction=float(option["support_fraction"]),
        usd_per_month=np.pad(usd, (1, 0)),
        unbought_gpu_hours=np.pad(unbought, (1, 0)),
    )


def api_path_costs(
    rates: ApiRates,
    n_paths: int,
    horizon_months: int,
    demand_multiplier: Array | None = None,
    price_change_per_year: ArrayLike | None = None,
) -> tuple[dict[str, Array], Array]:
    """``compute`` (and ``support`` unless ``support_fraction`` is 0) [USD/month] and the
    shortfall per path [GPU-h].

    ``compute[m] = multiplier × usd_per_month[m] × (1 + c) ** ((m − 1) / 12)``;
    ``support[m] = support_fraction × compute[m]``. ``demand_multiplier`` ``(P,)`` multiplies the
    tokens, input tokens, training tokens and the work it cannot buy; ``price_change_per_year``
    ``(P,)`` replaces ``c``. None keeps the document's own value.
    """
    c = rates.price_change_per_year if price_change_per_year is None else price_change_per_year
    trend = trend_factor(c, horizon_months)
    usd: Array = rates.usd_per_month[np.newaxis, :]
    unbought: Array = rates.unbought_gpu_hours[np.newaxis, :]
    if demand_multiplier is not None:
        usd = paths_column(demand_multiplier) * usd
        unbought = paths_column(demand_multiplier) * unbought
    compute = np.broadcast_to(usd * trend, (n_paths, horizon_months + 1))
    shortfall = np.broadcast_to(unbought, (n_paths, horizon_months + 1)).sum(axis=-1)
    costs: dict[str, Array] = {"compute": compute}
    if rates.support_fraction != 0.0:
        costs["support"] = rates.support_fraction * compute
    return costs, shortfall
