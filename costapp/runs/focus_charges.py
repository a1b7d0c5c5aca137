"""The rows of one month of a FOCUS forward plan (``costapp.runs.focus``), charge by charge.

- ``compute``: each commitment's (a committed option's, or a mix's committed layer's) ``Used``
  and ``Unused`` GPU-hours (``PricingCategory`` ``Committed``, months 1 … H, the two quantities
  adding up to the committed hours, the committed charge split between them by hours, the
  commitment's upfront spread over its term in their ``EffectiveCost``); the GPU-hours billed by
  the hour (``Hours``; ``Dynamic`` for spot, else ``Standard``: on-demand work, a commitment's
  overflow, a mix's ``rest``); what is left by the month (servers rented by the month).
- ``upfront``: a ``Purchase`` per commitment and term start, with the term's id and its committed
  GPU-hours within the horizon as ``CommitmentDiscountQuantity``.
- ``capex``, ``financing``, ``setup``: a ``Purchase`` (``EffectiveCost`` 0) and, over the months
  it pays for, an amortised ``Usage`` row (``BilledCost`` 0).
- ``residual``: a ``Credit``; ``burst`` and ``bridge``: GPU-hours at their rate; the rest by the
  month.

``ListCost`` is the on-demand price of the same work where it is known (on-demand and spot
hours, a commitment's used hours and overflow), the billed cost where the price is the list
(monthly charges, purchases), 0 for unused committed hours and amortised rows; never null.
Every ``Usage`` and ``Purchase`` row names a SKU (``SkuId``: the offer's instance for the compute
of an option priced from an offer, else the plan's own, ``{type}-{category}``) and a price of it
(``SkuPriceId``: the SKU, its pricing category and unit, and a commitment's term).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from costapp.tco import CommitmentMonths, OptionCharges

FOCUS_COLUMNS: list[tuple[str, str]] = [
    ("AvailabilityZone", "string"),
    ("BilledCost", "decimal"),
    ("BillingAccountId", "string"),
    ("BillingAccountName", "string"),
    ("BillingAccountType", "string"),
    ("BillingCurrency", "string"),
    ("BillingPeriodEnd", "datetime"),
    ("BillingPeriodStart", "datetime"),
    ("CapacityReservationId", "string"),
    ("CapacityReservationStatus", "string"),
    ("ChargeCategory", "string"),
    ("ChargeClass", "string"),
    ("ChargeDescription", "string"),
    ("ChargeFrequency", "string"),
    ("ChargePeriodEnd", "datetime"),
    ("ChargePeriodStart", "datetime"),
    ("CommitmentDiscountCategory", "string"),
    ("CommitmentDiscountId", "string"),
    ("CommitmentDiscountName", "string"),
    ("CommitmentDiscountQuantity", "decimal"),
    ("CommitmentDiscountStatus", "string"),
    ("CommitmentDiscountType", "string"),
    ("CommitmentDiscountUnit", "string"),
    ("ConsumedQuantity", "decimal"),
    ("ConsumedUnit", "string"),
    ("ContractedCost", "decimal"),
    ("ContractedUnitPrice", "decimal"),
    ("EffectiveCost", "decimal"),
    ("HostProviderName", "string"),
    ("InvoiceId", "string"),
    ("InvoiceIssuerName", "string"),
    ("ListCost", "decimal"),
    ("ListUnitPrice", "decimal"),
    ("PricingCategory", "string"),
    ("PricingCurrency", "string"),
    ("PricingCurrencyContractedUnitPrice", "decimal"),
    ("PricingCurrencyEffectiveCost", "decimal"),
    ("PricingCurrencyListUnitPrice", "decimal"),
    ("PricingQuantity", "decimal"),
    ("PricingUnit", "string"),
    ("ProviderName", "string"),
    ("PublisherName", "string"),
    ("RegionId", "string"),
    ("RegionName", "string"),
    ("ResourceId", "string"),
    ("ResourceName", "string"),
    ("ResourceType", "string"),
    ("ServiceCategory", "string"),
    ("ServiceName", "string"),
    ("ServiceProviderName", "string"),
    ("ServiceSubcategory", "string"),
    ("SkuId", "string"),
    ("SkuMeter", "string"),
    ("SkuPriceDetails", "string"),
    ("SkuPriceId", "string"),
    ("SubAccountId", "string"),
    ("SubAccountName", "string"),
    ("SubAccountType", "string"),
    ("x_ScenarioId", "string"),
    ("x_ScenarioName", "string"),
    ("x_RunId", "string"),
    ("x_OptionIndex", "integer"),
    ("x_OptionName", "string"),
    ("x_OptionType", "string"),
    ("x_Percentile", "string"),
    ("x_PathIndex", "integer"),
    ("x_EngineVersion", "string"),
    ("x_PlanMonth", "integer"),
    ("x_CostCategory", "string"),
    ("x_PriceSource", "string"),
    ("x_PriceStatedOn", "string"),
]
"""Every column of the export, in order, with its FOCUS data type (``decimal`` written as a
number, ``datetime`` as ISO 8601 in UTC); the plan's own facts are the ``x_`` columns."""

