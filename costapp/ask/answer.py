"""A question's answer, from its run's result: one sentence that says what to buy and how much,
the figures that drive it, why each infeasible option fails and what would fix it, and "what
would change the answer" (found by repeated engine runs on the run's own inputs)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from costapp.tco import simulate
from hardware.display.figures import percent_text, usd_rate, usd_total

CHANGE_STEPS = 16
SENSITIVITY = 0.25
PRICE_FIELDS = (
    "usd_per_gpu_hour",
    "on_demand_usd_per_gpu_hour",
    "usd_per_server_month",
    "capex_usd_per_server",
    "usd_per_million_tokens",
    "usd_per_million_input_tokens",
)
"""The fields scaled when an option's price moves."""


def money(value: float | None) -> str:
    """A total as the answer says it: whole dollars with thousands separators."""
    return usd_total(value)


def _size_words(
    option: dict[str, Any], role: dict[str, Any], inputs: dict[str, Any], gpu_names: dict[str, str]
) -> str:
    family = role["family"]
    gpus = option["provisioned_gpus"]
    unit = "GPU" if gpus == 1 else "GPUs"
    option = {**option, "gpu": gpu_names.get(option.get("gpu") or "", option.get("gpu"))}
    own: dict[str, Any] = next((o for o in inputs["options"] if o["name"] == option["name"]), {})
    if family.startswith("committed"):
        years = role.get("years", 1)
        return f"Commit to {gpus:,} {option['gpu']} {unit} for {years} year{'s' * (years > 1)}"
    if family in ("on_demand_elastic", "on_demand_rest"):
        return f"Rent {option['gpu']} on demand as the work needs it, up to {gpus:,} {unit} at the peak"
    if family == "on_demand_fixed":
        return f"Rent a fleet of {gpus:,} {option['gpu']} {unit} on demand, kept running"
    if family == "dedicated":
        servers = own.get("servers") or 0
        return (f"Lease {servers:,} dedicated server{'s' * (servers != 1)} of "
                f"{role.get('gpus_per_server', 8)} {option['gpu']} from {role.get('vendor')}")  # fmt: skip
    if family == "on_prem":
        servers = own.get("servers") or 0
        bridge = f", {role['bridge']}" if role.get("bridge") else ""
        return (f"Buy {servers:,} server{'s' * (servers != 1)} of {role.get('gpus_per_server', 8)} "
                f"{option['gpu']}{bridge}")  # fmt: skip
    if family == "owned":
        return f"Keep the {role.get('count', gpus):,} {option['gpu']} already owned, paying their running cost alone"
    if family == "mix":
        return f"Hold {option['name']}"
    return f"Buy the tokens by the million from {role['words'].split(' from ')[-1]}"


def against_renting(saving_pct: float) -> str:
    """``, 45.1 % below renting everything on demand`` (``above`` when it costs more)."""
    side = "below" if saving_pct >= 0 else "above"
    return f", {percent_text(abs(saving_pct), share=False)} {side} renting everything on demand"


def _committed_tail(option: dict[str, Any], role: dict[str, Any], inputs: dict[str, Any]) -> str:
    """What a commitment does not hold of the training, in words: a run needing more GPUs at once
    than it commits to does not run on them at all (format 1.3: the whole run is overflow, rented
    on demand), so the sentence never lets it pass for a fleet that does the work; otherwise the
    training beyond the committed GPUs is rented by the hour."""
    if not role.get("family", "").startswith("committed"):
        return ""
    training = [w for w in inputs["workloads"] if w["type"] == "training"]
    gpus = option.get("provisioned_gpus") or 0
    larger = [w for w in training if (w.get("cluster_gpus") or 0) > gpus]
    if larger:
        w = larger[0]
        return (f" (fewer than the {w['cluster_gpus']:,} GPUs a run of “{w['name']}” needs at "
                "once, so no run fits on them: every run is rented on demand beyond them, as "
                "overflow)")  # fmt: skip
    return " and rent the training beyond them by the hour" if training else ""


