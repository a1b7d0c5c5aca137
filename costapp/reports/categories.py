"""The 13 cost categories of the cost side, in one table: each category's name (the engine's
``costapp.tco.CATEGORIES``, in its order: the order of ``breakdown_usd`` and of the monthly CSV's
columns), its label on the charts and its formula in words, as docs/scenario-format.md
("Options") states it. The charts, the run page's formulas, the monthly CSV and the workbook read
it here; a category the engine adds without a row here fails at import.
"""

from dataclasses import dataclass

from costapp.tco import CATEGORIES


@dataclass(frozen=True)
class CostCategory:
    """One cost category: its name in the result, its label, its formula in words."""

    name: str
    label: str
    formula: str


COST_CATEGORIES: tuple[CostCategory, ...] = (
    CostCategory(
        "compute",
        "Compute",
        (
            "cloud on-demand: busy GPU-hours × rate × (1 + c)^((m − 1)/12) (fixed scaling: "
            "max(peak GPUs × hours per month, busy) × rate × trend); spot: the same × (1 + "
            "interruption_overhead); committed: committed GPUs × hours per month × committed rate"
            " (renewed at the trended price each term) + overflow × on-demand rate × trend; "
            "dedicated: servers × USD per server-month"
        ),
    ),
    CostCategory(
        "egress",
        "Egress",
        (
            "cloud: each month's GB priced through the tiers (or the flat USD per GB); dedicated:"
            " max(0, egress TB − included TB) × overage USD per TB; on-prem: egress TB × USD per "
            "TB"
        ),
    ),
    CostCategory(
        "support",
        "Support",
        (
            "cloud: support_fraction × (compute + egress); on-prem, in service: capex × "
            "support_fraction_per_year / 12"
        ),
    ),
    CostCategory(
        "setup",
        "Setup",
        ("dedicated: setup_usd in month 0"),
    ),
    CostCategory(
        "upfront",
        "Upfront",
        ("committed cloud: upfront_usd at the start of each term (months 0, T, 2T … < H)"),
    ),
    CostCategory(
        "capex",
        "Capex",
        ("on-prem without financing: servers × capex per server in month 0"),
    ),
    CostCategory(
        "financing",
        "Financing",
        (
            "on-prem with financing: level payment C × i / (1 − (1 + i)^−n), i = apr / 12, in "
            "months 1 … min(n, H), plus the principal still owed after month H paid in month H"
        ),
    ),
    CostCategory(
        "power",
        "Power",
        (
            "on-prem, in service: servers × server kW × (idle fraction + (1 − idle fraction) × "
            "utilization) × PUE × hours per month × USD per kWh"
        ),
    ),
    CostCategory(
        "colo",
        "Colocation",
        ("on-prem, in service: servers × server kW × colo USD per kW-month"),
    ),
    CostCategory(
        "staff",
        "Staff",
        ("on-prem: staff USD per month, every month"),
    ),
    CostCategory(
        "residual",
        "Residual (resale)",
        ("on-prem: − capex × residual_fraction in month H (resale value)"),
    ),
    CostCategory(
        "bridge",
        "Bridge",
        ("on-prem before service: the months' work × bridge USD per GPU-hour"),
    ),
    CostCategory(
        "burst",
        "Burst",
        (
            "dedicated and on-prem in service: work beyond capacity × burst USD per GPU-hour "
            "(without a burst price it is shortfall and the option is infeasible)"
        ),
    ),
)
"""Every cost category, in the engine's order."""

if tuple(c.name for c in COST_CATEGORIES) != tuple(CATEGORIES):
    raise ImportError("COST_CATEGORIES must list costapp.tco.CATEGORIES, in their order")

CATEGORY_LABELS: dict[str, str] = {c.name: c.label for c in COST_CATEGORIES}
"""Each category's label on the charts."""

CATEGORY_FORMULAS: list[tuple[str, str]] = [(c.name, c.formula) for c in COST_CATEGORIES]
"""Each category's formula, as the run page lists them."""
