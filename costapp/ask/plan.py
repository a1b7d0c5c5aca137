"""The plan a question builds: an ordinary scenario document (format 1.2) whose options are every
way the catalog can price the work, with catalog references so that ``sources`` lists them.

For each GPU model considered: the cheapest current on-demand offer whose provider's egress
pricing is known, else the cheapest of any provider (elastic, and as a fixed fleet), 1- and 3-year commitments where the catalog
holds them (the cheapest such offer), dedicated servers from a quote still valid, owned servers
from a purchase quote still valid with the running costs from the sourced assumptions; and, when a
served model is one the catalog sells by the token, the cheapest hosted price of it. A sizing
sweep for each GPU's 3-year commitment and owned servers (0 to twice the plan's own size in the
option's unit); a 10 000-path Monte Carlo over the demand range. An option the catalog cannot
price is left out, and ``notes["left_out"]`` says which and why.
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any

from costapp.ask.forms import CERTAINTY, INFERENCE_BYTES
from costapp.ask.presets import MODEL_PRESETS, preset_get
from costapp.scenarios.catalog import engine_gpu_figures
from costapp.scenarios.sources import resolved_catalog_refs
from costapp.tco import normalize, plan_build, schema
from hardware import market
from hardware import selectors as catalog
from hardware.models import DedicatedQuote, EgressTier, GpuModel, PurchaseQuote

PATHS = 10_000
LORA_FLOPS_PER_TOKEN = 6  # [FLOP per parameter and token], as the shipped 70B example counts it
TRAINING_MFU = 0.4
SWEEP_CANDIDATES = 21

ASSUMPTION_FIELDS = {
    "colo_usd_per_kw_month": "colo_usd_per_kw_month",
    "usd_per_kwh": "usd_per_kwh",
    "pue": "pue_new_gpu_colo",
    "staff_usd_per_month": "engineer_usd_per_year",
}
"""The on-prem running costs the plan takes from the sourced assumptions (field -> key)."""


def _egress_known() -> set[str]:
    return set(EgressTier.objects.values_list("provider__slug", flat=True))


def _cheapest(gpu: str, billing: str, known: set[str]) -> Any | None:
    """The current price row of ``gpu`` for ``billing`` with the lowest USD per GPU-hour whose
    provider's egress is known; else the cheapest of any provider, its egress pricing unknown
    (``sources`` and the warnings then say so); None when there is none."""
    rows = (
        catalog.current_prices()
        .filter(offer__gpu__slug=gpu, billing=billing)
        .order_by(
            "usd_per_gpu_hour", "offer__provider__slug", "offer__instance_type", "region__code"
        )
    )
    return rows.filter(offer__provider__slug__in=known).first() or rows.first()


def _offer_ref(price: Any) -> dict[str, str]:
    return {
        "provider": price.offer.provider.slug,
        "instance": price.offer.instance_type,
        "region": price.region.code,
    }


def _where(price: Any) -> str:
    return f"{price.offer.provider.name} {price.offer.instance_type} in {price.region.code}"


def _seller(price: Any) -> str:
    return str(price.offer.provider.name)


def workloads_of(answers: dict[str, Any], first_gpu: str, figures: dict[str, Any]) -> list[dict]:
    """The question's work as the format's workloads."""
    found: list[dict] = []
    months = answers["months"]
    if answers.get("serve"):
        params = _params(answers, "serve")
        serving = {
            "type": "inference",
            "name": f"Serve {_model_words(answers, 'serve')} at "
            f"{answers['tokens_per_day']:,.0f} generated tokens a day",
            "gpu": first_gpu,
            "params_billion": params,
            "tokens_per_second": answers["tokens_per_day"] / 86_400,
            "peak_to_average": answers.get("peak_to_average") or 1.0,
            "input_tokens_per_output_token": answers.get("prompt_tokens") or 0.0,
            "start_month": answers.get("serve_start") or 1,
            "end_month": answers.get("serve_end") or months,
        }
        found.append(serving)
    if answers.get("train"):
        found.append(_training(answers, first_gpu, figures))
    if answers.get("steady"):
        found.append(
            {
                "type": "steady",
                "name": f"A steady fleet of {answers['steady_gpus']:g} GPUs",
                "gpu": first_gpu,
                "gpus": answers["steady_gpus"],
                "utilization": answers.get("steady_utilization")
                if answers.get("steady_utilization") is not None
                else 1.0,
            }
        )
    return found


def _params(answers: dict[str, Any], prefix: str) -> float:
    preset = preset_get(str(answers.get(f"{prefix}_model") or ""))
    return preset.params_billion if preset else float(answers[f"{prefix}_params_billion"])


def _model_words(answers: dict[str, Any], prefix: str) -> str:
    preset = preset_get(str(answers.get(f"{prefix}_model") or ""))
    return preset.label if preset else f"a {answers[f'{prefix}_params_billion']:g}B model"


def _training(answers: dict[str, Any], gpu: str, figures: dict[str, Any]) -> dict:
    params = _params(answers, "train")
    lora = answers.get("train_method") != "full"
    name = (
        f"{'Fine-tune (LoRA)' if lora else 'Train'} {_model_words(answers, 'train')}, "
        f"{answers['runs_per_year']:g} runs a year"
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
    if lora or "flops_per_run" in workload:
        memory = (figures.get(gpu) or {}).get("memory_gb") or 80
        need = params * INFERENCE_BYTES / (0.9 * memory)  # frozen FP16 weights, 10 % spare
        workload["cluster_gpus"] = min(8, 2 ** math.ceil(math.log2(max(1.0, need))))
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


def _gpu_options(gpu: str, name: str, today: date, known: set[str], horizon: int) -> tuple[list[dict], list[str], dict[str, dict]]:  # fmt: skip
    options: list[dict] = []
    left_out: list[str] = []
    roles: dict[str, dict] = {}

    def add(option: dict, family: str, words: str, **extra: Any) -> None:
        options.append(option)
        roles[option["name"]] = {"family": family, "gpu": gpu, "words": words, **extra}

    on_demand = _cheapest(gpu, "on_demand", known)
    if on_demand is None:
        left_out.append(f"Renting {name} on demand: the catalog holds no current on-demand "
                        "price of it.")  # fmt: skip
    else:
        rate = float(on_demand.usd_per_gpu_hour)
        where = _where(on_demand)
        add({"type": "cloud", "name": f"{name} on demand, as needed ({_seller(on_demand)})",
             "offer": _offer_ref(on_demand), "scaling": "elastic"},
            "on_demand_elastic", f"rent {name} GPUs on demand as the work needs them",
            rate=rate, where=where)  # fmt: skip
        add({"type": "cloud", "name": f"{name} on demand, a fleet kept running "
             f"({_seller(on_demand)})", "offer": _offer_ref(on_demand), "scaling": "fixed"},
            "on_demand_fixed", f"rent a fleet of {name} GPUs on demand, kept running",
            where=where)  # fmt: skip
    for years, key in ((1, "commit_1y"), (3, "commit_3y")):
        price = _cheapest(gpu, key, known)
        if price is None:
            left_out.append(f"A {years}-year commitment to {name}: the catalog holds no "
                            f"{years}-year committed price of it.")  # fmt: skip
            continue
        add({"type": "cloud", "name": f"{name} committed for {years} year{'s' * (years > 1)} "
             f"({_seller(price)})", "offer": _offer_ref(price), "billing": "committed",
             "term_months": 12 * years},
            f"committed_{years}y", f"commit to {name} GPUs for {years} year{'s' * (years > 1)}",
            years=years, where=_where(price))  # fmt: skip
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
    purchase = _valid_quotes(PurchaseQuote, gpu, today)
    if not purchase:
        left_out.append(f"Buying {name} servers: no purchase quote for it that is still valid "
                        "(the catalog's assumptions hold no server price).")  # fmt: skip
    else:
        quote = min(purchase, key=lambda q: q.capex_usd_per_server / q.gpus_per_server)
        option: dict[str, Any] = {"type": "on_prem", "name": f"Buy {name} servers",
                                  "quote": quote.pk}  # fmt: skip
        for field, key in ASSUMPTION_FIELDS.items():
            if market.assumption_value(key) is not None:
                option[field] = {"assumption": key}
        residual = "residual_fraction_3y" if horizon <= 48 else "residual_fraction_5y"
        if market.assumption_value(residual) is not None:
            option["residual_fraction"] = {"assumption": residual}
        add(option, "on_prem", f"buy servers of {quote.gpus_per_server} {name} GPUs",
            lead_time_months=quote.lead_time_months, gpus_per_server=quote.gpus_per_server)  # fmt: skip
    return options, left_out, roles


def question_plan(answers: dict[str, Any], *, today: date) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario document of a question and its notes: ``roles`` (per option name its family,
    GPU and words), ``left_out`` (sentences), ``gpu_names``."""
    figures, _source = engine_gpu_figures()
    names = {g.slug: g.name for g in GpuModel.objects.filter(slug__in=answers["gpus"])}
    gpus = [g for g in answers["gpus"] if g in names]
    known = _egress_known()
    options: list[dict] = []
    left_out: list[str] = []
    roles: dict[str, dict] = {}
    for gpu in gpus:
        found, missing, found_roles = _gpu_options(gpu, names[gpu], today, known, answers["months"])
        options += found
        left_out += missing
        roles.update(found_roles)
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
    document["sizing"] = _sweeps(document, figures, roles)
    notes = {"roles": roles, "left_out": left_out, "gpu_names": names}
    return document, notes


