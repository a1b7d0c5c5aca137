"""Two result documents side by side (docs: scenario-format.md, "The result document").

Pure functions, no Django and no database: two results in, what differs out. Workloads and
options are paired by position when both runs have as many of them, of the same types, else by
name, and the comparison says which (``costapp.reports.pairing``); an option only one run has is
listed as such. Key figures come with their difference B − A in their own unit and, for amounts,
relative to A [%]. The inputs (the normalised scenario, catalog prices resolved to numbers) that
differ are one row in words each (``costapp.reports.input_changes``: "workload 1, utilization:
90 % → 30 %").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from costapp.reports.input_changes import ABSENT, InputChange, inputs_changes
from costapp.reports.input_words import field_words
from costapp.reports.pairing import Pair, Pairing, results_pairing
from hardware.display.figures import quantity_text

__all__ = [
    "ABSENT",
    "Comparison",
    "FigureDelta",
    "InputChange",
    "OptionComparison",
    "Pairing",
    "SourceChange",
    "difference",
    "dotted_leaves",
    "figures_compare",
    "inputs_flatten",
    "results_compare",
    "sources_diff",
    "value_text",
]


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
    FigureSpec("mean_npv_usd", "NPV, mean of the paths", "USD"),
    FigureSpec("p90_npv_usd", "NPV, P90 of the paths", "USD"),
    FigureSpec("tail_npv_usd", "NPV, mean of the worst paths", "USD"),
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
    """An option both runs have, paired (``label``: "option 2 “Rent”"; ``name``: its name in A,
    ``name_b`` in B)."""

    name: str
    type_a: str
    type_b: str
    feasible_a: bool
    feasible_b: bool
    figures: list[FigureDelta]
    label: str = ""
    name_b: str = ""


@dataclass(frozen=True)
class Comparison:
    """Two results compared: how their workloads and options were paired, the options in both
    (in A's order), those only in A or only in B (in words), the summary facts of each run, and
    the inputs that differ."""

    options: list[OptionComparison]
    only_in_a: list[str]
    only_in_b: list[str]
    facts: list[tuple[str, Any, Any]]
    input_changes: list[InputChange] = field(default_factory=list)
    source_changes: list[SourceChange] = field(default_factory=list)
    pairing: Pairing | None = None


@dataclass(frozen=True)
class SourceChange:
    """A figure of ``sources`` (format 1.2) whose row differs between the runs (its value,
    source, stated day or flags), ``None`` on the side without such a row; ``path`` is run A's
    (else B's), ``words`` where it is ("option 1 “Lambda on-demand”, USD per GPU hour")."""

    path: str
    a: Mapping[str, Any] | None
    b: Mapping[str, Any] | None
    words: str = ""


_OPTION_PATH = re.compile(r"options\[(?P<index>\d+)\](?:\.(?P<field>.+))?$")


def _source_key(path: str, side: str, pairing: Pairing | None) -> tuple[str, str]:
    """A ``sources`` path as the same key on both sides (an option's place by its pair) and in
    words."""
    found = _OPTION_PATH.match(path)
    if pairing is None or found is None:
        return path, path
    index = int(found["index"])
    pair = next((p for p in pairing.options if (p.a if side == "A" else p.b) == index), None)
    if pair is None:
        return f"{side}:{path}", path
    field_name = found["field"] or ""
    words = f"{pair.label}, {field_words(field_name)}" if field_name else pair.label
    return f"{pair.a}|{pair.b}|{field_name}", words


def sources_diff(
    a: Mapping[str, Any], b: Mapping[str, Any], pairing: Pairing | None = None
) -> list[SourceChange]:
    """The ``sources`` rows of two results that differ, figure by figure (options by their
    pairs), in A's order then B's."""
    rows: dict[str, dict[str, Any]] = {}
    for side, result in (("A", a), ("B", b)):
        for row in result.get("sources") or []:
            key, words = _source_key(row["path"], side, pairing)
            entry = rows.setdefault(key, {"path": row["path"], "words": words})
            entry[side] = row

    def told(row: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """What a row says of its figure (its path aside: a paired option may move)."""
        return None if row is None else {k: v for k, v in row.items() if k != "path"}

    return [
        SourceChange(entry["path"], entry.get("A"), entry.get("B"), entry["words"])
        for entry in rows.values()
        if told(entry.get("A")) != told(entry.get("B"))
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
    return found + layers_compare(option_a.get("layers"), option_b.get("layers"))


LAYER_FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec("provisioned_gpus", "GPUs held", "GPUs", digits=0),
    FigureSpec("served_gpu_hours", "GPU-hours served", "GPU-h", digits=0),
    FigureSpec("total_usd", "part of the total", "USD"),
)
"""The figures compared per layer of a mix (format 1.3, the result's ``layers``)."""


def _layer_label(layer: Mapping[str, Any], index: int) -> str:
    name = str(layer["name"]).split(" (", 1)[0].strip() or str(layer["name"])
    if layer.get("role") == "rest":
        return f"Rest “{name}”"
    return f"Layer {index + 1} “{name}”"


def layers_compare(layers_a: Any, layers_b: Any) -> list[FigureDelta]:
    """Each layer of a mix in both results (format 1.3), with its differences: the layers paired
    by position when both mixes have as many, else by name; a layer only one mix has shows its
    figures on its side and a dash on the other."""
    if not isinstance(layers_a, list) and not isinstance(layers_b, list):
        return []
    a_rows, b_rows = list(layers_a or []), list(layers_b or [])
    pairs: list[tuple[dict[str, Any] | None, dict[str, Any] | None, int]] = []
    if len(a_rows) == len(b_rows):
        pairs = [(x, y, j) for j, (x, y) in enumerate(zip(a_rows, b_rows, strict=True))]
    else:
        by_name = {(row["name"], row.get("role")): row for row in b_rows}
        seen = set()
        for j, row in enumerate(a_rows):
            key = (row["name"], row.get("role"))
            pairs.append((row, by_name.get(key), j))
            seen.add(key)
        for j, row in enumerate(b_rows):
            if (row["name"], row.get("role")) not in seen:
                pairs.append((None, row, j))
    found: list[FigureDelta] = []
    for x, y, j in pairs:
        label = _layer_label(x if x is not None else y or {}, j)
        for spec in LAYER_FIGURES:
            a = None if x is None else _number(x.get(spec.key))
            b = None if y is None else _number(y.get(spec.key))
            delta, delta_pct = difference(a, b, relative=spec.relative)
            found.append(
                FigureDelta(
                    f"layers[{j}].{spec.key}",
                    f"{label}: {spec.label}",
                    spec.unit,
                    spec.digits,
                    a,
                    b,
                    delta,
                    delta_pct,
                )
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


def _simulation_paths(result: Mapping[str, Any]) -> int:
    simulation = result.get("simulation") or {}
    return int(simulation.get("paths") or 0)


def _figured(pair: Pair, a: Mapping[str, Any], b: Mapping[str, Any]) -> OptionComparison:
    option_a, option_b = a["options"][pair.a], b["options"][pair.b]
    return OptionComparison(
        name=option_a["name"],
        type_a=option_a["type"],
        type_b=option_b["type"],
        feasible_a=bool(option_a["feasible"]),
        feasible_b=bool(option_b["feasible"]),
        figures=figures_compare(option_a, option_b),
        label=pair.label,
        name_b=option_b["name"],
    )


def results_compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> Comparison:
    """Two result documents compared: their workloads and options paired, the key figures of
    the options both have, the facts of each run (horizon, baseline, cheapest, paths, engine
    version) and the inputs that differ, in words."""
    pairing = results_pairing(a, b)
    options = [_figured(p, a, b) for p in pairing.options if p.a is not None and p.b is not None]
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
        only_in_a=[p.label for p in pairing.options if p.only_in == "A"],
        only_in_b=[p.label for p in pairing.options if p.only_in == "B"],
        facts=facts,
        input_changes=inputs_changes(a["inputs"], b["inputs"], pairing),
        source_changes=sources_diff(a, b, pairing),
        pairing=pairing,
    )


def value_text(value: Any) -> str:
    """An input value as the comparison page writes it: "—" for null, "(absent)" for a path the
    run does not have, numbers as written (6 significant figures, from a million up with the
    letter of their size), other values as JSON."""
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
        return quantity_text(value, 6)  # 2e9 as "2 B", never in exponent form
    return json.dumps(value)
