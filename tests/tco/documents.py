"""Scenario documents for the validation tests: a small valid document and variations of it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from costapp.tco import CatalogRefs, GpuFigures, Normalized, ScenarioError, normalize
from hardware.gpu_table import engine_figures, read_gpu_table

SCENARIOS = sorted((Path(__file__).resolve().parent / "scenarios").glob("*.json"))


@cache
def gpu_table() -> dict[str, GpuFigures]:
    return {row.slug: engine_figures(row) for row in read_gpu_table()}


GPUS = gpu_table()


def doc(**top: Any) -> dict[str, Any]:
    """A small valid scenario; keyword arguments replace its top-level fields."""
    document: dict[str, Any] = {
        "name": "test",
        "workloads": [{"type": "steady", "name": "fleet", "gpus": 8}],
        "options": [{"type": "cloud", "name": "rent", "usd_per_gpu_hour": 2.0}],
    }
    document.update(top)
    return document


def with_workload(**fields: Any) -> dict[str, Any]:
    return doc(workloads=[{"type": "steady", "name": "fleet", "gpus": 8, **fields}])


def with_option(**fields: Any) -> dict[str, Any]:
    return doc(options=[{"name": "opt", **fields}])


def on_prem(**fields: Any) -> dict[str, Any]:
    return with_option(
        **{"type": "on_prem", "capex_usd_per_server": 300000, "server_kw": 10, **fields}
    )


def dedicated(**fields: Any) -> dict[str, Any]:
    return with_option(**{"type": "dedicated", "usd_per_server_month": 14500, **fields})


def cloud(**fields: Any) -> dict[str, Any]:
    return with_option(**{"type": "cloud", "usd_per_gpu_hour": 2.0, **fields})


def problems(document: Any, catalog: CatalogRefs | None = None) -> list[tuple[str | None, str]]:
    """Every (path, message) a document is rejected with."""
    with pytest.raises(ScenarioError) as caught:
        normalize(document, GPUS, catalog)
    return [(error.field, error.message) for error in caught.value.errors]


def ok(document: Any, catalog: CatalogRefs | None = None) -> Normalized:
    return normalize(document, GPUS, catalog)


OFFER = {"provider": "aws", "instance": "p5.48xlarge", "region": "us-east-1"}
OFFER_TIERS = [
    {"up_to_tb": 0.1, "usd_per_gb": 0},
    {"up_to_tb": 10, "usd_per_gb": 0.09},
    {"up_to_tb": None, "usd_per_gb": 0.05},
]
CATALOG = CatalogRefs(
    offers={
        ("aws", "p5.48xlarge", "us-east-1"): {
            "gpu": "h100-sxm",
            "gpu_count": 8,
            "usd_per_gpu_hour": {
                "on_demand": 6.88,
                "spot": 2.5,
                "commit_1y": 4.8,
                "commit_3y": 3.9,
            },
            "egress_tiers": OFFER_TIERS,
        },
        ("lambda", "gpu_8x_a100", "us-west-1"): {
            "gpu": "a100-sxm-80gb",
            "gpu_count": 8,
            "usd_per_gpu_hour": {"on_demand": 1.79},
            "egress_tiers": None,
        },
    },
    dedicated_quotes={
        7: {
            "gpu": "h200",
            "gpus_per_server": 8,
            "usd_per_server_month": 19000,
            "setup_usd": 5000,
            "included_egress_tb": 20,
            "overage_usd_per_tb": 3,
        }
    },
    purchase_quotes={
        9: {
            "gpu": "mi300x",
            "gpus_per_server": 8,
            "capex_usd_per_server": 240000,
            "server_kw": 8.5,
            "lead_time_months": 3,
            "support_fraction_per_year": 0.08,
        }
    },
    egress_providers={
        "gcp": [{"up_to_tb": 1, "usd_per_gb": 0.12}, {"up_to_tb": None, "usd_per_gb": 0.08}]
    },
)
