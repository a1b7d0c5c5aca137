"""Scenario documents of format 1.2 shared by the engine, command-line and API tests: one with
resident replicas, goodput and an ``api`` option, and bad inputs for each new field, each with
the path the error must name."""

from __future__ import annotations

import copy
from typing import Any

Document = dict[str, Any]


def served_and_trained(**top: Any) -> Document:
    """A 70B model served lightly (one resident replica binds) and fine-tuned with failures,
    priced on-demand, committed, on dedicated servers, on-prem and by the token."""
    return {
        "name": "served and trained",
        "horizon_months": 24,
        "discount_rate": 0.05,
        "workloads": [
            {
                "type": "inference",
                "name": "chat",
                "gpu": "h100-sxm",
                "params_billion": 70,
                "tokens_per_second": 200,
                "peak_to_average": 2,
                "min_replicas": 1,
                "input_tokens_per_output_token": 3,
            },
            {
                "type": "training",
                "name": "tune",
                "gpu": "h100-sxm",
                "runs_per_year": 12,
                "params_billion": 8,
                "tokens_billion": 50,
                "cluster_gpus": 16,
                "end_month": 6,
                "checkpoint_hours": 0.1,
                "restart_hours": 0.5,
            },
            {"type": "steady", "name": "batch", "gpu": "h100-sxm", "gpus": 2, "utilization": 0.5},
        ],
        "options": [
            {
                "type": "cloud",
                "name": "on-demand",
                "usd_per_gpu_hour": 3.0,
                "gpu_mtbf_hours": 50000,
            },
            {
                "type": "cloud",
                "name": "committed",
                "billing": "committed",
                "usd_per_gpu_hour": 2.0,
                "committed_gpus": 8,
                "term_months": 12,
                "on_demand_usd_per_gpu_hour": 3.5,
                "price_change_per_year": -0.1,
                "gpu_mtbf_hours": 50000,
            },
            {
                "type": "dedicated",
                "name": "dedicated",
                "servers": 2,
                "usd_per_server_month": 14000,
                "burst_usd_per_gpu_hour": 4.0,
                "gpu_mtbf_hours": 40000,
            },
            {
                "type": "on_prem",
                "name": "buy",
                "servers": 2,
                "capex_usd_per_server": 260000,
                "server_kw": 10.2,
                "lead_time_months": 2,
                "bridge_usd_per_gpu_hour": 3.2,
                "burst_usd_per_gpu_hour": 3.5,
                "gpu_mtbf_hours": 50000,
            },
            {
                "type": "api",
                "name": "tokens",
                "usd_per_million_tokens": 0.9,
                "usd_per_million_input_tokens": 0.3,
                "usd_per_million_training_tokens": 2.0,
                "price_change_per_year": -0.2,
            },
        ],
        **top,
    }


def simulated(paths: int = 2500, seed: int = 3) -> Document:
    """:func:`served_and_trained` with every uncertain quantity spread."""
    return served_and_trained(
        simulation={
            "paths": paths,
            "seed": seed,
            "demand_multiplier": {"dist": "triangular", "low": 0.2, "mode": 1.0, "high": 1.8},
            "cloud_price_change_per_year": {"dist": "normal", "mean": -0.1, "sd": 0.1},
            "usd_per_kwh_multiplier": {"dist": "uniform", "low": 0.8, "high": 1.4},
            "api_price_change_per_year": {"dist": "normal", "mean": -0.3, "sd": 0.15},
        }
    )


Change = tuple[tuple[Any, ...], Any]
"""Where in the document (keys and indexes) and the value written there."""


def _set(path: list[Any], value: Any) -> Change:
    return tuple(path), value


def apply(doc: Document, change: Change) -> None:
    """Write one change into ``doc``."""
    where, value = change
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = copy.deepcopy(value)


