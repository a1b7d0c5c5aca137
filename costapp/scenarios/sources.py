"""Where each catalog figure of a run came from: the result's ``sources`` (format 1.2), and the
warnings about a zero that hides a cost.

Both are judged when a run is created (or a document priced at once) and stored with the run, so
a run keeps the flags it was made with. ``sources`` lists every figure a catalog reference
supplied, in the order of the options (docs: scenario-format.md, "The result document"): its
``path`` in ``inputs``, the ``value`` written there, its ``source``, the day the source stated it
(``stated_on``) and its ``flags``. The rules this module adds where the format leaves a choice:

- a quote has no stated day in the catalog: its rows have ``stated_on`` ``null`` and carry
  ``demo``, ``draft`` and ``expired`` (marked expired, or past ``valid_until``) as they apply;
  ``stale`` only when the quote has no validity date either (nothing dates it);
- an offer whose provider's egress price the catalog does not know, with no egress field given,
  adds a row at ``options[i].offer`` with ``value`` ``null`` and the flag ``egress_unknown``,
  unless the offer supplied no price either (every price typed, as in ``inputs`` fed back in:
  the reference then supplied nothing, and the run's warnings still name the unknown egress);
- an assumption's ``source`` names its key and confidence after the source's own words.
"""

from collections.abc import Mapping
from datetime import date
from typing import Any

from costapp.scenarios.catalog import scenario_catalog_refs, staff_needs_sizing
from costapp.scenarios.documents import ScenarioDocument
from costapp.tco import (
    CatalogRefs,
    GpuFigures,
    ScenarioError,
    normalize,
    plan_build,
    schema,
)
from hardware.hosted import selectors as market
from hardware.models import EgressTier as EgressTierRow
from hardware.models import stale_before

ZERO_HIDES_COST_FIELDS = {
    "colo_usd_per_kw_month": "the colocation cost",
    "staff_usd_per_month": "the staff cost",
    "support_fraction_per_year": "the support cost",
    "residual_fraction": "the resale value",
}
"""The on-prem figures whose default 0 leaves a real cost (or a resale value) out, each with
what it leaves out."""


def resolved_catalog_refs(
    document: ScenarioDocument, gpus: Mapping[str, GpuFigures]
) -> CatalogRefs:
    """Every catalog reference of ``document`` looked up; where an on-prem option leaves its
    servers to sizing and takes its staff cost from the staff rule, the servers are sized first
    (the staff cost does not change the sizing) and the rule applied to them. A document the
    engine rejects keeps the first lookup: its errors are the caller's to report."""
    refs = scenario_catalog_refs(document)
    if not staff_needs_sizing(document):
        return refs
    try:
        plan = plan_build(normalize(document, gpus, refs).document, gpus)
    except ScenarioError:
        return refs
    servers = {
        index: int(option["servers"])
        for index, option in enumerate(plan.inputs.get("options") or [])
        if option.get("servers") is not None
    }
    return scenario_catalog_refs(document, servers=servers)


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()


def _given(option: Mapping[str, Any], name: str) -> bool:
    return option.get(name) is not None


def _row(path: str, value: Any, source: str, stated_on: str | None, flags: list[str]) -> dict:
    return {"path": path, "value": value, "source": source, "stated_on": stated_on, "flags": flags}


