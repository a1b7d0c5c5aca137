"""The shapes the catalog hands to the engine, as plain numbers (floats, ints and slugs).

The Django side converts catalog rows (``Decimal`` money) into these in ``costapp/scenarios/catalog.py``;
the engine reads nothing else from the catalog. Units are in the names: ``memory_gb`` [GB],
``memory_bandwidth_tb_s`` [TB/s], ``*_dense_tflops`` [TFLOPS], ``usd_per_gpu_hour`` [USD/GPU-h],
``up_to_tb`` [TB], ``usd_per_gb`` [USD/GB].
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Final, NotRequired, TypedDict, cast


class GpuFigures(TypedDict):
    """One GPU's figures; ``None`` where the GPU lacks a figure (or that precision)."""

    memory_gb: float | None
    memory_bandwidth_tb_s: float | None
    bf16_dense_tflops: float | None
    fp16_dense_tflops: float | None
    fp8_dense_tflops: float | None
    tf32_dense_tflops: float | None


GPU_FIGURE_NAMES: Final = tuple(GpuFigures.__annotations__)
"""The names of the GPU figures, in the order of :class:`GpuFigures`."""

GpuTable = Mapping[str, GpuFigures]
"""The figures of every GPU, by catalog slug."""


def gpu_figure(figures: GpuFigures, name: str) -> float | None:
    """The figure ``name`` (such as ``fp8_dense_tflops``) of one GPU, ``None`` where it has none."""
    value = cast(Mapping[str, float | None], figures).get(name)
    return None if value is None else float(value)


class EgressTier(TypedDict):
    """One egress tier: ``up_to_tb`` the cumulative upper bound (``None`` on the last tier)."""

    up_to_tb: float | None
    usd_per_gb: float


class OfferPrices(TypedDict, total=False):
    """An offer's current price per billing [USD/GPU-h]; only the billings it has."""

    on_demand: float
    spot: float
    commit_1y: float
    commit_3y: float
    commit_5y: float  # version 1.2


class PriceStanding(TypedDict):
    """Where one offer price came from and whether it can be relied on (for warnings; the
    engine ignores it): the amount [USD per instance-hour], the source, the date it stated the
    price, staleness, flag and the zone it applies in."""

    usd_per_hour: float
    source: str
    stated_on: date
    stale: bool
    flag: str | None
    zone: str


class OfferStanding(TypedDict):
    """What the warnings need about an offer: whether its GPU variant is confirmed (and why
    not), whether its provider's egress price is known, and per billing the price's standing."""

    provider: str
    instance: str
    region: str
    gpu_confirmed: bool
    gpu_evidence: str
    egress_known: bool
    egress_note: str
    prices: dict[str, PriceStanding]


class OfferTerms(TypedDict):
    """What a reference to a cloud offer ``(provider, instance, region)`` supplies."""

    gpu: str
    gpu_count: int
    usd_per_gpu_hour: OfferPrices
    egress_tiers: list[EgressTier] | None
    standing: NotRequired[OfferStanding]


class QuoteStanding(TypedDict):
    """Who quoted and whether the quote still stands (for warnings; the engine ignores it)."""

    vendor: str
    reference: str
    status: str
    valid_until: date | None
    is_demo: bool


class DedicatedQuoteTerms(TypedDict):
    """What a dedicated-server quote supplies (per server; setup once, egress a month)."""

    gpu: str
    gpus_per_server: int
    usd_per_server_month: float
    setup_usd: float
    included_egress_tb: float
    overage_usd_per_tb: float
    term_months: NotRequired[int | None]
    standing: NotRequired[QuoteStanding]


class PurchaseQuoteTerms(TypedDict):
    """What a purchase quote supplies (per server)."""

    gpu: str
    gpus_per_server: int
    capex_usd_per_server: float
    server_kw: float
    lead_time_months: int
    support_fraction_per_year: float
    standing: NotRequired[QuoteStanding]


class SourceStanding(TypedDict):
    """Where a token price or a sourced figure came from (for ``sources``; the engine ignores
    it): the source, the ISO day it stated the figure (``None``: unknown), the flags judged when
    it was looked up (``stale``, ``flagged``), and a note (a confidence, a flag's reason).
    ``by_path``: the standing at a field's path where it depends on the option."""

    source: str
    stated_on: str | None
    flags: list[str]
    note: str
    by_path: NotRequired[Mapping[str, SourceStanding]]


class TokenPriceTerms(TypedDict):
    """A hosted model's published prices (version 1.2), for an ``api`` option's ``token_price``.

    ``usd_per_million_tokens`` [USD per 1e6 generated tokens], ``usd_per_million_input_tokens``
    [USD per 1e6 prompt tokens]; ``None`` where the catalog has no such price.
    """

    usd_per_million_tokens: float | None
    usd_per_million_input_tokens: float | None
    standing: NotRequired[SourceStanding]


class AssumptionFigure(TypedDict):
    """One sourced figure of the deployment's table (version 1.2), for ``{"assumption": KEY}``.

    ``field``: the option field it fills (``gpu_mtbf_hours``, ``capex_usd_per_server`` …);
    ``value``: the number, in that field's unit. ``by_path`` (optional): the number at a given
    field's path (``options[2].staff_usd_per_month``) where it depends on the option, as a
    figure derived by a rule from the option's size does; ``value`` elsewhere.
    """

    field: str
    value: float
    by_path: NotRequired[Mapping[str, float]]
    standing: NotRequired[SourceStanding]
