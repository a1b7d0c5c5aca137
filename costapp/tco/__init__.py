"""The TCO engine: pure Python and numpy, no Django, no I/O.

A scenario document (docs: scenario-format.md) and the GPU figures it needs go in; the result
document comes out. Callers outside the engine use the names below and nothing else:

- :func:`simulate` (a document in, the result document out) and :func:`normalize` (validation
  alone); both raise :class:`ScenarioError`, listing every :class:`FieldError`, for a document
  they reject, and never another exception for a document :func:`loads` accepted;
- :func:`loads`, strict JSON for scenario documents;
- :class:`CatalogRefs` and the shapes in it (:class:`OfferTerms`, :class:`DedicatedQuoteTerms`,
  :class:`PurchaseQuoteTerms`, :class:`EgressTier`), and :class:`GpuFigures`: what the catalog
  hands to the engine, as plain numbers;
- :func:`plan_build` and the Monte Carlo and sizing-sweep block functions, for spreading paths
  and sweep candidates over workers (version 1.1).
"""

from . import schema
from .core import Plan, plan_build
from .engine import ENGINE_VERSION, MonteCarloRunner, SizingRunner, simulate, simulate_normalized
from .errors import FieldError, ScenarioError, escape_text
from .jsonio import MAX_DOCUMENT_BYTES, loads
from .montecarlo import (
    block_count,
    block_results_from_payload,
    block_results_to_payload,
    blocks_compute,
    blocks_merge,
    summary_fields,
)
from .references import CatalogRefs, OfferRef
from .sizing import (
    sweep_block_results_from_payload,
    sweep_block_results_to_payload,
    sweep_blocks_compute,
    sweeps_merge,
)
from .types import (
    GPU_FIGURE_NAMES,
    DedicatedQuoteTerms,
    EgressTier,
    GpuFigures,
    GpuTable,
    OfferPrices,
    OfferStanding,
    OfferTerms,
    PriceStanding,
    PurchaseQuoteTerms,
    QuoteStanding,
)
from .validation import Normalized, normalize

__all__ = [
    "ENGINE_VERSION",
    "GPU_FIGURE_NAMES",
    "MAX_DOCUMENT_BYTES",
    "CatalogRefs",
    "DedicatedQuoteTerms",
    "EgressTier",
    "FieldError",
    "GpuFigures",
    "GpuTable",
    "MonteCarloRunner",
    "Normalized",
    "OfferPrices",
    "OfferRef",
    "OfferStanding",
    "OfferTerms",
    "Plan",
    "PriceStanding",
    "PurchaseQuoteTerms",
    "QuoteStanding",
    "ScenarioError",
    "SizingRunner",
    "block_count",
    "block_results_from_payload",
    "block_results_to_payload",
    "blocks_compute",
    "blocks_merge",
    "escape_text",
    "loads",
    "normalize",
    "plan_build",
    "schema",
    "simulate",
    "simulate_normalized",
    "summary_fields",
    "sweep_block_results_from_payload",
    "sweep_block_results_to_payload",
    "sweep_blocks_compute",
    "sweeps_merge",
]
