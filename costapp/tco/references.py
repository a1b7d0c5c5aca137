"""Catalog references in a scenario document: ``offer``, ``quote``, ``egress_provider`` and,
version 1.2, an ``api`` option's ``token_price`` and ``{"assumption": KEY}`` numbers.

The engine never queries the catalog: the Django side looks every reference up beforehand
(``costapp.scenarios.catalog.scenario_catalog_refs``) and hands the entries in as :class:`CatalogRefs`,
plain numbers in the shapes of :mod:`costapp.tco.types`. :class:`ReferenceRules` resolves a
reference into the fields it supplies, reporting a reference that is malformed, missing from the
catalog or contradicted by the option at the reference's path (docs: scenario-format.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import schema
from .errors import join_path
from .rules import INVALID, Rules, given
from .schema import FieldSpec
from .types import (
    AssumptionFigure,
    DedicatedQuoteTerms,
    EgressTier,
    GpuFigures,
    OfferTerms,
    PurchaseQuoteTerms,
    TokenPriceTerms,
)

OfferRef = tuple[str, str, str]
"""``(provider, instance, region)``."""


@dataclass(frozen=True)
class CatalogRefs:
    """Catalog references already looked up by the Django side (the engine never queries).

    ``offers``: ``(provider, instance, region)`` -> :class:`~.types.OfferTerms`.
    ``dedicated_quotes``: id -> :class:`~.types.DedicatedQuoteTerms`. ``purchase_quotes``: id ->
    :class:`~.types.PurchaseQuoteTerms`. ``egress_providers``: provider slug -> its
    :class:`~.types.EgressTier` list. ``token_prices`` (version 1.2): ``(provider, model)`` ->
    :class:`~.types.TokenPriceTerms`. ``assumptions`` (version 1.2): key ->
    :class:`~.types.AssumptionFigure`.

    A reference missing from these mappings is an error. When :func:`~.validation.normalize` is
    given no ``CatalogRefs`` at all (``catalog=None``), references are not looked up: the document
    must then give every field a reference would have to supply (as a normalised document does).
    """

    offers: Mapping[OfferRef, OfferTerms] = field(default_factory=dict)
    dedicated_quotes: Mapping[int, DedicatedQuoteTerms] = field(default_factory=dict)
    purchase_quotes: Mapping[int, PurchaseQuoteTerms] = field(default_factory=dict)
    egress_providers: Mapping[str, Sequence[EgressTier]] = field(default_factory=dict)
    token_prices: Mapping[tuple[str, str], TokenPriceTerms] = field(default_factory=dict)
    assumptions: Mapping[str, AssumptionFigure] = field(default_factory=dict)


class ReferenceRules(Rules):
    """The rules of :class:`~.rules.Rules` plus the resolution of catalog references."""

    def __init__(self, gpus: Mapping[str, GpuFigures], catalog: CatalogRefs | None) -> None:
        super().__init__(gpus)
        self.catalog = catalog

    def referenced_gpu(
        self, v: dict[str, Any], path: str, supplied: Any, ref_path: str, what: str
    ) -> None:
        """Reconcile an explicit ``gpu`` with the GPU an offer or quote names."""
        if not isinstance(supplied, str) or not supplied:
            return
        gpu = v["gpu"]
        if gpu is None:
            if self.gpu_figures(supplied, ref_path, f"the {what} names an ") is None:
                v["gpu"] = INVALID
            else:
                v["gpu"] = supplied
        elif given(gpu) and gpu != supplied:
            v["gpu"] = self.error(
                join_path(path, "gpu"), f'contradicts the {what}\'s GPU "{supplied}"'
            )

    def quote(
        self,
        v: dict[str, Any],
        table: Mapping[str, FieldSpec],
        path: str,
        quotes: Mapping[int, Mapping[str, object]] | None,
        supplied: tuple[str, ...],
    ) -> None:
        """Fill the fields a dedicated or purchase quote supplies; check the required ones."""
        quote_id = v["quote"]
        ref_path = join_path(path, "quote")
        required = schema.REQUIRED_UNLESS_REFERENCED[v["type"]]
        if given(quote_id):
            if quotes is None:
                missing = [n for n in ("gpu", *required) if v[n] is None]
                if missing:
                    self.error(
                        ref_path,
                        "cannot be resolved without the catalog: give " + ", ".join(missing),
                    )
                    for name in missing:
                        v[name] = INVALID
                return
            quote = quotes.get(quote_id)
            if quote is None:
                self.error(ref_path, f"no such quote in the catalog: {quote_id}")
                for name in (*supplied, "gpu"):
                    if v[name] is None:
                        v[name] = INVALID
                return
            self.referenced_gpu(v, path, quote.get("gpu"), ref_path, "quote")
            for name in supplied:
                if v[name] is None and quote.get(name) is not None:
                    v[name] = self.scalar(quote[name], table[name], ref_path, f"its {name} ")
        elif quote_id is INVALID:
            for name in required:
                if v[name] is None:
                    v[name] = INVALID
        for name in required:
            if v[name] is None:
                v[name] = self.error(join_path(path, name), "is required")

    def offer(self, v: dict[str, Any], path: str) -> Mapping[str, Any] | None:
        """Check ``offer`` and look it up; the catalog's entry, or ``None``.

        ``v["offer"]`` becomes the normalised reference (or :data:`INVALID`), and the fields the
        offer must supply are marked :data:`INVALID` when it cannot be found, so that their
        absence is not reported twice.
        """
        value = v["offer"]
        if value is None:
            return None
        ref_path = join_path(path, "offer")
        raw = self.mapping(value, ref_path)
        if raw is None:
            v["offer"] = INVALID
            return None
        self.keys(raw, schema.OFFER_FIELDS, ref_path)
        ref = self.fields(raw, schema.OFFER_FIELDS, ref_path)
        if INVALID in ref.values():
            v["offer"] = INVALID
            for name in ("gpu", "usd_per_gpu_hour"):
                if v[name] is None:
                    v[name] = INVALID
            return None
        v["offer"] = ref
        key = (ref["provider"], ref["instance"], ref["region"])
        if self.catalog is None:
            missing = [n for n in ("gpu", "usd_per_gpu_hour") if v[n] is None]
            if missing:
                self.error(
                    ref_path, "cannot be resolved without the catalog: give " + ", ".join(missing)
                )
                for name in missing:
                    v[name] = INVALID
            return None
        entry = self.catalog.offers.get(key)
        if entry is None:
            self.error(
                ref_path,
                f"no such offer in the catalog: {key[0]} {key[1]} in {key[2]}",
            )
            for name in ("gpu", "usd_per_gpu_hour"):
                if v[name] is None:
                    v[name] = INVALID
            return None
        self.referenced_gpu(v, path, entry.get("gpu"), ref_path, "offer")
        return entry

    def cloud_price(
        self,
        v: dict[str, Any],
        path: str,
        months: int | None,
        billing: Any,
        offer: Mapping[str, Any] | None,
    ) -> None:
        """``usd_per_gpu_hour`` (and a committed option's on-demand rate) from the offer."""
        spec = schema.CLOUD_FIELDS["usd_per_gpu_hour"]
        where = join_path(path, "usd_per_gpu_hour")
        ref_path = join_path(path, "offer")
        prices: Mapping[str, Any] = (offer or {}).get("usd_per_gpu_hour") or {}
        if billing == "committed":
            if v["term_months"] is None and months is not None:
                v["term_months"] = months
            od = v["on_demand_usd_per_gpu_hour"]
            if od is None and offer is not None and prices.get("on_demand") is not None:
                v["on_demand_usd_per_gpu_hour"] = self.scalar(
                    prices["on_demand"], spec, ref_path, "its on-demand price "
                )
        if v["usd_per_gpu_hour"] is not None:
            return
        if offer is None:
            if v["offer"] is None:
                v["usd_per_gpu_hour"] = self.error(where, "is required")
            return
        if billing is INVALID:
            return
        if billing == "committed":
            term = v["term_months"]
            if not given(term):
                return
            key = schema.COMMITTED_PRICE_KEYS.get(term)
            if key is None:
                v["usd_per_gpu_hour"] = self.error(
                    where,
                    f"is required for a {term}-month term: the offer has committed prices "
                    "for 12-, 36- and 60-month terms only",
                )
                return
        else:
            key = schema.OFFER_PRICE_KEYS[billing]
        if prices.get(key) is None:
            v["usd_per_gpu_hour"] = self.error(
                where, f"is required: the offer has no {key.replace('_', '-')} price"
            )
            return
        v["usd_per_gpu_hour"] = self.scalar(prices[key], spec, ref_path, f"its {key} price ")

    def egress(
        self,
        raw: Mapping[Any, Any],
        v: dict[str, Any],
        path: str,
        offer: Mapping[str, Any] | None,
    ) -> None:
        """At most one of the egress fields; a provider's or the offer's tiers resolved."""
        given_fields = [name for name in schema.EGRESS_FIELDS if raw.get(name) is not None]
        if len(given_fields) > 1:
            self.error(
                path,
                "gives more than one of egress_usd_per_gb, egress_tiers and egress_provider",
            )
        tiers = v["egress_tiers"]
        if tiers is not None:
            v["egress_tiers"] = self.tiers(tiers, join_path(path, "egress_tiers"))
        provider = v.pop("egress_provider")
        ref_path = join_path(path, "egress_provider")
        if given(provider):
            if self.catalog is None:
                self.error(ref_path, "cannot be resolved without the catalog")
            elif provider not in self.catalog.egress_providers:
                self.error(ref_path, f'unknown egress provider "{provider}"')
            elif v["egress_tiers"] is None:
                v["egress_tiers"] = self.tiers(
                    self.catalog.egress_providers[provider], ref_path, "the provider's tiers: "
                )
        elif not given_fields and offer is not None and offer.get("egress_tiers") is not None:
            v["egress_tiers"] = self.tiers(
                offer["egress_tiers"], join_path(path, "offer"), "the offer's egress tiers: "
            )

    def assumptions(
        self,
        raw: Mapping[Any, Any],
        path: str,
        names: Sequence[str],
    ) -> tuple[dict[Any, Any], set[str]]:
        """Resolve ``{"assumption": KEY}`` in the fields ``names`` of ``raw`` (version 1.2).

        Returns a copy of ``raw`` with each such reference replaced by the catalog's number (to be
        checked as the field's own value), and the names whose reference failed (reported here,
        at the field: malformed, unknown, or a figure for another field).
        """
        out = dict(raw)
        failed: set[str] = set()
        for name in names:
            value = raw.get(name)
            if not isinstance(value, Mapping):
                continue
            where = join_path(path, name)
            out[name] = None
            failed.add(name)
            self.keys(value, schema.ASSUMPTION_FIELDS, where)
            key = self.fields(value, schema.ASSUMPTION_FIELDS, where)["assumption"]
            if not given(key) or len(value) != 1:
                continue
            if self.catalog is None:
                self.error(
                    where, f'cannot be resolved without the catalog: give the number ("{key}")'
                )
                continue
            entry = self.catalog.assumptions.get(key)
            if entry is None:
                self.error(where, f'no such assumption in the catalog: "{key}"')
            elif entry.get("field") != name:
                self.error(
                    where,
                    f'the assumption "{key}" is a figure for {entry.get("field")}, not {name}',
                )
            else:
                out[name] = (entry.get("by_path") or {}).get(where, entry["value"])
                failed.discard(name)
        return out, failed

    def token_price(self, v: dict[str, Any], table: Mapping[str, FieldSpec], path: str) -> None:
        """Check an ``api`` option's ``token_price`` and fill the prices it supplies (version 1.2);
        ``usd_per_million_tokens`` is then required, ``usd_per_million_input_tokens`` 0 by default."""
        value = v["token_price"]
        ref_path = join_path(path, "token_price")
        entry: Mapping[str, Any] | None = None
        if value is not None:
            raw = self.mapping(value, ref_path)
            if raw is None:
                v["token_price"] = INVALID
            else:
                self.keys(raw, schema.TOKEN_PRICE_FIELDS, ref_path)
                ref = self.fields(raw, schema.TOKEN_PRICE_FIELDS, ref_path)
                if INVALID in ref.values():
                    v["token_price"] = INVALID
                else:
                    v["token_price"] = ref
                    key = (ref["provider"], ref["model"])
                    if self.catalog is None:
                        if v["usd_per_million_tokens"] is None:
                            self.error(
                                ref_path,
                                "cannot be resolved without the catalog: give "
                                "usd_per_million_tokens",
                            )
                            v["usd_per_million_tokens"] = INVALID
                    else:
                        entry = self.catalog.token_prices.get(key)
                        if entry is None:
                            self.error(
                                ref_path, f"no such token price in the catalog: {key[0]} {key[1]}"
                            )
                            v["token_price"] = INVALID
        if v["token_price"] is INVALID and v["usd_per_million_tokens"] is None:
            v["usd_per_million_tokens"] = INVALID
        if entry is not None:
            for name in schema.TOKEN_PRICE_KEYS:
                if v[name] is None and entry.get(name) is not None:
                    v[name] = self.scalar(entry[name], table[name], ref_path, f"its {name} ")
        if v["usd_per_million_tokens"] is None:
            v["usd_per_million_tokens"] = self.error(
                join_path(path, "usd_per_million_tokens"), "is required"
            )
        if v["usd_per_million_input_tokens"] is None:
            v["usd_per_million_input_tokens"] = 0.0
