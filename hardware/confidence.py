"""How far a price can be relied on, judged when it is read: the one rule every page, the API
and the filters use.

A price's confidence weighs five things about it:

- its age: stated more than ``PRICE_STALE_DAYS`` ago (or on no known day) is a concern;
- its flag: a flagged price (a suspect spot price, an auction placeholder) is always ``low``;
- its provider: a marketplace's listing (a host's offer, not a provider's list price) is a
  concern;
- its egress: a provider whose egress price the catalog does not know is a concern (egress is
  then unknown, not free);
- its GPU: a GPU variant the source's name does not settle is a concern.

No concern: ``high``; one: ``medium``; a flag or two concerns or more: ``low``. Each judgment
comes with its reasons in words. ``price_confidence`` judges one price (or its plain facts,
``confidence_of``); ``with_confidence`` annotates a queryset of prices with the same judgment in
SQL (``confidence``, ``confidence_concerns``, ``egress_known``), so ``?confidence=`` filters and
pages in the database; ``tests/hardware/test_confidence.py`` checks that both agree on every
price of the shipped catalog.
"""

from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db.models import (
    Case,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models import CharField as CharFieldType
from django.utils import timezone

from hardware.display.price_flags import flag_words
from hardware.models import (
    EgressTier,
    InstancePrice,
    MarketObservation,
    ProviderKind,
    TokenPrice,
    stale_before,
)

HIGH, MEDIUM, LOW = "high", "medium", "low"
LEVELS = (HIGH, MEDIUM, LOW)
LABELS = {HIGH: "High confidence", MEDIUM: "Medium confidence", LOW: "Low confidence"}
LOW_AT_CONCERNS = 2
"""This many concerns make a price ``low`` (one makes it ``medium``)."""


@dataclass(frozen=True)
class PriceConfidence:
    """A price's confidence (``high``, ``medium``, ``low``) and why, in words."""

    level: str
    reasons: tuple[str, ...]
    short: tuple[str, ...] = ()
    """The reasons in a word or two each, where a row says them at length already ("stale",
    "marketplace", "egress unknown", "GPU unconfirmed", "flagged"); empty when ``high``."""

    @property
    def label(self) -> str:
        return LABELS[self.level]

    @property
    def words(self) -> str:
        """ "Medium confidence: from a marketplace …" in one sentence."""
        return f"{self.label}: {'; '.join(self.reasons)}."


def level_of(*, flagged: bool, concerns: int) -> str:
    """The level for a price with ``concerns`` concerns, flagged or not."""
    if flagged or concerns >= LOW_AT_CONCERNS:
        return LOW
    return MEDIUM if concerns else HIGH


def _age_judged(
    stated_on: date | None, flag: str, today: date | None
) -> tuple[date, int, list[str], list[str]]:
    """The day judged on, the age limit [days] (``PRICE_STALE_DAYS``), and a price's concerns
    and short words from its flag and age: unknown age, or stale beyond the limit."""
    today = today or timezone.localdate()
    limit = int(settings.PRICE_STALE_DAYS)
    concerns: list[str] = []
    short: list[str] = ["flagged"] if flag else []
    if stated_on is None:
        concerns.append("stated on no known day (unknown age)")
        short.append("unknown age")
    elif stated_on < stale_before(today):
        concerns.append(
            f"stated {(today - stated_on).days} days ago, beyond the {limit}-day limit (stale)"
        )
        short.append("stale")
    return today, limit, concerns, short


def confidence_of(
    *,
    stated_on: date | None,
    flag: str,
    provider_kind: str,
    egress_known: bool,
    gpu_confirmed: bool,
    today: date | None = None,
) -> PriceConfidence:
    """The confidence of a price from its plain facts (module docstring)."""
    today, limit, concerns, short = _age_judged(stated_on, flag, today)
    if provider_kind == ProviderKind.MARKETPLACE:
        concerns.append("a marketplace listing, not a provider's list price")
        short.append("marketplace")
    if not egress_known:
        concerns.append("its provider's egress price is unknown")
        short.append("egress unknown")
    if not gpu_confirmed:
        concerns.append("the GPU variant is not confirmed")
        short.append("GPU unconfirmed")
    reasons = list(concerns)
    if flag:
        reasons.insert(0, f"flagged: {flag_words(flag)}")
    level = level_of(flagged=bool(flag), concerns=len(concerns))
    if level == HIGH and stated_on is not None:
        age = "today" if stated_on == today else f"{(today - stated_on).days} days ago"
        reasons = [
            f"stated {age}, within the {limit}-day limit",
            "unflagged",
            "a provider's list price",
            "egress known",
            "GPU variant confirmed",
        ]
    return PriceConfidence(level, tuple(reasons), tuple(short) if level != HIGH else ())


def price_confidence(price: InstancePrice, *, today: date | None = None) -> PriceConfidence:
    """The confidence of a catalog price (its offer, provider and, when annotated by
    ``with_confidence``, ``egress_known`` read from the row; otherwise asked)."""
    provider = price.offer.provider
    egress = getattr(price, "egress_known", None)
    return confidence_of(
        stated_on=price.stated_on,
        flag=price.flag,
        provider_kind=provider.kind,
        egress_known=provider.egress_known if egress is None else bool(egress),
        gpu_confirmed=price.offer.gpu_confirmed,
        today=today,
    )


def token_price_confidence_of(
    *, stated_on: date | None, flag: str, today: date | None = None
) -> PriceConfidence:
    """The confidence of a hosted model's token price from its plain facts: its age and its
    flag (a price by the token has no egress, marketplace host or GPU variant to weigh)."""
    today, limit, concerns, short = _age_judged(stated_on, flag, today)
    level = level_of(flagged=bool(flag), concerns=len(concerns))
    reasons = ([f"flagged: {flag}"] if flag else []) + concerns
    if level == HIGH and stated_on is not None:
        age = "today" if stated_on == today else f"{(today - stated_on).days} days ago"
        reasons = [f"stated {age}, within the {limit}-day limit", "unflagged"]
    return PriceConfidence(level, tuple(reasons), tuple(short) if level != HIGH else ())


def token_price_confidence(price: TokenPrice, *, today: date | None = None) -> PriceConfidence:
    """The confidence of a catalog token price (``token_price_confidence_of``)."""
    return token_price_confidence_of(stated_on=price.stated_on, flag=price.flag, today=today)


def observation_confidence(
    observation: MarketObservation, *, today: date | None = None
) -> PriceConfidence:
    """The confidence of a dated committed price a source stated (a market observation): the
    rule of ``confidence_of``, unflagged, its GPU settled by its evidence when it was loaded."""
    provider = observation.provider
    egress = getattr(observation, "egress_known", None)
    return confidence_of(
        stated_on=observation.stated_on,
        flag="",
        provider_kind=provider.kind,
        egress_known=provider.egress_known if egress is None else bool(egress),
        gpu_confirmed=True,
        today=today,
    )


def _one_if(condition: Q) -> Case:
    return Case(When(condition, then=Value(1)), default=Value(0), output_field=IntegerField())


def with_confidence(
    prices: QuerySet[InstancePrice], *, today: date | None = None
) -> QuerySet[InstancePrice]:
    """``prices`` annotated with ``egress_known``, ``confidence_concerns`` and ``confidence``
    (``high``, ``medium``, ``low``), the rule of ``confidence_of`` in SQL; once only."""
    if "confidence" in prices.query.annotations:
        return prices
    if "egress_known" not in prices.query.annotations:
        prices = prices.annotate(
            egress_known=Exists(EgressTier.objects.filter(provider=OuterRef("offer__provider")))
        )
    concerns = (
        _one_if(Q(stated_on__isnull=True) | Q(stated_on__lt=stale_before(today)))
        + _one_if(Q(offer__provider__kind=ProviderKind.MARKETPLACE))
        + _one_if(Q(egress_known=False))
        + _one_if(Q(offer__gpu_confirmed=False))
    )
    return prices.annotate(confidence_concerns=concerns).annotate(
        confidence=Case(
            When(~Q(flag=""), then=Value(LOW)),
            When(confidence_concerns__gte=LOW_AT_CONCERNS, then=Value(LOW)),
            When(confidence_concerns__gte=1, then=Value(MEDIUM)),
            default=Value(HIGH),
            output_field=CharFieldType(),
        )
    )


def confidence_filter(prices: QuerySet[InstancePrice], level: str) -> QuerySet[InstancePrice]:
    """Only the prices of confidence ``level`` (one of ``LEVELS``)."""
    if level not in LEVELS:
        raise ValueError(f"confidence: {level!r} is not one of {', '.join(LEVELS)}")
    return with_confidence(prices).filter(**{"confidence": level})
