"""What a result's sizing sweeps (scenario-format.md, "Sizing (version 1.1)") mean, read from the
result document alone: the scenario's own size, which candidates qualify for ``best`` and why the
others do not, and one sentence per sweep in plain words.

Pure functions of the result document (its ``inputs`` are the normalised scenario), shared by the
sizing charts (``costapp/charts/sizing.py``), the copy at the best size and the run page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hardware.display.figures import plain_number

UNITS = {"committed_gpus": ("committed GPU", "committed GPUs"), "servers": ("server", "servers")}
"""The swept field's unit, singular and plural."""

OBJECTIVE_LABELS = {
    "npv": "NPV",
    "mean_npv": "mean NPV",
    "p90_npv": "P90 NPV",
    "tail_npv": "worst-tail mean NPV",
}


def unit(field: str, count: int | None = None) -> str:
    """``committed GPUs`` or ``servers`` (singular for a count of 1)."""
    singular, plural = UNITS[field]
    return singular if count == 1 else plural


def paths(result: Mapping[str, Any]) -> int:
    """The simulation's paths (0 without one)."""
    simulation = result.get("simulation") or {}
    return int(simulation.get("paths") or 0)


def objective_label(result: Mapping[str, Any], objective: str) -> str:
    """The objective in words, e.g. ``mean NPV over 10,000 paths``."""
    label = OBJECTIVE_LABELS[objective]
    if objective == "npv":
        return "NPV on the scenario's own values" if paths(result) else label
    if objective == "tail_npv":  # format 1.3: the mean NPV of the worst paths
        fraction = float((result.get("simulation") or {}).get("tail_fraction") or 0.1)
        return (
            f"mean NPV of the worst {plain_number(100.0 * fraction)} % of {paths(result):,} paths"
        )
    return f"{label} over {paths(result):,} paths"


def _option(result: Mapping[str, Any], name: str) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The option's normalised inputs and its figures in the result."""
    inputs = next(o for o in result["inputs"]["options"] if o["name"] == name)
    figures = next(o for o in result["options"] if o["name"] == name)
    return inputs, figures


def own_size(result: Mapping[str, Any], index: int) -> int:
    """The size the scenario itself gives the swept option [GPUs or servers]: the field as
    written, or (left to its default) the size the result priced: the committed GPUs, or the
    provisioned GPUs over the GPUs per server."""
    sweep = result["sizing"][index]
    inputs, figures = _option(result, sweep["option"])
    value = inputs.get(sweep["field"])
    if value is not None:
        return int(value)
    if sweep["field"] == "committed_gpus":
        return int(figures["provisioned_gpus"])
    return int(figures["provisioned_gpus"]) // int(inputs["gpus_per_server"])


def own_size_unswept(result: Mapping[str, Any], index: int) -> str:
    """In words, where the scenario's own size lies when the sweep does not price it: below or
    above the range swept, or between two sizes the step skips ("" when it is one of the sizes
    swept). One clause, no full stop."""
    sweep = result["sizing"][index]
    field, sizes = sweep["field"], [int(size) for size in sweep["candidates"]]
    own = own_size(result, index)
    if own in sizes:
        return ""
    start = f"The scenario's own size, {_size(field, own)}, is not among the sizes swept"
    swept = f"{sizes[0]:,} to {_size(field, sizes[-1])}"
    if own < sizes[0]:
        return f"{start}: it lies below the range swept, {swept}"
    if own > sizes[-1]:
        return f"{start}: it lies above the range swept, {swept}"
    below = max(size for size in sizes if size < own)
    above = min(size for size in sizes if size > own)
    return f"{start}: it lies between {below:,} and {above:,}, which the step skips"


def max_shortfall_probability(result: Mapping[str, Any], index: int) -> float:
    """The sweep's cap on the share of paths that leave work undone [fraction]."""
    return float(result["inputs"]["sizing"][index]["max_shortfall_probability"])


@dataclass(frozen=True)
class Candidate:
    """One size of a sweep: its objective [USD], whether it qualifies for ``best``, and why not."""

    size: int
    objective_usd: float
    qualifies: bool
    reason: str  # empty when it qualifies


def candidates(result: Mapping[str, Any], index: int) -> list[Candidate]:
    """The sweep's candidates in order. A candidate qualifies when it is ``feasible`` and, with a
    simulation, leaves work undone on no more than ``max_shortfall_probability`` of the paths."""
    sweep = result["sizing"][index]
    cap = max_shortfall_probability(result, index)
    objective = sweep[f"{sweep['objective']}_usd"]
    shortfall = sweep.get("shortfall_probability")
    out: list[Candidate] = []
    for i, size in enumerate(sweep["candidates"]):
        reason = ""
        if not sweep["feasible"][i]:
            reason = "leaves work undone on the scenario's own values"
        elif shortfall is not None and shortfall[i] > cap:
            reason = (
                f"leaves work undone on {100.0 * shortfall[i]:.1f} % of paths "
                f"(at most {plain_number(100.0 * cap)} % allowed)"
            )
        out.append(Candidate(int(size), float(objective[i]), not reason, reason))
    return out


