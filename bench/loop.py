"""The scenario-format.md formulas, one path and one month at a time, in plain Python.

A reference for the benchmark: no numpy in the arithmetic, every path and month visited by a
Python loop. It covers the workload and option types of the benchmark scenario (``steady``
workloads; ``cloud`` on-demand, spot and committed with elastic scaling; ``dedicated``;
``on_prem`` with or without financing) and refuses anything else rather than guess.

Inputs are the normalised document (every default filled in); the per-path values are those the
Monte Carlo engine draws (``costapp.tco.montecarlo.block_draws``), already clipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

GB_PER_TB = 1000.0


def ceil_tolerant(x: float) -> float:
    """``ceil(x − 1e-9 · max(1, |x|))`` [count]."""
    return float(math.ceil(x - 1e-9 * max(1.0, abs(x))))


def _number(values: Mapping[str, Any], key: str, default: float) -> float:
    """``values[key]`` as a float, ``default`` where it is absent or null."""
    value = values.get(key)
    return default if value is None else float(value)


def _speed(gpus: Mapping[str, Mapping[str, Any]], slug: str) -> float:
    """bf16 TFLOPS of a GPU (fp16 where it has no bf16): steady work's speed [TFLOPS]."""
    figures = gpus[slug]
    value = figures.get("bf16_dense_tflops")
    return float(value if value is not None else figures["fp16_dense_tflops"])


def _tiered_usd(tb: float, tiers: Sequence[Mapping[str, Any]]) -> float:
    """One month's egress over cumulative tiers [USD]."""
    total = 0.0
    lower = 0.0
    for tier in tiers:
        upper = math.inf if tier.get("up_to_tb") is None else float(tier["up_to_tb"])
        total += max(0.0, min(tb, upper) - lower) * GB_PER_TB * float(tier["usd_per_gb"])
        lower = upper
    return total


def _growth(w: Mapping[str, Any], m: int) -> float:
    """``f[m]`` of a workload, 0 outside its active months [dimensionless]."""
    start = int(w["start_month"])
    if not start <= m <= int(w["end_month"]):
        return 0.0
    return (1.0 + float(w["monthly_growth"])) ** (m - start)


def _busy(
    workloads: Sequence[Mapping[str, Any]],
    gpus: Mapping[str, Mapping[str, Any]],
    gpu: str,
    t: float,
    m: int,
    hpm: float,
    demand: float,
) -> float:
    """``busy_o[m]`` of steady workloads on ``gpu``, times the path's demand [GPU-hours]."""
    busy = 0.0
    for w in workloads:
        f = _growth(w, m)
        if f:
            r = _speed(gpus, w["gpu"]) / _speed(gpus, gpu)
            busy += float(w["gpus"]) * f * float(w["utilization"]) * hpm * demand * r / t
    return busy


def _peak(
    workloads: Sequence[Mapping[str, Any]],
    gpus: Mapping[str, Mapping[str, Any]],
    gpu: str,
    t: float,
    m: int,
) -> float:
    """``peak_o[m]`` of steady workloads on ``gpu`` (``fit`` is 0 for them) [GPUs]."""
    peak = 0.0
    for w in workloads:
        f = _growth(w, m)
        if f:
            r = _speed(gpus, w["gpu"]) / _speed(gpus, gpu)
            peak += ceil_tolerant(float(w["gpus"]) * f * r / t)
    return peak


def _option_gpu(option: Mapping[str, Any], inputs: Mapping[str, Any]) -> str:
    return str(option.get("gpu") or inputs["workloads"][0].get("gpu", "h100-sxm"))