# (id, change, error path) for each bad value of a new field: wrong type, range, misplacement
BAD_FIELDS: list[tuple[str, Change, str]] = [
    (
        "min_replicas-type",
        _set(["workloads", 0, "min_replicas"], "one"),
        "workloads[0].min_replicas",
    ),
    (
        "min_replicas-whole",
        _set(["workloads", 0, "min_replicas"], 1.5),
        "workloads[0].min_replicas",
    ),
    ("min_replicas-range", _set(["workloads", 0, "min_replicas"], -1), "workloads[0].min_replicas"),
    (
        "min_replicas-bound",
        _set(["workloads", 0, "min_replicas"], 10**7 + 1),
        "workloads[0].min_replicas",
    ),
    (
        "min_replicas-training",
        _set(["workloads", 1, "min_replicas"], 1),
        "workloads[1].min_replicas",
    ),
    ("min_replicas-steady", _set(["workloads", 2, "min_replicas"], 0), "workloads[2].min_replicas"),
    (
        "input-tokens-type",
        _set(["workloads", 0, "input_tokens_per_output_token"], True),
        "workloads[0].input_tokens_per_output_token",
    ),
    (
        "input-tokens-range",
        _set(["workloads", 0, "input_tokens_per_output_token"], -2),
        "workloads[0].input_tokens_per_output_token",
    ),
    (
        "input-tokens-training",
        _set(["workloads", 1, "input_tokens_per_output_token"], 1),
        "workloads[1].input_tokens_per_output_token",
    ),
    (
        "checkpoint-type",
        _set(["workloads", 1, "checkpoint_hours"], "6m"),
        "workloads[1].checkpoint_hours",
    ),
    (
        "checkpoint-range",
        _set(["workloads", 1, "checkpoint_hours"], -0.1),
        "workloads[1].checkpoint_hours",
    ),
    (
        "checkpoint-inference",
        _set(["workloads", 0, "checkpoint_hours"], 0.1),
        "workloads[0].checkpoint_hours",
    ),
    ("restart-range", _set(["workloads", 1, "restart_hours"], -1), "workloads[1].restart_hours"),
    ("restart-steady", _set(["workloads", 2, "restart_hours"], 1), "workloads[2].restart_hours"),
    ("mtbf-type", _set(["options", 0, "gpu_mtbf_hours"], "50000"), "options[0].gpu_mtbf_hours"),
    ("mtbf-zero", _set(["options", 0, "gpu_mtbf_hours"], 0), "options[0].gpu_mtbf_hours"),
    ("mtbf-bound", _set(["options", 2, "gpu_mtbf_hours"], 2e12), "options[2].gpu_mtbf_hours"),
    ("mtbf-api", _set(["options", 4, "gpu_mtbf_hours"], 50000), "options[4].gpu_mtbf_hours"),
    ("api-gpu", _set(["options", 4, "gpu"], "h100-sxm"), "options[4].gpu"),
    (
        "api-throughput",
        _set(["options", 4, "throughput_factor"], 0.9),
        "options[4].throughput_factor",
    ),
    ("api-egress", _set(["options", 4, "egress_usd_per_gb"], 0.05), "options[4].egress_usd_per_gb"),
    ("api-billing", _set(["options", 4, "billing"], "committed"), "options[4].billing"),
    (
        "api-price-type",
        _set(["options", 4, "usd_per_million_tokens"], "0.9"),
        "options[4].usd_per_million_tokens",
    ),
    (
        "api-price-range",
        _set(["options", 4, "usd_per_million_tokens"], -0.9),
        "options[4].usd_per_million_tokens",
    ),
    (
        "api-input-price-range",
        _set(["options", 4, "usd_per_million_input_tokens"], -1),
        "options[4].usd_per_million_input_tokens",
    ),
    (
        "api-training-price-type",
        _set(["options", 4, "usd_per_million_training_tokens"], [2]),
        "options[4].usd_per_million_training_tokens",
    ),
    (
        "api-trend-range",
        _set(["options", 4, "price_change_per_year"], -1),
        "options[4].price_change_per_year",
    ),
    (
        "api-support-range",
        _set(["options", 4, "support_fraction"], 1.5),
        "options[4].support_fraction",
    ),
    (
        "api-token-price-type",
        _set(["options", 4, "token_price"], "together/llama"),
        "options[4].token_price",
    ),
    (
        "api-token-price-field",
        _set(["options", 4, "token_price"], {"provider": "together"}),
        "options[4].token_price.model",
    ),
    (
        "api-token-price-on-cloud",
        _set(["options", 0, "token_price"], {"provider": "p", "model": "m"}),
        "options[0].token_price",
    ),
    (
        "tokens-price-on-cloud",
        _set(["options", 0, "usd_per_million_tokens"], 1.0),
        "options[0].usd_per_million_tokens",
    ),
    ("2^63-gpus", _set(["workloads", 2, "gpus"], 2**63), "workloads[2].gpus"),
    ("2^63-committed", _set(["options", 1, "committed_gpus"], 2**63), "options[1].committed_gpus"),
    ("2^63-servers", _set(["options", 2, "servers"], 2**63), "options[2].servers"),
    (
        "cluster-bound",
        _set(["workloads", 1, "cluster_gpus"], 10**7 + 1),
        "workloads[1].cluster_gpus",
    ),
    ("runs-bound", _set(["workloads", 1, "runs_per_year"], 1e8), "workloads[1].runs_per_year"),
    ("flops-bound", _set(["workloads", 1, "flops_per_run"], 1e31), "workloads[1].flops_per_run"),
    ("number-bound", _set(["options", 0, "usd_per_gpu_hour"], 2e12), "options[0].usd_per_gpu_hour"),
    (
        "assumption-without-catalog",
        _set(["options", 3, "capex_usd_per_server"], {"assumption": "dgx-h100-capex"}),
        "options[3].capex_usd_per_server",
    ),
    (
        "assumption-malformed",
        _set(["options", 2, "usd_per_server_month"], {"assumption": 7}),
        "options[2].usd_per_server_month.assumption",
    ),
    (
        "assumption-on-cloud-price",
        _set(["options", 0, "usd_per_gpu_hour"], {"assumption": "h100-rate"}),
        "options[0].usd_per_gpu_hour",
    ),
    (
        "api-price-dist",
        _set(
            ["simulation"],
            {"paths": 10, "api_price_change_per_year": {"dist": "normal", "mean": -0.1}},
        ),
        "simulation.api_price_change_per_year.sd",
    ),
    (
        "sizing-api",
        _set(["sizing"], [{"option": "tokens", "min": 0, "max": 4}]),
        "sizing[0].option",
    ),
]


