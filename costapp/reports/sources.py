"""The result's ``sources`` as a finance lead reads them: which figure of which option, where it
came from, when its source stated it, each flag in words, and a link to the catalog row; and the
prices the scenario typed itself ("typed in the scenario, no source"). A cloud offer's price
says its confidence in words (``hardware.confidence``), judged from what the run recorded of it
when it was created: its age, its flag, its GPU variant, its provider's egress, and whether the
provider is a marketplace; a hosted model's token price by its age and flag.

A run made before format 1.2 recorded no sources: :func:`source_rows` then says so instead of
calling its prices typed.
"""

import re
from collections.abc import Collection
from datetime import date
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from hardware.confidence import PriceConfidence, confidence_of, token_price_confidence_of
from hardware.models import ProviderKind
from hardware.selectors import marketplace_providers, provider_names

from .field_labels import label_of
from .warning_words import warning_in_words

FLAG_WORDS = {
    "stale": "stale: stated more than {days} days ago, it may no longer hold",
    "flagged": "flagged in the catalog as looking wrong",
    "unconfirmed_variant": "the GPU variant is not confirmed",
    "egress_unknown": "egress price unknown: no egress cost is counted",
    "demo": "demonstration data, not a quote anyone received",
    "draft": "a draft quote",
    "expired": "the quote has expired",
}
"""Each flag of ``sources`` in words."""

UNKNOWN_AGE = "of unknown age: its source states no day"

PRICE_FIELDS = {
    "cloud": ("usd_per_gpu_hour", "on_demand_usd_per_gpu_hour", "egress_usd_per_gb"),
    "dedicated": ("usd_per_server_month", "setup_usd", "overage_usd_per_tb"),
    "on_prem": (
        "capex_usd_per_server",
        "usd_per_kwh",
        "colo_usd_per_kw_month",
        "staff_usd_per_month",
        "support_fraction_per_year",
        "residual_fraction",
    ),
    "api": ("usd_per_million_tokens", "usd_per_million_input_tokens"),
}
"""The figures of each option type that are prices (or price-like rates): shown as typed in the
scenario when no catalog reference supplied them and the scenario gives one above 0."""

SOURCES_SINCE = (1, 2)
"""The engine version from which runs record their sources."""

_PATH = re.compile(r"^options\[(\d+)\]\.(\w+)$")
_ASSUMPTION = re.compile(r"\(assumption ([\w+]+), ")


def flag_words(flags: list[str], stated_on: str | None) -> list[str]:
    """Each flag in words; ``stale`` without a day says the figure is of unknown age."""
    words = []
    for flag in flags:
        if flag == "stale" and stated_on is None:
            words.append(UNKNOWN_AGE)
        else:
            words.append(FLAG_WORDS.get(flag, flag).format(days=settings.PRICE_STALE_DAYS))
    return words


def _link(option: dict[str, Any], field: str) -> str | None:
    """The catalog page of the row behind a figure of ``option``."""
    offer = option.get("offer")
    if option.get("type") == "cloud" and isinstance(offer, dict):
        query = {"provider": offer.get("provider"), "region": offer.get("region")}
        return f"{reverse('prices')}?{urlencode(query)}"
    if isinstance(option.get("quote"), int) and field != "staff_usd_per_month":
        return f"{reverse('quotes')}#{option['type']}-quote-{option['quote']}"
    token_price = option.get("token_price")
    if option.get("type") == "api" and isinstance(token_price, dict):
        query = {"provider": token_price.get("provider"), "model": token_price.get("model")}
        return f"{reverse('token-prices')}?{urlencode(query)}"
    return None


def source_words(source: str, option: dict[str, Any], providers: dict[str, str]) -> str:
    """A source as a person reads it: a price file or feed by what it is, never its path
    (``warning_in_words``), and an offer's provider by its name where its slug leads the offer
    (``skypilot-v8/lambda.csv: lambda gpu_8x_h100_sxm5 in us-east-1, on-demand`` reads
    "SkyPilot's price catalog for Lambda: Lambda gpu_8x_h100_sxm5 in us-east-1, on-demand")."""
    text = warning_in_words(source, provider_names=providers)
    offer = option.get("offer")
    slug = offer.get("provider") if isinstance(offer, dict) else None
    if isinstance(slug, str) and slug in providers:
        text = re.sub(
            rf"(^|: ){re.escape(slug)}(?=[ :])", rf"\g<1>{providers[slug]}", text, count=1
        )
    return text


def _recorded(engine_version: str) -> bool:
    try:
        return tuple(int(part) for part in engine_version.split(".")[:2]) >= SOURCES_SINCE
    except ValueError:
        return False


