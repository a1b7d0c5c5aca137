"""plan_cost: many paths at once, the same numbers as one path at a time."""

import dataclasses

import numpy as np
import pytest

from costapp.tco.core import (
    CATEGORIES,
    Futures,
    PathDemand,
    plan_cost,
    supply_bound,
    supply_on_paths,
)

from .documents_v12 import served_and_trained
from .helpers import plan_of, scenario


def test_categories_are_the_thirteen_of_the_contract_in_order():
    assert CATEGORIES == (
        "compute",
        "egress",
        "support",
        "setup",
        "upfront",
        "capex",
        "financing",
        "power",
        "colo",
        "staff",
        "residual",
        "bridge",
        "burst",
    )


@pytest.mark.parametrize("name", ["llm-train-and-serve", "commitments-and-capacity"])
def test_many_paths_at_once_equal_one_path_at_a_time(name):
    plan = plan_of(scenario(name))
    rng = np.random.default_rng(7)
    n = 5
    futures = Futures(
        demand_multiplier=rng.uniform(0.5, 1.5, n),
        cloud_price_change_per_year=rng.normal(-0.1, 0.1, n),
        usd_per_kwh_multiplier=rng.uniform(0.8, 1.5, n),
        interruption_overhead=rng.uniform(0.0, 0.3, n),
    )
    together = plan_cost(plan, futures, n, categories=True)
    assert together.monthly_usd.shape == (len(plan.options), n, plan.horizon_months + 1)
    assert together.breakdown_usd.shape == (len(plan.options), 13, n, plan.horizon_months + 1)
    for p in range(n):
        one = Futures(
            **{
                f.name: None
                if getattr(futures, f.name) is None
                else getattr(futures, f.name)[p : p + 1]
                for f in dataclasses.fields(futures)
            }
        )
        alone = plan_cost(plan, one, 1)
        np.testing.assert_allclose(alone.monthly_usd[:, 0], together.monthly_usd[:, p], rtol=1e-13)
        np.testing.assert_allclose(
            alone.shortfall_gpu_hours[:, 0], together.shortfall_gpu_hours[:, p]
        )


def test_the_document_own_values_as_futures_give_the_deterministic_costs():
    plan = plan_of(scenario("llm-train-and-serve"))
    own = plan_cost(plan, Futures(), 1)
    same = plan_cost(
        plan,
        Futures(
            demand_multiplier=np.ones(3),
            cloud_price_change_per_year=None,
            usd_per_kwh_multiplier=np.ones(3),
            interruption_overhead=np.full(3, 0.15),
        ),
        3,
    )
    for p in range(3):
        np.testing.assert_allclose(same.total_usd[:, p], own.total_usd[:, 0], rtol=1e-15)


def test_totals_npv_and_breakdown_agree_with_the_months():
    plan = plan_of(scenario("h100-fleet-buy-vs-rent"))
    costs = plan_cost(plan, Futures(demand_multiplier=np.array([0.8, 1.2])), 2, categories=True)
    np.testing.assert_allclose(costs.breakdown_usd.sum(axis=1), costs.monthly_usd, rtol=1e-12)
    np.testing.assert_allclose(costs.total_usd, costs.monthly_usd.sum(axis=-1))
    np.testing.assert_allclose(costs.npv_usd, costs.monthly_usd @ plan.discount_factors)
    assert plan_cost(plan, Futures(), 1).breakdown_usd is None


def test_futures_of_the_wrong_shape_are_refused():
    plan = plan_of(scenario("egress-heavy-inference"))
    with pytest.raises(ValueError):
        plan_cost(plan, Futures(demand_multiplier=np.ones(2)), 3)


def test_a_plan_carries_what_monte_carlo_needs():
    plan = plan_of(scenario("commitments-and-capacity"))
    assert plan.horizon_months == 36 and plan.hours_per_month == 730
    assert plan.option_names[0] == "On-demand, elastic"
    assert plan.option_types == ["cloud", "cloud", "cloud", "dedicated", "on_prem"]
    assert plan.discount_factors.shape == (37,)
    assert plan.options[4].provisioned_gpus == 48 and plan.inputs["options"][4]["servers"] == 6
    assert all(o.busy_gpu_hours.shape == (36,) and o.peak_gpus.shape == (36,) for o in plan.options)


def test_the_demand_of_a_block_bounds_supply_as_the_whole_array_does():
    """The bound of supply_o read from the path with the largest multiplier is the maximum over
    every path and month, bit for bit, whatever the multipliers (zeros, a negative one)."""
    plan = plan_of(served_and_trained())
    rng = np.random.default_rng(11)
    checked = 0
    for draws in (
        rng.triangular(0.0, 1.0, 3.0, 700),
        np.zeros(40),
        np.array([0.0, 2.0, 2.0, 0.5]),
        np.array([-0.5, 1.5, 0.25]),
    ):
        n = len(draws)
        demand = PathDemand(draws, n, plan.horizon_months, float(np.max(np.abs(draws))))
        for option in plan.options:
            if option.supply is None or not option.supply.has_resident:
                continue
            supply = supply_on_paths(option, draws, n, plan.horizon_months)[1]
            expected = supply_bound(option, supply, float(np.max(np.abs(draws))))
            assert np.float64(demand.bound(option)).tobytes() == np.float64(expected).tobytes()
            assert np.array_equal(demand.supply(option), supply)
            checked += 1
    assert checked >= 4
