"""Money over time: tolerant ceiling, price trends, discounting and loan schedules.

Months are indexed ``m = 0 … H``; index 0 is the day of signing. Every function returns arrays over
that axis (length ``H + 1``) unless it says otherwise, so that costs can be added month by month.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

CEIL_TOLERANCE = 1e-9


def ceil_tolerant(x: ArrayLike) -> NDArray[np.float64]:
    """``ceil(x − 1e-9 · max(1, |x|))`` elementwise: float noise never adds a GPU [count]."""
    values = np.asarray(x, dtype=np.float64)
    return np.ceil(values - CEIL_TOLERANCE * np.maximum(1.0, np.abs(values)))


def month_index(horizon_months: int) -> Array:
    """Months ``0 … H`` as floats, shape ``(H + 1,)`` [month]."""
    return np.arange(horizon_months + 1, dtype=np.float64)


def trend_factor(price_change_per_year: ArrayLike, horizon_months: int) -> Array:
    """Price trend ``k[m] = (1 + c) ** ((m − 1) / 12)`` [dimensionless].

    ``price_change_per_year`` is a scalar or an array of shape ``(P,)``; the result has shape
    ``(H + 1,)`` or ``(P, H + 1)``. Month 0 carries ``k[0] = (1 + c) ** (−1/12)``, unused since
    nothing trended is paid on the day of signing.
    """
    c = np.asarray(price_change_per_year, dtype=np.float64)[..., np.newaxis]
    return (1.0 + c) ** ((month_index(horizon_months) - 1.0) / 12.0)


def renewal_factor(
    price_change_per_year: ArrayLike, term_months: int, horizon_months: int
) -> Array:
    """Committed-rate factor ``(1 + c) ** (T(m) / 12)``, ``T(m) = term · floor((m − 1) / term)``.

    The rate is fixed within a term and renews at the trended price [dimensionless]; shape as
    :func:`trend_factor`. Month 0 gets the first term's factor (1).
    """
    c = np.asarray(price_change_per_year, dtype=np.float64)[..., np.newaxis]
    term = np.floor_divide(np.maximum(np.arange(horizon_months + 1) - 1, 0), term_months)
    # One power per term (not per month): the factor is the same within a term.
    starts = term_months * np.arange(int(term[-1]) + 1)
    per_term = (1.0 + c) ** (starts.astype(np.float64) / 12.0)
    return per_term[..., term]  # np.take(per_term, term, axis=-1), gathered faster


def single_term(term_months: int, horizon_months: int) -> bool:
    """True when months ``1 … H`` fall in one term, so that :func:`renewal_factor` is 1 throughout."""
    return term_months >= horizon_months


def term_starts(term_months: int, horizon_months: int) -> Array:
    """Indicator of the months a term starts: ``0, term, 2·term, … < H``; shape ``(H + 1,)``."""
    starts = np.zeros(horizon_months + 1)
    starts[0:horizon_months:term_months] = 1.0
    return starts


def discount_factors(discount_rate: float, horizon_months: int) -> Array:
    """Present value of 1 USD paid at the end of month ``m``: ``(1 + r) ** (−m / 12)``; ``(H + 1,)``."""
    return (1.0 + discount_rate) ** (-month_index(horizon_months) / 12.0)


def level_payment_usd(principal_usd: float, apr: float, term_months: float) -> float:
    """Monthly annuity payment ``C · i / (1 − (1 + i) ** −n)``, ``i = apr / 12``; ``C / n`` at 0 [USD]."""
    i = apr / 12.0
    # 1 − (1 + i) ** −n, accurate for tiny rates
    discount = -math.expm1(-term_months * math.log1p(i))
    if i == 0.0 or discount == 0.0:
        return principal_usd / term_months
    return principal_usd * i / discount


def outstanding_principal_usd(
    principal_usd: float, apr: float, term_months: float, paid_months: int
) -> float:
    """Principal still owed after ``paid_months`` level payments [USD] (0 once the loan is repaid)."""
    if paid_months >= term_months:
        return 0.0
    payment = level_payment_usd(principal_usd, apr, term_months)
    i = apr / 12.0
    if i == 0.0:
        return principal_usd - payment * paid_months
    # (1 + i) ** k and ((1 + i) ** k − 1) / i, accurate for tiny rates
    growth_minus_one = math.expm1(paid_months * math.log1p(i))
    return principal_usd * (1.0 + growth_minus_one) - payment * growth_minus_one / i


def financing_schedule_usd(
    principal_usd: float, apr: float, term_months: float, horizon_months: int
) -> Array:
    """Loan cash flows by month [USD], shape ``(H + 1,)``.

    A level payment in months ``1 … min(n, H)``, plus the principal still owed after month ``H``
    paid in month ``H`` (a loan longer than the horizon is settled at its end).
    """
    schedule = np.zeros(horizon_months + 1)
    payment = level_payment_usd(principal_usd, apr, term_months)
    months = np.arange(horizon_months + 1)
    schedule[(months >= 1) & (months <= term_months)] = payment
    schedule[horizon_months] += outstanding_principal_usd(
        principal_usd, apr, term_months, horizon_months
    )
    return schedule


def at_month(value_usd: float, month: int, horizon_months: int) -> Array:
    """A single payment of ``value_usd`` in ``month``, as a ``(H + 1,)`` schedule [USD]."""
    schedule = np.zeros(horizon_months + 1)
    schedule[month] = value_usd
    return schedule


def every_month(value_usd: float, horizon_months: int) -> Array:
    """``value_usd`` in each month ``1 … H`` and nothing in month 0, shape ``(H + 1,)`` [USD]."""
    schedule = np.full(horizon_months + 1, float(value_usd))
    schedule[0] = 0.0
    return schedule
