"""The scenario-format.md formulas (version 1.2), one path and one month at a time, in plain Python.

A reference for the engine and its benchmark: no numpy in the arithmetic, every path and month
visited by a Python loop. It covers every workload type (``steady``, ``training``, ``inference``
with resident replicas, goodput under failures) and every option type (``cloud`` on-demand, spot
and committed, elastic or fixed; ``dedicated``; ``on_prem`` with or without financing; ``api``),
and version 1.3's ``mix`` where every load is flat and no unit exceeds a fleet (steady work,
inference at ``peak_to_average`` 1 without prompts and without a model size, training without a
cluster or a model size), where ``over(C) = max(0, supply_o − C × hours_per_month)``: it refuses
other documents with a mix. Beyond that it reads a document as version 1.2 does, so it agrees
with the engine where version 1.3 changes no figure.

Inputs are the normalised document (every default filled in); the per-path values are those the
Monte Carlo engine draws (``costapp.tco.montecarlo.block_draws``), already clipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

GB_PER_TB = 1000.0
TOLERANCE = 1e-9


def ceil_tolerant(x: float) -> float:
    """``ceil(x − 1e-9 · max(1, |x|))`` [count]."""
    return float(math.ceil(x - TOLERANCE * max(1.0, abs(x))))


def _excess(work: float, capacity: float) -> float:
    """Work beyond a capacity, float noise (≤ 1e-9 · max(1, capacity)) counting as none."""
    beyond = work - capacity
    return beyond if beyond > TOLERANCE * max(1.0, abs(capacity)) else 0.0


def _number(values: Mapping[str, Any], key: str, default: float) -> float:
    """``values[key]`` as a float, ``default`` where it is absent or null."""
    value = values.get(key)
    return default if value is None else float(value)


def _tflops(figures: Mapping[str, Any], precision: str) -> float | None:
    value = figures.get(f"{precision}_dense_tflops")
    return None if value is None else float(value)


def _half(figures: Mapping[str, Any]) -> float:
    """bf16 TFLOPS of a GPU (fp16 where it has no bf16) [TFLOPS]."""
    value = _tflops(figures, "bf16")
    return value if value is not None else float(figures["fp16_dense_tflops"])


def _speed_ratio(w: Mapping[str, Any], gpus: Mapping[str, Mapping[str, Any]], gpu: str) -> float:
    """``r = speed(workload GPU) / speed(option GPU)`` by workload type [dimensionless]."""
    if w["gpu"] == gpu:
        return 1.0
    mine, theirs = gpus[w["gpu"]], gpus[gpu]
    if w["type"] == "inference":
        return float(mine["memory_bandwidth_tb_s"]) / float(theirs["memory_bandwidth_tb_s"])
    if w["type"] == "training":
        precision = str(w["precision"])
        other = _tflops(theirs, precision)
        if other is None:
            other = _tflops(theirs, "bf16")
        if other is None:
            other = _tflops(theirs, "fp16")
        return float(_tflops(mine, precision)) / float(other)  # type: ignore[arg-type]
    return _half(mine) / _half(theirs)


def _fit(w: Mapping[str, Any], figures: Mapping[str, Any]) -> float:
    """``fit(G)`` [GPUs]: 0 without ``params_billion`` or a memory figure, and for steady work."""
    params = w.get("params_billion")
    memory = figures.get("memory_gb")
    if params is None or memory is None or w["type"] == "steady":
        return 0.0
    params = float(params) * 1e9
    if w["type"] == "training":
        return ceil_tolerant(16.0 * params / (0.9 * float(memory) * 1e9))
    return ceil_tolerant(2.0 * params * 1.2 / (float(memory) * 1e9))


def _demand(
    w: Mapping[str, Any], gpus: Mapping[str, Mapping[str, Any]], m: int, hpm: float
) -> tuple[float, float]:
    """``busy[m]`` [GPU-hours on the workload's GPU] and ``need[m]`` [GPUs] of one workload."""
    f = _growth(w, m)
    if not f:
        return 0.0, 0.0
    if w["type"] == "steady":
        return float(w["gpus"]) * f * float(w["utilization"]) * hpm, float(w["gpus"]) * f
    if w["type"] == "training":
        tflops = float(_tflops(gpus[w["gpu"]], str(w["precision"])))  # type: ignore[arg-type]
        per_run = float(w["flops_per_run"]) / (tflops * 1e12 * float(w["mfu"]) * 3600.0)
        busy = per_run * float(w["runs_per_year"]) / 12.0 * f
        return busy, max(float(w.get("cluster_gpus") or 0), busy / hpm)
    tps = float(w["tokens_per_second"]) * f
    per_gpu = float(w["tokens_per_second_per_gpu"])
    return tps / per_gpu * hpm, tps * float(w["peak_to_average"]) / per_gpu


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


def _parts(
    workloads: Sequence[Mapping[str, Any]],
    gpus: Mapping[str, Mapping[str, Any]],
    option: Mapping[str, Any],
    H: int,
    hpm: float,
) -> tuple[list[list[tuple[float, float]]], list[float]]:
    """Per month ``1 … H``, each workload's ``(busy × r / (t × g), resident × hours)`` on this GPU
    option, and ``peak_o[m]`` (index 0 unused) [GPU-hours, GPUs]."""
    gpu = str(option["gpu"])
    t = _number(option, "throughput_factor", 1.0)
    mtbf = option.get("gpu_mtbf_hours")
    months: list[list[tuple[float, float]]] = [[] for _ in range(H + 1)]
    peaks = [0.0] * (H + 1)
    for w in workloads:
        r = _speed_ratio(w, gpus, gpu)
        fit = _fit(w, gpus[gpu])
        resident = int(w["min_replicas"]) * max(1.0, fit) if w["type"] == "inference" else 0.0
        delta = _number(w, "checkpoint_hours", 0.0)
        restart = _number(w, "restart_hours", 0.0)
        failures = w["type"] == "training" and mtbf is not None and (delta > 0 or restart > 0)
        for m in range(1, H + 1):
            if not _growth(w, m):
                continue
            busy, need = _demand(w, gpus, m, hpm)
            g = 1.0
            if failures:
                n = max(1.0, ceil_tolerant(need * r / t), fit)
                every = float(mtbf) / n  # type: ignore[arg-type]
                interval = math.sqrt(2.0 * delta * every)
                g = (
                    1.0
                    - (delta / interval if delta > 0 else 0.0)
                    - (restart + interval / 2.0) / every
                )
            work = busy * r / (t * g)
            months[m].append((work, resident * hpm))
            peak = max(ceil_tolerant(need * r / t), fit, resident)
            if failures:
                peak = max(peak, ceil_tolerant(busy * r / (t * g * hpm)))
            peaks[m] += peak
    return months, peaks


def _api_month(
    workloads: Sequence[Mapping[str, Any]],
    gpus: Mapping[str, Mapping[str, Any]],
    option: Mapping[str, Any],
    m: int,
    hpm: float,
) -> tuple[float, float]:
    """An ``api`` option's month: what its tokens cost before the trend [USD] and the work it
    cannot buy [GPU-hours], at the document's demand."""
    usd = 0.0
    unbought = 0.0
    training_price = option.get("usd_per_million_training_tokens")
    for w in workloads:
        f = _growth(w, m)
        if not f:
            continue
        if w["type"] == "inference":
            tokens = float(w["tokens_per_second"]) * f * 3600.0 * hpm
            usd += tokens * float(option["usd_per_million_tokens"]) / 1e6
            usd += (
                tokens
                * float(w["input_tokens_per_output_token"])
                * float(option["usd_per_million_input_tokens"])
                / 1e6
            )
        elif (
            w["type"] == "training"
            and training_price is not None
            and w.get("tokens_billion") is not None
        ):
            usd += (
                float(w["tokens_billion"])
                * 1e3
                * float(w["runs_per_year"])
                / 12.0
                * f
                * float(training_price)
            )
        else:
            unbought += _demand(w, gpus, m, hpm)[0]
    return usd, unbought


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

    totals = [[0.0] * len(draws) for _ in options]
    npvs = [[0.0] * len(draws) for _ in options]
    shortfalls = [[0.0] * len(draws) for _ in options]
    months_kept: list[list[list[float]]] = [[] for _ in options]

    # Document-only parts, done once: the fleet is bought for the document's own demand, and
    # resident replicas and goodput never change with a path.
    parts: list[tuple[list[list[tuple[float, float]]], list[float]] | None] = []
    api_months: list[list[tuple[float, float]] | None] = []
    for option in options:
        if option["type"] == "api":
            parts.append(None)
            api_months.append(
                [(0.0, 0.0)]
                + [_api_month(workloads, gpus, option, m, hpm) for m in range(1, H + 1)]
            )
        else:
            parts.append(_parts(workloads, gpus, option, H, hpm))
            api_months.append(None)

    for p, future in enumerate(draws):
        demand = future.get("demand_multiplier", 1.0)
        kwh_multiplier = future.get("usd_per_kwh_multiplier", 1.0)
        for o, option in enumerate(options):
            kind = option["type"]
            shortfall = 0.0
            monthly: list[float] = []

            if kind == "api":
                c = future.get("api_price_change_per_year", float(option["price_change_per_year"]))
                support_fraction = float(option["support_fraction"])
                for m in range(H + 1):
                    if m == 0:
                        monthly.append(0.0)
                        continue
                    usd, unbought = api_months[o][m]  # type: ignore[index]
                    compute = demand * usd * (1.0 + c) ** ((m - 1) / 12.0)
                    shortfall += demand * unbought
                    monthly.append(compute + support_fraction * compute)
                _close(monthly, rate, o, p, totals, npvs, shortfalls, months_kept, shortfall)
                continue

            by_month, peaks = parts[o]  # type: ignore[misc]
            max_peak = max(peaks[1:]) if H else 0.0

            def work_at(
                m: int, by_month: Any = by_month, demand: float = demand
            ) -> tuple[float, float]:
                """``(busy_o[m], supply_o[m])`` on this path [GPU-hours]."""
                busy = 0.0
                supply = 0.0
                for work, resident in by_month[m]:
                    busy += demand * work
                    supply += max(demand * work, resident)
                return busy, supply

            if kind == "cloud":
                billing = option["billing"]
                fixed = billing != "committed" and option.get("scaling") == "fixed"
                c = future.get(
                    "cloud_price_change_per_year", float(option["price_change_per_year"])
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
                        _, supply = work_at(m)
                        billed = max(peaks[m] * hpm, supply) if fixed else supply
                        k = (1.0 + c) ** ((m - 1) / 12.0)
                        if billing == "on_demand":
                            compute = billed * price * k
                        elif billing == "spot":
                            compute = billed * price * k * (1.0 + overhead)
                        else:
                            term_start = term * ((m - 1) // term)
                            committed_rate = price * (1.0 + c) ** (term_start / 12.0)
                            compute = committed * hpm * committed_rate
                            overflow = _excess(supply, committed * hpm)
                            if on_demand_rate is None:
                                shortfall += overflow
                            else:
                                compute += overflow * float(on_demand_rate) * k
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
                    _, supply = work_at(m)
                    cost = servers * float(option["usd_per_server_month"]) + egress
                    beyond = _excess(supply, capacity)
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
                    busy, supply = work_at(m)
                    if m > lead:
                        u = min(1.0, busy / capacity) if capacity > 0 else 0.0
                        cost += servers * kw * (idle + (1.0 - idle) * u) * pue * hpm * usd_per_kwh
                        cost += colo + support
                        beyond = _excess(supply, capacity)
                        if burst is None:
                            shortfall += beyond
                        else:
                            cost += beyond * float(burst)
                    elif bridge is None:
                        shortfall += supply
                    else:
                        cost += supply * float(bridge)
                    if m == H:
                        cost += residual
                        if financing and loan_months > H:
                            cost += balance
                    monthly.append(cost)
            elif kind == "mix":
                shortfall = _mix_months(
                    inputs, option, parts, work_at, future, monthly, H, hpm, egress_tb
                )
            else:
                raise NotImplementedError(kind)
            _close(monthly, rate, o, p, totals, npvs, shortfalls, months_kept, shortfall)
    return totals, npvs, shortfalls, months_kept


def _flat_only(workloads: Sequence[Mapping[str, Any]]) -> None:
    """The loop prices a mix only where every load is flat and no unit can exceed a fleet."""
    for w in workloads:
        flat = (
            w["type"] == "steady"
            or (
                w["type"] == "inference"
                and float(w["peak_to_average"]) == 1.0
                and not float(w.get("input_tokens_per_output_token") or 0.0)
                and w.get("params_billion") is None
            )
            or (
                w["type"] == "training"
                and not w.get("cluster_gpus")
                and w.get("params_billion") is None
            )
        )
        if not flat:
            raise NotImplementedError(f"a mix over the load of {w['name']!r}, which is not flat")


def _mix_months(
    inputs: Mapping[str, Any],
    option: Mapping[str, Any],
    parts: Sequence[Any],
    work_at: Any,
    future: Mapping[str, float],
    monthly: list[float],
    H: int,
    hpm: float,
    egress_tb: float,
) -> float:
    """A mix's months on one path (version 1.3, flat loads): each layer serves its band
    ``over(K_{j−1}) − over(K_j)`` of the supply; ``rest`` (or shortfall) what is above ``K_last``.
    Appends months ``0 … H`` to ``monthly``; returns the shortfall [GPU-hours]."""
    _flat_only(inputs["workloads"])
    names = [str(o["name"]) for o in inputs["options"]]
    kwh_multiplier = future.get("usd_per_kwh_multiplier", 1.0)
    layers = []
    for entry in option["layers"]:
        name, size = (entry, None) if isinstance(entry, str) else (entry["option"], entry["size"])
        member = inputs["options"][names.index(name)]
        peaks = parts[names.index(name)][1]
        max_peak = max(peaks[1:]) if H else 0.0
        per_server = int(_number(member, "gpus_per_server", 8))
        if size is None:
            own = member.get("committed_gpus" if member["type"] == "cloud" else "servers")
            if own is not None:
                size = float(own)
            elif member["type"] == "cloud":
                size = max_peak
            else:
                size = ceil_tolerant(max_peak / per_server)
        layers.append((member, float(size), per_server))
    rest = None
    if option.get("rest") is not None:
        rest = inputs["options"][names.index(str(option["rest"]))]
    if option.get("egress_tiers"):
        egress = _tiered_usd(egress_tb, option["egress_tiers"])
    elif option.get("egress_usd_per_gb") is not None:
        egress = egress_tb * GB_PER_TB * float(option["egress_usd_per_gb"])
    else:
        egress = 0.0
    shortfall = 0.0
    for m in range(H + 1):
        cost = 0.0 if m == 0 else egress
        busy, supply = work_at(m) if m else (0.0, 0.0)
        bound = 0.0
        below = supply
        for member, size, per_server in layers:
            if size <= 0:
                continue
            kind = member["type"]
            if kind == "cloud":
                c = future.get(
                    "cloud_price_change_per_year", float(member["price_change_per_year"])
                )
                term = int(member.get("term_months") or H)
                if m % term == 0 and m < H:
                    cost += _number(member, "upfront_usd", 0.0)
                capacity = size
            else:
                capacity = size * per_server
            if kind == "on_prem" and m <= int(_number(member, "lead_time_months", 0)):
                capacity = 0.0
            bound += capacity
            above = max(0.0, supply - bound * hpm)
            served = below - above
            below = above
            if m == 0:
                if kind == "dedicated":
                    cost += _number(member, "setup_usd", 0.0)
                elif kind == "on_prem" and not member.get("financing"):
                    cost += size * float(member["capex_usd_per_server"])
                continue
            if kind == "cloud":
                term_start = term * ((m - 1) // term)
                rate = float(member["usd_per_gpu_hour"]) * (1.0 + c) ** (term_start / 12.0)
                compute = size * hpm * rate
                cost += compute + _number(member, "support_fraction", 0.0) * compute
            elif kind == "dedicated":
                cost += size * float(member["usd_per_server_month"])
            else:
                cost += _owned_month(member, size, per_server, m, H, hpm, served, busy, supply)
                cost += (
                    0.0
                    if m <= int(_number(member, "lead_time_months", 0))
                    else (
                        _owned_power(
                            member, size, capacity, served, busy, supply, hpm, kwh_multiplier
                        )
                    )
                )
        if m == 0:
            monthly.append(cost)
            continue
        # what is left above K_last counts beyond the tolerance of a capacity of K_last hours
        beyond = below if below > TOLERANCE * max(1.0, bound * hpm) else 0.0
        if rest is None:
            shortfall += beyond
        else:
            c = future.get("cloud_price_change_per_year", float(rest["price_change_per_year"]))
            compute = beyond * float(rest["usd_per_gpu_hour"]) * (1.0 + c) ** ((m - 1) / 12.0)
            if rest["billing"] == "spot":
                overhead = future.get(
                    "interruption_overhead", _number(rest, "interruption_overhead", 0.1)
                )
                compute *= 1.0 + overhead
            cost += compute + _number(rest, "support_fraction", 0.0) * compute
        monthly.append(cost)
    return shortfall


def _owned_month(
    member: Mapping[str, Any],
    servers: float,
    per_server: int,
    m: int,
    H: int,
    hpm: float,
    served: float,
    busy: float,
    supply: float,
) -> float:
    """An owned layer's month but its power (version 1.3): financing, colo and support in
    service, staff, and the resale at the end [USD]."""
    capex = servers * float(member["capex_usd_per_server"])
    kw = float(member["server_kw"])
    cost = _number(member, "staff_usd_per_month", 0.0)
    financing = member.get("financing")
    if financing:
        i = float(financing["apr"]) / 12.0
        n = int(financing["term_months"])
        payment = capex / n if i == 0.0 else capex * i / (1.0 - (1.0 + i) ** (-n))
        if m <= n:
            cost += payment
        if m == H and n > H:
            balance = capex
            for _ in range(H):
                balance = balance * (1.0 + i) - payment
            cost += balance
    if m > int(_number(member, "lead_time_months", 0)):
        cost += servers * kw * _number(member, "colo_usd_per_kw_month", 0.0)
        cost += capex * _number(member, "support_fraction_per_year", 0.0) / 12.0
    if m == H:
        cost += -capex * _number(member, "residual_fraction", 0.0)
    return cost


def _owned_power(
    member: Mapping[str, Any],
    servers: float,
    capacity: float,
    served: float,
    busy: float,
    supply: float,
    hpm: float,
    kwh_multiplier: float,
) -> float:
    """An owned layer's power in service at ``u = min(1, served × busy / (supply × C × hours))``."""
    held = supply * capacity * hpm
    u = min(1.0, served * busy / held) if held > 0 else 0.0
    idle = _number(member, "idle_power_fraction", 0.3)
    usd_per_kwh = _number(member, "usd_per_kwh", 0.10) * kwh_multiplier
    return (
        servers
        * float(member["server_kw"])
        * (idle + (1.0 - idle) * u)
        * _number(member, "pue", 1.3)
        * hpm
        * usd_per_kwh
    )


def _close(
    monthly: list[float],
    rate: float,
    o: int,
    p: int,
    totals: list[list[float]],
    npvs: list[list[float]],
    shortfalls: list[list[float]],
    months_kept: list[list[list[float]]],
    shortfall: float,
) -> None:
    """Total, NPV and shortfall of one option on one path [USD, USD, GPU-hours]."""
    total = 0.0
    npv = 0.0
    for m, cost in enumerate(monthly):
        total += cost
        npv += cost / (1.0 + rate) ** (m / 12.0)
    totals[o][p] = total
    npvs[o][p] = npv
    shortfalls[o][p] = shortfall
    if p < 10_000:
        months_kept[o].append(monthly)