def infeasible_reason(option: dict[str, Any], role: dict[str, Any], inputs: dict[str, Any]) -> str:
    """Why an infeasible option does not do the work, and what would fix it, in words."""
    training = [w for w in inputs["workloads"] if w["type"] == "training"]
    if role["family"] == "api":
        if training:
            return ("hosted tokens cannot run the fine-tune: the catalog holds no training-token "
                    "price for this model, so the fine-tune needs GPUs of its own")  # fmt: skip
        return "the hosted model cannot do this work"
    lead = role.get("lead_time_months") or 0
    if role["family"] == "on_prem" and lead and not role.get("bridge"):
        early = [w for w in inputs["workloads"] if w.get("start_month", 1) <= lead]
        if early:
            w = early[0]
            return (f"the servers arrive in month {lead + 1} and “{w['name']}” runs from month "
                    f"{w.get('start_month', 1)}: ask again with “Rent while bought servers "
                    f"arrive” on, or start that work in month {lead + 1} or later")  # fmt: skip
    hours = option["shortfall_gpu_hours"]
    gpus = option.get("provisioned_gpus") or 0
    clusters = [w for w in training if (w.get("cluster_gpus") or 0) > gpus]
    if clusters:
        w = clusters[0]
        return (f"it holds {gpus:,} GPUs, fewer than the {w['cluster_gpus']:,} a run of "
                f"“{w['name']}” needs at once, so {hours:,.0f} GPU-hours of work are left "
                "undone: a larger size (see the sizing) or renting the rest would fix it")  # fmt: skip
    serving = [w for w in inputs["workloads"] if w["type"] == "inference"]
    if serving:
        return (f"its {gpus:,} GPUs cannot serve the busiest hours: {hours:,.0f} GPU-hours of "
                "work are left undone; a larger size (see the sizing) or renting the rest on "
                "demand would fix it")  # fmt: skip
    return (f"{hours:,.0f} GPU-hours of work are not done: its {gpus:,} GPUs are too few for the "
            "peak; a larger size (see the sizing) or renting the rest would fix it")  # fmt: skip


