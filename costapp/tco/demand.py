"""Demand: the work each workload needs per month, and what it asks of an option's GPU.

Per workload, over months ``1 … H`` (arrays of shape ``(H,)``):
``busy`` [GPU-h on the workload's own GPU], ``need`` [GPUs held at once, real], ``fit(G)``
[GPUs of model ``G`` that hold it in memory]. Per option: ``busy_o`` [GPU-h on the option's GPU]
and ``peak_o`` [GPUs].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .finance import CEIL_TOLERANCE, ceil_tolerant
from .types import GpuFigures, gpu_figure

Array = NDArray[np.float64]
BYTES_PER_GB = 1e9
PARAMS_PER_BILLION = 1e9
TRAINING_BYTES_PER_PARAM = 16.0  # mixed-precision Adam: weights, gradients, optimizer state
TRAINING_MEMORY_SHARE = 0.9  # 10 % of memory left for activations
INFERENCE_BYTES_PER_PARAM = 2.0  # fp16 weights
INFERENCE_MEMORY_OVERHEAD = 1.2  # 20 % for KV cache and activations
SECONDS_PER_HOUR = 3600.0
TRAINING_FLOPS_PER_PARAM_TOKEN = 6.0  # forward and backward pass: 6 × N × D FLOP for a run
TOKENS_PER_BILLION = 1e9
DECODE_CONCURRENT_SEQUENCES = 32  # sequences decoded at once in the throughput estimate
DECODE_FLOPS_PER_PARAM_TOKEN = 2.0  # one multiply-add per parameter per generated token
DECODE_COMPUTE_SHARE = 0.5  # share of peak compute decoding reaches at best
PREFILL_COMPUTE_SHARE = 0.5  # version 1.3: share of peak compute prompt reading reaches
PREFILL_FLOPS_PER_PARAM_TOKEN = 2.0  # one multiply-add per parameter per prompt token
TFLOPS = 1e12  # FLOP/s per TFLOPS
BYTES_PER_SECOND_PER_TB_S = 1e12


def training_flops_per_run(params_billion: float, tokens_billion: float) -> float:
    """``6 × N × D`` [FLOP] for ``N = params_billion × 1e9`` parameters and ``D = tokens_billion × 1e9``
    tokens (the training workload's ``flops_per_run`` when the document gives only the sizes)."""
    return (
        TRAINING_FLOPS_PER_PARAM_TOKEN
        * (params_billion * PARAMS_PER_BILLION)
        * (tokens_billion * TOKENS_PER_BILLION)
    )


def estimate_tokens_per_second_per_gpu(params_billion: float, figures: GpuFigures) -> float | None:
    """Decoding throughput of one GPU [tokens/s] for a model of ``params_billion`` parameters.

    Bandwidth-bound decoding at 32 concurrent sequences, capped by half the compute:
    ``min(32 × bandwidth × 1e12 / (2 × params), 0.5 × bf16_tflops × 1e12 / (2 × params))`` with
    ``params = params_billion × 1e9``; fp16 TFLOPS stand in where the GPU has no bf16 figure.
    ``None`` when the GPU has neither a bandwidth nor a compute figure or ``params_billion`` is 0.
    """
    params = params_billion * PARAMS_PER_BILLION
    if params <= 0:
        return None
    candidates: list[float] = []
    bandwidth = figures.get("memory_bandwidth_tb_s")
    if bandwidth:
        candidates.append(
            DECODE_CONCURRENT_SEQUENCES
            * bandwidth
            * BYTES_PER_SECOND_PER_TB_S
            / (DECODE_FLOPS_PER_PARAM_TOKEN * params)
        )
    # version 1.2: the fp16 figure where the GPU has no bf16 figure, the bandwidth term alone
    # where it has neither
    tflops = figures.get("bf16_dense_tflops") or figures.get("fp16_dense_tflops")
    if tflops:
        candidates.append(
            DECODE_COMPUTE_SHARE * tflops * TFLOPS / (DECODE_FLOPS_PER_PARAM_TOKEN * params)
        )
    return min(candidates) if candidates else None


def estimate_prefill_tokens_per_second_per_gpu(
    params_billion: float, figures: GpuFigures
) -> float | None:
    """Prompt tokens read a second on one GPU [tokens/s] (version 1.3, "Workloads": the prefill
    estimate): compute-bound reading at half the peak, ``0.5 × bf16_tflops × 1e12 / (2 × params)``
    with ``params = params_billion × 1e9`` (the fp16 figure where the GPU has no bf16 figure).
    ``None`` when ``params_billion`` is not above 0 or the GPU has neither figure."""
    params = params_billion * PARAMS_PER_BILLION
    if not params > 0:
        return None
    tflops = figures.get("bf16_dense_tflops") or figures.get("fp16_dense_tflops")
    if not tflops:
        return None
    return PREFILL_COMPUTE_SHARE * tflops * TFLOPS / (PREFILL_FLOPS_PER_PARAM_TOKEN * params)


@dataclass(frozen=True, eq=False)
class WorkloadDemand:
    """One workload's demand, months ``1 … H`` (shape ``(H,)``).

    An inference workload that reads prompt tokens (version 1.3) also keeps its prefill part
    apart: ``prefill_busy_gpu_hours`` and ``prefill_need_gpus`` are the part of ``busy`` and
    ``need`` spent reading prompts (None without prompts), converted to another GPU with the
    steady work's ratio while the rest (decode) converts with the bandwidth ratio."""

    busy_gpu_hours: Array  # [GPU-h on the workload's GPU]
    need_gpus: Array  # [GPUs, real]
    active: NDArray[np.bool_]  # months the workload runs
    growth: Array | None = None  # f[m] [dimensionless], 0 outside the active months
    prefill_busy_gpu_hours: Array | None = None  # version 1.3 [GPU-h]; None: no prompts
    prefill_need_gpus: Array | None = None  # version 1.3 [GPUs]
    decode_busy_gpu_hours: Array | None = None  # version 1.3 [GPU-h]; with the prefill part
    decode_need_gpus: Array | None = None  # version 1.3 [GPUs]


def growth_factor(
    start_month: int, end_month: int, monthly_growth: float, horizon_months: int
) -> Array:
    """``f[m] = (1 + g) ** (m − start_month)`` in active months, 0 outside [dimensionless]; ``(H,)``."""
    months = np.arange(1, horizon_months + 1, dtype=np.float64)
    active = active_months(start_month, end_month, horizon_months)
    return np.where(active, (1.0 + monthly_growth) ** (months - start_month), 0.0)


def active_months(start_month: int, end_month: int, horizon_months: int) -> NDArray[np.bool_]:
    """Months ``start_month ≤ m ≤ end_month`` among ``1 … H``; shape ``(H,)``."""
    months = np.arange(1, horizon_months + 1)
    return (months >= start_month) & (months <= end_month)


def steady_busy_gpu_hours(
    gpus: float, utilization: float, growth: Array, hours_per_month: float
) -> Array:
    """``busy = gpus × f × utilization × hours_per_month`` [GPU-h/month]."""
    return gpus * growth * utilization * hours_per_month


def steady_need_gpus(gpus: float, growth: Array) -> Array:
    """``need = gpus × f`` [GPUs]."""
    return gpus * growth


def training_gpu_hours_per_run(flops_per_run: float, tflops: float, mfu: float) -> float:
    """``flops_per_run / (tflops × 1e12 × mfu × 3600)`` [GPU-h per run]."""
    return flops_per_run / (tflops * 1e12 * mfu * SECONDS_PER_HOUR)


def training_busy_gpu_hours(gpu_hours_per_run: float, runs_per_year: float, growth: Array) -> Array:
    """``busy = gpu_hours_per_run × runs_per_year / 12 × f`` [GPU-h/month]."""
    return gpu_hours_per_run * runs_per_year / 12.0 * growth


def training_need_gpus(
    busy_gpu_hours: Array,
    cluster_gpus: float | None,
    hours_per_month: float,
    active: NDArray[np.bool_],
) -> Array:
    """``need = max(cluster_gpus or 0, busy / hours_per_month)`` in active months [GPUs]."""
    need = np.maximum(float(cluster_gpus or 0), busy_gpu_hours / hours_per_month)
    return np.where(active, need, 0.0)


def inference_busy_gpu_hours(
    tokens_per_second: float,
    tokens_per_second_per_gpu: float,
    growth: Array,
    hours_per_month: float,
) -> Array:
    """``busy = tokens_per_second × f / tokens_per_second_per_gpu × hours_per_month`` [GPU-h/month]."""
    return tokens_per_second * growth / tokens_per_second_per_gpu * hours_per_month


def inference_need_gpus(
    tokens_per_second: float,
    peak_to_average: float,
    tokens_per_second_per_gpu: float,
    growth: Array,
) -> Array:
    """``need = tokens_per_second × f × peak_to_average / tokens_per_second_per_gpu`` [GPUs]."""
    return tokens_per_second * growth * peak_to_average / tokens_per_second_per_gpu


def training_fit_gpus(params_billion: float | None, memory_gb: float) -> float:
    """``ceil(16 × params / (0.9 × memory_gb × 1e9))`` [GPUs]; 0 without ``params_billion``."""
    if params_billion is None:
        return 0.0
    params = params_billion * PARAMS_PER_BILLION
    return float(
        ceil_tolerant(
            TRAINING_BYTES_PER_PARAM * params / (TRAINING_MEMORY_SHARE * memory_gb * BYTES_PER_GB)
        )
    )


def inference_fit_gpus(params_billion: float | None, memory_gb: float) -> float:
    """``ceil(2 × params × 1.2 / (memory_gb × 1e9))`` [GPUs]; 0 without ``params_billion``."""
    if params_billion is None:
        return 0.0
    params = params_billion * PARAMS_PER_BILLION
    return float(
        ceil_tolerant(
            INFERENCE_BYTES_PER_PARAM
            * params
            * INFERENCE_MEMORY_OVERHEAD
            / (memory_gb * BYTES_PER_GB)
        )
    )


def workload_demand(
    workload: Mapping[str, Any],
    gpu: GpuFigures,
    horizon_months: int,
    hours_per_month: float,
) -> WorkloadDemand:
    """Busy GPU-hours [GPU-h/month] and needed GPUs [GPUs] of one normalised workload on its GPU."""
    growth = growth_factor(
        int(workload["start_month"]),
        int(workload["end_month"]),
        float(workload["monthly_growth"]),
        horizon_months,
    )
    active = active_months(int(workload["start_month"]), int(workload["end_month"]), horizon_months)
    kind = workload["type"]
    if kind == "steady":
        busy = steady_busy_gpu_hours(
            float(workload["gpus"]), float(workload["utilization"]), growth, hours_per_month
        )
        need = steady_need_gpus(float(workload["gpus"]), growth)
    elif kind == "training":
        tflops = precision_tflops(gpu, str(workload["precision"]))
        if tflops is None:
            raise ValueError(f"the workload's GPU has no {workload['precision']} figure")
        per_run = training_gpu_hours_per_run(
            float(workload["flops_per_run"]), tflops, float(workload["mfu"])
        )
        busy = training_busy_gpu_hours(per_run, float(workload["runs_per_year"]), growth)
        need = training_need_gpus(busy, workload.get("cluster_gpus"), hours_per_month, active)
    elif kind == "inference":
        busy = inference_busy_gpu_hours(
            float(workload["tokens_per_second"]),
            float(workload["tokens_per_second_per_gpu"]),
            growth,
            hours_per_month,
        )
        need = inference_need_gpus(
            float(workload["tokens_per_second"]),
            float(workload["peak_to_average"]),
            float(workload["tokens_per_second_per_gpu"]),
            growth,
        )
        prompts = float(workload.get("input_tokens_per_output_token") or 0.0)
        if prompts > 0.0:
            # version 1.3: prefill = x × i / prefill_tokens_per_second_per_gpu GPUs busy on
            # average; busy and need are decode + prefill
            prompt_rate = float(workload["tokens_per_second"]) * prompts
            prefill_rate = float(workload["prefill_tokens_per_second_per_gpu"])
            prefill_busy = inference_busy_gpu_hours(
                prompt_rate, prefill_rate, growth, hours_per_month
            )
            prefill_need = inference_need_gpus(
                prompt_rate, float(workload["peak_to_average"]), prefill_rate, growth
            )
            return WorkloadDemand(
                busy_gpu_hours=busy + prefill_busy,
                need_gpus=need + prefill_need,
                active=active,
                growth=growth,
                prefill_busy_gpu_hours=prefill_busy,
                prefill_need_gpus=prefill_need,
                decode_busy_gpu_hours=busy,
                decode_need_gpus=need,
            )
    else:
        raise ValueError(f"unknown workload type {kind!r}")
    return WorkloadDemand(busy_gpu_hours=busy, need_gpus=need, active=active, growth=growth)


def converted_demand(
    demand: WorkloadDemand, decode_ratio: float, prefill_ratio: float
) -> WorkloadDemand:
    """An inference workload's demand on another GPU, as the option's own (version 1.3, "From a
    workload to an option"): ``busy × r`` is ``decode × r_bandwidth + prefill × r_tflops`` (times
    ``hours_per_month``), and ``need × r`` likewise; the result is read with ``r = 1``."""
    assert demand.prefill_busy_gpu_hours is not None and demand.prefill_need_gpus is not None
    assert demand.decode_busy_gpu_hours is not None and demand.decode_need_gpus is not None
    decode_busy, decode_need = demand.decode_busy_gpu_hours, demand.decode_need_gpus
    return WorkloadDemand(
        busy_gpu_hours=decode_busy * decode_ratio + demand.prefill_busy_gpu_hours * prefill_ratio,
        need_gpus=decode_need * decode_ratio + demand.prefill_need_gpus * prefill_ratio,
        active=demand.active,
        growth=demand.growth,
    )


def fit_gpus(workload: Mapping[str, Any], option_gpu: GpuFigures) -> float:
    """Fewest GPUs of the option's model that hold the workload in memory [GPUs]; 0 if memory does not bind."""
    memory_gb = option_gpu["memory_gb"]
    params = workload.get("params_billion")
    if memory_gb is None or params is None:
        return 0.0
    if workload["type"] == "training":
        return training_fit_gpus(float(params), float(memory_gb))
    if workload["type"] == "inference":
        return inference_fit_gpus(float(params), float(memory_gb))
    return 0.0


def precision_tflops(gpu: GpuFigures, precision: str) -> float | None:
    """Dense TFLOPS of a GPU at a precision (``bf16``, ``fp16``, ``fp8``, ``tf32``), None if it lacks it."""
    return gpu_figure(gpu, f"{precision}_dense_tflops")


def half_precision_tflops(gpu: GpuFigures) -> float | None:
    """bf16 dense TFLOPS, fp16 where the GPU has no bf16 [TFLOPS]."""
    bf16 = precision_tflops(gpu, "bf16")
    return bf16 if bf16 is not None else precision_tflops(gpu, "fp16")


@dataclass(frozen=True)
class SpeedRatio:
    """``r = speed(workload GPU) / speed(option GPU)`` [dimensionless] and a warning if a figure was substituted."""

    ratio: float
    warning: str | None = None


def speed_ratio(
    workload: Mapping[str, Any],
    workload_gpu_slug: str,
    workload_gpu: GpuFigures,
    option_gpu_slug: str,
    option_gpu: GpuFigures,
) -> SpeedRatio:
    """Speed of the workload's GPU relative to the option's, by workload type.

    Training: peak TFLOPS at the workload's precision (bf16 on the option's GPU when it lacks that
    precision, with a warning); inference: memory bandwidth; steady: bf16 TFLOPS (fp16 where a GPU
    has no bf16). ``r = 1`` on the same GPU.
    """
    if workload_gpu_slug == option_gpu_slug:
        return SpeedRatio(1.0)
    kind = workload["type"]
    warning = None
    if kind == "inference":
        numerator = workload_gpu.get("memory_bandwidth_tb_s")
        denominator = option_gpu.get("memory_bandwidth_tb_s")
    elif kind == "training":
        precision = str(workload["precision"])
        numerator = precision_tflops(workload_gpu, precision)
        denominator = precision_tflops(option_gpu, precision)
        if denominator is None:
            denominator = precision_tflops(option_gpu, "bf16")
            substitute = "bf16"
            if denominator is None:
                denominator = precision_tflops(option_gpu, "fp16")
                substitute = "fp16"
            warning = (
                f"{option_gpu_slug} has no {precision} figure: workload {workload['name']!r} "
                f"is compared with its {substitute} TFLOPS."
            )
    else:
        numerator = half_precision_tflops(workload_gpu)
        denominator = half_precision_tflops(option_gpu)
    if numerator is None or denominator is None or float(denominator) <= 0.0:
        raise ValueError(
            f"no figure to compare the speed of {workload_gpu_slug} and {option_gpu_slug}"
        )
    return SpeedRatio(float(numerator) / float(denominator), warning)


def option_peak_contribution(
    demand: WorkloadDemand,
    ratio: float,
    throughput_factor: float,
    fit: float,
    resident: float = 0.0,
    goodput_peak: Array | None = None,
) -> Array:
    """``max(ceil(need × r / t), [goodput term], fit(O), resident(O))`` in the workload's active
    months, 0 outside [GPUs]; ``(H,)``. ``goodput_peak``: :func:`option_goodput_peak` (version
    1.2), None where goodput is 1 (then it is never the largest)."""
    gpus = np.maximum(ceil_tolerant(demand.need_gpus * ratio / throughput_factor), fit)
    if goodput_peak is not None:
        gpus = np.maximum(gpus, goodput_peak)
    if resident > 0.0:
        gpus = np.maximum(gpus, resident)
    return np.where(demand.active, gpus, 0.0)


def tokens_per_month(workload: Mapping[str, Any], growth: Array, hours_per_month: float) -> Array:
    """``tokens_per_second × f × 3600 × hours_per_month`` [generated tokens/month] of an
    inference workload (version 1.2), 0 for other work; ``(H,)``."""
    if workload["type"] != "inference":
        return np.zeros_like(growth)
    return float(workload["tokens_per_second"]) * growth * SECONDS_PER_HOUR * hours_per_month


def option_busy_contribution(
    demand: WorkloadDemand, ratio: float, throughput_factor: float, goodput: Array | None = None
) -> Array:
    """``busy × r / (t × g)`` [GPU-h/month on the option's GPU]; ``(H,)``.

    ``goodput``: the workload's ``g[m]`` on the option, ``(H,)``; None means 1 (``busy × r / t``).
    """
    if goodput is None:
        return demand.busy_gpu_hours * ratio / throughput_factor
    return demand.busy_gpu_hours * ratio / (throughput_factor * goodput)


def resident_gpus(workload: Mapping[str, Any], fit: float) -> float:
    """``resident(G) = min_replicas × max(1, fit(G))`` [GPUs] for an inference workload (version
    1.2), 0 for steady and training work; ``fit`` is ``fit(G)`` on the option's GPU."""
    if workload["type"] != "inference":
        return 0.0
    return float(int(workload["min_replicas"]) * max(1.0, fit))


def training_gpus_running(need: Array, ratio: float, throughput_factor: float, fit: float) -> Array:
    """``n[m] = max(1, ceil(need × r / t), fit(O))`` [GPUs]: the GPUs a training job runs on."""
    return np.maximum(np.maximum(ceil_tolerant(need * ratio / throughput_factor), fit), 1.0)


@dataclass(frozen=True, eq=False)
class Goodput:
    """A training workload's goodput on an option, months ``1 … H`` (version 1.2)."""

    goodput: Array  # g[m] [dimensionless], 1 outside the active months
    interval_hours: Array  # τ = sqrt(2 × δ × M) [h]
    failure_hours: Array  # M = M₁ / n[m] [h]
    gpus: Array  # n[m] [GPUs]


def training_goodput(
    gpus_running: Array,
    mtbf_gpu_hours: float,
    checkpoint_hours: float,
    restart_hours: float,
    active: NDArray[np.bool_],
) -> Goodput:
    """Young's interval and the share of each hour that does work [dimensionless].

    ``M = M₁ / n``, ``τ = sqrt(2 × δ × M)``, ``g = 1 − δ / τ − (R + τ / 2) / M`` (``δ / τ`` is 0
    when ``δ`` is 0), in the active months; 1 elsewhere.
    """
    failure = mtbf_gpu_hours / gpus_running
    interval = np.sqrt(2.0 * checkpoint_hours * failure)
    writes = checkpoint_hours / interval if checkpoint_hours > 0.0 else np.zeros_like(failure)
    goodput = 1.0 - writes - (restart_hours + interval / 2.0) / failure
    return Goodput(
        goodput=np.where(active, goodput, 1.0),
        interval_hours=interval,
        failure_hours=failure,
        gpus=gpus_running,
    )


def option_goodput_peak(
    demand: WorkloadDemand, ratio: float, throughput_factor: float, goodput: Array, hours: float
) -> Array:
    """``ceil(busy × r / (t × g × hours_per_month))`` [GPUs] in active months, 0 outside: the
    GPUs a month's work needs once goodput stretches it (version 1.2); ``(H,)``."""
    gpus = ceil_tolerant(demand.busy_gpu_hours * ratio / (throughput_factor * goodput * hours))
    return np.where(demand.active, gpus, 0.0)


def sum_over(arrays: Sequence[Array], horizon_months: int) -> Array:
    """Elementwise sum of month arrays, zeros when there are none; ``(H,)``."""
    total = np.zeros(horizon_months)
    for array in arrays:
        total = total + array
    return total


def excess_gpu_hours(busy_gpu_hours: Array, capacity_gpu_hours: float) -> Array:
    """Work beyond a fixed capacity [GPU-h/month]: ``max(0, busy_o − capacity)``.

    An excess within float noise (``≤ 1e-9 · max(1, capacity)``, the tolerance of ``ceil``) counts
    as none, so a fleet sized by a tolerant ``ceil`` is never short by a rounding error.
    """
    excess = np.asarray(busy_gpu_hours, dtype=np.float64) - capacity_gpu_hours
    return np.where(excess > CEIL_TOLERANCE * max(1.0, abs(capacity_gpu_hours)), excess, 0.0)


def within_capacity(busy_bound_gpu_hours: float, capacity_gpu_hours: float) -> bool:
    """True when :func:`excess_gpu_hours` is zero in every month and path, judged on one scalar.

    ``busy_bound_gpu_hours`` [GPU-h/month] bounds ``|busy_o|`` in every month and path (for
    instance ``max |multiplier| × max |busy_o|``: float rounding keeps such a product an upper
    bound). False (compute the excess) when the bound is NaN.
    """
    excess = busy_bound_gpu_hours - capacity_gpu_hours
    return bool(excess <= CEIL_TOLERANCE * max(1.0, abs(capacity_gpu_hours)))


def counted_over(over_gpu_hours: Array, capacity_gpu_hours: ArrayLike) -> Array:
    """``over(C)`` as it counts (version 1.3, "Fixed capacity"): only where it exceeds ``1e-9 ×
    max(1, C × hours_per_month)`` GPU-hours; less is float noise and counts as none."""
    tolerance = CEIL_TOLERANCE * np.maximum(1.0, np.abs(np.asarray(capacity_gpu_hours)))
    return np.where(over_gpu_hours > tolerance, over_gpu_hours, 0.0)
