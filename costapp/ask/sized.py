"""The plan an answer recommends: among the options that do all the work at their own sizes and
each sizing's best size (a mix's best combination of layers), the lowest by the sizing's objective
(the mean NPV, or the worst tenth's when the lead must be sure). A best size is priced again on
every path, as a document of its own (the baseline, the option and a mix's parts): the answer's
figures are that document's, which ``manage.py simulate`` gives again."""

from __future__ import annotations

import copy
from typing import Any

from costapp.ask.answer import with_parts
from costapp.tco import simulate

OBJECTIVE_FIELDS = {"tail_npv": "tail_npv_usd", "mean_npv": "mean_npv_usd", "npv": "npv_usd"}


def recommendation(result: dict[str, Any], objective: str) -> dict[str, Any] | None:
    """``{"option", "size", "field"}`` of the lowest plan by ``objective`` (``size`` None: the
    option at its own size); None when nothing does all the work."""
    key = OBJECTIVE_FIELDS.get(objective, "mean_npv_usd")
    found: list[tuple[float, int, dict[str, Any]]] = []
    for option in result["options"]:
        value = option.get(key, option["npv_usd"])
        if option["feasible"] and value is not None:
            found.append((value, 0, {"option": option["name"], "size": None, "field": None}))
    for sweep in result.get("sizing") or []:
        if sweep.get("best") is not None and sweep.get("best_objective_usd") is not None:
            found.append((sweep["best_objective_usd"], 1,
                          {"option": sweep["option"], "size": sweep["best"],
                           "field": sweep["field"]}))  # fmt: skip
    if not found:
        return None
    return min(found, key=lambda f: (f[0], f[1]))[2]


def resized(inputs: dict[str, Any], name: str, field: str, size: Any) -> dict[str, Any]:
    """The run's inputs (no sizing) with option ``name`` at ``size`` (a mix: its layers')."""
    document = copy.deepcopy({k: v for k, v in inputs.items() if k != "sizing"})
    for option in document["options"]:
        if option["name"] != name:
            continue
        if option["type"] == "mix":
            option["layers"] = [
                {"option": layer["option"] if isinstance(layer, dict) else layer, "size": s}
                for layer, s in zip(option["layers"], size, strict=True)
            ]
        else:
            option[field] = size
    return document


def sized_plan(result: dict[str, Any], objective: str) -> dict[str, Any] | None:
    """The recommended plan at its best size, priced on every path: ``option``, ``size``,
    ``field``, ``document`` (the baseline, the option and its parts), ``inputs`` (every option,
    this one resized), ``priced`` (the document's result) and ``figures`` (its entry there); None
    when the
    recommendation is an option at its own size (the run's figures are then the answer's)."""
    pick = recommendation(result, objective)
    if pick is None or pick["size"] is None:
        return None
    name = pick["option"]
    inputs = resized(result["inputs"], name, pick["field"], pick["size"])
    baseline = result["baseline"]
    kept = with_parts(inputs, (name,)) | {baseline}
    document = {
        **inputs,
        "name": f"{inputs['name']}: {name} at its best size",
        "options": [o for o in inputs["options"] if o["name"] in kept],
        "baseline": baseline,
    }
    priced = simulate(document, result["gpus"])
    figures = next(o for o in priced["options"] if o["name"] == name)
    return {**pick, "document": document, "inputs": inputs, "figures": figures, "priced": priced}
