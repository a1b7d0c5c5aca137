"""A succeeded run's option as a forward plan in FOCUS 1.2 columns (the FinOps Open Cost and
Usage Specification), with the 1.3 names ``ServiceProviderName`` and ``HostProviderName`` beside
the deprecated ``ProviderName`` and ``PublisherName``: one row per month and charge, at the
deterministic figures or on the path at a percentile of the option's totals
(``costapp.tco.percentile_path``).

Month ``m`` of the plan is the calendar month ``m`` months after the month the run was created
(month 0, the signing, holds upfront payments, capex and setup). The charges of a month are
``costapp.runs.focus_charges``'s: ``Purchase`` for upfront payments, capex, financing and setup
(their amount spread over the months they pay for in ``EffectiveCost``, so ``ΣEffectiveCost ==
ΣBilledCost`` over the horizon), ``Usage`` for hourly and monthly charges and every commitment's
``Used`` and ``Unused`` GPU-hours (a committed option's, and each committed layer's of a mix),
``Credit`` for the resale value.

``ListCost`` is the on-demand price of the same work where it is known; for spot GPU-hours, which
the scenario prices at spot only, that is the offer's on-demand price as the catalog stood when
the run was created, else the rate of the plan's first on-demand cloud option on the same GPU
(:func:`spot_list_prices`); without either, the billed cost (the spot price is then its own list).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from costapp.models import SimulationRun
from costapp.runs.focus_charges import COLUMN_NAMES, FOCUS_COLUMNS, PlanCharges, month_rows
from costapp.scenarios.catalog import offer_price_then
from costapp.tco import OptionCharges, option_charges, path_futures, percentile_path, plan_build

__all__ = ["COLUMN_NAMES", "FOCUS_COLUMNS"]

PERCENTILE_RE = re.compile(r"^[Pp]?(\d{1,2})$")


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


def spot_list_prices(run: SimulationRun) -> dict[str, float]:
    """By option name, the on-demand price of a GPU-hour of each spot cloud option of the run:
    its offer's on-demand price when the run was created, else the rate of the first on-demand
    cloud option of the plan on the same GPU [USD/GPU-h]; a spot option with neither is left
    out."""
    options = [o for o in run.inputs["options"] if o.get("type") == "cloud"]
    found: dict[str, float] = {}
    for option in options:
        if option.get("billing") != "spot":
            continue
        offer = option.get("offer")
        price = None
        if isinstance(offer, dict):
            price = offer_price_then(
                provider=str(offer.get("provider")),
                instance=str(offer.get("instance")),
                region=str(offer.get("region")),
                billing="on_demand",
                moment=run.created,
            )
        if price is None:
            price = next(
                (
                    float(o["usd_per_gpu_hour"])
                    for o in options
                    if o.get("billing") == "on_demand" and o.get("gpu") == option.get("gpu")
                ),
                None,
            )
        if price is not None:
            found[str(option["name"])] = price
    return found


def plan_charges(run: SimulationRun, choice: FocusChoice) -> tuple[OptionCharges, int | None]:
    """The option's charges at the choice's figures, and the path they were taken on."""
    assert run.result is not None
    plan = plan_build(run.inputs, run.gpus)
    listed = spot_list_prices(run)
    if choice.percentile is None:
        return option_charges(plan, choice.option, None, listed), None
    simulation = dict(run.result["inputs"].get("simulation") or {})
    path = percentile_path(plan, simulation, choice.option, choice.percentile / 100.0)
    return option_charges(plan, choice.option, path_futures(simulation, path), listed), path


class _Where:
    """The provider and region an option's price came from, its source, and the instance of
    every option priced from an offer (by name: a mix's members are options of their own)."""

    def __init__(self, result: dict[str, Any], index: int) -> None:
        option = result["inputs"]["options"][index]
        offer = option.get("offer") if isinstance(option.get("offer"), dict) else None
        self.provider = "Price typed in the scenario"
        self.region: str | None = None
        if offer is not None:
            self.provider = str(offer.get("provider") or self.provider)
            self.region = offer.get("region")
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
        self.instances = {
            str(o["name"]): str(o["offer"]["instance"])
            for o in result["inputs"]["options"]
            if isinstance(o.get("offer"), dict) and o["offer"].get("instance")
        }


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
    plan = PlanCharges.of(charges, option_id, where.instances.get)
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
        yield from month_rows(plan, base, month)