def answer_of(
    result: dict[str, Any], notes: dict[str, Any], sized: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The sentence, the figures that drive it, the infeasible options and the left-out ones;
    with ``sized`` (:func:`costapp.ask.sized.sized_plan`), of that plan at its best size."""
    roles = notes.get("roles", {})
    inputs = result["inputs"]
    options = {o["name"]: o for o in result["options"]}
    if sized is not None:
        return _sized_answer(result, notes, sized)
    horizon = inputs["horizon_months"]
    infeasible = [
        {"name": o["name"], "why": infeasible_reason(o, roles.get(o["name"], {"family": ""}), inputs)}
        for o in result["options"] if not o["feasible"]
    ]  # fmt: skip
    cheapest = result.get("cheapest")
    if cheapest is None:
        return {"sentence": "No option the catalog can price does all the work: see why below.",
                "figures": [], "infeasible": infeasible, "recommended": None, "runner_up": None,
                "rests_on": []}  # fmt: skip
    best = options[cheapest]
    role = roles.get(cheapest, {"family": "", "words": cheapest})
    words = _size_words(best, role, inputs, notes.get("gpu_names", {}))
    if role.get("where"):
        words += f", from {role['where']}"
    words += _committed_tail(best, role, inputs)
    sentence = f"{words}: {money(best['total_usd'])} over the {horizon} months{_spread(best)}"
    baseline = result["baseline"]
    if cheapest != baseline and best.get("savings_vs_baseline_pct") is not None:
        sentence += against_renting(best["savings_vs_baseline_pct"])
        if best.get("break_even_month"):
            sentence += f"; it pays back in month {best['break_even_month']:.0f}"
    sentence += "."
    better = sized_better(result, best)
    if better is not None:
        sweep, index = better
        size = sweep["candidates"][index]
        unit = {"committed_gpus": "GPUs committed", "servers": "servers"}.get(sweep["field"], "")
        at = f"{size:,} {unit}" if unit else "layer sizes " + " / ".join(f"{s:,}" for s in size)
        sentence += (
            f" Sized better, {sweep['option']} at {at} costs "
            f"{money(sweep['total_usd'][index])} ({money(sweep['npv_usd'][index])} in NPV against "
            f"{money(best['npv_usd'])}): see its sizing sweep."
        )
    if cheapest == baseline:
        priced = sum(1 for o in result["options"] if o["feasible"])
        sentence += (f" Renting on demand is the cheapest of the {priced} options the catalog can "
                     "price that do all the work.")  # fmt: skip
    runner_up, figures = key_figures(result, best)
    return {"sentence": sentence, "figures": figures, "infeasible": infeasible,
            "recommended": cheapest, "runner_up": runner_up,
            "rests_on": rests_on(inputs, cheapest, roles)}  # fmt: skip


def key_figures(
    result: dict[str, Any], best: dict[str, Any]
) -> tuple[str | None, list[tuple[str, str]]]:
    """The recommended option's key figures (total, NPV, all-in cost per million tokens where it
    serves) and the runner-up: the feasible option of lowest NPV after it, with the gap."""
    ranked = sorted(
        (o for o in result["options"] if o["feasible"] and o["name"] != best["name"]),
        key=lambda o: o["npv_usd"],
    )
    runner_up = ranked[0] if ranked else None
    figures = [("Total over the horizon", money(best["total_usd"])),
               ("Net present value", money(best["npv_usd"]))]  # fmt: skip
    if best.get("all_in_usd_per_million_tokens") is not None:
        figures.append(("All-in cost per million tokens served",
                        usd_rate(best["all_in_usd_per_million_tokens"])))  # fmt: skip
    if runner_up is None:
        return None, figures
    gap = runner_up["npv_usd"] - best["npv_usd"]
    figures.append((f"Ahead of the runner-up, {runner_up['name']}", f"{money(gap)} in NPV"))
    return runner_up["name"], figures


def _spread(best: dict[str, Any]) -> str:
    parts = []
    if best.get("p10_usd") is not None:
        parts.append(f"P10–P90 {money(best['p10_usd'])}–{money(best['p90_usd'])}")
    if best.get("tail_npv_usd") is not None:
        parts.append(f"in the worst tenth of futures {money(best['tail_npv_usd'])} in NPV")
    return f" ({'; '.join(parts)})" if parts else ""


def rests_on(inputs: dict[str, Any], name: str, roles: dict[str, Any]) -> list[dict[str, str]]:
    """The catalog prices a plan rests on: per option it is made of, its price in words (seller,
    region, age, concerns) and whether no flag-free price with known egress was to be had."""
    found = []
    for part in [o["name"] for o in inputs["options"] if o["name"] in with_parts(inputs, (name,))]:
        role = roles.get(part) or {}
        if role.get("price"):
            found.append({"option": part, "price": role["price"],
                          "relaxed": "no offer of it is flag-free with known egress, so the "
                          "cheapest of all was taken" if role.get("relaxed") else ""})  # fmt: skip
    return found


def _layer_words(
    mix: dict[str, Any], roles: dict[str, Any], gpu_names: dict[str, str]
) -> list[str]:
    words = []
    for layer in mix["layers"]:
        size = layer.get("size") or 0
        role = roles.get(layer["option"]) or {}
        gpu = gpu_names.get(role.get("gpu") or "", role.get("gpu") or "")
        if not size:
            continue
        if role.get("family") == "owned":
            words.append(f"keep the {role.get('count', size):,} {gpu} already owned")
        elif role.get("family") == "on_prem":
            words.append(f"buy {size:,} server{'s' * (size != 1)} of "
                         f"{role.get('gpus_per_server', 8)} {gpu}")  # fmt: skip
        elif role.get("family", "").startswith("committed"):
            years = role.get("years", 3)
            words.append(f"commit to {size:,} {gpu} for {years} year{'s' * (years > 1)} at "
                         f"{role.get('seller', '')}".rstrip())  # fmt: skip
        else:
            words.append(f"hold {size:,} of {layer['option']}")
    rest = roles.get(mix.get("rest") or "") or {}
    if mix.get("rest"):
        words.append(f"rent the rest on demand at {rest.get('seller', mix['rest'])}")
    return words


def _sized_answer(
    result: dict[str, Any], notes: dict[str, Any], sized: dict[str, Any]
) -> dict[str, Any]:
    roles = notes.get("roles", {})
    inputs = sized["inputs"]
    name = sized["option"]
    best = sized["figures"]
    own = next(o for o in inputs["options"] if o["name"] == name)
    gpu_names = notes.get("gpu_names", {})
    if own["type"] == "mix":
        parts = _layer_words(own, roles, gpu_names)
        words = ", ".join(parts) if parts else f"hold {name}"
        words = words[0].upper() + words[1:]
    else:
        role = roles.get(name, {"family": "", "words": name})
        words = _size_words(best, role, inputs, gpu_names)
        if role.get("where"):
            words += f", from {role['where']}"
        words += _committed_tail(best, role, inputs)
    horizon = inputs["horizon_months"]
    sentence = f"{words}: {money(best['total_usd'])} over the {horizon} months{_spread(best)}"
    if best.get("savings_vs_baseline_pct") is not None and name != result["baseline"]:
        sentence += against_renting(best["savings_vs_baseline_pct"])
    sentence += "."
    runner_up, figures = key_figures(result, best)
    infeasible = [
        {"name": o["name"], "why": infeasible_reason(o, roles.get(o["name"], {"family": ""}),
                                                     result["inputs"])}
        for o in result["options"] if not o["feasible"]
    ]  # fmt: skip
    return {"sentence": sentence, "figures": figures, "infeasible": infeasible,
            "recommended": name, "runner_up": runner_up, "sized": True,
            "rests_on": rests_on(inputs, name, roles)}  # fmt: skip


def sized_better(result: dict[str, Any], best: dict[str, Any]) -> tuple[dict, int] | None:
    """The sizing sweep candidate that does all the work at a lower NPV than the recommended
    option as planned (the lowest such), with its index; None when the plan's option stands."""
    found: tuple[dict, int] | None = None
    lowest = best["npv_usd"] - 1e-9 * max(1.0, abs(best["npv_usd"]))
    for sweep in result.get("sizing") or []:
        if sweep.get("best") is None or sweep["best"] not in sweep["candidates"]:
            continue
        index = sweep["candidates"].index(sweep["best"])
        if sweep["feasible"][index] and sweep["npv_usd"][index] < lowest:
            found, lowest = (sweep, index), sweep["npv_usd"][index]
    return found


