"""What a run's page shows of a succeeded run's result, for the run page and a read-only link's
page alike: the charts (built when the run finished, kept in the cache), key figures, the risk
panel, sizing sweeps with their words, sources, every input and default used, and the
formulas."""

from typing import Any

from django.http import HttpRequest
from django.utils import timezone

from costapp.charts.risk import leader_chart
from costapp.models import SimulationRun
from costapp.reports import joint_sizing, sizing_summary
from costapp.reports.categories import CATEGORY_FORMULAS
from costapp.reports.comparison import dotted_leaves, value_text
from costapp.reports.risk import risk_panel
from costapp.reports.sources import source_rows
from costapp.reports.warning_words import warnings_grouped, warnings_split
from costapp.runs import chart_cache
from hardware.display.figures import plain_number
from hardware.selectors import gpu_names, provider_names


def result_context(
    *, run: SimulationRun, result: dict[str, Any], request: HttpRequest | None = None
) -> dict[str, Any]:
    """What a run page shows of a succeeded run's ``result`` (the run's own, or a link's copy):
    the charts, key figures, the risk panel (with the budget ``request`` asks about, if any),
    sizing sweeps, sources, assumptions and formulas."""
    budget = "" if request is None else str(request.GET.get("budget", ""))[:64]
    risk = risk_panel(run=run, result=result, budget_text=budget)
    if risk is not None:
        risk["url"] = "" if request is None else request.path
        if risk["figures"] is not None:
            risk["chart"] = leader_chart(risk["figures"])
    providers = provider_names()
    groups = warnings_grouped(
        result["warnings"], [o["name"] for o in result["options"]], gpu_names(), providers
    )
    warnings_open, warnings_folded = warnings_split(groups)
    return {
        "warnings_open": warnings_open,
        "warnings_folded": warnings_folded,
        "warnings_count": len(result["warnings"]),
        "risk": risk,
        "result": result,
        "charts": chart_cache.run_charts(run=run),
        "infeasible": [o for o in result["options"] if not o["feasible"]],
        "assumptions": assumptions(result["inputs"]),
        "formulas": CATEGORY_FORMULAS,
        "sizing": run_sizing(run=run),
        "sized_best": joint_sizing.best_beside_own(result),
        "sources": source_rows(
            result=result,
            engine_version=run.engine_version,
            today=timezone.localdate(run.created),
            providers=providers,
        ),
        "key_columns": {
            "tokens": any(
                o.get("all_in_usd_per_million_tokens") is not None for o in result["options"]
            ),
            "goodput": any(o.get("goodput") is not None for o in result["options"]),
        },
    }


def _rows(mapping: Any) -> list[tuple[str, str]]:
    """Key/value rows of a mapping, nested mappings flattened to dotted names in key order, lists
    of scalars and of small mappings as JSON (values written as the comparison page writes them)."""
    return [
        (path, value_text(value))
        for path, value in dotted_leaves(mapping, sort_keys=True, into_lists=False)
    ]


def assumptions(inputs: Any) -> dict[str, Any]:
    """Every input and default the result used (its ``inputs``: the normalised document), in
    sections: general settings, each workload, each option."""
    general = {k: v for k, v in inputs.items() if k not in ("workloads", "options")}
    return {
        "general": _rows(general),
        "workloads": [
            (w.get("name", f"workload {i + 1}"), _rows(w))
            for i, w in enumerate(inputs.get("workloads", []))
        ],
        "options": [
            (o.get("name", f"option {i + 1}"), _rows(o))
            for i, o in enumerate(inputs.get("options", []))
        ],
    }


# --- sizing sweeps (scenario format 1.1) --------------------------------------------------------


def run_sizing(*, run: SimulationRun) -> list[dict[str, Any]]:
    """Per sizing sweep of a succeeded run: its chart, what it means in words, its best and the
    scenario's own size, and whether a copy at the best size can be made (a best that is not
    the scenario's own)."""
    assert run.result is not None
    result = run.result
    sweeps = result.get("sizing") or []
    out: list[dict[str, Any]] = []
    for index, (sweep, chart) in enumerate(
        zip(sweeps, chart_cache.run_sizing_charts(run=run), strict=True)
    ):
        if joint_sizing.is_joint(sweep):  # format 1.3: a mix sized jointly
            out.append(joint_sizing_item(result, index, chart))
            continue
        own = sizing_summary.own_size(result, index)
        best = sweep["best"]
        step = int(result["inputs"]["sizing"][index]["step"])
        sizes = sweep["candidates"]
        swept = f"{sizing_summary.unit(sweep['field'])} {sizes[0]:,}–{sizes[-1]:,}"
        swept += f" by {step:,}" if step != 1 else ""
        swept += f", {len(sizes):,} sizes; objective: "
        swept += sizing_summary.objective_label(result, sweep["objective"])
        if sizing_summary.paths(result):
            cap = sizing_summary.max_shortfall_probability(result, index)
            swept += (
                f"; work may be left undone on at most {plain_number(100.0 * cap)} % of the paths"
                if cap > 0
                else "; every path must get all its work done"
            )
        out.append(
            {
                "number": index + 1,
                "sweep": sweep,
                "chart": chart,
                "sentence": sizing_summary.sentence(result, index),
                "own": own,
                "swept": swept,
                "unit": sizing_summary.unit(sweep["field"], best),
                "may_copy": best is not None and best != own,
            }
        )
    return out


def joint_sizing_item(result: dict[str, Any], index: int, chart: Any) -> dict[str, Any]:
    """A mix's joint sizing on the run page: its heat map (two layers), the best combinations
    ranked with the scenario's own, one sentence, and whether a copy at the best can be made."""
    sweep = result["sizing"][index]
    layers = joint_sizing.layers(result, index)
    label = sizing_summary.objective_label(result, sweep["objective"])
    simulated = bool(sizing_summary.paths(result))
    rows = []
    for combination in joint_sizing.ranked(result, index):
        i = combination.position
        rows.append(
            {
                "rank": combination.rank,
                "sizes": combination.sizes,
                "cells": [
                    (layer.heading, size)
                    for layer, size in zip(layers, combination.sizes, strict=True)
                ],
                "objective_usd": combination.objective_usd,
                "npv_usd": combination.npv_usd,
                "tail_npv_usd": sweep["tail_npv_usd"][i] if "tail_npv_usd" in sweep else None,
                "shortfall_probability": combination.shortfall_probability,
                "own": combination.own,
                "best": list(combination.sizes) == list(sweep["best"] or []),
            }
        )
    count = len(sweep["candidates"])
    best = sweep["best"]
    return {
        "number": index + 1,
        "sweep": sweep,
        "joint": True,
        "chart": chart,
        "layers": layers,
        "rows": rows,
        "objective": label,
        "objective_is_npv": sweep["objective"] == "npv",
        "tail_words": "Mean NPV of the worst "
        f"{plain_number(100.0 * float((result.get('simulation') or {}).get('tail_fraction') or 0.1))} % "
        "of paths",
        "simulated": simulated,
        "sentence": joint_sizing.sentence(result, index),
        "swept": f"{count:,} combinations of the sizes of {len(layers)} layers; objective: {label}",
        "best_words": "" if best is None else joint_sizing.described(result, index, best),
        "may_copy": best is not None and list(best) != joint_sizing.own_sizes(result, index),
    }
