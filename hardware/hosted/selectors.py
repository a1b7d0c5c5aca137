"""Reads of the token prices and sourced assumptions, for the pages, the API and the cost side.

The querysets (``current_token_prices``, ``current_assumptions``) hold the current row per
(provider, model) and per key: the latest ``first_seen``. The lookups the cost side calls when it
resolves a scenario's references (``token_price_terms``, ``assumption_value``,
``assumption_for_option``, ``staff_usd_per_month``) answer plain values: floats, ISO dates and
strings, never Decimal; ``None`` when the catalog holds no such row.

**Staff per month** (``on_prem.staff_usd_per_month``) comes from two rows by a rule, not from a
row of its own, since it depends on the fleet: ``staff_usd_per_month = servers ×
engineer_usd_per_year / 12 / servers_per_engineer`` (a fleet of 75 servers at 200 000 USD a year
per engineer and 75 servers per engineer: 16 666.67 USD a month; 8 servers: 1 777.78). The figure
is the two rows' together: its source names both, its ``stated_on`` is the older of their days
and its confidence the lower of theirs. Either row written alone on that field
(``{"assumption": "engineer_usd_per_year"}``) resolves by the same rule
(``assumption_for_option``), never to its own value: 200 000 USD a year is not a monthly cost.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Exists, OuterRef, QuerySet

from hardware.display.figures import plain_number
from hardware.models import Assumption, Confidence, TokenPrice

STAFF_FIELD = "on_prem.staff_usd_per_month"
ENGINEER_COST_KEY = "engineer_usd_per_year"
SERVERS_PER_ENGINEER_KEY = "servers_per_engineer"
STAFF_KEYS = (ENGINEER_COST_KEY, SERVERS_PER_ENGINEER_KEY)
STAFF_RULE = "staff_usd_per_month = servers × engineer_usd_per_year / 12 / servers_per_engineer"
CONFIDENCE_ORDER = (Confidence.LOW, Confidence.MEDIUM, Confidence.HIGH)


def current_token_prices() -> QuerySet[TokenPrice]:
    """The latest token price row per (provider, model), by provider, model."""
    newer = TokenPrice.objects.filter(
        provider=OuterRef("provider"),
        model=OuterRef("model"),
        first_seen__gt=OuterRef("first_seen"),
    )
    return TokenPrice.objects.filter(~Exists(newer)).order_by("provider", "model", "pk")


def current_assumptions() -> QuerySet[Assumption]:
    """The latest row per assumption key, by key."""
    newer = Assumption.objects.filter(key=OuterRef("key"), first_seen__gt=OuterRef("first_seen"))
    return Assumption.objects.filter(~Exists(newer)).order_by("key", "pk")


@dataclass(frozen=True)
class TokenPriceTerms:
    """A hosted model's current prices as a scenario's ``api`` option takes them [USD per
    million tokens], with where they come from. ``flags``: ``stale`` (unknown age, or stated
    longer ago than ``PRICE_STALE_DAYS``), ``flagged`` (the catalog holds a reason it may not
    hold: ``flag``)."""

    provider: str
    model: str
    usd_per_million_input_tokens: float
    usd_per_million_output_tokens: float
    source: str
    stated_on: str | None
    flags: tuple[str, ...]
    flag: str
    token_price_id: int


@dataclass(frozen=True)
class AssumptionTerms:
    """A sourced figure as a scenario takes it: ``value`` in ``unit`` for the field
    ``applies_to`` names (``option_type`` and ``field`` are its two parts). ``stated_on`` is an
    ISO date or ``None`` (unknown); ``flags`` holds ``stale`` (unknown age, or stated longer ago
    than ``ASSUMPTION_STALE_DAYS``)."""

    key: str
    value: float
    unit: str
    applies_to: str
    source: str
    stated_on: str | None
    confidence: str
    flags: tuple[str, ...]

    @property
    def option_type(self) -> str:
        """``on_prem``, ``dedicated``, or ``option`` (a field of every GPU option)."""
        return self.applies_to.partition(".")[0]

    @property
    def field(self) -> str:
        """The option's field the figure fills, e.g. ``colo_usd_per_kw_month``."""
        return self.applies_to.partition(".")[2]


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()


