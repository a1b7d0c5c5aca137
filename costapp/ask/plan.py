"""The plan a question builds: an ordinary scenario document (format 1.3) whose options are every
way the catalog can price the work, with catalog references so that ``sources`` lists them.

For each GPU model considered, at the offers the question accepts (``costapp.ask.offers``: the
provider kinds and regions asked, no older than asked, flag-free with known egress wherever such
an offer exists), the cheapest of each: on demand (elastic, and as a fixed fleet), the 1-, 3-
and, over 60 months or more, 5-year commitments asked (all three when the question names none);
dedicated servers from a quote still valid; owned servers from a purchase quote still valid with
the running costs from the sourced assumptions and, asked, a bridge at that GPU's on-demand price
until they arrive; the GPUs already owned (a dedicated layer costing their running cost alone);
and a ``mix`` of those owned, those bought, the 3-year commitment (when asked) and the on-demand
rest, sized jointly. When a served model is one the catalog sells by the token, the cheapest
hosted price of it. Training counts failures at the GPU's sourced time between failures when
asked. A 10 000-path Monte Carlo over the demand range.
An option the catalog cannot price is left out, and ``notes["left_out"]`` says which and why;
``notes["alternatives"]`` keeps the next acceptable offers of each priced option.
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any

from costapp.ask.forms import CERTAINTY, COMMITMENT_YEARS, INFERENCE_BYTES
from costapp.ask.offers import acceptable_prices, alternatives, offer_ref, price_words
from costapp.ask.presets import MODEL_PRESETS, preset_get
from costapp.scenarios.catalog import engine_gpu_figures
from costapp.scenarios.growth import given_monthly
from costapp.scenarios.sources import resolved_catalog_refs
from costapp.tco import normalize, plan_build, schema
from hardware import selectors as catalog
from hardware.display.figures import plain_number, quantity_text
from hardware.hosted import selectors as market
from hardware.models import DedicatedQuote, GpuModel, PurchaseQuote

PATHS = 10_000
LORA_FLOPS_PER_TOKEN = 6  # [FLOP per parameter and token], as the shipped 70B example counts it
TRAINING_MFU = 0.4
SWEEP_CANDIDATES = 21
MIX_STEPS = 6
"""Sizes tried per sized layer of a mix (0 to twice the layer's own size)."""
MTBF_FALLBACK = "gpu_mtbf_hours_h100"

ASSUMPTION_FIELDS = {
    "colo_usd_per_kw_month": "colo_usd_per_kw_month",
    "usd_per_kwh": "usd_per_kwh",
    "pue": "pue_new_gpu_colo",
    "staff_usd_per_month": "engineer_usd_per_year",
}
"""The on-prem running costs the plan takes from the sourced assumptions (field -> key)."""


def _where(price: Any) -> str:
    return f"{price.offer.provider.name} {price.offer.instance_type} in {price.region.code}"


def _seller(price: Any) -> str:
    return str(price.offer.provider.name)


def _mtbf_key(gpu: str) -> tuple[str | None, str | None]:
    """The sourced assumption holding ``gpu``'s time between failures, and a sentence when it is
    another GPU's (the catalog sources the H100's alone)."""
    family = gpu.split("-")[0]
    own = f"gpu_mtbf_hours_{family}"
    if market.assumption_value(own) is not None:
        return own, None
    if market.assumption_value(MTBF_FALLBACK) is not None:
        return MTBF_FALLBACK, (f"Failures on {gpu}: the catalog sources no time between failures "
                               "for it, so the H100's is used.")  # fmt: skip
    return None, f"Failures on {gpu}: the catalog sources no time between failures; none counted."


def workloads_of(answers: dict[str, Any], first_gpu: str, figures: dict[str, Any]) -> list[dict]:
    """The question's work as the format's workloads."""
    found: list[dict] = []
    months = answers["months"]
    if answers.get("serve"):
        params = _params(answers, "serve")
        serving = {
            "type": "inference",
            "name": f"Serve {_model_words(answers, 'serve')} at "
            f"{quantity_text(answers['tokens_per_day'])} generated tokens a day",
            "gpu": first_gpu,
            "params_billion": params,
            "tokens_per_second": answers["tokens_per_day"] / 86_400,
            "peak_to_average": answers.get("peak_to_average") or 1.0,
            "input_tokens_per_output_token": answers.get("prompt_tokens") or 0.0,
            "start_month": answers.get("serve_start") or 1,
            "end_month": answers.get("serve_end") or months,
            "monthly_growth": monthly_growth(answers),
        }
        if answers.get("peak_hours_per_day"):
            serving["peak_hours_per_day"] = answers["peak_hours_per_day"]
        found.append(serving)
    if answers.get("train"):
        found.append(_training(answers, first_gpu, figures))
    if answers.get("steady"):
        found.append(
            {
                "type": "steady",
                "name": f"A steady fleet of {plain_number(answers['steady_gpus'])} GPUs",
                "gpu": first_gpu,
                "gpus": answers["steady_gpus"],
                "utilization": answers.get("steady_utilization")
                if answers.get("steady_utilization") is not None
                else 1.0,
                "monthly_growth": monthly_growth(answers),
            }
        )
    return found


def monthly_growth(answers: dict[str, Any]) -> float:
    """The growth asked, a year or a month, as the format's rate a month: (1 + g)^(1/12) − 1
    from a rate a year, by the rule the builder converts with too
    (``costapp.scenarios.growth.given_monthly``)."""
    return given_monthly(answers.get("growth_per_year"), answers.get("growth_per_month"))


def _params(answers: dict[str, Any], prefix: str) -> float:
    preset = preset_get(str(answers.get(f"{prefix}_model") or ""))
    return preset.params_billion if preset else float(answers[f"{prefix}_params_billion"])


def _model_words(answers: dict[str, Any], prefix: str) -> str:
    preset = preset_get(str(answers.get(f"{prefix}_model") or ""))
    return (
        preset.label if preset else f"a {plain_number(answers[f'{prefix}_params_billion'])}B model"
    )


def _training(answers: dict[str, Any], gpu: str, figures: dict[str, Any]) -> dict:
    params = _params(answers, "train")
    lora = answers.get("train_method") != "full"
    name = (
        f"{'Fine-tune (LoRA)' if lora else 'Train'} {_model_words(answers, 'train')}, "
        f"{plain_number(answers['runs_per_year'])} runs a year"
    )
    workload: dict[str, Any] = {
        "type": "training",
        "name": name,
        "gpu": gpu,
        "runs_per_year": answers["runs_per_year"],
        "mfu": TRAINING_MFU,
        "start_month": answers.get("train_start") or 1,
        "end_month": answers.get("train_end") or answers["months"],
    }
    tflops = (figures.get(gpu) or {}).get("bf16_dense_tflops") or 0
    if answers.get("train_gpu_hours") and tflops:
        workload["flops_per_run"] = answers["train_gpu_hours"] * tflops * 1e12 * 3600 * TRAINING_MFU
    else:
        tokens = answers["train_tokens_billion"]
        if lora:
            workload["flops_per_run"] = LORA_FLOPS_PER_TOKEN * params * 1e9 * tokens * 1e9
        else:
            workload["params_billion"], workload["tokens_billion"] = params, tokens
    if answers.get("train_cluster_gpus"):
        workload["cluster_gpus"] = answers["train_cluster_gpus"]
    elif answers.get("train_days") and tflops:
        flops = workload.get("flops_per_run") or 6 * params * 1e9 * workload["tokens_billion"] * 1e9
        gpu_hours = flops / (tflops * 1e12 * TRAINING_MFU * 3600)
        workload["cluster_gpus"] = max(1, math.ceil(gpu_hours / (answers["train_days"] * 24)))
    elif lora or "flops_per_run" in workload:
        memory = (figures.get(gpu) or {}).get("memory_gb") or 80
        need = params * INFERENCE_BYTES / (0.9 * memory)  # frozen FP16 weights, 10 % spare
        workload["cluster_gpus"] = min(8, 2 ** math.ceil(math.log2(max(1.0, need))))
    if answers.get("failures"):
        workload["checkpoint_hours"] = (answers.get("checkpoint_minutes") or 0.0) / 60
        workload["restart_hours"] = (answers.get("restart_minutes") or 0.0) / 60
    return workload


def _token_price(answers: dict[str, Any]) -> market.TokenPriceTerms | None:
    """The cheapest hosted price of the served model for its prompt-to-answer mix, or None."""
    preset = preset_get(str(answers.get("serve_model") or ""))
    if preset is None:
        return None
    ratio = answers.get("prompt_tokens") or 0.0
    best: market.TokenPriceTerms | None = None
    for row in market.current_token_prices():
        if not preset.sells(row.model):
            continue
        terms = market.token_price_terms(row.provider, row.model)
        if terms is None:
            continue
        cost = terms.usd_per_million_output_tokens + ratio * terms.usd_per_million_input_tokens
        if best is None or cost < (
            best.usd_per_million_output_tokens + ratio * best.usd_per_million_input_tokens
        ):
            best = terms
    return best


def _valid_quotes(model: Any, gpu: str, today: date) -> list[Any]:
    return [
        q
        for q in model.objects.select_related("gpu").filter(gpu__slug=gpu).exclude(status="draft")
        if not catalog.quote_is_expired(q, today=today)
    ]


def _gpu_options(gpu: str, name: str, answers: dict[str, Any], today: date, horizon: int,
                 training: bool) -> tuple[list[dict], list[str], dict[str, dict], dict[str, list]]:  # fmt: skip
    options: list[dict] = []
    left_out: list[str] = []
    roles: dict[str, dict] = {}
    others: dict[str, list] = {}
    mtbf: dict[str, Any] = {}
    if training and answers.get("failures"):
        key, said = _mtbf_key(gpu)
        if key:
            mtbf = {"gpu_mtbf_hours": {"assumption": key}}
        if said:
            left_out.append(said)

    def add(option: dict, family: str, words: str, choice: Any = None, **extra: Any) -> None:
        options.append({**option, **mtbf})
        roles[option["name"]] = {"family": family, "gpu": gpu, "words": words, **extra}
        if choice is not None:
            roles[option["name"]]["price"] = price_words(choice.chosen, today)
            if not choice.strict:
                roles[option["name"]]["relaxed"] = True
            if choice.next:
                others[option["name"]] = alternatives(choice)

    on_demand = acceptable_prices(gpu, "on_demand", answers, today)
    rate = None
    elastic_name = None
    if on_demand.chosen is None:
        left_out.append(f"Renting {name} on demand: the catalog holds no current on-demand "
                        "price of it that the question accepts.")  # fmt: skip
    else:
        price = on_demand.chosen
        rate = float(price.usd_per_gpu_hour)
        elastic_name = f"{name} on demand, as needed ({_seller(price)})"
        add({"type": "cloud", "name": elastic_name, "offer": offer_ref(price),
             "scaling": "elastic"},
            "on_demand_elastic", f"rent {name} GPUs on demand as the work needs them",
            on_demand, rate=rate, where=_where(price), seller=_seller(price))  # fmt: skip
        add({"type": "cloud", "name": f"{name} on demand, a fleet kept running "
             f"({_seller(price)})", "offer": offer_ref(price), "scaling": "fixed"},
            "on_demand_fixed", f"rent a fleet of {name} GPUs on demand, kept running",
            on_demand, where=_where(price), seller=_seller(price))  # fmt: skip
    committed_3y = committed_seller = None
    asked = {int(years) for years in answers.get("commitments", COMMITMENT_YEARS)}
    for years in (1, 3, 5):
        if years not in asked or (years == 5 and horizon < 60):
            continue
        choice = acceptable_prices(gpu, f"commit_{years}y", answers, today)
        if choice.chosen is None:
            left_out.append(f"A {years}-year commitment to {name}: the catalog holds no "
                            f"{years}-year committed price of it that the question accepts.")  # fmt: skip
            continue
        price = choice.chosen
        option = {"type": "cloud", "name": f"{name} committed for {years} year{'s' * (years > 1)} "
                  f"({_seller(price)})", "offer": offer_ref(price), "billing": "committed",
                  "term_months": 12 * years}  # fmt: skip
        add(option, f"committed_{years}y",
            f"commit to {name} GPUs for {years} year{'s' * (years > 1)}", choice,
            years=years, where=_where(price), seller=_seller(price))  # fmt: skip
        if years == 3:
            committed_3y, committed_seller = option["name"], price.offer.provider.slug
    dedicated = _valid_quotes(DedicatedQuote, gpu, today)
    if not dedicated:
        left_out.append(f"Leasing dedicated {name} servers: no dedicated-server quote for it "
                        "that is still valid.")  # fmt: skip
    else:
        quote = min(dedicated, key=lambda q: q.usd_per_server_month / q.gpus_per_server)
        # the vendor and reference stay in sources and notes, out of the option's name: a
        # read-only link of the run names quotes only as "a quote"
        add({"type": "dedicated", "name": f"Lease {name} dedicated servers", "quote": quote.pk},
            "dedicated", f"lease dedicated servers of {quote.gpus_per_server} {name} GPUs",
            vendor=quote.vendor, gpus_per_server=quote.gpus_per_server)  # fmt: skip
    bought = None
    purchase = _valid_quotes(PurchaseQuote, gpu, today)
    if not purchase:
        left_out.append(f"Buying {name} servers: no purchase quote for it that is still valid "
                        "(the catalog's assumptions hold no server price).")  # fmt: skip
    else:
        quote = min(purchase, key=lambda q: q.capex_usd_per_server / q.gpus_per_server)
        option = {"type": "on_prem", "name": f"Buy {name} servers", "quote": quote.pk}
        for field, key in ASSUMPTION_FIELDS.items():
            if market.assumption_value(key) is not None:
                option[field] = {"assumption": key}
        residual = "residual_fraction_3y" if horizon <= 48 else "residual_fraction_5y"
        if market.assumption_value(residual) is not None:
            option["residual_fraction"] = {"assumption": residual}
        bridge = None
        if answers.get("bridge") and rate is not None and quote.lead_time_months:
            option["bridge_usd_per_gpu_hour"] = rate
            bridge = f"renting at {_where(on_demand.chosen)}'s on-demand ${rate:,.2f} per GPU-hour until they arrive"  # fmt: skip
        add(option, "on_prem", f"buy servers of {quote.gpus_per_server} {name} GPUs",
            lead_time_months=quote.lead_time_months, gpus_per_server=quote.gpus_per_server,
            bridge=bridge)  # fmt: skip
        bought = option["name"]
    owned = None
    if answers.get("owned_gpus") and (answers.get("owned_gpu") or gpu) == gpu:
        count = int(answers["owned_gpus"])
        owned = f"{count:,} {name} already owned"
        add({"type": "dedicated", "name": owned, "gpus_per_server": count, "servers": 1,
             "usd_per_server_month": answers.get("owned_usd_per_month") or 0.0},
            "owned", f"keep the {count:,} {name} GPUs already owned", count=count)  # fmt: skip
    layers = [n for n in (owned, bought, committed_3y) if n]
    rest = elastic_name
    cheapest_seller = on_demand.chosen.offer.provider.slug if on_demand.chosen else None
    if layers and elastic_name and committed_3y and committed_seller != cheapest_seller:
        same = acceptable_prices(gpu, "on_demand", {**answers, "provider": committed_seller}, today)
        if same.chosen is not None:  # the commitment and the rest from one provider
            rest = f"{name} on demand, as needed ({_seller(same.chosen)})"
            add({"type": "cloud", "name": rest, "offer": offer_ref(same.chosen),
                 "scaling": "elastic"},
                "on_demand_rest", f"rent {name} GPUs on demand as the work needs them",
                same, rate=float(same.chosen.usd_per_gpu_hour), where=_where(same.chosen),
                seller=_seller(same.chosen))  # fmt: skip
    if layers and rest:
        mix = (
            f"{name}: "
            + ", ".join(
                {owned: "owned", bought: "bought", committed_3y: "3-year commitment"}[n]
                for n in layers
            )
            + ", on-demand rest"
        )
        add({"type": "mix", "name": mix, "layers": layers, "rest": rest},
            "mix", f"a mix of {name}", layers=layers, rest=rest)  # fmt: skip
    return options, left_out, roles, others


def question_plan(answers: dict[str, Any], *, today: date) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario document of a question and its notes: ``roles`` (per option name its family,
    GPU and words), ``left_out`` (sentences), ``gpu_names``."""
    figures, _source = engine_gpu_figures()
    names = {g.slug: g.name for g in GpuModel.objects.filter(slug__in=answers["gpus"])}
    gpus = [g for g in answers["gpus"] if g in names]
    options: list[dict] = []
    left_out: list[str] = []
    roles: dict[str, dict] = {}
    others: dict[str, list] = {}
    training = bool(answers.get("train"))
    for gpu in gpus:
        found, missing, found_roles, found_others = _gpu_options(
            gpu, names[gpu], answers, today, answers["months"], training
        )
        options += found
        left_out += missing
        roles.update(found_roles)
        others.update(found_others)
    if answers.get("serve"):
        price = _token_price(answers)
        if price is None:
            left_out.append(
                f"Buying {_model_words(answers, 'serve')} by the token: the catalog sells no "
                "hosted model of that name."
            )
        else:
            name = f"{_model_words(answers, 'serve')} by the token ({price.provider})"
            options.append({"type": "api", "name": name,
                            "token_price": {"provider": price.provider, "model": price.model}})  # fmt: skip
            roles[name] = {"family": "api", "gpu": None, "words": f"buy the tokens from "
                           f"{price.provider}", "model": price.model}  # fmt: skip
    workloads = workloads_of(answers, gpus[0] if gpus else schema.DEFAULT_GPU, figures)
    low, high = CERTAINTY[answers.get("certainty") or "medium"]
    document: dict[str, Any] = {
        "name": question_title(answers),
        "horizon_months": answers["months"],
        "discount_rate": answers["discount_rate"],
        "egress_tb_per_month": answers.get("egress_tb_per_month") or 0.0,
        "workloads": workloads,
        "options": options,
        "simulation": {
            "paths": PATHS,
            "seed": 0,
            "demand_multiplier": {"dist": "triangular", "low": low, "mode": 1.0, "high": high},
        },
    }
    document["sizing"] = _sweeps(document, figures, roles, answers)
    notes = {"roles": roles, "left_out": left_out, "gpu_names": names, "alternatives": others,
             "monthly_growth": monthly_growth(answers),
             "objective": "tail_npv" if answers.get("sure") == "tail" else "mean_npv"}  # fmt: skip
    return document, notes


def _range(size: Any, steps: int) -> dict[str, int]:
    top = max(2, 2 * int(size or 1))
    return {"min": 0, "max": top, "step": max(1, math.ceil(top / (steps - 1)))}


def _sweeps(
    document: dict[str, Any], figures: dict[str, Any], roles: dict[str, dict],
    answers: dict[str, Any],
) -> list[dict]:  # fmt: skip
    """Each mix sized jointly (owned GPUs held, the bought servers and the 3-year commitment each
    0 to twice its own size), by the worst tenth's NPV when the lead must be sure, else the mean
    NPV, with the chance of work left undone asked; a 3-year commitment (committed GPUs) or an
    owned option (servers) in no mix swept alone, 0 to twice the plan's own size, about 20 steps."""
    sized = [o["name"] for o in document["options"]
             if roles[o["name"]]["family"] in ("committed_3y", "on_prem")]  # fmt: skip
    mixes = [o for o in document["options"] if o["type"] == "mix"]
    if not (sized or mixes) or not document["options"]:
        return []
    plain = {k: v for k, v in document.items() if k not in ("simulation", "sizing")}
    try:
        plan = plan_build(
            normalize(plain, figures, resolved_catalog_refs(plain, figures)).document, figures
        )
    except Exception:  # the document's own errors are reported when it is saved
        return []
    own = {o["name"]: o for o in plan.inputs["options"]}

    def size_of(name: str) -> Any:
        option = own[name]
        return option.get("committed_gpus") if option["type"] == "cloud" else option.get("servers")

    sweeps: list[dict] = []
    objective = "tail_npv" if answers.get("sure") == "tail" else "mean_npv"
    undone = (answers.get("undone_percent") or 0.0) / 100
    for mix in mixes:
        ranges = []
        for layer in mix["layers"]:
            if roles[layer]["family"] == "owned":
                ranges.append({"min": 1, "max": 1, "step": 1})
            else:
                ranges.append(_range(size_of(layer), MIX_STEPS))
        sweeps.append({"option": mix["name"], "layers": ranges, "objective": objective,
                       "max_shortfall_probability": undone})  # fmt: skip
    in_mix = {layer for mix in mixes for layer in mix["layers"]}
    for name in [n for n in sized if n not in in_mix][: schema.MAX_SWEEPS - len(sweeps)]:
        sweeps.append({"option": name, **_range(size_of(name), SWEEP_CANDIDATES),
                       "objective": objective, "max_shortfall_probability": undone})  # fmt: skip
    return sweeps


def question_title(answers: dict[str, Any]) -> str:
    parts = []
    if answers.get("train"):
        parts.append(f"{'fine-tune' if answers.get('train_method') != 'full' else 'train'} "
                     f"{_model_words(answers, 'train')}")  # fmt: skip
    if answers.get("serve"):
        amount = quantity_text(answers["tokens_per_day"])
        parts.append(f"serve {_model_words(answers, 'serve')} at {amount} tokens a day")
    if answers.get("steady"):
        parts.append(f"{plain_number(answers['steady_gpus'])} GPUs steady")
    return f"Ask: {', then '.join(parts)} over {answers['months']} months"


__all__ = ["MODEL_PRESETS", "question_plan", "question_title"]