def bad(change: Change) -> Document:
    """:func:`served_and_trained` with one change."""
    doc = served_and_trained()
    apply(doc, change)
    return doc


def failing_goodput() -> Document:
    """Valid field by field, but the fine-tune's goodput on the dedicated option falls below 0.1
    (16 GPUs fail every 200 / 16 = 12.5 hours: checkpoints every sqrt(2 × 3 × 12.5) = 8.7 hours
    of 3 hours each and 5-hour restarts leave no work done)."""
    doc = served_and_trained()
    doc["workloads"][1]["checkpoint_hours"] = 3
    doc["workloads"][1]["restart_hours"] = 5
    doc["options"][2]["gpu_mtbf_hours"] = 200
    return doc


def all_bad_fields() -> tuple[Document, list[str]]:
    """Every problem of :data:`BAD_FIELDS` in one document (where two write the same place,
    the last one; a sweep naming an option that is itself invalid is not checked), and the paths
    the errors must name."""
    last: dict[tuple[Any, ...], tuple[Change, str]] = {}
    for _, change, path in BAD_FIELDS:
        if change[0][0] != "sizing":
            last[change[0]] = (change, path)
    doc = served_and_trained()
    for change, _ in last.values():
        apply(doc, change)
    return doc, [path for _, path in last.values()]