def loop_costs(
    inputs: Mapping[str, Any],
    gpus: Mapping[str, Mapping[str, Any]],
    draws: Sequence[Mapping[str, float]],
) -> tuple[list[list[float]], list[list[float]], list[list[float]], list[list[list[float]]]]:
    """Cost every option on every path, one path and one month at a time.

    ``draws[p]`` maps the simulated inputs of path ``p`` (``demand_multiplier`` …) to their value;
    an absent one keeps the document's value. Returns ``(total_usd, npv_usd, shortfall_gpu_hours,
    monthly_usd)`` indexed ``[option][path]`` (``monthly_usd`` ``[option][path][month]``; kept for
    the first 10 000 paths only) [USD, USD, GPU-hours, USD].
    """
    H = int(inputs["horizon_months"])
    hpm = float(inputs["hours_per_month"])
    rate = float(inputs["discount_rate"])
    egress_tb = float(inputs["egress_tb_per_month"])
    workloads = inputs["workloads"]
    options = inputs["options"]
    for w in workloads:
        if w["type"] != "steady":
            raise NotImplementedError(f"the loop covers steady workloads, not {w['type']}")

    totals = [[0.0] * len(draws) for _ in options]
    npvs = [[0.0] * len(draws) for _ in options]
    shortfalls = [[0.0] * len(draws) for _ in options]
    months_kept: list[list[list[float]]] = [[] for _ in options]

    # Document-only sizing, done once: the fleet is bought for the document's own demand.
    max_peaks: list[float] = []
    for option in options:
        gpu = _option_gpu(option, inputs)
        t = _number(option, "throughput_factor", 1.0)
        max_peaks.append(
            max(_peak(workloads, gpus, gpu, t, m) for m in range(1, H + 1)) if H else 0.0
        )

    for p, future in enumerate(draws):
        demand = future.get("demand_multiplier", 1.0)
        kwh_multiplier = future.get("usd_per_kwh_multiplier", 1.0)
        for o, option in enumerate(options):
            gpu = _option_gpu(option, inputs)
            t = _number(option, "throughput_factor", 1.0)
            max_peak = max_peaks[o]

            def busy_at(m: int, gpu: str = gpu, t: float = t, demand: float = demand) -> float:
                """``busy_o[m]`` on this path [GPU-hours]."""
                return _busy(workloads, gpus, gpu, t, m, hpm, demand)

            kind = option["type"]
            total = 0.0
            npv = 0.0
            shortfall = 0.0
            monthly: list[float] = []

            if kind == "cloud":
                billing = option.get("billing") or "on_demand"
                if (option.get("scaling") or "elastic") != "elastic":
                    raise NotImplementedError("the loop covers elastic cloud scaling")
                c = future.get(
                    "cloud_price_change_per_year", _number(option, "price_change_per_year", 0.0)
                )
                price = float(option["usd_per_gpu_hour"])
                overhead = future.get(
                    "interruption_overhead", _number(option, "interruption_overhead", 0.1)
                )
                support_fraction = _number(option, "support_fraction", 0.0)
                if option.get("egress_tiers"):
                    egress = _tiered_usd(egress_tb, option["egress_tiers"])
                elif option.get("egress_usd_per_gb") is not None:
                    egress = egress_tb * GB_PER_TB * float(option["egress_usd_per_gb"])
                else:
                    egress = 0.0
                committed = option.get("committed_gpus")
                committed = max_peak if committed is None else float(committed)
                term = int(option.get("term_months") or H)
                on_demand_rate = option.get("on_demand_usd_per_gpu_hour")
                for m in range(H + 1):
                    cost = 0.0
                    if billing == "committed" and m % term == 0 and m < H:
                        cost += _number(option, "upfront_usd", 0.0)
                    if m >= 1:
                        busy = busy_at(m)
                        k = (1.0 + c) ** ((m - 1) / 12.0)
                        if billing == "on_demand":
                            compute = busy * price * k
                        elif billing == "spot":
                            compute = busy * price * k * (1.0 + overhead)
                        elif billing == "committed":
                            term_start = term * ((m - 1) // term)
                            committed_rate = price * (1.0 + c) ** (term_start / 12.0)
                            compute = committed * hpm * committed_rate
                            overflow = max(0.0, busy - committed * hpm)
                            if on_demand_rate is None:
                                shortfall += overflow
                            else:
                                compute += overflow * float(on_demand_rate) * k
                        else:
                            raise NotImplementedError(billing)
                        cost += compute + egress + support_fraction * (compute + egress)
                    monthly.append(cost)

            elif kind == "dedicated":
                per_server = int(_number(option, "gpus_per_server", 8))
                servers = option.get("servers")
                servers = (
                    ceil_tolerant(max_peak / per_server) if servers is None else float(servers)
                )
                capacity = servers * per_server * hpm
                burst = option.get("burst_usd_per_gpu_hour")
                egress = max(0.0, egress_tb - _number(option, "included_egress_tb", 0.0)) * _number(
                    option, "overage_usd_per_tb", 0.0
                )
                for m in range(H + 1):
                    if m == 0:
                        monthly.append(_number(option, "setup_usd", 0.0))
                        continue
                    busy = busy_at(m)
                    cost = servers * float(option["usd_per_server_month"]) + egress
                    beyond = max(0.0, busy - capacity)
                    if burst is None:
                        shortfall += beyond
                    else:
                        cost += beyond * float(burst)
                    monthly.append(cost)

            elif kind == "on_prem":
                per_server = int(_number(option, "gpus_per_server", 8))
                servers = option.get("servers")
                servers = (
                    ceil_tolerant(max_peak / per_server) if servers is None else float(servers)
                )
                capex = servers * float(option["capex_usd_per_server"])
                capacity = servers * per_server * hpm
                lead = int(_number(option, "lead_time_months", 0))
                kw = float(option["server_kw"])
                idle = _number(option, "idle_power_fraction", 0.3)
                pue = _number(option, "pue", 1.3)
                usd_per_kwh = _number(option, "usd_per_kwh", 0.10) * kwh_multiplier
                colo = servers * kw * _number(option, "colo_usd_per_kw_month", 0.0)
                support = capex * _number(option, "support_fraction_per_year", 0.0) / 12.0
                staff = _number(option, "staff_usd_per_month", 0.0)
                egress = egress_tb * _number(option, "egress_usd_per_tb", 0.0)
                residual = -capex * _number(option, "residual_fraction", 0.0)
                bridge = option.get("bridge_usd_per_gpu_hour")
                burst = option.get("burst_usd_per_gpu_hour")
                financing = option.get("financing")
                payment = 0.0
                loan_months = 0
                if financing:
                    i = float(financing["apr"]) / 12.0
                    loan_months = int(financing["term_months"])
                    payment = (
                        capex / loan_months
                        if i == 0.0
                        else capex * i / (1.0 - (1.0 + i) ** (-loan_months))
                    )
                balance = capex
                for m in range(H + 1):
                    if m == 0:
                        monthly.append(0.0 if financing else capex)
                        continue
                    cost = staff + egress
                    if financing and m <= loan_months:
                        i = float(financing["apr"]) / 12.0
                        balance = balance * (1.0 + i) - payment
                        cost += payment
                    busy = busy_at(m)
                    if m > lead:
                        u = min(1.0, busy / capacity)
                        cost += servers * kw * (idle + (1.0 - idle) * u) * pue * hpm * usd_per_kwh
                        cost += colo + support
                        beyond = max(0.0, busy - capacity)
                        if burst is None:
                            shortfall += beyond
                        else:
                            cost += beyond * float(burst)
                    elif bridge is None:
                        shortfall += busy
                    else:
                        cost += busy * float(bridge)
                    if m == H:
                        cost += residual
                        if financing and loan_months > H:
                            cost += balance
                    monthly.append(cost)
            else:
                raise NotImplementedError(kind)

            for m, cost in enumerate(monthly):
                total += cost
                npv += cost / (1.0 + rate) ** (m / 12.0)
            totals[o][p] = total
            npvs[o][p] = npv
            shortfalls[o][p] = shortfall
            if p < 10_000:
                months_kept[o].append(monthly)
    return totals, npvs, shortfalls, months_kept
