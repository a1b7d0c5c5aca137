"""The TCO engine: pure Python and numpy, no Django, no I/O.

A scenario document (docs: scenario-format.md) and the GPU figures it needs go in; the result
document comes out. Callers outside the engine use the names below and nothing else:

- :func:`simulate` (a document in, the result document out) and :func:`normalize` (validation
  alone); both raise :class:`ScenarioError`, listing every :class:`FieldError`, for a document
  they reject, and never another exception for a document :func:`loads` accepted;
- :func:`loads`, strict JSON for scenario documents;
- :class:`CatalogRefs` and the shapes in it (:class:`OfferTerms`, :class:`DedicatedQuoteTerms`,
  :class:`PurchaseQuoteTerms`, :class:`EgressTier`, :class:`TokenPriceTerms`,
  :class:`AssumptionFigure`, :class:`SourceStanding`), and :class:`GpuFigures`: what the catalog
  hands to the engine, as plain numbers;
- :func:`plan_build` and the Monte Carlo and sizing-sweep block functions, for spreading paths
  and sweep candidates over workers (version 1.1): blocks of :data:`BLOCK_PATHS` paths, the first
  :data:`CUMULATIVE_PATHS` of them keeping their months, results as :class:`BlockResults` and
  :class:`SweepBlockResults`, a sweep's sizes from :func:`candidate_sizes`, and which options a
  sweep can size from :func:`swept_field`;
- :func:`plan_cost` of a plan on :class:`Futures` (the expected values by default), with the cost
  :data:`CATEGORIES` of its breakdown, and :func:`cost_curves` (cost against utilization) of a
  result's inputs;
- :func:`option_charges` of one option on one path (:func:`path_futures`; the path at a
  percentile of its totals, :func:`percentile_path`), as :class:`OptionCharges`, for a forward plan
  month by month and charge by charge;
- :func:`fit_gpus`, the fewest GPUs of a model that hold a workload in memory (the builder's
  offer picker puts first the instances holding that many).

No caller outside the engine imports one of its submodules (``costapp.tco.core`` and the rest):
an import-linter contract in ``pyproject.toml`` keeps it so. The tests may.
"""

from . import schema
from .charges import (
    CommitmentMonths,
    OptionCharges,
    option_charges,
    path_futures,
    percentile_path,
)
from .core import CATEGORIES, Futures, PathCosts, Plan, plan_build, plan_cost
from .curves import cost_curves
from .demand import fit_gpus
from .engine import (
    ENGINE_VERSION,
    MonteCarloRunner,
    SizingRunner,
    deterministic_costs,
    mix_months,
    option_results,
    simulate,
    simulate_normalized,
)
from .errors import FieldError, ScenarioError, escape_text, hidden_characters_error
from .jsonio import MAX_DOCUMENT_BYTES, loads
from .montecarlo import (
    BLOCK_PATHS,
    CUMULATIVE_PATHS,
    BlockResults,
    block_count,
    block_results_from_payload,
    block_results_to_payload,
    blocks_compute,
    blocks_merge,
    blocks_reduce,
    blocks_risk,
    summary_fields,
    tail_fraction,
)
from .references import CatalogRefs, OfferRef
from .risk import RiskFigures, budget_exceedance, sorted_totals_from_payload
from .schema import FieldSpec
from .sizing import (
    SweepBlockResults,
    candidate_sizes,
    sweep_block_results_from_payload,
    sweep_block_results_to_payload,
    sweep_blocks_compute,
    sweep_candidates,
    sweeps_bands,
    sweeps_merge,
    swept_field,
)
from .types import (
    GPU_FIGURE_NAMES,
    AssumptionFigure,
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
    SourceStanding,
    TokenPriceTerms,
)
from .validation import Normalized, normalize

__all__ = [
    "CommitmentMonths",
    "OptionCharges",
    "option_charges",
    "path_futures",
    "percentile_path",
    "blocks_reduce",
    "blocks_risk",
    "budget_exceedance",
    "sorted_totals_from_payload",
    "RiskFigures",
    "mix_months",
    "option_results",
    "deterministic_costs",
    "PathCosts",
    "BLOCK_PATHS",
    "CATEGORIES",
    "CUMULATIVE_PATHS",
    "ENGINE_VERSION",
    "GPU_FIGURE_NAMES",
    "MAX_DOCUMENT_BYTES",
    "AssumptionFigure",
    "BlockResults",
    "CatalogRefs",
    "DedicatedQuoteTerms",
    "EgressTier",
    "FieldError",
    "FieldSpec",
    "Futures",
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
    "SourceStanding",
    "TokenPriceTerms",
    "SweepBlockResults",
    "block_count",
    "block_results_from_payload",
    "block_results_to_payload",
    "blocks_compute",
    "blocks_merge",
    "candidate_sizes",
    "sweep_candidates",
    "cost_curves",
    "fit_gpus",
    "escape_text",
    "hidden_characters_error",
    "loads",
    "normalize",
    "plan_build",
    "plan_cost",
    "schema",
    "simulate",
    "simulate_normalized",
    "summary_fields",
    "tail_fraction",
    "sweep_block_results_from_payload",
    "sweep_block_results_to_payload",
    "sweep_blocks_compute",
    "sweeps_bands",
    "sweeps_merge",
    "swept_field",
]
