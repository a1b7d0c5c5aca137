"""The shipped scenarios give every figure of their independently computed expected files.

Every per-option figure to 1e-6 relative (monthly and cumulative costs month by month, each
category of the breakdown), names, booleans, nulls and sizes (a sweep's candidates and best)
exactly; ``sources`` is empty (the engine alone, without a catalog). The expected files are never regenerated
from this engine.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from costapp.tco.engine import simulate

from .helpers import expected, gpu_figures, scenario, scenario_names

RELATIVE = 1e-6


def assert_figure(actual: Any, wanted: Any, where: str, relative: float = RELATIVE) -> None:
    """Numbers to ``relative`` (0 exactly), everything else equal and of the same kind."""
    if isinstance(wanted, bool) or wanted is None or isinstance(wanted, str):
        assert actual == wanted and type(actual) is type(wanted), (
            f"{where}: {actual!r} != {wanted!r}"
        )
    else:
        assert isinstance(actual, int | float) and not isinstance(actual, bool), where
        assert math.isclose(actual, wanted, rel_tol=relative, abs_tol=0.0), (
            f"{where}: {actual!r} != {wanted!r}"
        )


def figures(name: str) -> list[tuple[str, Any, Any, float]]:
    """Every (where, actual, expected, tolerance) of one scenario."""
    result = simulate(scenario(name), gpu_figures())
    want = expected(name)
    rows: list[tuple[str, Any, Any, float]] = [
        (f"{name}.{key}", result[key], want[key], RELATIVE) for key in ("cheapest", "baseline")
    ]
    assert [o["name"] for o in result["options"]] == [o["name"] for o in want["options"]]
    for got, wanted in zip(result["options"], want["options"], strict=True):
        for key, value in wanted.items():
            where = f"{name}.{wanted['name']}.{key}"
            if key == "breakdown_usd":
                assert list(got[key]) == list(value), where
                rows.extend((f"{where}.{c}", got[key][c], v, RELATIVE) for c, v in value.items())
            elif key == "layers":  # version 1.3: a mix's layers, field by field
                assert len(got[key]) == len(value), where
                for j, (a, w) in enumerate(zip(got[key], value, strict=True)):
                    assert list(a) == list(w), f"{where}[{j}]"
                    rows.extend((f"{where}[{j}].{k}", a[k], v, RELATIVE) for k, v in w.items())
            elif isinstance(value, list):
                assert len(got[key]) == len(value), where
                rows.extend(
                    (f"{where}[{m}]", a, w, RELATIVE)
                    for m, (a, w) in enumerate(zip(got[key], value, strict=True))
                )
            else:
                rows.append((where, got[key], value, RELATIVE))
    assert result["sources"] == want["sources"] == [], f"{name}.sources"
    assert ("sizing" in result) == ("sizing" in want), f"{name}.sizing"
    assert len(result.get("sizing", [])) == len(want.get("sizing", [])), f"{name}.sizing"
    for i, (got, wanted) in enumerate(
        zip(result.get("sizing", []), want.get("sizing", []), strict=True)
    ):
        assert list(got) == list(wanted), f"{name}.sizing[{i}]"
        for key, value in wanted.items():
            where = f"{name}.sizing[{i}].{key}"
            if key in ("candidates", "best"):
                assert got[key] == value, f"{where}: {got[key]!r} != {value!r}"
            elif isinstance(value, list):
                assert len(got[key]) == len(value), where
                rows.extend(
                    (f"{where}[{j}]", a, w, RELATIVE)
                    for j, (a, w) in enumerate(zip(got[key], value, strict=True))
                )
            else:
                rows.append((where, got[key], value, RELATIVE))
    return rows


@pytest.mark.parametrize("name", scenario_names())
def test_every_expected_figure_of_the_scenario_is_reproduced(name: str) -> None:
    rows = figures(name)
    assert len(rows) > 20
    failures = []
    for where, actual, wanted, tolerance in rows:
        try:
            assert_figure(actual, wanted, where, tolerance)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)


def test_all_nine_scenarios_are_shipped_with_expected_figures() -> None:
    assert scenario_names() == [
        "commitments-and-capacity",
        "cross-gpu-70b",
        "egress-heavy-inference",
        "h100-fleet-buy-vs-rent",
        "llm-train-and-serve",
        "own-commit-rent-mix",
        "serve-70b-host-or-api",
        "size-the-fleet",
        "uncertain-h100-fleet",
    ]
