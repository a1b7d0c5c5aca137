"""Shared helpers of the engine tests: the GPU figures, scenario files, and normalisation."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from hardware.gpu_table import engine_figures, read_gpu_table

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
EXPECTED = SCENARIOS / "expected"


@cache
def gpu_figures() -> dict[str, dict[str, float | None]]:
    """The engine's figures of every GPU in the project's table, by slug."""
    return {row.slug: engine_figures(row) for row in read_gpu_table()}


def scenario(name: str) -> dict[str, Any]:
    """One of the shipped scenario documents, by file stem."""
    return json.loads((SCENARIOS / f"{name}.json").read_text(encoding="utf-8"))


def expected(name: str) -> dict[str, Any]:
    """The independently computed figures of a shipped scenario, by file stem."""
    return json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))


def scenario_names() -> list[str]:
    """Stems of the shipped scenarios that have expected figures."""
    return sorted(path.stem for path in EXPECTED.glob("*.json"))


def normalized(document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The normalised document and warnings (the project's ``normalize`` when present)."""
    try:
        from costapp.tco.validation import normalize
    except ImportError:
        return _fill_defaults(document), []
    result = normalize(document, gpu_figures())
    return result.document, list(result.warnings)


def _fill_defaults(document: dict[str, Any]) -> dict[str, Any]:
    """A stand-in for ``normalize`` on valid documents: fills the defaults the engine reads."""
    doc = copy.deepcopy(document)
    gpus = gpu_figures()
    doc.setdefault("horizon_months", 36)
    doc.setdefault("hours_per_month", 730)
    doc.setdefault("discount_rate", 0)
    doc.setdefault("egress_tb_per_month", 0)
    doc.setdefault("simulation", None)
    horizon = doc["horizon_months"]
    for w in doc["workloads"]:
        w.setdefault("gpu", "h100-sxm")
        w.setdefault("start_month", 1)
        w["end_month"] = min(w.get("end_month") or horizon, horizon)
        w.setdefault("monthly_growth", 0)
        w.setdefault("params_billion", None)
        if w["type"] == "steady":
            w.setdefault("utilization", 1)
        elif w["type"] == "training":
            w.setdefault("mfu", 0.4)
            w.setdefault("precision", "bf16")
            w.setdefault("cluster_gpus", None)
            if w.get("flops_per_run") is None:
                w["flops_per_run"] = 6 * w["params_billion"] * 1e9 * w["tokens_billion"] * 1e9
        else:
            w.setdefault("peak_to_average", 1)
            if w.get("tokens_per_second_per_gpu") is None:
                g = gpus[w["gpu"]]
                params = w["params_billion"] * 1e9
                w["tokens_per_second_per_gpu"] = min(
                    32 * g["memory_bandwidth_tb_s"] * 1e12 / (2 * params),
                    0.5 * g["bf16_dense_tflops"] * 1e12 / (2 * params),
                )
    for o in doc["options"]:
        o.setdefault("gpu", doc["workloads"][0]["gpu"])
        o.setdefault("throughput_factor", 1)
        if o["type"] == "cloud":
            o.setdefault("billing", "on_demand")
            o.setdefault("price_change_per_year", 0)
            o.setdefault("support_fraction", 0)
            if o["billing"] == "committed":
                o.setdefault("committed_gpus", None)
                o.setdefault("term_months", horizon)
                o.setdefault("upfront_usd", 0)
                o.setdefault("on_demand_usd_per_gpu_hour", None)
            else:
                o.setdefault("scaling", "elastic")
            if o["billing"] == "spot":
                o.setdefault("interruption_overhead", 0.1)
        else:
            o.setdefault("gpus_per_server", 8)
            o.setdefault("servers", None)
    doc.setdefault("baseline", doc["options"][0]["name"])
    return doc
