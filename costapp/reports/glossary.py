"""The words of the engine a finance lead meets on a page, each with one line of meaning: the
glossary page lists them, and the pages put the same line on hover where the word appears
(``costapp.templatetags.chart_tags.meaning``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    slug: str
    word: str
    meaning: str


TERMS: tuple[Term, ...] = (
    Term(
        "npv",
        "NPV (net present value)",
        "All the option's costs over the horizon, each month's discounted to today's money at the scenario's discount rate: lower is better.",
    ),
    Term(
        "total",
        "Total",
        "All the option's costs over the horizon added up as paid, without discounting.",
    ),
    Term(
        "p10-p90",
        "P10, P50, P90",
        "Over the simulated futures: one in ten costs less than P10, half less than P50, nine in ten less than P90.",
    ),
    Term("mean-npv", "Mean NPV", "The NPV averaged over every simulated future."),
    Term(
        "tail-npv",
        "Mean NPV of the worst futures",
        "The average NPV of the worst share of futures (a tenth unless the scenario says otherwise): what you pay on average when things go badly.",
    ),
    Term(
        "probability-cheapest",
        "Chance it is the cheapest",
        "The share of simulated futures in which the option has the lowest NPV among the options that do all the work.",
    ),
    Term(
        "monte-carlo",
        "Simulated futures (Monte Carlo paths)",
        "Each future draws demand and prices from the ranges the scenario gives; every option is priced on the same futures.",
    ),
    Term(
        "baseline",
        "Baseline",
        "The option the others are compared with: savings and break-even are measured against it.",
    ),
    Term(
        "savings",
        "Savings vs baseline",
        "How much less the option costs in total than the baseline; beyond twice the baseline's cost it is said as a multiple.",
    ),
    Term(
        "break-even-month",
        "Break-even month",
        "The month from which the option has cost less in total than the baseline and stays so (simple payback, not discounted).",
    ),
    Term(
        "average-utilization",
        "Average utilization",
        "The share of the capacity paid for that does work, over the months in service.",
    ),
    Term(
        "break-even-utilization",
        "Break-even utilization",
        "How busy the capacity must be for the option to cost the same as the baseline; busier than this, the option is cheaper.",
    ),
    Term(
        "busy-gpu-hours",
        "Busy GPU-hours",
        "GPU-hours of work: the hours the GPUs compute, on the option's GPU model.",
    ),
    Term(
        "per-busy-gpu-hour",
        "Cost per busy GPU-hour",
        "The option's total divided by its busy GPU-hours: what an hour of actual work costs, idle time included.",
    ),
    Term(
        "all-in-per-million-tokens",
        "All-in cost per million tokens",
        "The option's total, training included, divided by the millions of tokens it serves (generated tokens).",
    ),
    Term(
        "goodput",
        "Goodput",
        "The share of a training run's GPU time that advances it: the rest is lost to failures, restarts and work redone since the last checkpoint.",
    ),
    Term(
        "mfu",
        "MFU (model FLOPs utilization)",
        "The share of a GPU's peak compute a training run actually uses; 40 % is typical of large runs.",
    ),
    Term(
        "throughput-factor",
        "Throughput factor",
        "The work a GPU of this option does per hour compared with a dedicated GPU of the same model (a shared cloud GPU might be 0.9).",
    ),
    Term(
        "resident-replica",
        "Resident replica",
        "A copy of a served model kept loaded on its GPUs whether or not requests arrive, so answers start at once.",
    ),
    Term(
        "peak-to-average",
        "Peak to average",
        "How many times the average traffic the busiest hours bring; the fleet must serve the peak.",
    ),
    Term(
        "busiest-hours",
        "Busiest hours",
        "The hours of each day the served traffic is at its peak; capacity short of the peak rents the difference or leaves work undone.",
    ),
    Term(
        "prefill",
        "Prefill (reading the prompt)",
        "The GPU work of reading a request's prompt before answering; compute-bound, so it runs faster per token than generating.",
    ),
    Term(
        "decode",
        "Decode (generating)",
        "The GPU work of generating the answer token by token; bound by memory bandwidth.",
    ),
    Term(
        "on-demand",
        "On-demand",
        "Cloud GPUs rented by the hour with no commitment, at the list price.",
    ),
    Term(
        "spot",
        "Spot",
        "Spare cloud GPUs at a discount that may be taken back; interruptions cost extra work.",
    ),
    Term(
        "commitment",
        "Commitment",
        "GPUs reserved for a term (1, 3 or 5 years) at a lower hourly price, paid whether used or not.",
    ),
    Term(
        "unused-commitment",
        "Unused committed GPU-hours",
        "Committed GPU-hours no work uses: paid for whatever happens.",
    ),
    Term("overflow", "Overflow", "Work beyond a commitment, rented at the on-demand price."),
    Term("dedicated", "Dedicated servers", "Whole servers leased by the month at a flat fee."),
    Term(
        "owned",
        "Owned servers (on-prem)",
        "Servers bought: capex, power, colocation, support and staff, and their resale value at the end.",
    ),
    Term("bridge", "Bridge", "Cloud GPUs rented until bought servers arrive and are in service."),
    Term(
        "burst",
        "Burst",
        "Work beyond fixed capacity rented by the hour where the option allows it.",
    ),
    Term(
        "shortfall",
        "Work left undone (shortfall)",
        "Work no capacity of the option serves; an option with any is infeasible and never the cheapest.",
    ),
    Term(
        "infeasible",
        "Does not do all the work (infeasible)",
        "The option leaves some work undone; its figures are shown but it is never recommended.",
    ),
    Term(
        "mix",
        "Mix",
        "One plan made of several options: owned servers as a base, a commitment in the middle, and the rest rented by the hour.",
    ),
    Term(
        "layer",
        "Layer",
        "One part of a mix holding a fixed capacity; layers serve the load from the bottom up.",
    ),
    Term("rest", "Rest", "The part of a mix's load above its layers, rented by the hour."),
    Term(
        "sizing",
        "Sizing sweep",
        "The option priced at every size in a range on the same futures; the best size has the lowest objective among the sizes that do the work.",
    ),
    Term(
        "joint-sizing",
        "Joint sizing",
        "Every combination of a mix's layer sizes priced on the same futures; the best combination is shown first.",
    ),
    Term(
        "egress",
        "Egress",
        "Data sent out of a provider's network, charged per gigabyte by most clouds.",
    ),
    Term(
        "confidence",
        "Price confidence",
        "How far a catalog price can be trusted: its age, its flags, whether its seller is a marketplace, whether its egress and GPU variant are known.",
    ),
    Term(
        "stale",
        "Stale price",
        "A price stated longer ago than the catalog's limit; it may no longer hold.",
    ),
    Term(
        "marketplace",
        "Marketplace",
        "A site where many hosts list GPUs at their own prices; listings come and go.",
    ),
    Term(
        "sizes",
        "M, B, T, P, E, Z (in counts)",
        "A count's size: million, billion, trillion, then a thousand trillion (peta), a million trillion (exa), a billion trillion (zetta): 2 B tokens is 2,000,000,000.",
    ),
)
"""Every term, in the order the glossary lists them."""

BY_SLUG: dict[str, Term] = {term.slug: term for term in TERMS}


def meaning_of(slug: str) -> str:
    """The one line of meaning of a term (KeyError for a word the glossary does not hold)."""
    return BY_SLUG[slug].meaning
