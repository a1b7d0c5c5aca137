"""Monte Carlo uncertainty (scenario-format.md, "Uncertainty"): draws, blocks, merge, statistics."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costapp.tco import montecarlo as mc
from costapp.tco.core import Futures, plan_cost
from tests.examples import examples

from .helpers import by_name, document, plan_of, run, steady

RELATIVE = 1e-9


def fleet(**simulation: Any) -> dict[str, Any]:
    """64 H100s at 70 %: every option type, every simulated input in play."""
    return document(
        [steady(gpus=64, utilization=0.7)],
        [
            {
                "name": "on-demand",
                "type": "cloud",
                "usd_per_gpu_hour": 6.88,
                "throughput_factor": 0.92,
                "price_change_per_year": -0.05,
                "egress_tiers": [
                    {"up_to_tb": 10, "usd_per_gb": 0.09},
                    {"up_to_tb": None, "usd_per_gb": 0.05},
                ],
            },
            {
                "name": "spot",
                "type": "cloud",
                "billing": "spot",
                "usd_per_gpu_hour": 2.5,
                "price_change_per_year": -0.05,
                "interruption_overhead": 0.2,
            },
            {
                "name": "committed",
                "type": "cloud",
                "billing": "committed",
                "usd_per_gpu_hour": 4.86,
                "price_change_per_year": -0.05,
                "committed_gpus": 48,
                "term_months": 12,
                "on_demand_usd_per_gpu_hour": 11.06,
            },
            {
                "name": "dedicated",
                "type": "dedicated",
                "usd_per_server_month": 14500,
                "setup_usd": 8000,
                "burst_usd_per_gpu_hour": 4.0,
            },
            {
                "name": "on-prem",
                "type": "on_prem",
                "capex_usd_per_server": 300000,
                "server_kw": 10.2,
                "colo_usd_per_kw_month": 184,
                "staff_usd_per_month": 15000,
                "residual_fraction": 0.2,
                "lead_time_months": 3,
                "bridge_usd_per_gpu_hour": 2.99,
                "burst_usd_per_gpu_hour": 3.5,
            },
        ],
        horizon_months=36,
        discount_rate=0.08,
        egress_tb_per_month=50,
        simulation=simulation or None,
    )


SPREAD = {
    "demand_multiplier": {"dist": "triangular", "low": 0.6, "mode": 1.0, "high": 1.25},
    "cloud_price_change_per_year": {"dist": "normal", "mean": -0.12, "sd": 0.08},
    "usd_per_kwh_multiplier": {"dist": "uniform", "low": 0.8, "high": 1.5},
    "interruption_overhead": {"dist": "uniform", "low": 0.05, "high": 0.4},
}

ZERO_SPREAD = {
    "demand_multiplier": {"dist": "triangular", "low": 1.0, "mode": 1.0, "high": 1.0},
    "cloud_price_change_per_year": {"dist": "normal", "mean": -0.05, "sd": 0.0},
    "usd_per_kwh_multiplier": {"dist": "uniform", "low": 1.0, "high": 1.0},
    "interruption_overhead": {"dist": "normal", "mean": 0.2, "sd": 0.0},
}


@pytest.fixture(scope="module")
def plan() -> Any:
    return plan_of(fleet())


def simulation(paths: int, seed: int = 7, **distributions: Any) -> dict[str, Any]:
    return {"paths": paths, "seed": seed, **(distributions or SPREAD)}


def assert_close(actual: Any, expected: Any) -> None:
    np.testing.assert_allclose(actual, expected, rtol=RELATIVE, atol=1e-6)


def summaries_equal(a: mc.Summary, b: mc.Summary) -> bool:
    return a.paths == b.paths and all(
        np.array_equal(getattr(a, name), getattr(b, name))
        for name in mc.Summary.__dataclass_fields__
        if name != "paths"
    )


# --- draws ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "value"),
    [
        ({"dist": "triangular", "low": 1.3, "mode": 1.3, "high": 1.3}, 1.3),
        ({"dist": "normal", "mean": -0.07, "sd": 0.0}, -0.07),
        ({"dist": "uniform", "low": 0.3, "high": 0.3}, 0.3),
    ],
)
def test_a_distribution_with_zero_spread_gives_its_value_on_every_path(spec, value):
    draws = mc.draw(spec, mc.block_stream(1, 0, "demand_multiplier"), 1000)
    assert draws.shape == (1000,)
    assert np.all(draws == value)


@pytest.mark.parametrize(
    ("spec", "mean", "sd"),
    [
        ({"dist": "uniform", "low": 0.8, "high": 1.5}, 1.15, 0.7 / 12**0.5),
        ({"dist": "normal", "mean": -0.12, "sd": 0.08}, -0.12, 0.08),
        (
            {"dist": "triangular", "low": 0.6, "mode": 1.0, "high": 1.25},
            (0.6 + 1.0 + 1.25) / 3,
            ((0.36 + 1.0 + 1.5625 - 0.6 - 0.75 - 1.25) / 18) ** 0.5,
        ),
    ],
)
def test_the_draws_have_the_moments_of_their_distribution(spec, mean, sd):
    # cloud_price_change_per_year is clipped at -0.99 only: these draws stay unclipped.
    sim = {"paths": 100_000, "seed": 3, "cloud_price_change_per_year": spec}
    values = np.concatenate(
        [mc.block_draws(sim, b)["cloud_price_change_per_year"] for b in range(100)]
    )
    assert values.shape == (100_000,)
    assert abs(values.mean() - mean) < 5 * sd / 100_000**0.5
    assert abs(values.std() - sd) < 0.01 * sd


def test_draws_are_clipped_as_the_contract_says():
    sim = {
        "paths": 3000,
        "seed": 11,
        "demand_multiplier": {"dist": "normal", "mean": 0.0, "sd": 1.0},
        "cloud_price_change_per_year": {"dist": "normal", "mean": -1.5, "sd": 0.5},
        "usd_per_kwh_multiplier": {"dist": "uniform", "low": -1.0, "high": 0.5},
        "interruption_overhead": {"dist": "triangular", "low": -0.5, "mode": 0.0, "high": 0.2},
        "api_price_change_per_year": {"dist": "normal", "mean": -1.5, "sd": 0.5},
    }
    values = {
        name: np.concatenate([mc.block_draws(sim, b)[name] for b in range(3)])
        for name in sim
        if name in mc.DISTRIBUTIONS
    }
    for name, low in mc.CLIP_LOW.items():
        assert values[name].min() == low, name
    assert (values["demand_multiplier"] > 0).any()


def test_each_distribution_has_its_own_stream_whatever_else_is_drawn():
    alone = {"paths": 2000, "seed": 5, "usd_per_kwh_multiplier": SPREAD["usd_per_kwh_multiplier"]}
    together = {"paths": 2000, "seed": 5, **SPREAD}
    for b in range(2):
        assert np.array_equal(
            mc.block_draws(alone, b)["usd_per_kwh_multiplier"],
            mc.block_draws(together, b)["usd_per_kwh_multiplier"],
        )


def test_the_streams_differ_by_seed_block_and_distribution():
    sim = {"paths": 2000, "seed": 5, **SPREAD}
    spec = SPREAD["usd_per_kwh_multiplier"]
    streams = [
        mc.draw(spec, mc.block_stream(seed, block, name), 10)
        for seed, block, name in [
            (5, 0, "usd_per_kwh_multiplier"),
            (6, 0, "usd_per_kwh_multiplier"),
            (5, 1, "usd_per_kwh_multiplier"),
            (5, 0, "demand_multiplier"),
        ]
    ]
    assert len({tuple(s) for s in streams}) == 4
    assert np.array_equal(mc.block_draws(sim, 1)["usd_per_kwh_multiplier"][:10], streams[2])


def test_a_block_stream_is_a_spawned_child_of_the_seed_and_block():
    child = np.random.SeedSequence([9, 4]).spawn(len(mc.DISTRIBUTIONS))[2]
    expected = np.random.Generator(np.random.PCG64(child)).random(5)
    assert np.array_equal(mc.block_stream(9, 4, mc.DISTRIBUTIONS[2]).random(5), expected)


def test_a_partial_block_holds_the_first_paths_of_a_full_one():
    full = mc.block_draws({"paths": 3000, "seed": 2, **SPREAD}, 2)
    partial = mc.block_draws({"paths": 2500, "seed": 2, **SPREAD}, 2)
    for name, values in partial.items():
        assert values.shape == (500,)
        assert np.array_equal(values, full[name][:500])


def test_block_sizes():
    assert mc.block_count(0) == 0
    assert mc.block_count(1) == 1
    assert mc.block_count(1000) == 1
    assert mc.block_count(100_001) == 101
    assert [mc.block_size(2500, b) for b in range(3)] == [1000, 1000, 500]
    with pytest.raises(ValueError):
        mc.block_size(2500, 3)


# --- the run -------------------------------------------------------------------------------------


def test_zero_spread_reproduces_the_deterministic_result():
    result = run(fleet(paths=1500, seed=1, **ZERO_SPREAD))
    for option in result["options"]:
        for field in ("p10_usd", "p50_usd", "p90_usd"):
            assert_close(option[field], option["total_usd"])
        for field in ("cumulative_p10_usd", "cumulative_p50_usd", "cumulative_p90_usd"):
            assert len(option[field]) == 37
            assert_close(option[field], option["cumulative_usd"])
    cheapest = result["cheapest"]
    assert by_name(result)[cheapest]["probability_cheapest"] == 1.0


def test_zero_spread_gives_every_path_the_deterministic_total_and_npv(plan):
    deterministic = plan_cost(plan, Futures(), 1)
    blocks = mc.blocks_compute(plan, simulation(2300, **ZERO_SPREAD), range(3))
    assert blocks.total_usd.shape == (5, 2300)
    assert_close(blocks.total_usd, np.broadcast_to(deterministic.total_usd, (5, 2300)))
    assert_close(blocks.npv_usd, np.broadcast_to(deterministic.npv_usd, (5, 2300)))
    assert blocks.feasible.all()


def test_the_result_has_every_field_per_option(plan):
    result = mc.run(plan, simulation(1200))
    assert list(result) == plan.option_names
    for fields in result.values():
        assert set(fields) == {
            "tail_npv_usd",
            "p10_usd",
            "p50_usd",
            "p90_usd",
            "cumulative_p10_usd",
            "cumulative_p50_usd",
            "cumulative_p90_usd",
            "probability_cheapest",
            "mean_npv_usd",
            "p90_npv_usd",
        }
        assert all(isinstance(v, float) for v in fields["cumulative_p50_usd"])
    json.dumps(result, allow_nan=False)


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 2**63),
    paths=st.integers(1, 2500),
    spread=st.floats(0.0, 0.5),
    sd=st.floats(0.0, 0.2),
)
def test_percentiles_are_ordered(plan, seed, paths, spread, sd):
    sim = {
        "paths": paths,
        "seed": seed,
        "demand_multiplier": {
            "dist": "triangular",
            "low": 1 - spread,
            "mode": 1.0,
            "high": 1 + spread,
        },
        "cloud_price_change_per_year": {"dist": "normal", "mean": -0.1, "sd": sd},
        "usd_per_kwh_multiplier": {"dist": "uniform", "low": 1 - spread, "high": 1 + spread},
    }
    for fields in mc.run(plan, sim).values():
        assert fields["p10_usd"] <= fields["p50_usd"] <= fields["p90_usd"]
        c10, c50, c90 = (np.array(fields[f"cumulative_p{q}_usd"]) for q in (10, 50, 90))
        assert np.all(c10 <= c50) and np.all(c50 <= c90)


def test_the_same_seed_repeats_bit_for_bit(plan):
    first = mc.run(plan, simulation(2500, seed=42))
    second = mc.run(plan, simulation(2500, seed=42))
    assert json.dumps(first) == json.dumps(second)


def test_a_different_seed_changes_the_result(plan):
    assert mc.run(plan, simulation(2500, seed=42)) != mc.run(plan, simulation(2500, seed=43))


@pytest.mark.parametrize(
    "grouping",
    [
        [[0, 1, 2, 3, 4]],
        [[0, 1], [2], [3, 4]],
        [[4], [3], [2], [1], [0]],
        [[3, 0], [4, 2, 1]],
    ],
)
def test_blocks_in_any_grouping_merge_to_exactly_one_run(plan, grouping):
    sim = simulation(4321, seed=2026)
    one = mc.blocks_compute(plan, sim, range(5))
    parts = [mc.blocks_compute(plan, sim, group) for group in grouping]
    merged = mc.blocks_merge(parts)
    assert summaries_equal(merged, mc.blocks_merge([one]))
    assert mc.summary_fields(plan, merged) == mc.run(plan, sim)
    for part in parts:
        for b, n in zip(part.block_indices, part.block_paths, strict=True):
            start = sum(part.block_paths[: part.block_indices.index(b)])
            assert np.array_equal(
                part.total_usd[:, start : start + n],
                one.total_usd[:, b * 1000 : b * 1000 + n],
            )


def test_merging_leaves_the_block_results_unchanged(plan):
    sim = simulation(3000)
    part = mc.blocks_compute(plan, sim, [0, 1, 2])
    before = copy.deepcopy(part)
    mc.blocks_merge([part])
    for name in ("total_usd", "npv_usd", "feasible", "cumulative_usd"):
        assert np.array_equal(getattr(part, name), getattr(before, name))


def test_merging_needs_every_block_once(plan):
    sim = simulation(3000)
    zero, one, two = (mc.blocks_compute(plan, sim, [b]) for b in range(3))
    with pytest.raises(ValueError):
        mc.blocks_merge([zero, two])
    with pytest.raises(ValueError):
        mc.blocks_merge([zero, one, one, two])
    with pytest.raises(ValueError):
        mc.blocks_merge([])
    with pytest.raises(ValueError):
        mc.blocks_compute(plan, sim, [1, 1])


def test_a_partial_last_block(plan):
    sim = simulation(2500, seed=9)
    results = mc.blocks_compute(plan, sim, range(3))
    assert results.block_paths == (1000, 1000, 500)
    assert results.total_usd.shape == (5, 2500)
    assert results.cumulative_usd.shape == (5, 37, 2500)
    longer = mc.blocks_compute(plan, simulation(3000, seed=9), range(3))
    assert np.array_equal(results.total_usd, longer.total_usd[:, :2500])
    assert mc.blocks_merge([results]).paths == 2500
    assert mc.run(plan, simulation(1, seed=9))["spot"]["p10_usd"] == results.total_usd[1, 0]


def test_cumulative_percentiles_use_only_the_first_10000_paths(plan):
    sim = simulation(12_000, seed=4)
    twelve = mc.run(plan, sim)
    ten = mc.run(plan, {**sim, "paths": 10_000})
    results = mc.blocks_compute(plan, sim, [9, 10, 11])
    assert results.total_usd.shape == (5, 3000)
    assert results.cumulative_usd.shape == (5, 37, 1000)
    for name in plan.option_names:
        for q in (10, 50, 90):
            assert twelve[name][f"cumulative_p{q}_usd"] == ten[name][f"cumulative_p{q}_usd"]
    assert any(twelve[name]["p50_usd"] != ten[name]["p50_usd"] for name in plan.option_names)


def test_cumulative_percentiles_follow_the_paths_months(plan):
    sim = simulation(1000, seed=8)
    results = mc.blocks_compute(plan, sim, [0])
    costs = plan_cost(plan, mc.block_futures(sim, 0), 1000)
    assert np.array_equal(
        results.cumulative_usd[:, -1, :], np.cumsum(costs.monthly_usd, axis=2)[:, :, -1]
    )
    assert_close(results.cumulative_usd[:, -1, :], results.total_usd)
    fields = mc.run(plan, sim)
    for o, name in enumerate(plan.option_names):
        expected = np.percentile(np.cumsum(costs.monthly_usd[o], axis=1), 50, axis=0)
        assert np.array_equal(fields[name]["cumulative_p50_usd"], expected)
        assert fields[name]["p90_usd"] == np.percentile(costs.total_usd[o], 90)


# --- probability_cheapest ------------------------------------------------------------------------


def test_probability_cheapest_sums_to_one_when_an_option_is_always_feasible(plan):
    fields = mc.run(plan, simulation(3000))
    shares = [f["probability_cheapest"] for f in fields.values()]
    assert sum(shares) == pytest.approx(1.0, abs=1e-12)
    assert sum(1 for s in shares if s > 0) >= 2


def test_probability_cheapest_counts_only_options_without_shortfall():
    scarce = {
        "name": "scarce",
        "type": "dedicated",
        "usd_per_server_month": 100,
    }
    costly = {"name": "costly", "type": "cloud", "usd_per_gpu_hour": 50.0}
    sim = {
        "paths": 2000,
        "seed": 1,
        "demand_multiplier": {"dist": "uniform", "low": 0.5, "high": 1.5},
    }
    alone = mc.run(plan_of(document([steady(gpus=8)], [scarce])), sim)
    share = alone["scarce"]["probability_cheapest"]
    assert 0.4 < share < 0.6  # feasible only where the demand multiplier is ≤ 1
    both = mc.run(plan_of(document([steady(gpus=8)], [scarce, costly])), sim)
    assert both["scarce"]["probability_cheapest"] == share
    assert both["costly"]["probability_cheapest"] == pytest.approx(1 - share, abs=1e-12)


def test_probability_cheapest_ties_go_to_the_first_option():
    twin = {"type": "cloud", "usd_per_gpu_hour": 3.0}
    doc = document([steady(gpus=8)], [{"name": "first", **twin}, {"name": "second", **twin}])
    fields = mc.run(plan_of(doc), {"paths": 1500, "seed": 0, **SPREAD})
    assert fields["first"]["probability_cheapest"] == 1.0
    assert fields["second"]["probability_cheapest"] == 0.0


def test_summary_of_paths_where_nothing_is_feasible():
    summary = mc.summarize(
        total_usd=np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 0.5]]),
        npv_usd=np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 0.5]]),
        feasible=np.array([[True, False, False], [True, True, False]]),
        cumulative_usd=np.zeros((2, 2, 3)),
    )
    assert summary.probability_cheapest.tolist() == [1 / 3, 1 / 3]


# --- clipping in the costs -----------------------------------------------------------------------


def test_a_demand_multiplier_clipped_at_zero_never_costs_less_than_no_demand(plan):
    normal = {"dist": "normal", "mean": 0.0, "sd": 1.0}
    none = {"dist": "triangular", "low": 0.0, "mode": 0.0, "high": 0.0}
    clipped = mc.blocks_compute(
        plan, {"paths": 2000, "seed": 1, "demand_multiplier": normal}, [0, 1]
    )
    zero = mc.blocks_compute(plan, {"paths": 2000, "seed": 1, "demand_multiplier": none}, [0, 1])
    assert np.all(clipped.total_usd >= zero.total_usd - 1e-6)
    at_zero = mc.block_draws({"paths": 2000, "seed": 1, "demand_multiplier": normal}, 0)
    first_clipped = int(np.flatnonzero(at_zero["demand_multiplier"] == 0.0)[0])
    assert_close(clipped.total_usd[:, first_clipped], zero.total_usd[:, first_clipped])


def test_cloud_price_change_is_clipped_at_minus_99_percent(plan):
    very_low = {"dist": "normal", "mean": -5.0, "sd": 0.1}
    floor = {"dist": "normal", "mean": -0.99, "sd": 0.0}
    a = mc.blocks_compute(
        plan, {"paths": 500, "seed": 1, "cloud_price_change_per_year": very_low}, [0]
    )
    b = mc.blocks_compute(
        plan, {"paths": 500, "seed": 1, "cloud_price_change_per_year": floor}, [0]
    )
    assert np.array_equal(a.total_usd, b.total_usd)
    assert np.all(np.isfinite(a.total_usd))


def test_row_percentiles_equal_numpys_bit_for_bit():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(3, 4, 1001)) * 1e6
    values[0, 1] = 7.25
    values[2, :] = -3.5
    expected = np.percentile(values, mc.PERCENTILES, axis=2)
    assert np.array_equal(mc.row_percentiles(values.copy()), expected)
    assert np.array_equal(mc.row_percentiles(values.copy(), overwrite_input=True), expected)
    assert np.array_equal(mc.row_percentiles(values[:1, :1].copy()), expected[:, :1, :1])
    varying = rng.random((2, 5, 10))
    assert np.array_equal(
        mc.row_percentiles(varying), np.percentile(varying, mc.PERCENTILES, axis=2)
    )


def bits(values: Any) -> Any:
    """The IEEE bits of float64 values: equal only when bit for bit the same (NaN payloads,
    and the sign of a zero, count)."""
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


SPECIAL_FLOATS = st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, 1e308])


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.integers(1, 4),
    n=st.one_of(st.integers(1, 60), st.integers(100, 3000)),
    seed=st.integers(0, 2**32 - 1),
    ties=st.integers(1, 8),
    specials=st.lists(SPECIAL_FLOATS, max_size=6),
    percentiles=st.lists(
        st.one_of(
            st.sampled_from([0.0, 10.0, 50.0, 90.0, 100.0, 33.3, 99.9]),
            st.floats(0.0, 100.0, allow_nan=False),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_linear_percentiles_equal_numpys_bit_for_bit(rows, n, seed, ties, specials, percentiles):
    with np.errstate(all="ignore"):  # infinities: inf - inf, as in numpy's own interpolation
        _linear_percentiles_equal_numpys(rows, n, seed, ties, specials, percentiles)


def _linear_percentiles_equal_numpys(rows, n, seed, ties, specials, percentiles):
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(size=(rows, n)) * 1e6, ties)  # few digits: many ties
    flat = values.reshape(-1)
    flat[rng.integers(0, flat.size, len(specials))] = specials
    expected = np.percentile(values, percentiles, axis=-1) + 0.0  # a zero is 0.0, never -0.0
    for result in (
        mc.linear_percentiles(values, percentiles),
        mc.linear_percentiles(values.copy(), percentiles, overwrite_input=True),
        mc.selected_linear_percentiles(values, percentiles),
        mc.selected_linear_percentiles(values.copy(), percentiles, overwrite_input=True),
    ):
        assert result.shape == expected.shape
        assert np.array_equal(bits(result), bits(expected)), (result, expected)
    for o in range(rows):  # one percentile at a time, as numpy's scalar form takes it
        for i, q in enumerate(percentiles):
            assert bits(mc.linear_percentiles(values[o], (q,))[0]) == bits(
                np.percentile(values[o], q) + 0.0
            )
            assert bits(expected[i, o]) == bits(np.percentile(values[o], q) + 0.0)


def test_a_zero_percentile_is_plus_zero_however_the_zeros_were_ordered():
    """Where the values hold both zeros, numpy's partition leaves either at an index; the
    percentiles are the same bits however the rows were ordered (workers on other CPUs)."""
    rng = np.random.default_rng(3)
    values = rng.choice([0.0, -0.0, 1.0, -1.0], size=(4, 5000))
    results = set()
    for _ in range(5):
        shuffled = rng.permuted(values, axis=-1)
        result = mc.linear_percentiles(shuffled, (*mc.PERCENTILES, 37.5))
        assert np.array_equal(result, np.percentile(values, (*mc.PERCENTILES, 37.5), axis=-1))
        assert not np.signbit(result[result == 0]).any()
        results.add(bits(result).tobytes())
        selected = mc.selected_linear_percentiles(shuffled, (*mc.PERCENTILES, 37.5))
        results.add(bits(selected).tobytes())
        rows = mc.row_percentiles(shuffled[:, None, :])
        assert not np.signbit(rows[rows == 0]).any()
    assert len(results) == 1


def test_linear_percentiles_leave_the_values_alone_unless_allowed():
    values = np.array([[3.0, 1.0, 2.0]])
    mc.linear_percentiles(values, mc.PERCENTILES)
    assert values.tolist() == [[3.0, 1.0, 2.0]]
    mc.linear_percentiles(values, mc.PERCENTILES, overwrite_input=True)
    assert values.tolist() == [[1.0, 2.0, 3.0]]
    with pytest.raises(ValueError, match="no values"):
        mc.linear_percentiles(np.zeros((2, 0)), mc.PERCENTILES)


def test_block_results_travel_as_bytes_exactly(plan):
    sim = simulation(2500, seed=12)
    parts = [mc.blocks_compute(plan, sim, group) for group in ([2], [0, 1])]
    travelled = [
        mc.block_results_from_payload(bytes(bytearray(mc.block_results_to_payload(part))))
        for part in parts
    ]
    for before, after in zip(parts, travelled, strict=True):
        assert after.block_indices == before.block_indices
        assert after.block_paths == before.block_paths
        for name in ("total_usd", "npv_usd", "feasible", "cumulative_usd"):
            assert getattr(after, name).dtype == getattr(before, name).dtype
            assert np.array_equal(getattr(after, name), getattr(before, name))
    assert summaries_equal(mc.blocks_merge(travelled), mc.blocks_merge(parts))
    assert mc.summary_fields(plan, mc.blocks_merge(travelled)) == mc.run(plan, sim)


def test_a_simulation_without_distributions_repeats_the_documents_values(plan):
    deterministic = plan_cost(plan, Futures(), 1)
    fields = mc.run(plan, {"paths": 1200, "seed": None})
    for o, name in enumerate(plan.option_names):
        for q in (10, 50, 90):
            assert_close(fields[name][f"p{q}_usd"], deterministic.total_usd[o, 0])
            assert_close(
                fields[name][f"cumulative_p{q}_usd"], np.cumsum(deterministic.monthly_usd[o, 0])
            )


def test_mean_npv_is_one_running_sum_in_path_order_and_p90_npv_numpys_percentile(plan):
    sim = simulation(2500)
    blocks = mc.blocks_compute(plan, sim, range(3))
    fields = mc.run(plan, sim)
    for o, name in enumerate(plan.option_names):
        running = 0.0
        for value in blocks.npv_usd[o].tolist():  # left to right, in path order
            running += value
        assert fields[name]["mean_npv_usd"] == running / 2500
        assert fields[name]["mean_npv_usd"] == pytest.approx(
            float(np.mean(blocks.npv_usd[o])), rel=1e-12
        )
        assert fields[name]["p90_npv_usd"] == float(np.percentile(blocks.npv_usd[o], 90))
    varying = [f for f in fields.values() if f["p90_npv_usd"] != f["mean_npv_usd"]]
    assert varying, "the spread must reach the NPVs"


def test_the_uncertain_quantities_are_listed_once_and_futures_has_a_field_for_each():
    from dataclasses import fields

    from costapp.tco import schema

    assert tuple(f.name for f in fields(Futures)) == schema.SIMULATED_QUANTITIES
    assert mc.DISTRIBUTIONS is schema.SIMULATED_QUANTITIES
    assert tuple(mc.CLIP_LOW) == schema.SIMULATED_QUANTITIES