COLUMN_NAMES = [name for name, _kind in FOCUS_COLUMNS]

SERVICES = {
    "compute": ("Compute", "GPU compute"),
    "egress": ("Networking", "Data transfer out"),
    "support": ("Other", "Support"),
    "setup": ("Compute", "Setup"),
    "upfront": ("Compute", "Commitment upfront payment"),
    "capex": ("Compute", "Servers bought"),
    "financing": ("Compute", "Servers bought, financing payments"),
    "power": ("Other", "Power"),
    "colo": ("Other", "Colocation"),
    "staff": ("Other", "Staff"),
    "residual": ("Compute", "Servers' resale value"),
    "bridge": ("Compute", "Rented GPU-hours before the servers serve"),
    "burst": ("Compute", "Rented GPU-hours beyond the servers"),
}
PURCHASES = ("capex", "financing", "setup")
EPSILON_USD = 1e-9


def spread(usd: np.ndarray, *, term: int | None = None, first: int = 1) -> np.ndarray:
    """Each month's amount spread evenly over the months it pays for (the month itself when
    there are none), so the sum is unchanged: a term's, ``m + 1 … m + term``, else ``max(m +
    1, first) … H``."""
    horizon = len(usd) - 1
    found = np.zeros(len(usd))
    for m in np.flatnonzero(np.abs(usd) > EPSILON_USD):
        low = int(m) + 1 if term is not None else max(int(m) + 1, first)
        high = min(int(m) + term, horizon) if term is not None else horizon
        if low > high:
            low = high = int(m)
        found[low : high + 1] += usd[m] / (high - low + 1)
    return found


@dataclass(frozen=True)
class PlanCharges:
    """What every month's rows read: the option's charges, its id, its SKUs."""

    charges: OptionCharges
    option_id: str
    sku_of: Callable[[str], str | None]  # an option's name -> its offer's instance
    amortised: dict[str, np.ndarray]  # capex, financing, setup over the months they pay for
    upfront_spread: tuple[np.ndarray, ...]  # per commitment, its upfront over its terms

    @classmethod
    def of(cls, charges: OptionCharges, option_id: str, sku_of: Any) -> PlanCharges:
        first = charges.lead_time_months + 1
        return cls(
            charges,
            option_id,
            sku_of,
            {name: spread(charges.categories[name], first=first) for name in PURCHASES},
            tuple(spread(c.upfront_usd, term=max(1, c.term_months)) for c in charges.commitments),
        )

    def sku(self, category: str, name: str | None = None) -> str:
        """The SKU of a charge: the offer's instance for compute priced from an offer."""
        if category in ("compute", "upfront"):
            instance = self.sku_of(name or self.charges.name)
            if instance:
                return instance
        return f"{self.charges.type}-{category}"

    def term_id(self, commitment: CommitmentMonths, term: int) -> str:
        layer = "" if commitment.layer is None else f"-layer-{commitment.layer + 1}"
        return f"{self.option_id}{layer}-commitment-term-{term}"


def row(
    base: dict[str, Any],
    sku: str,
    unit_prices: tuple[float, float] | None = None,
    term: str = "",
    **fields: Any,
) -> dict[str, Any]:
    """One row: every column, the base's and the charge's, the unit prices from the costs (or
    ``unit_prices``, list and contracted, where the quantity is 0), its SKU and SKU price."""
    found = dict.fromkeys(COLUMN_NAMES) | base | fields
    quantity = found["PricingQuantity"]
    if quantity:
        found["ListUnitPrice"] = found["ListCost"] / quantity
        found["ContractedUnitPrice"] = found["ContractedCost"] / quantity
    elif quantity is not None and unit_prices is not None:
        found["ListUnitPrice"], found["ContractedUnitPrice"] = unit_prices
    if found["ChargeCategory"] == "Usage" and found["CommitmentDiscountStatus"] != "Unused":
        found["ConsumedQuantity"] = quantity
        found["ConsumedUnit"] = found["PricingUnit"]
    found["PricingCurrencyContractedUnitPrice"] = found["ContractedUnitPrice"]
    found["PricingCurrencyListUnitPrice"] = found["ListUnitPrice"]
    found["PricingCurrencyEffectiveCost"] = found["EffectiveCost"]
    found["SkuId"] = sku
    pricing = found["PricingCategory"] or found["ChargeCategory"]
    found["SkuPriceId"] = f"{sku}:{pricing}:{found['PricingUnit'] or 'none'}{term}"
    return found