def _usd(value: float) -> str:
    return f"{'−' if value < 0 else ''}${abs(value):,.0f}"


def _size(field: str, count: int) -> str:
    return f"{count:,} {unit(field, count)}"


def _why_best(result: Mapping[str, Any], index: int, best: int) -> str:
    """The first sentence for a best size inside the range swept."""
    sweep = result["sizing"][index]
    inputs, _figures = _option(result, sweep["option"])
    if sweep["field"] == "committed_gpus":
        if best == 0:
            return (
                "Commit to no GPUs: even the steadiest hours of work cost less on-demand than "
                "committed"
            )
        return (
            f"Commit to {best:,} GPU{'' if best == 1 else 's'}: beyond that, a committed GPU is "
            "idle often enough that paying on-demand for the peaks is cheaper"
        )
    verb = "Rent" if inputs["type"] == "dedicated" else "Buy"
    if inputs.get("burst_usd_per_gpu_hour") is None:
        return (
            f"{verb} {_size('servers', best)}: the fewest that do the work (fewer leave work "
            "undone, and there is no burst capacity); more would only cost more"
        )
    if best == 0:
        return (
            f"{verb} no servers: bursting all the work at "
            f"${float(inputs['burst_usd_per_gpu_hour']):,.2f} per GPU-hour costs less than "
            "owning any capacity"
        )
    return (
        f"{verb} {_size('servers', best)}: beyond that, a server is idle often enough that "
        f"bursting the peaks at ${float(inputs['burst_usd_per_gpu_hour']):,.2f} per GPU-hour is "
        "cheaper"
    )


def _no_best(result: Mapping[str, Any], index: int, found: list[Candidate]) -> str:
    sweep = result["sizing"][index]
    field = sweep["field"]
    low, high = found[0].size, found[-1].size
    if not any(sweep["feasible"]):
        return (
            f"No size from {low:,} to {_size(field, high)} qualifies: every one leaves work "
            "undone on the scenario's own values. Widen max, or give the option burst capacity."
        )
    cap = max_shortfall_probability(result, index)
    shortfall = sweep["shortfall_probability"]
    return (
        f"No size from {low:,} to {_size(field, high)} qualifies: every one that does the work "
        f"on the scenario's own values still leaves work undone on more than {plain_number(100.0 * cap)} % "
        f"of the simulated paths (the largest, {high:,}, on {100.0 * shortfall[-1]:.1f} %). "
        "Widen max, or allow more shortfall (max_shortfall_probability)."
    )


def _against_own(result: Mapping[str, Any], index: int, found: list[Candidate]) -> str:
    sweep = result["sizing"][index]
    field, best = sweep["field"], int(sweep["best"])
    own = own_size(result, index)
    label = OBJECTIVE_LABELS[sweep["objective"]]
    if own == best:
        return "That is the scenario's own size."
    mine = next((c for c in found if c.size == own), None)
    if mine is None:
        return f"{own_size_unswept(result, index)}, so what the best size saves against it is not known."
    if not mine.qualifies:
        return f"The scenario's own size, {_size(field, own)}, does not qualify: it {mine.reason}."
    saving = mine.objective_usd - float(sweep["best_objective_usd"])
    share = f" ({100.0 * saving / abs(mine.objective_usd):.1f} %)" if mine.objective_usd else ""
    return (
        f"Against the scenario's own {_size(field, own)} ({label} "
        f"{_usd(mine.objective_usd)}), that saves {_usd(saving)}{share} in {label}."
    )


def sentence(result: Mapping[str, Any], index: int) -> str:
    """What sweep ``index`` of the result means, in plain words, built from its numbers: the best
    size and why, an honest word when it lies at an edge of the range swept or when no size
    qualifies, and what it saves against the scenario's own size on the objective [USD, %]."""
    sweep = result["sizing"][index]
    field = sweep["field"]
    found = candidates(result, index)
    if sweep["best"] is None:
        return _no_best(result, index, found)
    best = int(sweep["best"])
    label = objective_label(result, sweep["objective"])
    value = _usd(float(sweep["best_objective_usd"]))
    if len(found) > 1 and best == found[-1].size:
        first = (
            f"The best of the sizes swept is the largest, {_size(field, best)} ({label}: "
            f"{value}), so the best size may lie above the range swept: widen max."
        )
    elif len(found) > 1 and best == found[0].size and best > 0:
        first = (
            f"The best of the sizes swept is the smallest, {_size(field, best)} ({label}: "
            f"{value}), so the best size may lie below the range swept: lower min."
        )
    else:
        first = f"{_why_best(result, index, best)} ({label}: {value})."
    return f"{first} {_against_own(result, index, found)}"
