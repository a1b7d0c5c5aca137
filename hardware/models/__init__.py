"""The catalog: GPU models and the market data around them, one module per concern.

Every model and helper is named here, so ``hardware.models.X`` (and the migrations' app label
``hardware``) stays what it was when this was one module.
"""

from hardware.models.coverage import CoverageReport, NameKind, UnmappedName
from hardware.models.gpus import GpuModel
from hardware.models.money import MONEY, MONEY_QUANTUM
from hardware.models.observations import MarketObservation
from hardware.models.offers import (
    Billing,
    EgressTier,
    InstanceOffer,
    InstancePrice,
    Provider,
    ProviderKind,
    Region,
    stale_before,
)
from hardware.models.quotes import DedicatedQuote, PurchaseQuote, Quote, QuoteStatus
from hardware.models.refresh_runs import RefreshLock, RefreshRun, RefreshStatus, StagedPrice
from hardware.models.sourced_figures import Assumption, Confidence, TokenPrice

__all__ = [
    "MONEY",
    "MONEY_QUANTUM",
    "Billing",
    "DedicatedQuote",
    "EgressTier",
    "GpuModel",
    "InstanceOffer",
    "InstancePrice",
    "Provider",
    "ProviderKind",
    "PurchaseQuote",
    "Quote",
    "QuoteStatus",
    "RefreshLock",
    "RefreshRun",
    "RefreshStatus",
    "Region",
    "StagedPrice",
    "TokenPrice",
    "MarketObservation",
    "Assumption",
    "Confidence",
    "CoverageReport",
    "NameKind",
    "UnmappedName",
    "stale_before",
]
