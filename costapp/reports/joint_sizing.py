"""What a mix's joint sizing (scenario-format.md, "Sizing", format 1.3) means, read from the result
document alone: each layer's name and unit, the scenario's own sizes, the combinations ranked by
the objective, and one sentence in plain words.

Pure functions of the result document (its ``inputs`` are the normalised scenario), shared by the
run page, the joint sizing's chart and the copy at the best combination.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hardware.display.figures import usd_total

from . import sizing_summary

RANKED_ROWS = 10
"""How many combinations the run page ranks (the scenario's own is added when not among them)."""


def is_joint(sweep: Mapping[str, Any]) -> bool:
    """True for a mix's joint sizing (its field is ``layers``)."""
    return sweep.get("field") == "layers"


@dataclass(frozen=True)
class Layer:
    """One layer of the swept mix: its option's name and the unit of its size."""

    name: str
    singular: str  # "server", "committed GPU"
    plural: str

    @property
    def short_name(self) -> str:
        """The option's name up to its first parenthesis, where long names keep their sources."""
        head = self.name.split(" (", 1)[0].strip()
        return head or self.name

    @property
    def heading(self) -> str:
        """``Owned servers``: the unit, capitalised as a column heading."""
        return self.plural[:1].upper() + self.plural[1:]

    def amount(self, size: int) -> str:
        """``2 servers``, ``1 committed GPU``."""
        return f"{size:,} {self.singular if size == 1 else self.plural}"


def layers(result: Mapping[str, Any], index: int) -> list[Layer]:
    """The swept mix's layers, in order."""
    sweep = result["sizing"][index]
    options = {o["name"]: o for o in result["inputs"]["options"]}
    found = []
    for entry in options[sweep["option"]]["layers"]:
        member = options[entry["option"]]
        if member["type"] == "cloud":
            found.append(Layer(member["name"], "committed GPU", "committed GPUs"))
        elif member["type"] == "dedicated":
            found.append(Layer(member["name"], "leased server", "leased servers"))
        else:
            found.append(Layer(member["name"], "owned server", "owned servers"))
    return found


def own_sizes(result: Mapping[str, Any], index: int) -> list[int]:
    """The sizes the scenario itself gives the mix's layers (``inputs`` writes every one)."""
    sweep = result["sizing"][index]
    mix = next(o for o in result["inputs"]["options"] if o["name"] == sweep["option"])
    return [int(entry["size"]) for entry in mix["layers"]]


@dataclass(frozen=True)
class Combination:
    """One candidate of the joint sizing, with its figures."""

    position: int  # in the sweep's candidates
    sizes: tuple[int, ...]
    objective_usd: float
    npv_usd: float
    qualifies: bool
    shortfall_probability: float | None
    rank: int | None  # 1 = best; None when it does not qualify
    own: bool


def combinations(result: Mapping[str, Any], index: int) -> list[Combination]:
    """Every candidate, qualifying ones first by objective (the sweep's tie rule: the smaller
    sizes first), then the others in the sweep's order."""
    sweep = result["sizing"][index]
    cap = sizing_summary.max_shortfall_probability(result, index)
    objective = sweep[f"{sweep['objective']}_usd"]
    probabilities = sweep.get("shortfall_probability")
    own = tuple(own_sizes(result, index))
    rows = []
    for i, sizes in enumerate(sweep["candidates"]):
        probability = None if probabilities is None else float(probabilities[i])
        qualifies = bool(sweep["feasible"][i]) and (probability is None or probability <= cap)
        rows.append((i, tuple(int(s) for s in sizes), float(objective[i]), qualifies, probability))
    ordered = sorted((r for r in rows if r[3]), key=lambda r: (r[2], r[1]))
    ranks = {r[0]: n for n, r in enumerate(ordered, start=1)}
    if sweep["best"] is not None:  # the sweep's own best leads (ties within the tolerance)
        best = [r for r in ordered if list(r[1]) == list(sweep["best"])]
        ordered = best + [r for r in ordered if list(r[1]) != list(sweep["best"])]
        ranks = {r[0]: n for n, r in enumerate(ordered, start=1)}
    rest = [r for r in rows if not r[3]]
    return [
        Combination(
            position=i,
            sizes=sizes,
            objective_usd=value,
            npv_usd=float(sweep["npv_usd"][i]),
            qualifies=ok,
            shortfall_probability=probability,
            rank=ranks.get(i),
            own=sizes == own,
        )
        for i, sizes, value, ok, probability in [*ordered, *rest]
    ]


def ranked(result: Mapping[str, Any], index: int, limit: int = RANKED_ROWS) -> list[Combination]:
    """The best ``limit`` qualifying combinations, then the scenario's own when it is not
    among them."""
    found = combinations(result, index)
    top = [c for c in found if c.qualifies][:limit]
    if not any(c.own for c in top):
        top += [c for c in found if c.own]
    return top


def described(result: Mapping[str, Any], index: int, sizes: Sequence[int]) -> str:
    """A combination in words: ``1 owned server, 0 leased servers, 8 committed GPUs``."""
    return ", ".join(
        layer.amount(int(size)) for layer, size in zip(layers(result, index), sizes, strict=True)
    )


def sentence(result: Mapping[str, Any], index: int) -> str:
    """The joint sizing in one sentence: the best combination, its objective, and how the
    scenario's own sizes compare."""
    sweep = result["sizing"][index]
    label = sizing_summary.objective_label(result, sweep["objective"])
    rest = next(o for o in result["inputs"]["options"] if o["name"] == sweep["option"]).get("rest")
    tail = ", the rest rented by the hour" if rest else ""
    if sweep["best"] is None:
        return (
            f"No combination of the {len(sweep['candidates']):,} priced does all the work "
            "within the sweep's limits: raise a layer's maximum or add a rest to rent."
        )
    best = f"{described(result, index, sweep['best'])}{tail}"
    text = f"Best: {best}, at {usd_total(sweep['best_objective_usd'])} ({label})."
    own = [c for c in combinations(result, index) if c.own]
    if own and list(own[0].sizes) != list(sweep["best"]):
        gap = own[0].objective_usd - float(sweep["best_objective_usd"])
        where = f"ranks {own[0].rank:,}" if own[0].rank else "does not qualify"
        text += f" The scenario's own sizes ({described(result, index, own[0].sizes)}) {where}" + (
            f", {usd_total(gap)} more." if own[0].rank else "."
        )
    elif own:
        text += " The scenario's own sizes are the best."
    return text


def best_beside_own(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per sweep whose best differs from the scenario's own size (one sweep per option, the
    first), the option priced at both, as the key figures show it beside the size written:
    ``{"option", "own", "best", "own_npv_usd", "best_npv_usd", "objective", "number"}`` (sizes in
    words; NPVs on the scenario's own values) [USD]."""
    rows: list[dict[str, Any]] = []
    named: set[str] = set()
    for index, sweep in enumerate(result.get("sizing") or []):
        if sweep["best"] is None or sweep["option"] in named:
            continue
        named.add(sweep["option"])
        option = next(o for o in result["options"] if o["name"] == sweep["option"])
        best_at = sweep["candidates"].index(sweep["best"])
        if is_joint(sweep):
            own_sizes_ = own_sizes(result, index)
            if own_sizes_ == list(sweep["best"]):
                continue
            own_words = described(result, index, own_sizes_)
            best_words = described(result, index, sweep["best"])
        else:
            own = sizing_summary.own_size(result, index)
            if own == sweep["best"]:
                continue
            field = sweep["field"]
            own_words = f"{own:,} {sizing_summary.unit(field, own)}"
            best_words = f"{sweep['best']:,} {sizing_summary.unit(field, sweep['best'])}"
        rows.append(
            {
                "number": index + 1,
                "option": sweep["option"],
                "own": own_words,
                "best": best_words,
                "own_npv_usd": float(option["npv_usd"]),
                "best_npv_usd": float(sweep["npv_usd"][best_at]),
                "objective": sizing_summary.objective_label(result, sweep["objective"]),
            }
        )
    return rows