OFFER_PRICE_FIELDS = frozenset({"usd_per_gpu_hour", "on_demand_usd_per_gpu_hour"})
"""The figures a cloud offer's catalog price supplies."""
TOKEN_PRICE_FIELDS = frozenset({"usd_per_million_tokens", "usd_per_million_input_tokens"})
"""The figures a hosted model's catalog token price supplies."""


def _day(text: Any) -> date | None:
    try:
        return date.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def offer_price_confidence(
    *,
    option: dict[str, Any],
    flags: Collection[str],
    stated_on: Any,
    egress_unknown: bool,
    marketplaces: Collection[str],
    today: date,
) -> PriceConfidence:
    """The confidence of an offer's price as a run recorded it (``hardware.confidence``)."""
    offer = option.get("offer")
    provider = offer.get("provider") if isinstance(offer, dict) else None
    return confidence_of(
        stated_on=_day(stated_on),
        flag=FLAG_WORDS["flagged"] if "flagged" in flags else "",
        provider_kind=ProviderKind.MARKETPLACE if provider in marketplaces else "",
        egress_known=not egress_unknown,
        gpu_confirmed="unconfirmed_variant" not in flags,
        today=today,
    )


def source_rows(
    *,
    result: dict[str, Any],
    engine_version: str,
    today: date | None = None,
    marketplaces: Collection[str] | None = None,
    providers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The rows of the run page's sources table: ``sourced`` (one per ``sources`` row, in its
    order; a cloud offer's price, and a hosted model's token price, with its ``confidence`` judged
    as of ``today``, the day the run
    was created, ``marketplaces`` the providers that are marketplaces and ``providers`` their
    names by slug, each from the catalog when not given), ``typed`` (the prices the scenario gave itself) and ``recorded`` (False for a run
    made before sources were recorded, whose figures cannot be told apart)."""
    inputs = result.get("inputs") or {}
    options = inputs.get("options") or []
    rows = result.get("sources") or []
    egress_unknown = {
        str(row.get("path", "")).removesuffix(".offer")
        for row in rows
        if "egress_unknown" in (row.get("flags") or [])
    }
    if marketplaces is None:
        marketplaces = marketplace_providers()
    today = today or timezone.localdate()
    if providers is None:
        providers = provider_names()
    sourced = []
    covered: set[tuple[int, str]] = set()
    for row in rows:
        match = _PATH.match(str(row.get("path", "")))
        index, field = (int(match[1]), match[2]) if match else (-1, str(row.get("path")))
        option = options[index] if 0 <= index < len(options) else {}
        covered.add((index, field))
        if field == "offer":
            covered.add((index, "egress_tiers"))
        assumption = _ASSUMPTION.search(str(row.get("source", "")))
        link: str | None
        if assumption:
            link = f"{reverse('assumptions')}#assumption-{assumption[1].split('+')[0]}"
        else:
            link = _link(option, field)
        confidence = None
        if field in OFFER_PRICE_FIELDS and isinstance(option.get("offer"), dict):
            confidence = offer_price_confidence(
                option=option,
                flags=row.get("flags") or [],
                stated_on=row.get("stated_on"),
                egress_unknown=f"options[{index}]" in egress_unknown,
                marketplaces=marketplaces,
                today=today,
            )
        elif field in TOKEN_PRICE_FIELDS and isinstance(option.get("token_price"), dict):
            flags = row.get("flags") or []
            confidence = token_price_confidence_of(
                stated_on=_day(row.get("stated_on")),
                flag=FLAG_WORDS["flagged"] if "flagged" in flags else "",
                today=today,
            )
        sourced.append(
            {
                "option": option.get("name", f"option {index + 1}"),
                "field": field,
                # the offer's row is its egress, unknown (``costapp.scenarios.sources``)
                "label": "Egress price" if field == "offer" else label_of(field),
                "value": row.get("value"),
                "source": source_words(str(row.get("source", "")), option, providers),
                "stated_on": row.get("stated_on"),
                "flags": flag_words(list(row.get("flags") or []), row.get("stated_on")),
                "link": link,
                "confidence": confidence,
            }
        )
    typed = []
    for index, option in enumerate(options):
        for field in PRICE_FIELDS.get(str(option.get("type")), ()):
            value = option.get(field)
            if (index, field) in covered or not isinstance(value, int | float) or value <= 0:
                continue
            typed.append(
                {
                    "option": option.get("name"),
                    "field": field,
                    "label": label_of(field),
                    "value": value,
                }
            )
    return {
        "sourced": sourced,
        "typed": typed,
        "recorded": _recorded(str(result.get("engine_version") or engine_version)),
    }