def _npvs(
    document: dict[str, Any], gpus: dict[str, Any], names: tuple[str, str]
) -> tuple[float, float]:
    result = simulate(document, gpus)
    by_name = {o["name"]: o for o in result["options"]}
    return by_name[names[0]]["npv_usd"], by_name[names[1]]["npv_usd"]


def _plain(inputs: dict[str, Any]) -> dict[str, Any]:
    """The run's inputs without simulation and sweeps, sizes as the run fixed them."""
    document = copy.deepcopy({k: v for k, v in inputs.items() if k not in ("simulation", "sizing")})
    return document


def with_parts(document: dict[str, Any], names: tuple[str, ...]) -> set[str]:
    """The options named and, for a mix, the options its layers and rest are."""
    found = set(names)
    for option in document["options"]:
        if option["name"] in names and option.get("type") == "mix":
            found |= {layer["option"] if isinstance(layer, dict) else layer
                      for layer in option.get("layers", [])}  # fmt: skip
            if option.get("rest"):
                found.add(option["rest"])
    return found


def _only(document: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The document priced for ``names`` alone (and a mix's parts): each costs what it costs
    among all, in a fraction of the time."""
    kept = with_parts(document, names)
    only = {**document, "options": [o for o in document["options"] if o["name"] in kept]}
    only["baseline"] = names[0]
    return only


def _demand_scaled(document: dict[str, Any], s: float) -> dict[str, Any]:
    scaled = copy.deepcopy(document)
    for w in scaled["workloads"]:
        for field in ("tokens_per_second", "gpus", "runs_per_year"):
            if w.get(field) is not None:
                w[field] = w[field] * s
    return scaled


def _price_scaled(document: dict[str, Any], name: str, k: float) -> dict[str, Any]:
    scaled = copy.deepcopy(document)
    names = with_parts(document, (name,))
    for option in scaled["options"]:
        if option["name"] in names:
            for field in PRICE_FIELDS:
                if isinstance(option.get(field), int | float):
                    option[field] = option[field] * k
    return scaled


def _crossing(gap: Callable[[float], float], low: float, high: float) -> float | None:
    """Where ``gap`` changes sign between ``low`` and ``high`` (bisection), or None."""
    g_low, g_high = gap(low), gap(high)
    if g_low == 0:
        return low
    if (g_low > 0) == (g_high > 0):
        return None
    for _ in range(CHANGE_STEPS):
        mid = (low + high) / 2
        g_mid = gap(mid)
        if (g_mid > 0) == (g_low > 0):
            low, g_low = mid, g_mid
        else:
            high = mid
    return (low + high) / 2


def what_would_change(
    result: dict[str, Any], recommended: str, runner_up: str,
    inputs: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The demand scale and the recommended option's price at which the runner-up costs the same
    (sizes as the run fixed them), and each key input moved ±25 %: which option wins, by how
    much. Deterministic engine runs on the run's inputs (or ``inputs``, a plan resized)."""
    document = _plain(inputs or result["inputs"])
    gpus = result["gpus"]
    names = (recommended, runner_up)
    pair = _only(document, names)

    def demand_gap(s: float) -> float:
        a, b = _npvs(_demand_scaled(pair, s), gpus, names)
        return b - a

    def price_gap(k: float) -> float:
        a, b = _npvs(_price_scaled(pair, recommended, k), gpus, names)
        return b - a

    scale = _crossing(demand_gap, 0.05, 1.0)
    direction = "less"
    if scale is None:
        scale, direction = _crossing(demand_gap, 1.0, 4.0), "more"
    price = _crossing(price_gap, 1.0, 10.0)
    moves = []
    for label, change in (
        ("Demand", lambda d, f: _demand_scaled(d, f)),
        (f"Price of {recommended}", lambda d, f: _price_scaled(d, recommended, f)),
        (f"Price of {runner_up}", lambda d, f: _price_scaled(d, runner_up, f)),
    ):
        for factor in (1 - SENSITIVITY, 1 + SENSITIVITY):
            moved = simulate(change(document, factor), gpus)
            feasible = [o for o in moved["options"] if o["feasible"]]
            winner = min(feasible, key=lambda o: o["npv_usd"]) if feasible else None
            others = [o["npv_usd"] for o in feasible if winner and o["name"] != winner["name"]]
            rivals = [o["npv_usd"] for o in feasible if o["name"] != recommended]
            mine = next(o for o in moved["options"] if o["name"] == recommended)
            moves.append({
                "input": label, "factor": factor,
                "winner": winner["name"] if winner else None,
                "margin_usd": None if winner is None or not others
                else min(others) - winner["npv_usd"],
                "recommended_wins": winner is not None and winner["name"] == recommended,
                "recommended_lead_usd": min(rivals) - mine["npv_usd"]
                if rivals and mine["feasible"] else None,
            })  # fmt: skip
    return {"recommended": recommended, "runner_up": runner_up, "demand_scale": scale,
            "demand_direction": direction, "price_factor": price, "moves": moves}  # fmt: skip


def change_sentences(changes: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """The "what would change" figures in words."""
    rec, other = changes["recommended"], changes["runner_up"]
    options = {o["name"]: o for o in result["options"]}
    said = []
    scale = changes.get("demand_scale")
    if scale is None:
        said.append(f"Between 5 % and 4 times the planned demand, {rec} stays ahead of {other}.")
    else:
        util = options[rec]["average_utilization"] * scale
        said.append(
            f"At {percent_text(scale)} of the planned demand ({changes['demand_direction']} work; "
            f"{rec} then about {percent_text(min(util, 1.0))} busy), {other} costs the same; "
            f"{'below' if changes['demand_direction'] == 'less' else 'beyond'} that it wins."
        )
    factor = changes.get("price_factor")
    if factor is None:
        said.append(f"Even at ten times its price, {rec} stays ahead of {other}.")
    else:
        said.append(
            f"If {rec}'s price rose {percent_text(factor - 1)} (× {factor:.2f}), {other} would "
            "cost the same."
        )
    return said


def _rate_set(document: dict[str, Any], name: str, rate: float) -> dict[str, Any]:
    moved = copy.deepcopy(document)
    for option in moved["options"]:
        if option["name"] == name:
            option["usd_per_gpu_hour"] = rate
    return moved


def offers_priced_again(
    result: dict[str, Any], notes: dict[str, Any], recommended: str,
    inputs: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Each next acceptable offer the plan passed over for an option the recommendation rests on
    (``notes["alternatives"]``: per option name the next offers by price, their words and rate),
    put in that option's place and every option priced again (sizes as the run fixed them): the
    cheapest option then, its total and NPV, and whether the recommendation changes."""
    document = _plain(inputs or result["inputs"])
    gpus = result["gpus"]
    present = {o["name"] for o in document["options"]}
    rests_on = with_parts(document, (recommended,))
    found: list[dict[str, Any]] = []
    for name, offers in (notes.get("alternatives") or {}).items():
        if name not in present or name not in rests_on:
            continue
        for offer in offers:
            moved = simulate(_rate_set(document, name, offer["usd_per_gpu_hour"]), gpus)
            feasible = [o for o in moved["options"] if o["feasible"]]
            winner = min(feasible, key=lambda o: o["npv_usd"]) if feasible else None
            mine = next(o for o in moved["options"] if o["name"] == recommended)
            found.append({
                "option": name, "offer": offer["words"], "usd_per_gpu_hour": offer["usd_per_gpu_hour"],
                "winner": winner["name"] if winner else None,
                "winner_total_usd": winner["total_usd"] if winner else None,
                "recommended_total_usd": mine["total_usd"],
                "changes": winner is None or winner["name"] != recommended,
            })  # fmt: skip
    return found
