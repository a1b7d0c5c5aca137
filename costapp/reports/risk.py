"""The risk panel of a run with a simulation: what a finance lead reads before signing.

Per option, from the result document: the mean, P90 and worst-tail mean NPV and the chance it is
the cheapest. From the run's stored risk figures (``costapp.models.RunRisk``, computed in its
Monte Carlo blocks by ``costapp.tco.risk``): month by month, the chance each option has cost least
so far; for each commitment, the committed GPU-hours expected to go unused and what they cost;
and, with a budget typed on the page, the chance each option's total over the horizon exceeds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from costapp.models import RunRisk, SimulationRun
from costapp.tco import budget_exceedance, sorted_totals_from_payload
from hardware.display.figures import plain_number

MEANINGS = {
    "mean_npv": (
        "The present value of the option's costs averaged over every simulated future: what it "
        "costs on average, in today's money."
    ),
    "p90_npv": (
        "Nine futures in ten cost no more than this (present value): a bad but not extreme case."
    ),
    "tail_npv": (
        "The average present value of the worst futures only: what you pay on average when "
        "things go badly (conditional value at risk)."
    ),
    "probability_cheapest": (
        "The share of futures in which the option has the lowest present value among the "
        "options that do all the work."
    ),
    "leader": (
        "Month by month, the share of futures in which the option has cost least so far "
        "(nominal spending from month 0 to that month, among the options that do all the "
        "work): a plan that wins over the whole term may still lead late."
    ),
    "unused": (
        "Committed GPU-hours that no work uses: paid for whatever happens. The mean is the "
        "average over the futures, P90 the amount nine futures in ten stay within; the cost is "
        "each month's unused share of the commitment's charges (its hourly charge, its upfront "
        "spread over its term, and its support)."
    ),
    "budget": (
        "The share of futures in which the option's total spending over the horizon (nominal, "
        "not discounted) is above the budget."
    ),
}

AMOUNT = re.compile(r"^\$?\s*([0-9][0-9,]*(?:\.[0-9]+)?|\.[0-9]+)\s*([kKmMbB])?$")
SUFFIX = {"k": Decimal(1_000), "m": Decimal(1_000_000), "b": Decimal(1_000_000_000)}
BUDGET_LIMIT = Decimal(10) ** 15


@dataclass(frozen=True)
class Budget:
    """A budget typed on the page: its text, its amount [USD] when it reads as one, its error."""

    text: str
    usd: float | None
    error: str


def budget_parse(text: str) -> Budget:
    """A budget in dollars as a person types it: ``1500000``, ``1,500,000``, ``$1.5M``, ``750k``."""
    text = (text or "").strip()
    if not text:
        return Budget("", None, "")
    found = AMOUNT.match(text)
    error = "Type an amount in dollars, such as 1,500,000 or 1.5M."
    if found is None:
        return Budget(text, None, error)
    digits, suffix = found.groups()
    if "," in digits and not re.fullmatch(r"[0-9]{1,3}(,[0-9]{3})*(\.[0-9]+)?", digits):
        return Budget(text, None, error)
    try:
        amount = Decimal(digits.replace(",", ""))
    except InvalidOperation:
        return Budget(text, None, error)
    if suffix:
        amount *= SUFFIX[suffix.lower()]
    if amount <= 0:
        return Budget(text, None, "The budget must be more than $0.")
    if amount >= BUDGET_LIMIT:
        return Budget(text, None, "The budget must be less than $1,000,000,000,000,000.")
    return Budget(text, float(amount), "")


def _tail_words(result: Mapping[str, Any]) -> str:
    fraction = float((result["inputs"].get("simulation") or {}).get("tail_fraction", 0.1))
    return f"worst {plain_number(100.0 * fraction)} %"


OPTION_KEYS = ("mean_npv_usd", "p90_npv_usd", "tail_npv_usd", "probability_cheapest")
"""The result's figures over the paths that the risk panel, its API and its sheet give per
option."""


def option_rows(result: Mapping[str, Any], exceed: list[float] | None) -> list[dict[str, Any]]:
    """Per option of ``result``: its name, whether it does the work, :data:`OPTION_KEYS`, and
    the share of paths whose total exceeds the budget (``exceed``, None without one)."""
    return [
        {
            "name": option["name"],
            "feasible": option["feasible"],
            **{key: option.get(key) for key in OPTION_KEYS},
            "exceeds_budget": None if exceed is None else exceed[index],
        }
        for index, option in enumerate(result["options"])
    ]


def risk_panel(
    *, run: SimulationRun, result: Mapping[str, Any], budget_text: str = ""
) -> dict[str, Any] | None:
    """The panel's context; None for a result without a simulation."""
    simulation = result["inputs"].get("simulation") or {}
    paths = int(simulation.get("paths") or 0)
    if paths <= 0:
        return None
    stored = RunRisk.objects.filter(run=run).defer("sorted_totals").first()
    figures = stored.figures if stored is not None else None
    budget = budget_parse(budget_text)
    exceed: list[float] | None = None
    if stored is not None and budget.usd is not None:
        totals = RunRisk.objects.filter(pk=stored.pk).values_list("sorted_totals", flat=True)[0]
        exceed = budget_exceedance(sorted_totals_from_payload(bytes(totals)), budget.usd)
    rows = [
        {**row, "cheapest": row["name"] == result.get("cheapest")}
        for row in option_rows(result, exceed)
    ]
    commitments = []
    if figures is not None:
        for row in figures["commitments"]:
            held = float(row["committed_gpu_hours"])
            commitments.append(
                {
                    **row,
                    "where": (
                        f"{row['option']}, its layer {row['layer']}"
                        if row["layer"]
                        else row["option"]
                    ),
                    "unused_share_mean": row["unused_gpu_hours_mean"] / held if held else None,
                    "unused_share_p90": row["unused_gpu_hours_p90"] / held if held else None,
                }
            )
    return {
        "paths": paths,
        "rows": rows,
        "tail_words": _tail_words(result),
        "has_tail": any(row["tail_npv_usd"] is not None for row in rows),
        "stored": figures is not None,
        "figures": figures,
        "commitments": commitments,
        "budget": budget,
        "meanings": MEANINGS,
    }


def risk_document(*, run: SimulationRun, budget_usd: float | None) -> dict[str, Any] | None:
    """The run's risk figures as the API gives them (``GET /api/v1/runs/{id}/risk/``): per option
    its NPV over the paths, its chance of being the cheapest, the share of paths on which it has
    cost least so far month by month and, with ``budget_usd``, the share on which its total
    exceeds it; each commitment's unused hours and their cost. None when the run stored none."""
    assert run.result is not None
    stored = RunRisk.objects.filter(run=run).first()
    if stored is None:
        return None
    figures = stored.figures
    exceed = None
    if budget_usd is not None:
        exceed = budget_exceedance(
            sorted_totals_from_payload(bytes(stored.sorted_totals)), budget_usd
        )
    options = [
        {**row, "cheapest_so_far": figures["cheapest_so_far"][row["name"]]}
        for row in option_rows(run.result, exceed)
    ]
    return {
        "run": run.pk,
        "paths": figures["paths"],
        "budget_usd": budget_usd,
        "options": options,
        "commitments": [
            {key: row[key] for key in COMMITMENT_KEYS} for row in figures["commitments"]
        ],
    }


COMMITMENT_KEYS = (
    "option",
    "layer",
    "committed_gpus",
    "committed_gpu_hours",
    "unused_gpu_hours_mean",
    "unused_gpu_hours_p90",
    "unused_usd_mean",
    "unused_usd_p90",
)
