"""A succeeded run's option as a forward plan in FOCUS 1.2 columns (the FinOps Open Cost and
Usage Specification), with the 1.3 names ``ServiceProviderName`` and ``HostProviderName`` beside
the deprecated ``ProviderName`` and ``PublisherName``: one row per month and charge, at the
deterministic figures or on the path at a percentile of the option's totals
(``costapp.tco.percentile_path``).

Month ``m`` of the plan is the calendar month ``m`` months after the month the run was created
(month 0, the signing, holds upfront payments, capex and setup). The charges:

- ``Purchase``: upfront payments (``Committed``, with the commitment's id), capex, financing
  payments and setup (``Standard``). Their ``EffectiveCost`` is 0; the amount is spread over
  the months it pays for (an upfront over its term, capex, financing and setup over the months
  after it within the horizon, on-prem servers from the month they serve), on the commitment's
  rows for an upfront and on an "amortised" ``Usage`` row (``BilledCost`` 0) otherwise, so
  ``ΣEffectiveCost == ΣBilledCost`` over the horizon.
- ``Usage``: hourly charges (``PricingUnit`` ``Hours``, ``PricingQuantity`` the GPU-hours) and
  monthly ones (``Months``, quantity 1). ``PricingCategory`` ``Standard``, ``Dynamic`` for spot,
  ``Committed`` for a commitment's hours: per month one ``Used`` and one ``Unused`` row whose
  ``CommitmentDiscountQuantity`` add up to the committed GPU-hours.
- ``Credit``: the resale value, negative.

``ListCost`` is the on-demand price of the same work where the option knows it (on-demand hours,
a commitment's used hours at its on-demand rate), the billed cost elsewhere, and 0 for unused
commitment hours and amortised rows; ``ContractedCost`` is the billed cost (0 on amortised rows).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from costapp.models import SimulationRun
from costapp.tco import OptionCharges, option_charges, path_futures, percentile_path, plan_build

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

PERCENTILE_RE = re.compile(r"^[Pp]?(\d{1,2})$")

_SERVICE = {
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
_HOURLY = {"burst", "bridge"}
_PURCHASE = {"upfront", "capex", "financing", "setup"}
_EPSILON_USD = 1e-9


class FocusRequestError(ValueError):
    """A request the export cannot answer; ``field`` names the parameter at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class FocusChoice:
    """Which option, at which figures, in which file."""

    option: int
    percentile: int | None  # None: the deterministic figures
    file_format: str  # "csv" or "parquet"


def focus_choice(
    result: dict[str, Any], *, option: str = "", percentile: str = "", file_format: str = ""
) -> FocusChoice:
    """Read the request's ``option`` (a name or a 1-based number; the cheapest when empty),
    ``percentile`` (``P50``, ``P90`` or any of 1 … 99; the deterministic figures when empty)
    and ``format`` (``csv``, the default, or ``parquet``)."""
    names = [o["name"] for o in result["options"]]
    option = option.strip()
    if not option:
        cheapest = result.get("cheapest")
        index = names.index(cheapest) if cheapest in names else 0
    elif option in names:
        index = names.index(option)
    elif option.isdigit() and 1 <= int(option) <= len(names):
        index = int(option) - 1
    else:
        raise FocusRequestError(
            "option", f"no option {option!r}: give its name or its number, 1 to {len(names)}"
        )
    chosen: int | None = None
    percentile = percentile.strip()
    if percentile:
        found = PERCENTILE_RE.match(percentile)
        if found is None or not 1 <= int(found.group(1)) <= 99:
            raise FocusRequestError("percentile", "give P50, P90 or any percentile from 1 to 99")
        paths = int((result["inputs"].get("simulation") or {}).get("paths") or 0)
        if paths <= 0:
            raise FocusRequestError("percentile", "this run simulated no paths")
        chosen = int(found.group(1))
    kind = (file_format or "csv").strip().lower()
    if kind not in ("csv", "parquet"):
        raise FocusRequestError("format", "give csv or parquet")
    return FocusChoice(index, chosen, kind)


