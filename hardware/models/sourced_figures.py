"""The catalog's market figures beside the GPU prices: hosted models' token prices and the sourced
assumptions a plan needs when no quote gives them. Imported into ``hardware.models``.

Both keep a dated history like the instance prices: a load adds a row only when a figure changes
(the old row stays as history), otherwise it moves ``last_seen``; the current figure of a
(provider, model) or of a key is its row with the latest ``first_seen``.
"""

from datetime import date, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

# Money: USD as Decimal with 10 decimal places (as hardware.models.MONEY).
MONEY_DIGITS = 20
MONEY_PLACES = 10


def _stale(stated_on: date | None, days: int, today: date | None = None) -> bool:
    """Whether a figure stated on ``stated_on`` is of unknown age or older than ``days``."""
    if stated_on is None:
        return True
    return stated_on < (today or timezone.localdate()) - timedelta(days=days)


class TokenPrice(models.Model):
    """A hosted model's price per million input (prompt) and output (generated) tokens, as one
    provider sells it, observed over a time span.

    ``provider`` and ``model`` are kept as the source writes them (``fireworks`` and
    ``fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct``); a scenario's ``api``
    option names a row by the two. Serving tiers of one model ("Turbo", "basic") are rows of
    their own. ``stated_on`` is the day the source stated the price, empty when it states none:
    such a price is of unknown age and always ``stale``. ``flag`` says why the price may not
    hold (an alias whose model changes over time); empty = not flagged.
    """

    provider = models.CharField(
        max_length=64, help_text="the seller as the source names it, e.g. fireworks"
    )
    model = models.CharField(max_length=200, help_text="the model as the source names it")
    usd_per_million_input_tokens = models.DecimalField(
        max_digits=MONEY_DIGITS,
        decimal_places=MONEY_PLACES,
        help_text="price of a million prompt tokens [USD per million tokens]",
    )
    usd_per_million_output_tokens = models.DecimalField(
        max_digits=MONEY_DIGITS,
        decimal_places=MONEY_PLACES,
        help_text="price of a million generated tokens [USD per million tokens]",
    )
    source = models.TextField(help_text="where the price is published")
    stated_on = models.DateField(
        null=True, blank=True, help_text="the day the source stated the price; empty = unknown"
    )
    first_seen = models.DateTimeField(help_text="when this catalog first had the price")
    last_seen = models.DateTimeField(help_text="when this catalog last loaded the price")
    source_name = models.CharField(
        max_length=200, blank=True, help_text="file the price was loaded from (empty: by hand)"
    )
    source_sha256 = models.CharField(max_length=64, blank=True)
    flag = models.CharField(
        max_length=300, blank=True, help_text="why the price may not hold; empty = not flagged"
    )
    notes = models.TextField(blank=True)
    history = HistoricalRecords()
    # Set before save(): simple_history writes it into the history row as the change's reason.
    _change_reason: str

    class Meta:
        ordering = ["provider", "model", "-first_seen"]
        get_latest_by = "first_seen"
        indexes = [
            models.Index(fields=["provider", "model", "-first_seen"], name="token_price_latest")
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "model", "first_seen"], name="token_price_unique_per_time"
            ),
            models.CheckConstraint(
                condition=~models.Q(provider="") & ~models.Q(model=""),
                name="token_price_named",
            ),
            models.CheckConstraint(
                condition=models.Q(usd_per_million_input_tokens__gte=0)
                & models.Q(usd_per_million_output_tokens__gte=0),
                name="token_price_not_negative",
            ),
            models.CheckConstraint(
                condition=models.Q(last_seen__gte=models.F("first_seen")),
                name="token_price_seen_in_order",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.provider} {self.model}: {self.usd_per_million_input_tokens} in / "
            f"{self.usd_per_million_output_tokens} out USD per million tokens"
        )

    @property
    def stale(self) -> bool:
        """Whether the price is of unknown age or was stated longer ago than
        ``settings.PRICE_STALE_DAYS``."""
        return _stale(self.stated_on, settings.PRICE_STALE_DAYS)


class Confidence(models.TextChoices):
    """How far a sourced figure can be relied on, as the table's compiler judged it."""

    HIGH = "high", "high"
    MEDIUM = "medium", "medium"
    LOW = "low", "low"


class Assumption(models.Model):
    """A sourced figure for a plan without a quote (colocation per kW-month, electricity, PUE,
    support, resale value, staff, server power, GPU failure rate), under a ``key`` a scenario
    names (``{"assumption": "colo_usd_per_kw_month"}``).

    ``applies_to`` is the scenario field the figure fills, as ``<option type>.<field>``
    (``on_prem.colo_usd_per_kw_month``; ``option.`` for a field of every GPU option,
    ``option.gpu_mtbf_hours``). ``value`` is in ``unit``. Two rows fill
    ``on_prem.staff_usd_per_month`` only together, by the rule of
    ``hardware.hosted.selectors.staff_usd_per_month`` (the engineer's cost per year and the servers one
    engineer runs). ``stated_on`` is the day the source stated the figure (empty: unknown, then
    ``stale``).
    """

    Confidence = Confidence

    key = models.SlugField(max_length=80, help_text="the name a scenario refers to the figure by")
    value = models.DecimalField(
        max_digits=24, decimal_places=10, help_text="the figure, in its unit"
    )
    unit = models.CharField(max_length=120, help_text="what the value counts, e.g. USD per kWh")
    applies_to = models.CharField(
        max_length=120,
        help_text="the scenario field it fills: <option type>.<field>, e.g. "
        "on_prem.colo_usd_per_kw_month",
    )
    stated_on = models.DateField(
        null=True, blank=True, help_text="the day the source stated the figure; empty = unknown"
    )
    source = models.TextField(help_text="who states the figure, and where")
    confidence = models.CharField(max_length=6, choices=Confidence.choices)
    notes = models.TextField(blank=True)
    first_seen = models.DateTimeField(help_text="when this catalog first had the figure")
    last_seen = models.DateTimeField(help_text="when this catalog last loaded the figure")
    source_name = models.CharField(
        max_length=200, blank=True, help_text="file the figure was loaded from (empty: by hand)"
    )
    source_sha256 = models.CharField(max_length=64, blank=True)
    history = HistoricalRecords()
    # Set before save(): simple_history writes it into the history row as the change's reason.
    _change_reason: str

    class Meta:
        ordering = ["key", "-first_seen"]
        get_latest_by = "first_seen"
        indexes = [models.Index(fields=["key", "-first_seen"], name="assumption_latest")]
        constraints = [
            models.UniqueConstraint(
                fields=["key", "first_seen"], name="assumption_unique_per_time"
            ),
            models.CheckConstraint(condition=~models.Q(key=""), name="assumption_key_not_empty"),
            models.CheckConstraint(
                condition=models.Q(confidence__in=Confidence.values),
                name="assumption_confidence_known",
            ),
            models.CheckConstraint(
                condition=models.Q(last_seen__gte=models.F("first_seen")),
                name="assumption_seen_in_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} = {self.value} {self.unit}"

    @property
    def stale(self) -> bool:
        """Whether the figure is of unknown age or was stated longer ago than
        ``settings.ASSUMPTION_STALE_DAYS``."""
        return _stale(self.stated_on, settings.ASSUMPTION_STALE_DAYS)
