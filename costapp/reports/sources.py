"""The result's ``sources`` as a finance lead reads them: which figure of which option, where it
came from, when its source stated it, each flag in words, and a link to the catalog row; and the
prices the scenario typed itself ("typed in the scenario, no source").

A run made before format 1.2 recorded no sources: :func:`source_rows` then says so instead of
calling its prices typed.
"""

import re
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse

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


def _recorded(engine_version: str) -> bool:
    try:
        return tuple(int(part) for part in engine_version.split(".")[:2]) >= SOURCES_SINCE
    except ValueError:
        return False


def source_rows(*, result: dict[str, Any], engine_version: str) -> dict[str, Any]:
    """The rows of the run page's sources table: ``sourced`` (one per ``sources`` row, in its
    order), ``typed`` (the prices the scenario gave itself) and ``recorded`` (False for a run made
    before sources were recorded, whose figures cannot be told apart)."""
    inputs = result.get("inputs") or {}
    options = inputs.get("options") or []
    sourced = []
    covered: set[tuple[int, str]] = set()
    for row in result.get("sources") or []:
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
        sourced.append(
            {
                "option": option.get("name", f"option {index + 1}"),
                "field": field,
                "value": row.get("value"),
                "source": row.get("source", ""),
                "stated_on": row.get("stated_on"),
                "flags": flag_words(list(row.get("flags") or []), row.get("stated_on")),
                "link": link,
            }
        )
    typed = []
    for index, option in enumerate(options):
        for field in PRICE_FIELDS.get(str(option.get("type")), ()):
            value = option.get(field)
            if (index, field) in covered or not isinstance(value, int | float) or value <= 0:
                continue
            typed.append({"option": option.get("name"), "field": field, "value": value})
    return {
        "sourced": sourced,
        "typed": typed,
        "recorded": _recorded(str(result.get("engine_version") or engine_version)),
    }
