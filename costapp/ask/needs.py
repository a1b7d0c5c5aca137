"""What the question's work needs, in words, from the run's inputs by the scenario format's
formulas: for served traffic the GPUs busy in its first month (generating and reading prompts) and
at its busiest hours, and its growth a month and a year; for a steady fleet its GPUs and growth;
for training a run's GPU-hours, the GPUs at once, the
goodput under failures and the days a run takes."""

from __future__ import annotations

import math
from typing import Any

from costapp.scenarios.growth import growth_words
from hardware.display.figures import percent_text, plain_number, quantity_text


def _gpu_name(gpu: str, names: dict[str, str]) -> str:
    return names.get(gpu, gpu)


def _serving(w: dict[str, Any], gpus: dict[str, Any], names: dict[str, str]) -> str:
    x = w["tokens_per_second"]
    decode = x / w["tokens_per_second_per_gpu"]
    ratio = w.get("input_tokens_per_output_token") or 0.0
    prefill = x * ratio / w["prefill_tokens_per_second_per_gpu"] if ratio else 0.0
    busy = decode + prefill
    peak = w.get("peak_to_average") or 1.0
    hours = w.get("peak_hours_per_day") or min(4.0, 24 / peak)
    gpu = _gpu_name(w["gpu"], names)
    said = (f"“{w['name']}” in month {w.get('start_month', 1)}: {busy:,.2f} {gpu} GPUs busy on "
            f"average ({decode:,.2f} generating at {w['tokens_per_second_per_gpu']:,.0f} tokens/s "
            "each")  # fmt: skip
    if ratio:
        said += (f", {prefill:,.2f} reading {plain_number(ratio)} prompt tokens per generated token at "
                 f"{w['prefill_tokens_per_second_per_gpu']:,.0f} tokens/s each")  # fmt: skip
    said += (f"), {math.ceil(busy * peak - 1e-9):,} at the busiest hours ({plain_number(peak)} times the "
             f"average, {plain_number(hours)} hours a day)")  # fmt: skip
    memory = (gpus.get(w["gpu"]) or {}).get("memory_gb")
    if w.get("params_billion") and memory:
        fit = math.ceil(2 * w["params_billion"] * 1.2 / memory - 1e-9)
        held = (w.get("min_replicas") or 0) * max(1, fit)
        if held:
            said += (f"; one replica of the model takes {fit:,} GPU{'s' * (fit != 1)}, "
                     f"{held:,} held ready all month whatever the traffic")  # fmt: skip
    return said + _growing(w, busy, "busy") + "."


def _growing(w: dict[str, Any], gpus: float, what: str) -> str:
    """The workload's growth, a month and a year, and its ``gpus`` grown by its last month
    ("; growing 3.437 % a month (50 % a year), 12.00 busy in month 60"); "" without growth."""
    growth = w.get("monthly_growth") or 0.0
    if not growth:
        return ""
    try:
        grown = f"{gpus * (1 + growth) ** (w['end_month'] - w.get('start_month', 1)):,.2f}"
    except OverflowError:
        grown = "beyond any figure"
    return f"; growing {growth_words(growth)}, {grown} {what} in month {w['end_month']}"


def _steady(w: dict[str, Any], names: dict[str, str]) -> str:
    said = (f"“{w['name']}”: {plain_number(w['gpus'])} {_gpu_name(w['gpu'], names)} GPUs busy "
            f"{percent_text(w.get('utilization', 1.0))} of the time")  # fmt: skip
    return said + _growing(w, w["gpus"], "GPUs") + "."


def _training(
    w: dict[str, Any], gpus: dict[str, Any], mtbf: float | None, names: dict[str, str]
) -> str:
    figures = gpus.get(w["gpu"]) or {}
    tflops = figures.get(f"{w.get('precision', 'bf16')}_dense_tflops") or 0
    gpu = _gpu_name(w["gpu"], names)
    if not tflops:
        return f"“{w['name']}”: {quantity_text(w['flops_per_run'])} FLOPs a run."
    hours = w["flops_per_run"] / (tflops * 1e12 * w["mfu"] * 3600)
    said = (f"“{w['name']}”: {quantity_text(w['flops_per_run'])} FLOPs a run, {hours:,.0f} {gpu} GPU-hours "
            f"at {percent_text(w['mfu'])} of its peak")  # fmt: skip
    n = w.get("cluster_gpus")
    if not n:
        return said + "."
    goodput = 1.0
    delta, restart = w.get("checkpoint_hours") or 0.0, w.get("restart_hours") or 0.0
    if mtbf and (delta or restart):
        failure = mtbf / n
        interval = math.sqrt(2 * delta * failure)
        goodput = 1 - (delta / interval if delta else 0.0) - (restart + interval / 2) / failure
        said += (f"; on {n:,} GPUs at once a failure every {failure:,.2f} hours ({mtbf:,.0f} "
                 f"GPU-hours between failures ÷ {n:,}), a checkpoint of {plain_number(delta * 60)} minutes "
                 f"every {interval:,.2f} hours and restarts of {plain_number(restart * 60)} minutes: goodput "
                 f"{goodput:.4f}")  # fmt: skip
    else:
        said += f"; on {n:,} GPUs at once, no failures counted"
    days = hours / (n * goodput) / 24
    return said + f", so a run takes {days:,.1f} days on them."


def work_needs(inputs: dict[str, Any], gpus: dict[str, Any], names: dict[str, str]) -> list[str]:
    """One sentence per workload: what it needs."""
    mtbf = next((o["gpu_mtbf_hours"] for o in inputs["options"] if o.get("gpu_mtbf_hours")), None)
    said = []
    for w in inputs["workloads"]:
        if w["type"] == "inference" and w.get("tokens_per_second_per_gpu"):
            said.append(_serving(w, gpus, names))
        elif w["type"] == "training" and w.get("flops_per_run"):
            said.append(_training(w, gpus, mtbf, names))
        elif w["type"] == "steady" and w.get("gpus"):
            said.append(_steady(w, names))
    return said
