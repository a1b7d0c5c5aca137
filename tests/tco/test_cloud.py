"""Cloud billing: on-demand, spot, fixed fleets, commitments with renewals and overflow."""

import numpy as np
import pytest

from costapp.tco.core import Futures, plan_build, plan_cost
from costapp.tco.errors import ScenarioError

from .helpers import by_name, document, gpu_figures, normalized, plan_of, run, steady

HOURS = 730


def committed(**fields):
    return {"type": "cloud", "name": "c", "billing": "committed", "usd_per_gpu_hour": 2.0, **fields}


def test_elastic_on_demand_bills_busy_hours_at_the_trended_rate():
    result = run(
        document(
            [steady(10, 0.5)],
            [
                {
                    "type": "cloud",
                    "name": "od",
                    "usd_per_gpu_hour": 2.0,
                    "price_change_per_year": 0.1,
                }
            ],
            horizon_months=13,
        )
    )
    monthly = by_name(result)["od"]["monthly_usd"]
    assert monthly[0] == 0
    assert monthly[1] == pytest.approx(10 * 0.5 * HOURS * 2.0)
    assert monthly[13] == pytest.approx(10 * 0.5 * HOURS * 2.0 * 1.1)


def test_spot_adds_the_interruption_overhead_and_fixed_scaling_bills_the_whole_fleet():
    result = by_name(
        run(
            document(
                [steady(10, 0.5)],
                [
                    {"type": "cloud", "name": "spot", "billing": "spot", "usd_per_gpu_hour": 1.0},
                    {"type": "cloud", "name": "fleet", "usd_per_gpu_hour": 1.0, "scaling": "fixed"},
                ],
                horizon_months=2,
            )
        )
    )
    assert result["spot"]["total_usd"] == pytest.approx(2 * 10 * 0.5 * HOURS * 1.1)
    assert result["fleet"]["total_usd"] == pytest.approx(2 * 10 * HOURS)
    assert result["fleet"]["average_utilization"] == pytest.approx(0.5)
    assert result["spot"]["average_utilization"] == 1.0


def test_committed_renewals_with_upfront_per_term_and_trended_rate():
    doc = document(
        [steady(4, 0.5)],
        [committed(committed_gpus=4, term_months=12, upfront_usd=1000, price_change_per_year=-0.2)],
        horizon_months=30,
    )
    option = by_name(run(doc))["c"]
    monthly = option["monthly_usd"]
    base = 4 * HOURS * 2.0
    assert monthly[0] == 1000
    assert monthly[1] == pytest.approx(base)
    assert monthly[12] == pytest.approx(base + 1000)  # second term's upfront at month 12
    assert monthly[13] == pytest.approx(base * 0.8)
    assert monthly[24] == pytest.approx(base * 0.8 + 1000)
    assert monthly[30] == pytest.approx(base * 0.64)  # third term cut short at H
    assert option["breakdown_usd"]["upfront"] == 3000
    assert option["provisioned_gpus"] == 4
    assert option["average_utilization"] == pytest.approx(0.5)


def test_work_beyond_the_commitment_is_billed_on_demand_at_the_trended_rate():
    doc = document(
        [steady(6, 1.0)],
        [
            committed(
                committed_gpus=4,
                on_demand_usd_per_gpu_hour=3.0,
                price_change_per_year=0.1,
                term_months=24,
            )
        ],
        horizon_months=13,
    )
    monthly = by_name(run(doc))["c"]["monthly_usd"]
    assert monthly[13] == pytest.approx(4 * HOURS * 2.0 + 2 * HOURS * 3.0 * 1.1)


def test_committed_gpus_default_to_the_peak_and_the_term_to_the_horizon():
    result = run(document([steady(6, 0.5, monthly_growth=0.1)], [committed()], horizon_months=3))
    option = by_name(result)["c"]
    assert option["provisioned_gpus"] == 8  # ceil(6 × 1.21)
    assert result["inputs"]["options"][0]["committed_gpus"] == 8
    assert result["inputs"]["options"][0]["term_months"] == 3


def test_overflow_without_an_on_demand_rate_is_a_scenario_error():
    inputs, _ = normalized(
        document(
            [steady(6)],
            [
                {"type": "cloud", "name": "od", "usd_per_gpu_hour": 1.0},
                committed(committed_gpus=4),
            ],
        )
    )
    with pytest.raises(ScenarioError) as caught:
        plan_build(inputs, gpu_figures())
    assert [e.field for e in caught.value.errors] == ["options[1].committed_gpus"]


def test_overflow_without_an_on_demand_rate_is_shortfall_on_a_path():
    plan = plan_of(document([steady(4)], [committed(committed_gpus=4)], horizon_months=2))
    costs = plan_cost(plan, Futures(demand_multiplier=np.array([1.0, 1.5])), 2)
    assert list(costs.shortfall_gpu_hours[0]) == pytest.approx([0.0, 2 * 2 * HOURS])
    assert costs.total_usd[0, 0] == costs.total_usd[0, 1]


def test_a_fixed_fleet_tops_up_on_demand_when_a_path_has_more_work():
    plan = plan_of(
        document(
            [steady(4)],
            [{"type": "cloud", "name": "f", "usd_per_gpu_hour": 1.0, "scaling": "fixed"}],
            horizon_months=1,
        )
    )
    costs = plan_cost(plan, Futures(demand_multiplier=np.array([0.5, 1.0, 1.5])), 3)
    assert list(costs.total_usd[0]) == pytest.approx([4 * HOURS, 4 * HOURS, 6 * HOURS])
    assert not costs.shortfall_gpu_hours.any()


def test_path_values_replace_the_price_trend_and_the_spot_overhead():
    plan = plan_of(
        document(
            [steady(1)],
            [
                {"type": "cloud", "name": "spot", "billing": "spot", "usd_per_gpu_hour": 1.0},
            ],
            horizon_months=13,
        )
    )
    futures = Futures(
        cloud_price_change_per_year=np.array([0.0, 0.5]), interruption_overhead=np.array([0.0, 0.2])
    )
    costs = plan_cost(plan, futures, 2)
    assert costs.monthly_usd[0, 0, 13] == pytest.approx(HOURS)
    assert costs.monthly_usd[0, 1, 13] == pytest.approx(HOURS * 1.5 * 1.2)


def test_support_is_a_share_of_compute_and_egress_but_not_upfront():
    option = by_name(
        run(
            document(
                [steady(1)],
                [
                    committed(
                        committed_gpus=1,
                        upfront_usd=500,
                        support_fraction=0.1,
                        egress_usd_per_gb=0.01,
                    )
                ],
                horizon_months=1,
                egress_tb_per_month=1,
            )
        )
    )["c"]
    assert option["breakdown_usd"]["support"] == pytest.approx(0.1 * (HOURS * 2.0 + 10.0))
