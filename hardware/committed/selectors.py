"""Reads of the market observations (``hardware.models.MarketObservation``)."""

from django.db.models import Exists, OuterRef, QuerySet

from hardware.models import EgressTier, MarketObservation


def market_observations(
    *, gpu: str | None = None, provider: str | None = None, billing: str | None = None
) -> QuerySet[MarketObservation]:
    """The dated committed prices per GPU-hour sources stated, newest first per GPU, provider
    and billing; narrowed to a GPU slug, a provider slug or a billing when given. Each carries
    ``egress_known`` (its provider has egress tiers in the catalog), for its confidence."""
    rows = MarketObservation.objects.select_related("gpu", "provider", "region", "offer").annotate(
        egress_known=Exists(EgressTier.objects.filter(provider=OuterRef("provider")))
    )
    if gpu:
        rows = rows.filter(gpu__slug=gpu)
    if provider:
        rows = rows.filter(provider__slug=provider)
    if billing:
        rows = rows.filter(billing=billing)
    return rows.order_by(
        "gpu__slug", "provider__slug", "region__code", "billing", "-stated_on", "line_no", "pk"
    )
