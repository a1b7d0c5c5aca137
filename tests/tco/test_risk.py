"""The risk figures of a run (``costapp.tco.risk``) are the same bit for bit however its blocks
are grouped into tasks, and are only computed when asked for."""

import numpy as np
import pytest

from costapp.tco import montecarlo as mc
from costapp.tco.core import plan_build
from costapp.tco.risk import budget_exceedance, spread_upfront
from tests.costapp.runs.test_risk import DOCUMENT
from tests.tco.helpers import gpu_figures, normalized


@pytest.fixture(scope="module")
def plan():
    document, _warnings = normalized(
        {**DOCUMENT, "simulation": {**DOCUMENT["simulation"], "paths": 2500}}
    )
    return plan_build(document, gpu_figures())


@pytest.mark.parametrize("grouping", [[[0, 1, 2]], [[2], [0, 1]], [[1], [2], [0]]])
def test_any_grouping_gives_the_same_figures(plan, grouping):
    sim = plan.inputs["simulation"]
    whole = mc.blocks_risk(plan, [mc.blocks_compute(plan, sim, range(3), risk=True)])
    parts = mc.blocks_risk(plan, [mc.blocks_compute(plan, sim, g, risk=True) for g in grouping])
    assert whole is not None and parts is not None
    assert parts.figures == whole.figures
    assert np.array_equal(parts.sorted_total_usd, whole.sorted_total_usd)
    assert whole.figures["paths"] == 2500


def test_the_figures_travel_in_the_payload_and_not_without_risk(plan):
    sim = plan.inputs["simulation"]
    with_risk = mc.blocks_compute(plan, sim, [0], risk=True)
    back = mc.block_results_from_payload(mc.block_results_to_payload(with_risk))
    assert np.array_equal(back.leader_counts, with_risk.leader_counts)
    assert np.array_equal(back.unused_usd, with_risk.unused_usd)
    without = mc.blocks_compute(plan, sim, [0])
    assert without.leader_counts is None
    assert mc.blocks_risk(plan, [without]) is None
    assert np.array_equal(without.total_usd, with_risk.total_usd)  # the costs are the same


def test_upfront_spread_over_each_terms_months_within_the_horizon():
    spread = spread_upfront(1200.0, 12, 18)
    assert spread[0] == 0
    assert spread[1:13].tolist() == [100.0] * 12
    assert spread[13:].tolist() == [200.0] * 6  # the second term cut short by the horizon
    assert spread.sum() == pytest.approx(2400.0)


def test_budget_exceedance_counts_totals_strictly_above():
    rows = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0]])
    assert budget_exceedance(rows, 2.0) == [0.5, 1.0]
    assert budget_exceedance(rows, 5.0) == [0.0, 0.0]
