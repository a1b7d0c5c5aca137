"""Cost against utilization: the options priced at a grid of demand scales, as the contract's
break-even scaling prices them."""

import pytest

from costapp.tco.curves import cost_curves, plan_cost_curves

from .helpers import by_name, plan_of, run, scenario, scenario_names


@pytest.mark.parametrize("name", scenario_names())
def test_at_scale_one_the_curves_give_the_results_own_totals_and_utilizations(name):
    result = run(scenario(name))
    curves = cost_curves(result["inputs"], result["gpus"])
    at = curves["scale"].index(1.0)
    options = by_name(result)
    assert [c["name"] for c in curves["options"]] == list(options)
    for curve in curves["options"]:
        option = options[curve["name"]]
        assert curve["total_usd"][at] == pytest.approx(option["total_usd"], rel=1e-12)
        assert curve["average_utilization"][at] == pytest.approx(
            option["average_utilization"], rel=1e-12
        )
        assert curve["feasible"][at] == option["feasible"]


@pytest.mark.parametrize("name", scenario_names())
def test_each_break_even_point_is_the_results_break_even_utilization_where_totals_meet(name):
    result = run(scenario(name))
    curves = cost_curves(result["inputs"], result["gpus"])
    options = by_name(result)
    for curve in curves["options"]:
        expected = options[curve["name"]]["break_even_utilization"]
        if expected is None:
            assert curve["break_even"] is None
            continue
        mark = curve["break_even"]
        assert mark["average_utilization"] == pytest.approx(expected, rel=1e-12)
        assert mark["total_usd"] == pytest.approx(mark["baseline_total_usd"], rel=1e-8)
        assert mark["scale"] in curves["scale"]


def test_the_grid_runs_from_zero_past_every_capacity_and_cost_rises_with_work():
    plan = plan_of(scenario("h100-fleet-buy-vs-rent"))
    curves = plan_cost_curves(plan, points=11)
    scales = curves["scale"]
    assert scales[0] == 0.0 and scales == sorted(scales) and 1.0 in scales
    caps = [c["scale_cap"] for c in curves["options"] if c["scale_cap"] is not None]
    assert scales[-1] == pytest.approx(max(1.0, *caps))
    on_demand = by_name({"options": curves["options"]})["Hyperscaler on-demand"]
    own = by_name(run(scenario("h100-fleet-buy-vs-rent")))["Hyperscaler on-demand"]
    # elastic on-demand without work bills no compute hour: what is left is the egress
    assert own["breakdown_usd"]["egress"] > 0 and own["breakdown_usd"]["support"] == 0
    assert on_demand["total_usd"][0] == pytest.approx(own["breakdown_usd"]["egress"], rel=1e-12)
    assert all(
        b > a for a, b in zip(on_demand["total_usd"], on_demand["total_usd"][1:], strict=False)
    )
    dedicated = by_name({"options": curves["options"]})["Dedicated 8-GPU servers"]
    assert dedicated["has_capacity"] and dedicated["average_utilization"][0] == 0.0
    # a flat monthly fee: the same total at every scale up to its capacity
    within = [
        t
        for s, t in zip(scales, dedicated["total_usd"], strict=True)
        if s <= dedicated["scale_cap"]
    ]
    assert max(within) == pytest.approx(min(within), rel=1e-12)


def test_fewer_than_two_points_is_refused():
    with pytest.raises(ValueError, match="at least 2"):
        plan_cost_curves(plan_of(scenario("h100-fleet-buy-vs-rent")), points=1)