def charge(
    plan: PlanCharges,
    base: dict[str, Any],
    name: str,
    description: str,
    sku_name: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    category, service = SERVICES[name]
    return row(
        base,
        plan.sku(name, sku_name),
        ServiceCategory=category,
        ServiceName=service,
        ChargeDescription=description,
        x_CostCategory=name,
        **fields,
    )


def month_rows(plan: PlanCharges, base: dict[str, Any], m: int) -> Iterator[dict[str, Any]]:
    """Month ``m``'s rows, category by category."""
    charges = plan.charges
    for name, months in charges.categories.items():
        usd = float(months[m])
        if name == "compute":
            yield from compute_rows(plan, base, m)
        elif name == "upfront":
            yield from upfront_rows(plan, base, m)
        elif name in PURCHASES:
            yield from purchase_rows(plan, base, m, name)
        elif abs(usd) <= EPSILON_USD:
            continue
        elif name == "residual":
            yield charge(
                plan,
                base,
                name,
                "Servers sold at the end of the horizon",
                ChargeCategory="Credit",
                ChargeFrequency="One-Time",
                BilledCost=usd,
                EffectiveCost=usd,
                ListCost=usd,
                ContractedCost=usd,
            )
        elif name in ("burst", "bridge"):
            rate = getattr(charges, f"{name}_usd_per_gpu_hour")
            if rate:
                yield hours_row(plan, base, m, name, usd, rate, None)
            else:
                yield monthly_row(plan, base, m, name, usd)
        else:
            yield monthly_row(plan, base, m, name, usd)


def monthly_row(
    plan: PlanCharges, base: dict[str, Any], m: int, name: str, usd: float, pricing: str = ""
) -> dict[str, Any]:
    return charge(
        plan,
        base,
        name,
        f"{SERVICES[name][1]}, month {m} of the plan",
        ChargeCategory="Usage",
        ChargeFrequency="Recurring",
        PricingCategory=pricing or "Standard",
        PricingQuantity=1.0,
        PricingUnit="Months",
        BilledCost=usd,
        EffectiveCost=usd,
        ListCost=usd,
        ContractedCost=usd,
    )


def hours_row(
    plan: PlanCharges,
    base: dict[str, Any],
    m: int,
    name: str,
    usd: float,
    rate: float,
    list_rate: float | None,
    pricing: str = "Standard",
    description: str = "",
    sku_name: str | None = None,
) -> dict[str, Any]:
    """GPU-hours at ``rate``, their list cost at ``list_rate`` (the billed cost without one)."""
    hours = usd / rate
    return charge(
        plan,
        base,
        name,
        description or f"{SERVICES[name][1]}, month {m} of the plan",
        sku_name,
        ChargeCategory="Usage",
        ChargeFrequency="Usage-Based",
        PricingCategory=pricing,
        PricingQuantity=hours,
        PricingUnit="Hours",
        BilledCost=usd,
        EffectiveCost=usd,
        ListCost=usd if list_rate is None else hours * list_rate,
        ContractedCost=usd,
    )


def compute_rows(plan: PlanCharges, base: dict[str, Any], m: int) -> Iterator[dict[str, Any]]:
    """The month's compute: commitments, then hours, then what is left by the month."""
    charges = plan.charges
    left = float(charges.categories["compute"][m])
    for commitment, upfront in zip(charges.commitments, plan.upfront_spread, strict=True):
        yield from commitment_rows(plan, base, m, commitment, float(upfront[m]))
        left -= float(commitment.committed_usd[m])
    by_hour = float(charges.hourly_compute_usd[m])
    rate = None if charges.hourly_usd is None else float(charges.hourly_usd[m])
    if abs(by_hour) > EPSILON_USD and rate:
        listed = None if charges.list_usd is None else float(charges.list_usd[m])
        overflow = charges.type == "cloud" and charges.billing == "committed"
        yield hours_row(
            plan,
            base,
            m,
            "compute",
            by_hour,
            rate,
            listed,
            "Dynamic" if charges.billing == "spot" else "Standard",
            "GPU-hours beyond the commitment, at the on-demand rate"
            if overflow
            else f"GPU-hours rented by the hour, month {m} of the plan",
            charges.rest,
        )
        left -= by_hour
    if abs(left) > EPSILON_USD:
        yield monthly_row(plan, base, m, "compute", left)


def commitment_rows(
    plan: PlanCharges,
    base: dict[str, Any],
    m: int,
    commitment: CommitmentMonths,
    upfront_share: float,
) -> Iterator[dict[str, Any]]:
    """A month's committed GPU-hours: the ``Used`` and the ``Unused`` row (months 1 … H)."""
    held = float(commitment.held_gpu_hours[m])
    if m == 0 or held <= 0.0:
        return
    used = float(commitment.used_gpu_hours[m])
    amount = float(commitment.committed_usd[m])
    term = (m - 1) // max(1, commitment.term_months) + 1
    listed = commitment.list_usd
    for status, hours in (("Used", used), ("Unused", held - used)):
        share = hours / held
        list_rate = amount / held if listed is None else float(listed[m])
        if status == "Unused":
            list_rate = 0.0
        yield row(
            base,
            plan.sku("compute", commitment.name),
            (list_rate, amount / held),
            f":{commitment.term_months}m",
            ServiceCategory="Compute",
            ServiceName="GPU compute",
            ChargeDescription=(
                f"Committed GPU-hours of {commitment.name}, {status.lower()}, month {m} of the plan"
            ),
            x_CostCategory="compute",
            ChargeCategory="Usage",
            ChargeFrequency="Usage-Based",
            PricingCategory="Committed",
            PricingQuantity=hours,
            PricingUnit="Hours",
            BilledCost=amount * share,
            EffectiveCost=(amount + upfront_share) * share,
            ListCost=hours * list_rate,
            ContractedCost=amount * share,
            **commitment_fields(plan, commitment, term),
            CommitmentDiscountStatus=status,
            CommitmentDiscountQuantity=hours,
            CommitmentDiscountUnit="Hours",
        )


def commitment_fields(plan: PlanCharges, commitment: CommitmentMonths, term: int) -> dict:
    return {
        "CommitmentDiscountId": plan.term_id(commitment, term),
        "CommitmentDiscountName": f"{commitment.name}, term {term}",
        "CommitmentDiscountCategory": "Usage",
        "CommitmentDiscountType": "Committed GPU-hours",
    }


def upfront_rows(plan: PlanCharges, base: dict[str, Any], m: int) -> Iterator[dict[str, Any]]:
    """Each commitment's upfront paid in month ``m`` (a term's start), then any other."""
    charges = plan.charges
    left = float(charges.categories["upfront"][m])
    horizon = charges.horizon_months
    for commitment in charges.commitments:
        usd = float(commitment.upfront_usd[m])
        if abs(usd) <= EPSILON_USD:
            continue
        left -= usd
        term_months = max(1, commitment.term_months)
        last = min(m + term_months, horizon)
        held = float(np.sum(commitment.held_gpu_hours[m + 1 : last + 1]))
        yield row(
            base,
            plan.sku("upfront", commitment.name),
            (usd, usd),
            f":{commitment.term_months}m",
            ServiceCategory="Compute",
            ServiceName=SERVICES["upfront"][1],
            ChargeDescription=f"Upfront payment of {commitment.name}'s term {m // term_months + 1}",
            x_CostCategory="upfront",
            ChargeCategory="Purchase",
            ChargeFrequency="One-Time",
            PricingCategory="Committed",
            PricingQuantity=1.0,
            PricingUnit="Units",
            BilledCost=usd,
            EffectiveCost=0.0,
            ListCost=usd,
            ContractedCost=usd,
            **commitment_fields(plan, commitment, m // term_months + 1),
            CommitmentDiscountQuantity=held,
            CommitmentDiscountUnit="Hours",
        )
    if abs(left) > EPSILON_USD:  # an upfront no commitment holds (none the engine makes)
        yield monthly_row(plan, base, m, "upfront", left)


def purchase_rows(
    plan: PlanCharges, base: dict[str, Any], m: int, name: str
) -> Iterator[dict[str, Any]]:
    """A purchase paid in month ``m``, and the month's share of the purchases it pays for."""
    usd = float(plan.charges.categories[name][m])
    if abs(usd) > EPSILON_USD:
        yield charge(
            plan,
            base,
            name,
            f"{SERVICES[name][1]}, month {m} of the plan",
            ChargeCategory="Purchase",
            ChargeFrequency="One-Time" if name != "financing" else "Recurring",
            PricingCategory="Standard",
            PricingQuantity=1.0,
            PricingUnit="Units",
            BilledCost=usd,
            EffectiveCost=0.0,
            ListCost=usd,
            ContractedCost=usd,
        )
    share = float(plan.amortised[name][m])
    if abs(share) > EPSILON_USD:
        yield charge(
            plan,
            base,
            name,
            f"{SERVICES[name][1]}, amortised over the months it pays for",
            ChargeCategory="Usage",
            ChargeFrequency="Recurring",
            PricingCategory="Standard",
            PricingQuantity=1.0,
            PricingUnit="Months",
            BilledCost=0.0,
            EffectiveCost=share,
            ListCost=0.0,
            ContractedCost=0.0,
        )