def _sweeps(
    document: dict[str, Any], figures: dict[str, Any], roles: dict[str, dict]
) -> list[dict]:
    """A sweep of each 3-year commitment (committed GPUs) and of each owned option (servers): 0 to
    twice the plan's own size, about 20 steps."""
    sized = [o["name"] for o in document["options"]
             if roles[o["name"]]["family"] in ("committed_3y", "on_prem")]  # fmt: skip
    if not sized or not document["options"]:
        return []
    plain = {k: v for k, v in document.items() if k not in ("simulation", "sizing")}
    try:
        plan = plan_build(
            normalize(plain, figures, resolved_catalog_refs(plain, figures)).document, figures
        )
    except Exception:  # the document's own errors are reported when it is saved
        return []
    own = {o["name"]: o for o in plan.inputs["options"]}
    sweeps = []
    for name in sized[: schema.MAX_SWEEPS]:
        option = own[name]
        size = option.get("committed_gpus") if option["type"] == "cloud" else option.get("servers")
        top = max(2, 2 * int(size or 1))
        step = max(1, math.ceil(top / (SWEEP_CANDIDATES - 1)))
        sweeps.append({"option": name, "min": 0, "max": top, "step": step})
    return sweeps


def question_title(answers: dict[str, Any]) -> str:
    parts = []
    if answers.get("train"):
        parts.append(f"{'fine-tune' if answers.get('train_method') != 'full' else 'train'} "
                     f"{_model_words(answers, 'train')}")  # fmt: skip
    if answers.get("serve"):
        parts.append(f"serve {_model_words(answers, 'serve')} at "
                     f"{answers['tokens_per_day'] / 1e6:,.3g}M tokens a day")  # fmt: skip
    if answers.get("steady"):
        parts.append(f"{answers['steady_gpus']:g} GPUs steady")
    return f"Ask: {', then '.join(parts)} over {answers['months']} months"


__all__ = ["MODEL_PRESETS", "question_plan", "question_title"]