def token_price_terms(provider: str, model: str) -> TokenPriceTerms | None:
    """The current price of ``model`` sold by ``provider``, both as the catalog writes them
    (``fireworks``, ``fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct``);
    ``None`` when the catalog holds none."""
    row = current_token_prices().filter(provider=provider, model=model).first()
    if row is None:
        return None
    flags = (("stale",) if row.stale else ()) + (("flagged",) if row.flag else ())
    return TokenPriceTerms(
        provider=row.provider,
        model=row.model,
        usd_per_million_input_tokens=float(row.usd_per_million_input_tokens),
        usd_per_million_output_tokens=float(row.usd_per_million_output_tokens),
        source=row.source,
        stated_on=_iso(row.stated_on),
        flags=flags,
        flag=row.flag,
        token_price_id=row.pk,
    )


def assumption_terms(row: Assumption) -> AssumptionTerms:
    """One stored assumption as plain values."""
    return AssumptionTerms(
        key=row.key,
        value=float(row.value),
        unit=row.unit,
        applies_to=row.applies_to,
        source=row.source,
        stated_on=_iso(row.stated_on),
        confidence=row.confidence,
        flags=("stale",) if row.stale else (),
    )


def assumption_value(key: str) -> AssumptionTerms | None:
    """The current figure stored under ``key`` as the table states it (for the two rows of the
    staff rule, their own values: see the module and ``assumption_for_option``); ``None`` when
    the catalog holds no such key."""
    row = current_assumptions().filter(key=key).first()
    return None if row is None else assumption_terms(row)


def assumptions_for_field(applies_to: str) -> list[AssumptionTerms]:
    """Every current figure that fills ``applies_to`` (``on_prem.colo_usd_per_kw_month``), by
    key: what the builder offers beside a field and what a warning about a zero can name."""
    rows = current_assumptions().filter(applies_to=applies_to)
    return [assumption_terms(row) for row in rows]


def staff_usd_per_month(servers: float) -> AssumptionTerms | None:
    """The staff cost of a fleet of ``servers`` [USD per month] by the staff rule (module
    docstring) from the current ``engineer_usd_per_year`` and ``servers_per_engineer`` rows;
    ``None`` when either is missing (or says 0 servers per engineer)."""
    rows = {row.key: row for row in current_assumptions().filter(key__in=STAFF_KEYS)}
    cost, ratio = rows.get(ENGINEER_COST_KEY), rows.get(SERVERS_PER_ENGINEER_KEY)
    if cost is None or ratio is None or ratio.value <= 0:
        return None
    value = Decimal(str(servers)) * cost.value / 12 / ratio.value
    days = [row.stated_on for row in (cost, ratio)]
    stated_on = None if None in days else min(d for d in days if d is not None)
    confidence = min(
        (cost.confidence, ratio.confidence), key=lambda c: CONFIDENCE_ORDER.index(Confidence(c))
    )
    return AssumptionTerms(
        key=f"{ENGINEER_COST_KEY}+{SERVERS_PER_ENGINEER_KEY}",
        value=float(value),
        unit="USD per month",
        applies_to=STAFF_FIELD,
        source=(
            f"{STAFF_RULE}, servers = {plain_number(servers)}; {ENGINEER_COST_KEY} = {cost.value.normalize():f}"
            f" {cost.unit} ({cost.source}); {SERVERS_PER_ENGINEER_KEY} = "
            f"{ratio.value.normalize():f} {ratio.unit} ({ratio.source})"
        ),
        stated_on=_iso(stated_on),
        confidence=confidence,
        flags=("stale",) if (cost.stale or ratio.stale) else (),
    )


def assumption_for_option(key: str, *, servers: float) -> AssumptionTerms | None:
    """The figure ``{"assumption": key}`` puts into the field it fills, for an option of
    ``servers`` servers: the stored value, except that the two rows of the staff rule give the
    fleet's staff cost per month (``staff_usd_per_month``). ``None`` for an unknown key."""
    terms = assumption_value(key)
    if terms is None or key not in STAFF_KEYS:
        return terms
    return staff_usd_per_month(servers)
