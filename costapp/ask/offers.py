"""Which catalog prices a question's plan rests on: per GPU and billing the acceptable offers by
price (in the provider kinds and regions asked, no older than asked; flag-free with known egress
wherever such an offer exists, else every one of them, said so), the first chosen and the next few
kept, and each price in words: its seller, region, age and flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.db.models import Case, Exists, IntegerField, OuterRef, Value, When

from hardware.confidence import price_confidence, with_confidence
from hardware.geography import GEOGRAPHIES
from hardware.geography import LABELS as GEOGRAPHY_LABELS
from hardware.models import EgressTier
from hardware.selectors import current_prices

NEXT_OFFERS = 3
"""How many next acceptable offers are kept after the chosen one (priced again by the step)."""


@dataclass
class OfferChoice:
    """The acceptable prices of one GPU and billing, cheapest first; ``strict``: whether they are
    all flag-free with known egress (False: none such was found, so every price asked counts)."""

    prices: list[Any]
    strict: bool
    today: date
    relaxed: list[str] = field(default_factory=list)

    @property
    def chosen(self) -> Any | None:
        return self.prices[0] if self.prices else None

    @property
    def next(self) -> list[Any]:
        return self.prices[1 : 1 + NEXT_OFFERS]


def acceptable_prices(gpu: str, billing: str, answers: dict[str, Any], today: date) -> OfferChoice:
    """The prices of ``gpu`` for ``billing`` the question accepts, by USD per GPU-hour (with
    ``answers["provider"]``, that provider's alone)."""
    rows = with_confidence(
        current_prices().filter(offer__gpu__slug=gpu, billing=billing)
    ).select_related("offer__provider", "offer__gpu", "region")
    if answers.get("provider"):
        rows = rows.filter(offer__provider__slug=answers["provider"])
    kinds = answers.get("kinds") or []
    if kinds:
        rows = rows.filter(offer__provider__kind__in=kinds)
    region = answers.get("region") or "any"
    if region != "any":
        rows = rows.filter(region__geography=region)
    days = answers.get("max_price_age_days")
    if days:
        rows = rows.filter(stated_on__gte=today - timedelta(days=int(days)))
    place = Case(
        *(When(region__geography=g, then=Value(i)) for i, g in enumerate(GEOGRAPHIES)),
        default=Value(len(GEOGRAPHIES)),
        output_field=IntegerField(),
    )
    rows = rows.annotate(place=place).order_by(
        "usd_per_gpu_hour", "offer__provider__slug", "offer__instance_type", "place",
        "region__code",
    )  # fmt: skip
    egress = Exists(EgressTier.objects.filter(provider=OuterRef("offer__provider")))
    strict = _distinct(rows.filter(egress, flag=""))
    if strict:
        return OfferChoice(strict, True, today)
    return OfferChoice(_distinct(rows), False, today)


def _distinct(rows: Any) -> list[Any]:
    """The first row of each offer (provider and instance) in ``rows``' order, the chosen and the
    next few: one offer in many regions at one price is one offer, in its first region."""
    found: list[Any] = []
    seen: set[tuple[str, str]] = set()
    for row in rows[:200]:
        key = (row.offer.provider.slug, row.offer.instance_type)
        if key not in seen:
            seen.add(key)
            found.append(row)
            if len(found) > NEXT_OFFERS:
                break
    return found


def price_words(price: Any, today: date) -> str:
    """ "Lambda gpu_8x_h100 in us-east-1 (Americas), $2.99 per GPU-hour, stated 2026-11-02 (33 days
    ago); flags: none"."""
    region = price.region
    where = GEOGRAPHY_LABELS.get(region.geography or "", "")
    place = f"{region.code} ({where})" if where else region.code
    if price.stated_on is None:
        age = "stated on no known day"
    else:
        age = f"stated {price.stated_on:%Y-%m-%d} ({(today - price.stated_on).days} days ago)"
    judged = price_confidence(price, today=today)
    flags = "; ".join(judged.short) if judged.short else "none"
    return (
        f"{price.offer.provider.name} {price.offer.instance_type} in {place}, "
        f"${price.usd_per_gpu_hour:,.2f} per GPU-hour, {age}; concerns: {flags}"
    )


def offer_ref(price: Any) -> dict[str, str]:
    return {
        "provider": price.offer.provider.slug,
        "instance": price.offer.instance_type,
        "region": price.region.code,
    }


def alternatives(choice: OfferChoice) -> list[dict[str, Any]]:
    """The next acceptable offers as the step prices them again: words and rate."""
    return [
        {"words": price_words(p, choice.today), "usd_per_gpu_hour": float(p.usd_per_gpu_hour)}
        for p in choice.next
    ]
