"""Data transfer out: flat and tiered prices per GB, a flat overage per TB.

Each month's volume is priced afresh (tiers restart every month); 1 TB = 1000 GB.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

GB_PER_TB = 1000.0


def flat_egress_usd(tb_per_month: float, usd_per_gb: float) -> float:
    """Monthly egress at one price [USD/month] for ``tb_per_month`` [TB] at ``usd_per_gb`` [USD/GB]."""
    return tb_per_month * GB_PER_TB * usd_per_gb


def tiered_egress_usd(tb_per_month: float, tiers: Sequence[Mapping[str, Any]]) -> float:
    """Monthly egress across cumulative tiers [USD/month].

    ``tiers`` are ``{"up_to_tb": cumulative bound [TB] or None (no bound), "usd_per_gb": [USD/GB]}``
    in increasing order; each GB is priced at the tier it falls in.
    """
    total_usd = 0.0
    lower_tb = 0.0
    for tier in tiers:
        upper = tier.get("up_to_tb")
        upper_tb = float("inf") if upper is None else float(upper)
        in_tier_tb = max(0.0, min(tb_per_month, upper_tb) - lower_tb)
        total_usd += in_tier_tb * GB_PER_TB * float(tier["usd_per_gb"])
        lower_tb = upper_tb
        if tb_per_month <= upper_tb:
            break
    return total_usd


def cloud_egress_usd(
    tb_per_month: float,
    usd_per_gb: float | None,
    tiers: Sequence[Mapping[str, Any]] | None,
) -> float:
    """A cloud option's monthly egress [USD/month]: flat price, tiers, or nothing when neither is given."""
    if tiers:
        return tiered_egress_usd(tb_per_month, tiers)
    if usd_per_gb is not None:
        return flat_egress_usd(tb_per_month, usd_per_gb)
    return 0.0


def overage_egress_usd(tb_per_month: float, included_tb: float, overage_usd_per_tb: float) -> float:
    """Monthly egress beyond an included volume [USD/month]: ``max(0, E − included) × overage``."""
    return max(0.0, tb_per_month - included_tb) * overage_usd_per_tb