def _offer_rows(
    index: int, raw: Mapping[str, Any], option: Mapping[str, Any], refs: CatalogRefs, today: date
) -> list[dict]:
    offer = raw.get("offer")
    if not isinstance(offer, dict):
        return []
    ref = (str(offer.get("provider")), str(offer.get("instance")), str(offer.get("region")))
    entry = refs.offers.get(ref)
    if entry is None or "standing" not in entry:
        return []
    standing = entry["standing"]
    base = f"options[{index}]"
    variant = [] if standing["gpu_confirmed"] else ["unconfirmed_variant"]
    rows = []
    billing = option.get("billing") or "on_demand"
    priced: list[tuple[str, str | None]] = []
    if not _given(raw, "usd_per_gpu_hour"):
        if billing == "committed":
            term = option.get("term_months")
            priced.append(
                ("usd_per_gpu_hour", schema.COMMITTED_PRICE_KEYS.get(term) if term else None)
            )
        else:
            priced.append(("usd_per_gpu_hour", billing))
    if billing == "committed" and not _given(raw, "on_demand_usd_per_gpu_hour"):
        priced.append(("on_demand_usd_per_gpu_hour", "on_demand"))
    for name, key in priced:
        price = standing["prices"].get(key) if key else None
        if key is None or price is None or option.get(name) is None:
            continue
        flags = (["stale"] if price["stale"] else []) + (["flagged"] if price["flag"] else [])
        rows.append(
            _row(
                f"{base}.{name}",
                option[name],
                f"{price['source']}: {standing['provider']} {standing['instance']} in "
                f"{standing['region']}, {key.replace('_', '-')}",
                _iso(price["stated_on"]),
                flags + variant,
            )
        )
    egress_given = any(_given(raw, name) for name in schema.EGRESS_FIELDS)
    if not egress_given and (rows or standing["egress_known"]):  # an offer that supplies no
        # price (inputs fed back in) adds no egress_unknown row: it supplied nothing
        if standing["egress_known"]:
            rows.append(_egress_row(f"{base}.egress_tiers", option, standing["provider"], today))
        else:
            note = standing["egress_note"] or "no egress tiers in the catalog"
            rows.append(
                _row(
                    f"{base}.offer",
                    None,
                    f"{standing['provider']}: egress price unknown ({note}); "
                    "no egress cost is counted",
                    None,
                    ["egress_unknown"],
                )
            )
    return rows


def _egress_row(path: str, option: Mapping[str, Any], provider: str, today: date) -> dict:
    tiers = list(EgressTierRow.objects.filter(provider__slug=provider))
    sources = sorted({tier.source for tier in tiers if tier.source}) or [
        f"{provider} egress tiers in the catalog"
    ]
    days = [tier.stated_on for tier in tiers]
    stated_on = None if None in days or not days else min(d for d in days if d is not None)
    return _row(
        path,
        option.get("egress_tiers"),
        "; ".join(sources),
        _iso(stated_on),
        ["stale"] if stated_on is None or stated_on < stale_before(today) else [],
    )


def _quote_rows(
    index: int, raw: Mapping[str, Any], option: Mapping[str, Any], refs: CatalogRefs, today: date
) -> list[dict]:
    quote_id = raw.get("quote")
    kind = raw.get("type")
    if not isinstance(quote_id, int) or isinstance(quote_id, bool):
        return []
    terms: Mapping[str, Any] | None
    if kind == "dedicated":
        terms, supplied, what = (
            refs.dedicated_quotes.get(quote_id),
            schema.DEDICATED_QUOTE_FIELDS,
            "dedicated-server quote",
        )
    elif kind == "on_prem":
        terms, supplied, what = (
            refs.purchase_quotes.get(quote_id),
            schema.PURCHASE_QUOTE_FIELDS,
            "purchase quote",
        )
    else:
        return []
    if terms is None or "standing" not in terms:
        return []
    standing = terms["standing"]
    flags = []
    if standing["is_demo"]:
        flags.append("demo")
    if standing["status"] == "draft":
        flags.append("draft")
    valid_until = standing["valid_until"]
    if standing["status"] == "expired" or (valid_until is not None and valid_until < today):
        flags.append("expired")
    if valid_until is None:
        flags.insert(0, "stale")
    source = f"{what} {standing['reference']} from {standing['vendor']} (quote {quote_id})"
    return [
        _row(f"options[{index}].{name}", option.get(name), source, None, list(flags))
        for name in supplied
        if not _given(raw, name) and option.get(name) is not None
    ]


def _token_price_rows(
    index: int, raw: Mapping[str, Any], option: Mapping[str, Any], refs: CatalogRefs
) -> list[dict]:
    ref = raw.get("token_price")
    if not isinstance(ref, dict):
        return []
    entry = refs.token_prices.get((str(ref.get("provider")), str(ref.get("model"))))
    if entry is None or "standing" not in entry:
        return []
    standing = entry["standing"]
    return [
        _row(
            f"options[{index}].{name}",
            option.get(name),
            f"{standing['source']}: {ref['provider']} {ref['model']}",
            standing["stated_on"],
            list(standing["flags"]),
        )
        for name in schema.TOKEN_PRICE_KEYS
        if not _given(raw, name) and option.get(name) is not None and entry.get(name) is not None
    ]


