"""Hostile scenario documents: extreme numbers in every numeric field, control characters in
every string, for the tests that no valid-looking input ends in a crash."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from typing import Any

Path_ = tuple[str | int, ...]

EXTREME_NUMBERS: tuple[float, ...] = (
    1e308,
    1.7976931348623157e308,  # the largest float
    1e-300,
    2.2250738585072014e-308,  # the smallest normal float
    5e-324,  # the smallest denormal
    -1e308,
)
"""Huge, tiny and denormal numbers (and a huge negative one, for the fields that allow it)."""

HOSTILE_TEXTS: tuple[str, ...] = (
    "two\nlines",
    "carriage\rreturn",
    "nul\x00byte",
    "escape\x1b[31mred",
    "line\u2028separator",
    "lone \ud800 surrogate",
    "tab\there",
)
"""Strings holding a newline, a carriage return, NUL, an ANSI escape, U+2028, a lone surrogate."""


def rich_document() -> dict[str, Any]:
    """A valid document with a field of (almost) every kind: every workload type, every option
    type and billing, tiers, financing and a simulation with every distribution."""
    return {
        "name": "edges",
        "horizon_months": 24,
        "hours_per_month": 730,
        "discount_rate": 0.08,
        "egress_tb_per_month": 20,
        "workloads": [
            {
                "type": "steady",
                "name": "fleet",
                "gpus": 16,
                "utilization": 0.7,
                "monthly_growth": 0.02,
                "start_month": 1,
                "end_month": 24,
            },
            {
                "type": "training",
                "name": "train",
                "runs_per_year": 4,
                "params_billion": 8,
                "tokens_billion": 200,
                "mfu": 0.4,
                "cluster_gpus": 16,
            },
            {
                "type": "inference",
                "name": "serve",
                "tokens_per_second": 3000,
                "peak_to_average": 1.5,
                "params_billion": 70,
            },
        ],
        "options": [
            {
                "type": "cloud",
                "name": "on-demand",
                "usd_per_gpu_hour": 3.9,
                "price_change_per_year": -0.1,
                "support_fraction": 0.05,
                "egress_tiers": [
                    {"up_to_tb": 10, "usd_per_gb": 0.09},
                    {"up_to_tb": None, "usd_per_gb": 0.05},
                ],
            },
            {
                "type": "cloud",
                "name": "fixed spot",
                "billing": "spot",
                "scaling": "fixed",
                "usd_per_gpu_hour": 2.1,
                "interruption_overhead": 0.15,
                "egress_usd_per_gb": 0.08,
            },
            {
                "type": "cloud",
                "name": "committed",
                "billing": "committed",
                "usd_per_gpu_hour": 2.6,
                "committed_gpus": 24,
                "term_months": 12,
                "upfront_usd": 1000,
                "on_demand_usd_per_gpu_hour": 3.9,
            },
            {
                "type": "dedicated",
                "name": "dedicated",
                "usd_per_server_month": 16000,
                "servers": 5,
                "setup_usd": 3000,
                "included_egress_tb": 5,
                "overage_usd_per_tb": 4,
                "burst_usd_per_gpu_hour": 4.5,
                "throughput_factor": 0.95,
            },
            {
                "type": "on_prem",
                "name": "buy",
                "capex_usd_per_server": 280000,
                "server_kw": 10.2,
                "servers": 5,
                "lead_time_months": 3,
                "bridge_usd_per_gpu_hour": 4,
                "burst_usd_per_gpu_hour": 4.5,
                "pue": 1.3,
                "usd_per_kwh": 0.12,
                "colo_usd_per_kw_month": 150,
                "support_fraction_per_year": 0.08,
                "staff_usd_per_month": 5000,
                "residual_fraction": 0.2,
                "egress_usd_per_tb": 1,
                "financing": {"apr": 0.07, "term_months": 36},
            },
        ],
        "simulation": {
            "paths": 20,
            "seed": 7,
            "demand_multiplier": {"dist": "triangular", "low": 0.7, "mode": 1.0, "high": 1.5},
            "cloud_price_change_per_year": {"dist": "normal", "mean": -0.1, "sd": 0.05},
            "usd_per_kwh_multiplier": {"dist": "uniform", "low": 0.8, "high": 1.4},
            "interruption_overhead": {"dist": "uniform", "low": 0.05, "high": 0.3},
        },
    }


def leaves(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every scalar of a JSON document with its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def replaced(document: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    """A copy of ``document`` with the value at ``path`` replaced."""
    copied = copy.deepcopy(document)
    target: Any = copied
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return copied


def numeric_paths(document: dict[str, Any]) -> list[Path_]:
    """The paths of every number of ``document`` (booleans are not numbers)."""
    return [
        path
        for path, value in leaves(document)
        if isinstance(value, int | float) and not isinstance(value, bool)
    ]


def text_paths(document: dict[str, Any]) -> list[Path_]:
    """The paths of every string of ``document``."""
    return [path for path, value in leaves(document) if isinstance(value, str)]


def hostile_documents() -> list[tuple[str, dict[str, Any]]]:
    """(label, document): every number replaced by each extreme, every string by each hostile
    text, and keys holding control characters."""
    base = rich_document()
    corpus: list[tuple[str, dict[str, Any]]] = []
    for path in numeric_paths(base):
        for number in EXTREME_NUMBERS:
            corpus.append((f"{_label(path)}={number!r}", replaced(base, path, number)))
    for path in text_paths(base):
        for text in HOSTILE_TEXTS:
            corpus.append((f"{_label(path)}={text!r}", replaced(base, path, text)))
    for text in HOSTILE_TEXTS:
        top = copy.deepcopy(base)
        top[text] = 1
        corpus.append((f"top-level key {text!r}", top))
        nested = copy.deepcopy(base)
        nested["options"][0][text] = "x"
        corpus.append((f"option key {text!r}", nested))
    return corpus


def _label(path: Path_) -> str:
    return ".".join(str(part) for part in path)


def all_finite(value: Any) -> bool:
    """True when every float in a result document is finite."""
    return all(math.isfinite(item) for _, item in leaves(value) if isinstance(item, float))