def focus_filename(run: SimulationRun, choice: FocusChoice) -> str:
    """The download's file name."""
    at = f"p{choice.percentile}" if choice.percentile is not None else "deterministic"
    return f"run-{run.pk}-option-{choice.option + 1}-{at}-focus.{choice.file_format}"


def _month_start(created: datetime, months: int) -> datetime:
    index = created.year * 12 + created.month - 1 + months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def plan_charges(run: SimulationRun, choice: FocusChoice) -> tuple[OptionCharges, int | None]:
    """The option's charges at the choice's figures, and the path they were taken on."""
    assert run.result is not None
    plan = plan_build(run.inputs, run.gpus)
    if choice.percentile is None:
        return option_charges(plan, choice.option), None
    simulation = dict(run.result["inputs"].get("simulation") or {})
    path = percentile_path(plan, simulation, choice.option, choice.percentile / 100.0)
    return option_charges(plan, choice.option, path_futures(simulation, path)), path


def _spread(usd: np.ndarray, first_of: Any, horizon: int) -> np.ndarray:
    """Each month's amount spread evenly over months ``first_of(m) … H`` (the month itself when
    that is empty), so the sum is unchanged."""
    spread = np.zeros(horizon + 1)
    for m in np.flatnonzero(np.abs(usd) > _EPSILON_USD):
        first, last = first_of(int(m))
        if first > last:
            first = last = int(m)
        spread[first : last + 1] += usd[m] / (last - first + 1)
    return spread


class _Where:
    """The provider, region and SKU an option's price came from, and its source."""

    def __init__(self, result: dict[str, Any], index: int) -> None:
        option = result["inputs"]["options"][index]
        offer = option.get("offer") if isinstance(option.get("offer"), dict) else None
        self.provider = "Price typed in the scenario"
        self.region: str | None = None
        self.sku: str | None = None
        if offer is not None:
            self.provider = str(offer.get("provider") or self.provider)
            self.region = offer.get("region")
            self.sku = offer.get("instance")
        elif option.get("quote"):
            self.provider = "A quote"
        elif option["type"] == "api":
            self.provider = "Hosted model API"
        elif option["type"] == "on_prem":
            self.provider = "Own servers"
        prefix = f"options[{index}]"
        sources = [row for row in result.get("sources") or [] if row.get("path", "") == prefix]
        sources += [
            row for row in result.get("sources") or [] if row.get("path", "").startswith(prefix)
        ]
        self.source = sources[0].get("source") if sources else None
        self.stated_on = sources[0].get("stated_on") if sources else None


def focus_rows(
    run: SimulationRun, result: dict[str, Any], choice: FocusChoice
) -> Iterator[dict[str, Any]]:
    """The export's rows (dicts keyed by ``COLUMN_NAMES``), month by month."""
    charges, path = plan_charges(run, choice)
    where = _Where(result, choice.option)
    horizon = charges.horizon_months
    scenario_id = str(run.scenario_id)
    option_id = f"run-{run.pk}-option-{choice.option + 1}"
    common = {
        "BillingAccountId": f"scenario-{scenario_id}",
        "BillingAccountName": str(result.get("name") or run.scenario.name),
        "BillingAccountType": "Forward plan",
        "BillingCurrency": "USD",
        "PricingCurrency": "USD",
        "InvoiceIssuerName": where.provider,
        "ProviderName": where.provider,
        "PublisherName": where.provider,
        "ServiceProviderName": where.provider,
        "HostProviderName": where.provider,
        "RegionId": where.region,
        "RegionName": where.region,
        "SkuId": where.sku,
        "SubAccountId": option_id,
        "SubAccountName": charges.name,
        "SubAccountType": "Option",
        "ResourceId": option_id,
        "ResourceName": charges.name,
        "ResourceType": charges.type,
        "x_ScenarioId": scenario_id,
        "x_ScenarioName": str(result.get("name") or run.scenario.name),
        "x_RunId": str(run.pk),
        "x_OptionIndex": choice.option + 1,
        "x_OptionName": charges.name,
        "x_OptionType": charges.type,
        "x_Percentile": None if choice.percentile is None else f"P{choice.percentile}",
        "x_PathIndex": path,
        "x_EngineVersion": str(result.get("engine_version") or run.engine_version),
        "x_PriceSource": where.source,
        "x_PriceStatedOn": where.stated_on,
    }
    categories = charges.categories
    commitment = charges.commitment
    term = commitment.term_months if commitment is not None else 1
    amortised = {
        name: _spread(
            categories[name],
            (lambda m: (m + 1, min(m + term, horizon)))
            if name == "upfront"
            else (lambda m: (max(m + 1, charges.lead_time_months + 1), horizon)),
            horizon,
        )
        for name in _PURCHASE
    }
    created = run.created
    for month in range(horizon + 1):
        start = _month_start(created, month)
        end = _month_start(created, month + 1)
        base = {
            **common,
            "BillingPeriodStart": start,
            "BillingPeriodEnd": end,
            "ChargePeriodStart": start,
            "ChargePeriodEnd": end,
            "InvoiceId": f"{option_id}-{start:%Y-%m}",
            "x_PlanMonth": month,
        }
        yield from _month_rows(charges, base, month, amortised, option_id)


