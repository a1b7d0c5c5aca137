"""Dedicated and on-prem capacity: burst versus shortfall, lead time and bridge, running costs."""

import numpy as np
import pytest

from costapp.tco.core import Futures, plan_cost

from .helpers import by_name, document, plan_of, run, steady

HOURS = 730


def dedicated(**fields):
    return {"type": "dedicated", "name": "d", "usd_per_server_month": 1000, **fields}


def on_prem(**fields):
    return {
        "type": "on_prem",
        "name": "p",
        "capex_usd_per_server": 12000,
        "server_kw": 10,
        **fields,
    }


def test_servers_default_to_the_peak_over_the_server_size():
    result = run(
        document([steady(9, 0.5)], [dedicated(), on_prem(gpus_per_server=4)], horizon_months=2)
    )
    options = by_name(result)
    assert options["d"]["provisioned_gpus"] == 16
    assert options["p"]["provisioned_gpus"] == 12
    assert [o["servers"] for o in result["inputs"]["options"]] == [2, 3]


def test_dedicated_work_beyond_the_servers_bursts_or_is_shortfall():
    doc = document(
        [steady(10)],
        [
            dedicated(servers=1, burst_usd_per_gpu_hour=2.0),
            {**dedicated(servers=1), "name": "no burst"},
        ],
        horizon_months=2,
    )
    options = by_name(run(doc))
    assert options["d"]["breakdown_usd"]["burst"] == pytest.approx(2 * 2 * HOURS * 2.0)
    assert options["d"]["feasible"] is True
    assert options["no burst"]["shortfall_gpu_hours"] == pytest.approx(2 * 2 * HOURS)
    assert options["no burst"]["feasible"] is False
    assert options["no burst"]["warnings"]
    assert options["no burst"]["average_utilization"] == 1.0


def test_on_prem_lead_time_is_bridged_or_shortfall():
    doc = document(
        [steady(8, 0.5)],
        [
            on_prem(lead_time_months=2, bridge_usd_per_gpu_hour=3.0),
            {**on_prem(lead_time_months=2), "name": "no bridge"},
        ],
        horizon_months=4,
    )
    options = by_name(run(doc))
    bridged = options["p"]
    assert bridged["breakdown_usd"]["bridge"] == pytest.approx(2 * 8 * 0.5 * HOURS * 3.0)
    assert bridged["monthly_usd"][3] > 0 and bridged["breakdown_usd"]["power"] > 0
    assert bridged["average_utilization"] == pytest.approx(0.5)  # over the months in service
    assert options["no bridge"]["shortfall_gpu_hours"] == pytest.approx(2 * 8 * 0.5 * HOURS)
    assert options["no bridge"]["feasible"] is False


def test_on_prem_running_costs_start_with_service_and_staff_and_egress_run_every_month():
    doc = document(
        [steady(8, 0.5)],
        [
            on_prem(
                lead_time_months=1,
                bridge_usd_per_gpu_hour=1.0,
                staff_usd_per_month=100,
                egress_usd_per_tb=2,
                colo_usd_per_kw_month=5,
                support_fraction_per_year=0.12,
                residual_fraction=0.25,
                idle_power_fraction=0.2,
                pue=1.5,
                usd_per_kwh=0.1,
            )
        ],
        horizon_months=3,
        egress_tb_per_month=10,
    )
    option = by_name(run(doc))["p"]
    breakdown = option["breakdown_usd"]
    assert breakdown["capex"] == 12000
    assert breakdown["staff"] == 300 and breakdown["egress"] == 60
    assert breakdown["colo"] == 2 * 10 * 5
    assert breakdown["support"] == pytest.approx(2 * 12000 * 0.12 / 12)
    assert breakdown["power"] == pytest.approx(2 * 10 * (0.2 + 0.8 * 0.5) * 1.5 * HOURS * 0.1)
    assert breakdown["residual"] == -3000
    assert option["monthly_usd"][0] == 12000
    assert option["monthly_usd"][3] == pytest.approx(
        100 + 20 + 50 + 120 + 10 * 0.6 * 1.5 * HOURS * 0.1 - 3000
    )


def test_financing_replaces_capex_with_level_payments():
    option = by_name(
        run(
            document(
                [steady(8)], [on_prem(financing={"apr": 0, "term_months": 2})], horizon_months=3
            )
        )
    )["p"]
    assert option["breakdown_usd"]["capex"] == 0
    assert option["breakdown_usd"]["financing"] == 12000
    assert option["monthly_usd"][0] == 0


def test_on_prem_power_follows_load_capped_at_one_and_work_beyond_bursts():
    plan = plan_of(
        document(
            [steady(8)],
            [
                on_prem(
                    burst_usd_per_gpu_hour=2.0, idle_power_fraction=0.5, pue=1.0, usd_per_kwh=1.0
                )
            ],
            horizon_months=1,
        )
    )
    costs = plan_cost(
        plan, Futures(demand_multiplier=np.array([0.0, 1.0, 2.0])), 3, categories=True
    )
    power = costs.breakdown_usd[0, 7, :, 1]
    assert list(power) == pytest.approx([10 * 0.5 * HOURS, 10 * HOURS, 10 * HOURS])
    burst = costs.breakdown_usd[0, 12, :, 1]
    assert list(burst) == pytest.approx([0, 0, 8 * HOURS * 2.0])


def test_kwh_multiplier_scales_power_only():
    plan = plan_of(document([steady(8)], [on_prem(staff_usd_per_month=7)], horizon_months=1))
    costs = plan_cost(
        plan, Futures(usd_per_kwh_multiplier=np.array([1.0, 2.0])), 2, categories=True
    )
    assert costs.breakdown_usd[0, 7, 1, 1] == pytest.approx(2 * costs.breakdown_usd[0, 7, 0, 1])
    assert costs.breakdown_usd[0, 9, 1, 1] == costs.breakdown_usd[0, 9, 0, 1] == 7


def test_float_noise_beyond_the_capacity_is_not_shortfall():
    from costapp.tco.demand import excess_gpu_hours

    capacity = 6 * 730.0
    assert list(excess_gpu_hours(np.array([capacity * (1 + 1e-15), capacity + 1.0]), capacity)) == [
        0.0,
        1.0,
    ]
