"""``bench/loop.py``, the contract's formulas one path and one month at a time, agrees with the
engine on every shipped scenario and on a document with resident replicas, goodput and an api
option: on the document's own values and on Monte Carlo paths."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from bench.loop import loop_costs
from costapp.tco import montecarlo as mc
from costapp.tco.core import Futures, plan_cost

from .documents_v12 import simulated
from .helpers import gpu_figures, normalized, plan_of, scenario, scenario_names
from .test_v11_figures import flat

RELATIVE = 1e-9
ROOT = Path(__file__).resolve().parents[2]


def assert_close(a: float, b: float, where: str) -> None:
    assert math.isclose(a, b, rel_tol=RELATIVE, abs_tol=1e-6), f"{where}: {a} != {b}"


def flat_1_2(doc: dict) -> dict:
    """The document as the loop (format 1.2) reads it the same as the engine (format 1.3): no
    prompt read on the GPUs, every load flat and no unit above a fleet (:func:`flat` of the
    version 1.1 test)."""
    flattened = flat(doc)
    for workload, given in zip(flattened["workloads"], doc["workloads"], strict=True):
        if workload.get("type") == "inference" and "input_tokens_per_output_token" in given:
            workload["input_tokens_per_output_token"] = 0
    return flattened


def check(doc: dict, paths: int, *, flatten: bool = True) -> None:
    doc = flat_1_2(doc) if flatten else doc
    inputs, _ = normalized(doc)
    plan = plan_of(doc)
    draws: list[dict[str, float]] = [{}]
    futures = Futures()
    simulation = inputs.get("simulation")
    if simulation and paths:
        values = mc.block_draws({**simulation, "paths": paths}, 0)
        draws = [{name: float(v[p]) for name, v in values.items()} for p in range(paths)]
        futures = Futures(**{name: values.get(name) for name in mc.DISTRIBUTIONS})
    costs = plan_cost(plan, futures, len(draws))
    totals, npvs, shortfalls, months = loop_costs(inputs, gpu_figures(), draws)
    for o, option in enumerate(plan.options):
        for p in range(len(draws)):
            where = f"{option.name} path {p}"
            assert_close(totals[o][p], float(costs.total_usd[o, p]), f"{where} total")
            assert_close(npvs[o][p], float(costs.npv_usd[o, p]), f"{where} npv")
            assert_close(shortfalls[o][p], float(costs.shortfall_gpu_hours[o, p]), f"{where} short")
            np.testing.assert_allclose(
                months[o][p], costs.monthly_usd[o, p], rtol=RELATIVE, atol=1e-6
            )


@pytest.mark.parametrize("name", scenario_names())
def test_the_loop_gives_the_engines_costs_on_every_shipped_scenario(name):
    check(scenario(name), paths=0)


def test_the_loop_gives_the_engines_costs_on_paths_with_resident_goodput_and_api():
    check(simulated(paths=40), paths=40)


def test_the_loop_gives_the_engines_costs_on_the_paths_of_the_uncertain_fleet():
    check(scenario("uncertain-h100-fleet"), paths=25)


def test_the_loop_gives_the_engines_costs_of_a_mix_on_flat_loads_on_paths():
    document = json.loads((ROOT / "bench" / "uncertain-h100-fleet-mix.json").read_text())
    assert document["options"][-1]["type"] == "mix"
    check(document, paths=25, flatten=False)