def _row(base: dict[str, Any], **fields: Any) -> dict[str, Any]:
    row = {name: None for name in COLUMN_NAMES} | base | fields
    quantity = row["PricingQuantity"]
    if quantity:
        row["ListUnitPrice"] = row["ListCost"] / quantity
        row["ContractedUnitPrice"] = row["ContractedCost"] / quantity
    if row["ChargeCategory"] == "Usage" and row["CommitmentDiscountStatus"] != "Unused":
        row["ConsumedQuantity"] = quantity
        row["ConsumedUnit"] = row["PricingUnit"]
    row["PricingCurrencyContractedUnitPrice"] = row["ContractedUnitPrice"]
    row["PricingCurrencyListUnitPrice"] = row["ListUnitPrice"]
    row["PricingCurrencyEffectiveCost"] = row["EffectiveCost"]
    return row


def _charge(base: dict[str, Any], name: str, description: str, **fields: Any) -> dict[str, Any]:
    category, service = _SERVICE[name]
    return _row(
        base,
        ServiceCategory=category,
        ServiceName=service,
        ChargeDescription=description,
        x_CostCategory=name,
        **fields,
    )


def _month_rows(
    charges: OptionCharges,
    base: dict[str, Any],
    m: int,
    amortised: dict[str, np.ndarray],
    option_id: str,
) -> Iterator[dict[str, Any]]:
    categories = charges.categories
    commitment = charges.commitment
    pricing = {"spot": "Dynamic"}.get(charges.billing or "", "Standard")
    for name, months in categories.items():
        usd = float(months[m])
        if name == "compute" and commitment is not None:
            yield from _commitment_rows(charges, base, m, float(amortised["upfront"][m]), option_id)
            usd -= float(commitment.committed_usd[m])
            if abs(usd) <= _EPSILON_USD:
                continue
            pricing_here = "Standard"
            description = "GPU-hours beyond the commitment, at the on-demand rate"
        else:
            pricing_here = pricing
            description = f"{_SERVICE[name][1]}, month {m} of the plan"
        if name in _PURCHASE:
            if abs(usd) > _EPSILON_USD:
                committed = name == "upfront" and commitment is not None
                yield _charge(
                    base,
                    name,
                    description,
                    ChargeCategory="Purchase",
                    ChargeFrequency="One-Time" if name != "financing" else "Recurring",
                    PricingCategory="Committed" if committed else "Standard",
                    PricingQuantity=1.0,
                    PricingUnit="Units",
                    BilledCost=usd,
                    EffectiveCost=0.0,
                    ListCost=usd,
                    ContractedCost=usd,
                    CommitmentDiscountId=_term_id(option_id, m, charges) if committed else None,
                    CommitmentDiscountCategory="Usage" if committed else None,
                    CommitmentDiscountType="Committed GPU-hours" if committed else None,
                    CommitmentDiscountName=f"{charges.name}, term {m // max(1, commitment.term_months) + 1}"
                    if committed and commitment is not None
                    else None,
                )
            share = float(amortised[name][m])
            if (name != "upfront" or commitment is None) and abs(share) > _EPSILON_USD:
                yield _charge(
                    base,
                    name,
                    f"{_SERVICE[name][1]}, amortised over the months it pays for",
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
            continue
        if abs(usd) <= _EPSILON_USD:
            continue
        if name == "residual":
            yield _charge(
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
            continue
        rate = _hourly_rate(charges, name, m)
        if rate:
            hours = usd / rate
            listed = charges.list_usd
            list_cost = (
                hours * float(listed[m]) if name == "compute" and listed is not None else usd
            )
            yield _charge(
                base,
                name,
                description,
                ChargeCategory="Usage",
                ChargeFrequency="Usage-Based",
                PricingCategory=pricing_here,
                PricingQuantity=hours,
                PricingUnit="Hours",
                BilledCost=usd,
                EffectiveCost=usd,
                ListCost=list_cost,
                ContractedCost=usd,
            )
        else:
            yield _charge(
                base,
                name,
                description,
                ChargeCategory="Usage",
                ChargeFrequency="Recurring",
                PricingCategory=pricing_here,
                PricingQuantity=1.0,
                PricingUnit="Months",
                BilledCost=usd,
                EffectiveCost=usd,
                ListCost=usd,
                ContractedCost=usd,
            )


def _hourly_rate(charges: OptionCharges, name: str, m: int) -> float | None:
    """The price of one GPU-hour of an hourly charge in month ``m``, None for other charges."""
    if name == "compute" and charges.hourly_usd is not None and charges.type == "cloud":
        rate = float(charges.hourly_usd[m])
        return rate if rate > 0.0 else None
    if name == "burst" and charges.burst_usd_per_gpu_hour:
        return charges.burst_usd_per_gpu_hour
    if name == "bridge" and charges.bridge_usd_per_gpu_hour:
        return charges.bridge_usd_per_gpu_hour
    return None


def _term_id(option_id: str, month: int, charges: OptionCharges) -> str:
    """The id of the commitment's term that month ``month`` pays for (an upfront at a term's
    start month pays for that term; the hours of month ``m`` ≥ 1 are term ``(m − 1) // T``)."""
    assert charges.commitment is not None
    term = max(1, charges.commitment.term_months)
    index = month // term if charges.categories["upfront"][month] else (month - 1) // term
    return f"{option_id}-commitment-term-{index + 1}"


def _commitment_rows(
    charges: OptionCharges, base: dict[str, Any], m: int, upfront_share: float, option_id: str
) -> Iterator[dict[str, Any]]:
    """A month's committed GPU-hours: the ``Used`` and the ``Unused`` row (months 1 … H)."""
    commitment = charges.commitment
    assert commitment is not None
    held = float(commitment.held_gpu_hours[m])
    if m == 0 or held <= 0.0:
        return
    used = float(commitment.used_gpu_hours[m])
    charge = float(commitment.committed_usd[m])
    term_id = f"{option_id}-commitment-term-{(m - 1) // max(1, commitment.term_months) + 1}"
    listed = charges.list_usd
    for status, hours in (("Used", used), ("Unused", held - used)):
        share = hours / held
        yield _row(
            base,
            ServiceCategory="Compute",
            ServiceName="GPU compute",
            ChargeDescription=f"Committed GPU-hours, {status.lower()}, month {m} of the plan",
            x_CostCategory="compute",
            ChargeCategory="Usage",
            ChargeFrequency="Usage-Based",
            PricingCategory="Committed",
            PricingQuantity=hours,
            PricingUnit="Hours",
            BilledCost=charge * share,
            EffectiveCost=(charge + upfront_share) * share,
            ListCost=(hours * float(listed[m]) if listed is not None else charge * share)
            if status == "Used"
            else 0.0,
            ContractedCost=charge * share,
            CommitmentDiscountId=term_id,
            CommitmentDiscountName=f"{charges.name}, term {(m - 1) // max(1, commitment.term_months) + 1}",
            CommitmentDiscountCategory="Usage",
            CommitmentDiscountType="Committed GPU-hours",
            CommitmentDiscountStatus=status,
            CommitmentDiscountQuantity=hours,
            CommitmentDiscountUnit="Hours",
        )
