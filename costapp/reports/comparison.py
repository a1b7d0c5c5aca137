"""Two result documents side by side (docs: scenario-format.md, "The result document").

Pure functions, no Django and no database: two results in, what differs out. Options are matched
by name; an option only one run has is listed as such. Key figures come with their difference
B − A in their own unit and, for amounts, relative to A [%]. The inputs (the normalised scenario,
catalog prices resolved to numbers) are flattened to dotted paths (workloads and options by name:
``options[GPU cloud on-demand].usd_per_gpu_hour``) and the paths whose values differ are listed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

ABSENT: Any = object()
"""A path one of the two inputs does not have."""


@dataclass(frozen=True)
class FigureSpec:
    """One key figure of an option: the result field, its label and unit, and whether its
    relative difference means something (amounts do; months and shares do not)."""

    key: str
    label: str
    unit: str
    relative: bool = True
    digits: int = 2


KEY_FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec("total_usd", "Total", "USD"),
    FigureSpec("npv_usd", "NPV", "USD"),
    FigureSpec("p50_usd", "Total, P50 of the paths", "USD"),
    FigureSpec("p90_usd", "Total, P90 of the paths", "USD"),
    FigureSpec("usd_per_busy_gpu_hour", "Cost per busy GPU-hour", "USD/GPU-h"),
    FigureSpec(
        "all_in_usd_per_million_tokens", "All-in cost per million tokens", "USD per million tokens"
    ),
    FigureSpec("goodput", "Goodput", "share of training work", relative=False, digits=3),
    FigureSpec("provisioned_gpus", "GPUs provisioned", "GPUs", digits=1),
    FigureSpec("break_even_month", "Break-even month", "months", relative=False, digits=1),
    FigureSpec("savings_vs_baseline_pct", "Savings vs baseline", "%", relative=False, digits=1),
)
"""The figures compared per option, in reading order; a figure neither run has is left out
(P50 and P90 exist only with a simulation)."""


@dataclass(frozen=True)
class FigureDelta:
    """One figure of one option in both runs; ``delta`` is B − A, ``delta_pct`` that difference
    relative to |A| [%] (None when A is 0 or missing, or for figures without a relative
    difference)."""

    key: str
    label: str
    unit: str
    digits: int
    a: float | None
    b: float | None
    delta: float | None
    delta_pct: float | None


@dataclass(frozen=True)
class OptionComparison:
    """An option both runs have, matched by name."""

    name: str
    type_a: str
    type_b: str
    feasible_a: bool
    feasible_b: bool
    figures: list[FigureDelta]


@dataclass(frozen=True)
class InputChange:
    """An input path whose value differs (``ABSENT`` where one run has no such path); for two
    numbers, the difference B − A and relative to |A| [%]."""

    path: str
    a: Any
    b: Any
    delta: float | None = None
    delta_pct: float | None = None

    @property
    def only_in(self) -> str:
        """ "A" or "B" when only one run has the path, else ""."""
        if self.a is ABSENT:
            return "B"
        if self.b is ABSENT:
            return "A"
        return ""


@dataclass(frozen=True)
class Comparison:
    """Two results compared: options in both (in A's order), the names only in A or only in B,
    the summary facts of each run, and the inputs that differ."""

    options: list[OptionComparison]
    only_in_a: list[str]
    only_in_b: list[str]
    facts: list[tuple[str, Any, Any]]
    input_changes: list[InputChange] = field(default_factory=list)
    source_changes: list[SourceChange] = field(default_factory=list)


@dataclass(frozen=True)
class SourceChange:
    """A path of ``sources`` (format 1.2) whose row differs between the runs (its value, source,
    stated day or flags), ``None`` on the side without such a row."""

    path: str
    a: Mapping[str, Any] | None
    b: Mapping[str, Any] | None


def sources_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[SourceChange]:
    """The ``sources`` rows of two results that differ, by path, in A's order then B's."""
    rows_a = {row["path"]: row for row in a.get("sources") or []}
    rows_b = {row["path"]: row for row in b.get("sources") or []}
    paths = list(rows_a) + [path for path in rows_b if path not in rows_a]
    return [
        SourceChange(path, rows_a.get(path), rows_b.get(path))
        for path in paths
        if rows_a.get(path) != rows_b.get(path)
    ]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def difference(a: Any, b: Any, *, relative: bool = True) -> tuple[float | None, float | None]:
    """B − A and, when ``relative`` and A is a non-zero number, (B − A) / |A| × 100; None where
    either side is not a number."""
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return None, None
    delta = y - x
    if not relative or x == 0.0:
        return delta, None
    return delta, 100.0 * delta / abs(x)


def figures_compare(option_a: Mapping[str, Any], option_b: Mapping[str, Any]) -> list[FigureDelta]:
    """The key figures of one option in two results, with their differences."""
    found: list[FigureDelta] = []
    for spec in KEY_FIGURES:
        if spec.key not in option_a and spec.key not in option_b:
            continue
        a, b = _number(option_a.get(spec.key)), _number(option_b.get(spec.key))
        delta, delta_pct = difference(a, b, relative=spec.relative)
        found.append(
            FigureDelta(spec.key, spec.label, spec.unit, spec.digits, a, b, delta, delta_pct)
        )
    return found


def _named(items: Any) -> bool:
    return (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items)
        and len({i["name"] for i in items}) == len(items)
    )


def dotted_leaves(
    value: Any, prefix: str = "", *, sort_keys: bool = False, into_lists: bool = True
) -> Iterator[tuple[str, Any]]:
    """Every leaf of a JSON value with its dotted path, in order: mappings by key
    (``simulation.seed``; in key order with ``sort_keys``), and with ``into_lists`` lists of
    uniquely named mappings by name (``options[Dedicated 8-GPU servers].servers``), other lists by
    index (``egress_tiers[0].usd_per_gb``). An empty mapping or list is a leaf, and so is every
    list without ``into_lists``."""
    if isinstance(value, dict) and value:
        for key in sorted(value) if sort_keys else value:
            yield from dotted_leaves(
                value[key],
                f"{prefix}.{key}" if prefix else str(key),
                sort_keys=sort_keys,
                into_lists=into_lists,
            )
    elif into_lists and isinstance(value, list) and value:
        named = _named(value)
        for index, item in enumerate(value):
            label = item["name"] if named else str(index)
            yield from dotted_leaves(
                item, f"{prefix}[{label}]", sort_keys=sort_keys, into_lists=into_lists
            )
    else:
        yield prefix, value


def inputs_flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of a JSON value by its dotted path (:func:`dotted_leaves`, lists included)."""
    return dict(dotted_leaves(value, prefix))


def _same(a: Any, b: Any) -> bool:
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return x == y
    return bool(type(a) is type(b) and a == b)


def inputs_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[InputChange]:
    """The paths of two inputs whose values differ, in A's order then B's new paths: each with
    both values (``ABSENT`` where a run has no such path) and, for numbers, the difference."""
    flat_a, flat_b = inputs_flatten(dict(a)), inputs_flatten(dict(b))
    changes: list[InputChange] = []
    for path in [*flat_a, *(p for p in flat_b if p not in flat_a)]:
        x, y = flat_a.get(path, ABSENT), flat_b.get(path, ABSENT)
        if x is not ABSENT and y is not ABSENT and _same(x, y):
            continue
        delta, delta_pct = difference(
            None if x is ABSENT else x, None if y is ABSENT else y, relative=True
        )
        changes.append(InputChange(path, x, y, delta, delta_pct))
    return changes


def _simulation_paths(result: Mapping[str, Any]) -> int:
    simulation = result.get("simulation") or {}
    return int(simulation.get("paths") or 0)


def results_compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> Comparison:
    """Two result documents compared: the options of both matched by name, the facts of each
    run (horizon, baseline, cheapest, paths, engine version) and the inputs that differ."""
    by_name_b = {o["name"]: o for o in b["options"]}
    names_a = [o["name"] for o in a["options"]]
    options = [
        OptionComparison(
            name=option["name"],
            type_a=option["type"],
            type_b=by_name_b[option["name"]]["type"],
            feasible_a=bool(option["feasible"]),
            feasible_b=bool(by_name_b[option["name"]]["feasible"]),
            figures=figures_compare(option, by_name_b[option["name"]]),
        )
        for option in a["options"]
        if option["name"] in by_name_b
    ]
    facts: list[tuple[str, Any, Any]] = [
        ("Scenario", a.get("name"), b.get("name")),
        ("Horizon [months]", a["inputs"]["horizon_months"], b["inputs"]["horizon_months"]),
        ("Baseline", a["baseline"], b["baseline"]),
        ("Cheapest (lowest NPV, feasible)", a["cheapest"], b["cheapest"]),
        ("Monte Carlo paths", _simulation_paths(a), _simulation_paths(b)),
        ("Engine version", a.get("engine_version"), b.get("engine_version")),
    ]
    return Comparison(
        options=options,
        only_in_a=[n for n in names_a if n not in by_name_b],
        only_in_b=[n for n in by_name_b if n not in set(names_a)],
        facts=facts,
        input_changes=inputs_diff(a["inputs"], b["inputs"]),
        source_changes=sources_diff(a, b),
    )


def value_text(value: Any) -> str:
    """An input value as the comparison page writes it: "—" for null, "(absent)" for a path the
    run does not have, numbers as written, other values as JSON."""
    if value is ABSENT:
        return "(absent)"
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.6g}"
    return json.dumps(value)
