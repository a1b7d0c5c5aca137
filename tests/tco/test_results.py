"""Derived figures: payback month, savings, utilization, the demand cap and the cheapest option."""

import numpy as np
import pytest

from costapp.tco import results as rs


def test_break_even_month_is_zero_when_never_dearer_than_the_baseline():
    assert rs.break_even_month(np.array([0.0, 5, 10]), np.array([0.0, 5, 10])) == 0.0
    assert rs.break_even_month(np.array([0.0, 4, 8]), np.array([0.0, 5, 10])) == 0.0


def test_break_even_month_is_null_when_still_dearer_at_the_horizon():
    assert rs.break_even_month(np.array([10.0, 20, 30]), np.array([0.0, 15, 29])) is None


def test_break_even_month_interpolates_after_the_last_month_still_dearer():
    # d = [10, 5, -10]: last k with d > 0 is 1; 1 + 5 / (5 + 10)
    value = rs.break_even_month(np.array([10.0, 20, 30]), np.array([0.0, 15, 40]))
    assert value == pytest.approx(1 + 1 / 3)
    # d = [5, -1, 3, -3]: crossings at 0.83 and 2.5; the last one counts
    value = rs.break_even_month(np.array([5.0, -1, 3, -3]), np.zeros(4))
    assert value == pytest.approx(2.5)


def test_savings_and_cost_per_busy_hour_are_null_without_a_denominator():
    assert rs.savings_vs_baseline_pct(80.0, 100.0) == pytest.approx(20.0)
    assert rs.savings_vs_baseline_pct(80.0, 0.0) is None
    assert rs.usd_per_busy_gpu_hour(100.0, 50.0) == 2.0
    assert rs.usd_per_busy_gpu_hour(100.0, 0.0) is None


def test_average_utilization_by_kind_of_option():
    busy = np.array([50.0, 150.0, 100.0])
    peak = np.array([1.0, 2.0, 1.0])
    service = np.array([True, True, True])
    assert rs.average_utilization(busy, peak, 100.0, None, service, "elastic") == 1.0
    assert rs.average_utilization(busy, peak, 100.0, None, service, "fixed") == pytest.approx(0.75)
    # fixed capacity of 100 GPU-h: min(busy, capacity) = 50, 100, 100
    assert rs.average_utilization(busy, peak, 100.0, 100.0, service, None) == pytest.approx(
        250 / 300
    )
    lead = np.array([False, True, True])
    assert rs.average_utilization(busy, peak, 100.0, 100.0, lead, None) == pytest.approx(1.0)
    assert rs.average_utilization(busy, peak, 100.0, 0.0, service, None) == 0.0
    scaled = rs.average_utilization(
        np.array([[1.0, 1.0], [2.0, 4.0]]), peak[:2], 1.0, 4.0, service[:2], None
    )
    assert list(scaled) == pytest.approx([0.25, 0.75])


def test_demand_cap_is_the_tightest_month_in_service_with_work():
    busy = np.array([0.0, 50.0, 80.0, 200.0])
    service = np.array([True, True, True, False])
    assert rs.demand_scale_cap(busy, 100.0, service) == pytest.approx(1.25)
    assert rs.demand_scale_cap(np.zeros(4), 100.0, service) is None


def test_cheapest_skips_infeasible_options_and_takes_the_first_on_a_tie():
    assert rs.cheapest_index([1.0, 2.0, 3.0], [False, True, True]) == 1
    assert rs.cheapest_index([3.0, 2.0, 2.0], [True, True, True]) == 1
    assert rs.cheapest_index([1.0, 2.0], [False, False]) is None


def test_first_root_finds_exact_zeros_and_sign_changes_after_the_start():
    s = np.array([0.0, 1.0, 2.0, 3.0])
    assert rs.first_root(s, np.array([1.0, 0.5, -1.0, 2.0])) == (1.0, 2.0)
    assert rs.first_root(s, np.array([1.0, 0.0, -1.0, 2.0])) == 1.0
    assert rs.first_root(s, np.array([0.0, 1.0, 2.0, 3.0])) is None
    assert rs.first_root(s, np.array([-1.0, -2.0, 3.0, 3.0])) == (1.0, 2.0)
