"""Tolerant ceiling, price trends, discounting and the financing annuity."""

import numpy as np
import pytest

from costapp.tco.finance import (
    ceil_tolerant,
    discount_factors,
    financing_schedule_usd,
    level_payment_usd,
    outstanding_principal_usd,
    renewal_factor,
    term_starts,
    trend_factor,
)


def test_ceil_with_tolerance_ignores_float_noise_but_not_real_excess():
    assert ceil_tolerant(3.0) == 3
    assert ceil_tolerant(3.0 + 1e-12) == 3
    assert ceil_tolerant(0.1 * 3 / 0.3 * 24) == 24  # 24.000000000000004
    assert ceil_tolerant(3.001) == 4
    assert ceil_tolerant(1e6 + 5e-4) == 1e6  # the tolerance scales with |x|
    assert ceil_tolerant(1e6 + 1e-2) == 1e6 + 1
    assert ceil_tolerant(0.0) == 0
    assert list(ceil_tolerant(np.array([1.2, 2.0, 2.0000000001]))) == [2, 2, 2]


def test_trend_factor_starts_at_one_in_month_one_and_compounds_yearly():
    k = trend_factor(-0.12, 25)
    assert k[1] == pytest.approx(1.0)
    assert k[13] == pytest.approx(0.88)
    assert k[25] == pytest.approx(0.88**2)
    assert k[7] == pytest.approx(0.88**0.5)


def test_trend_factor_broadcasts_over_paths():
    k = trend_factor(np.array([0.0, 0.1]), 13)
    assert k.shape == (2, 14)
    assert k[0, 13] == 1.0 and k[1, 13] == pytest.approx(1.1)


def test_committed_rate_is_fixed_within_a_term_and_renews_at_the_trended_price():
    factor = renewal_factor(-0.12, 12, 36)
    assert np.allclose(factor[1:13], 1.0)
    assert np.allclose(factor[13:25], 0.88)
    assert np.allclose(factor[25:37], 0.88**2)
    assert np.allclose(renewal_factor(0.2, 36, 36)[1:], 1.0)
    odd = renewal_factor(0.1, 5, 12)
    assert odd[5] == 1.0 and odd[6] == pytest.approx(1.1 ** (5 / 12))


def test_terms_start_at_zero_and_every_term_before_the_horizon():
    assert list(np.flatnonzero(term_starts(12, 36))) == [0, 12, 24]
    assert list(np.flatnonzero(term_starts(12, 30))) == [0, 12, 24]  # last term cut short
    assert list(np.flatnonzero(term_starts(12, 24))) == [0, 12]  # no term starts at H
    assert list(np.flatnonzero(term_starts(36, 24))) == [0]


def test_discount_factors_are_annual_compounding_by_month():
    factors = discount_factors(0.08, 24)
    assert factors[0] == 1.0
    assert factors[12] == pytest.approx(1 / 1.08)
    assert factors[24] == pytest.approx(1 / 1.08**2)
    assert np.all(discount_factors(0.0, 5) == 1.0)


def test_level_payment_is_the_textbook_annuity():
    assert level_payment_usd(100_000, 0.06, 12) == pytest.approx(8606.64, abs=0.01)
    assert level_payment_usd(120_000, 0.0, 24) == 5000.0


def test_a_loan_within_the_horizon_is_paid_in_n_level_payments():
    schedule = financing_schedule_usd(100_000, 0.06, 12, 36)
    payment = level_payment_usd(100_000, 0.06, 12)
    assert schedule[0] == 0.0
    assert np.allclose(schedule[1:13], payment)
    assert np.all(schedule[13:] == 0.0)


def test_a_loan_longer_than_the_horizon_is_settled_in_month_h():
    schedule = financing_schedule_usd(1_000_000, 0.09, 48, 36)
    payment = level_payment_usd(1_000_000, 0.09, 48)
    owed = outstanding_principal_usd(1_000_000, 0.09, 48, 36)
    assert np.allclose(schedule[1:36], payment)
    assert schedule[36] == pytest.approx(payment + owed)
    # discounted at the loan's own rate, the cash flows are worth exactly the principal
    months = np.arange(37)
    assert np.sum(schedule / (1 + 0.09 / 12) ** months) == pytest.approx(1_000_000)
    # the balloon is the value of the 12 payments left
    i = 0.09 / 12
    assert owed == pytest.approx(payment * (1 - (1 + i) ** -12) / i)


def test_an_interest_free_loan_longer_than_the_horizon_leaves_the_unpaid_share():
    schedule = financing_schedule_usd(570_000, 0.0, 48, 36)
    assert np.allclose(schedule[1:36], 570_000 / 48)
    assert schedule[36] == pytest.approx(570_000 / 48 + 570_000 * 12 / 48)
    assert schedule.sum() == pytest.approx(570_000)