def _assumption_rows(
    index: int, raw: Mapping[str, Any], option: Mapping[str, Any], refs: CatalogRefs
) -> list[dict]:
    rows = []
    for name, value in raw.items():
        if not isinstance(value, dict) or not isinstance(value.get("assumption"), str):
            continue
        key = value["assumption"]
        entry = refs.assumptions.get(key)
        if entry is None or "standing" not in entry:
            continue
        path = f"options[{index}].{name}"
        standing = entry["standing"]
        standing = (standing.get("by_path") or {}).get(path, standing)
        rows.append(
            _row(
                path,
                option.get(name),
                f"{standing['source']} (assumption {key}, {standing['note']})",
                standing["stated_on"],
                list(standing["flags"]),
            )
        )
    return rows


def run_sources(
    *, document: ScenarioDocument, refs: CatalogRefs, inputs: Mapping[str, Any], today: date
) -> list[dict]:
    """The ``sources`` of a run: every figure a catalog reference of ``document`` supplied to
    ``inputs`` (its normalised document), in the order of the options (module docstring)."""
    raw_options = document.get("options") if isinstance(document, dict) else None
    options = inputs.get("options") or []
    if not isinstance(raw_options, list) or len(raw_options) != len(options):
        return []
    rows: list[dict] = []
    for index, (raw, option) in enumerate(zip(raw_options, options, strict=True)):
        if not isinstance(raw, dict):
            continue
        rows.extend(_offer_rows(index, raw, option, refs, today))
        rows.extend(_quote_rows(index, raw, option, refs, today))
        egress_provider = raw.get("egress_provider")
        if isinstance(egress_provider, str) and egress_provider in refs.egress_providers:
            rows.append(
                _egress_row(f"options[{index}].egress_tiers", option, egress_provider, today)
            )
        rows.extend(_token_price_rows(index, raw, option, refs))
        rows.extend(_assumption_rows(index, raw, option, refs))
    return rows


def _figure_words(terms: market.AssumptionTerms) -> str:
    stated = f"stated {terms.stated_on}" if terms.stated_on else "of unknown date"
    return (
        f"{terms.value:,.6g} {terms.unit} ({terms.source}, {stated}, {terms.confidence} confidence)"
    )


def zero_cost_warnings(*, document: ScenarioDocument, inputs: Mapping[str, Any]) -> list[str]:
    """Plain sentences for each on-prem option that leaves colocation, staff, support or resale
    at the format's default 0 while the catalog holds a sourced figure for it, naming the figure
    and the reference that would use it. A figure the option gives (0 included) is its own."""
    raw_options = document.get("options") if isinstance(document, dict) else None
    options = inputs.get("options") or []
    if not isinstance(raw_options, list) or len(raw_options) != len(options):
        return []
    warnings = []
    for raw, option in zip(raw_options, options, strict=True):
        if not isinstance(raw, dict) or option.get("type") != "on_prem":
            continue
        for name, what in ZERO_HIDES_COST_FIELDS.items():
            if name in raw or option.get(name) not in (0, 0.0):
                continue
            if name == "staff_usd_per_month":
                servers = option.get("servers")
                staff = None if servers is None else market.staff_usd_per_month(float(servers))
                figures = [] if staff is None else [staff]
                key = market.ENGINEER_COST_KEY
            else:
                figures = market.assumptions_for_field(f"on_prem.{name}")
                key = figures[0].key if figures else ""
            if not figures:
                continue
            words = "; ".join(
                (f"{f.key}: " if len(figures) > 1 else "") + _figure_words(f) for f in figures
            )
            warnings.append(
                f'Option "{option.get("name")}" leaves {name} at 0, the format\'s default, so '
                f"{what} is not counted; the catalog holds a sourced figure for it: {words}. "
                f'Write {{"assumption": "{key}"}} to use it, or give the figure.'
            )
    return warnings
