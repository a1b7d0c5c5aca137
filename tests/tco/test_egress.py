"""Egress prices: flat, cumulative tiers priced afresh each month, included volume and overage."""

import pytest

from costapp.tco.egress import (
    cloud_egress_usd,
    flat_egress_usd,
    overage_egress_usd,
    tiered_egress_usd,
)

TIERS = [
    {"up_to_tb": 0.1, "usd_per_gb": 0},
    {"up_to_tb": 10, "usd_per_gb": 0.09},
    {"up_to_tb": 50, "usd_per_gb": 0.085},
    {"up_to_tb": 150, "usd_per_gb": 0.07},
    {"up_to_tb": None, "usd_per_gb": 0.05},
]


def test_each_gb_is_priced_at_the_tier_it_falls_in():
    # 0.1 TB free, 9.9 TB at 0.09, 20 TB at 0.085 (1 TB = 1000 GB)
    assert tiered_egress_usd(30, TIERS) == pytest.approx(9900 * 0.09 + 20000 * 0.085)


def test_volume_beyond_the_last_bound_uses_the_open_tier():
    expected = 9900 * 0.09 + 40000 * 0.085 + 100000 * 0.07 + 250000 * 0.05
    assert tiered_egress_usd(400, TIERS) == pytest.approx(expected)


def test_volume_inside_the_first_tier_and_zero_volume():
    assert tiered_egress_usd(0.05, TIERS) == 0.0
    assert tiered_egress_usd(5, TIERS[1:]) == pytest.approx(5000 * 0.09)
    assert tiered_egress_usd(0, TIERS) == 0.0


def test_volume_exactly_on_a_bound():
    assert tiered_egress_usd(10, TIERS) == pytest.approx(9900 * 0.09)


def test_flat_and_missing_prices():
    assert flat_egress_usd(50, 0.12) == pytest.approx(6000.0)
    assert cloud_egress_usd(50, 0.12, None) == pytest.approx(6000.0)
    assert cloud_egress_usd(50, None, TIERS) == tiered_egress_usd(50, TIERS)
    assert cloud_egress_usd(50, None, None) == 0.0


def test_overage_beyond_the_included_volume():
    assert overage_egress_usd(30, 25, 4) == 20.0
    assert overage_egress_usd(20, 25, 4) == 0.0
