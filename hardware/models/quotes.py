"""Vendor quotes: dedicated servers by the month, and servers to buy."""

from decimal import Decimal

from django.db import models
from simple_history.models import HistoricalRecords

from hardware.models.gpus import GpuModel
from hardware.models.money import MONEY


class QuoteStatus(models.TextChoices):
    """Where a quote stands with procurement."""

    DRAFT = "draft", "draft"
    RECEIVED = "received", "received"
    ACCEPTED = "accepted", "accepted"
    EXPIRED = "expired", "expired"


class Quote(models.Model):
    """What every vendor quote has: who quoted it, for which servers, and whether it still
    stands. Abstract: ``DedicatedQuote`` and ``PurchaseQuote`` add their own figures and their
    link to the GPU model."""

    # Set before save() or delete(): simple_history's HistoricalRecords writes it into the history
    # row as the change's reason.
    _change_reason: str

    vendor = models.CharField(max_length=120)
    reference = models.CharField(max_length=80, help_text="the vendor's quote number")
    server_description = models.CharField(max_length=300)
    gpus_per_server = models.PositiveSmallIntegerField()
    valid_until = models.DateField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=QuoteStatus.choices, default=QuoteStatus.RECEIVED
    )
    notes = models.TextField(blank=True)
    is_demo = models.BooleanField(default=False, help_text="demonstration data, not a real quote")

    class Meta:
        abstract = True
        ordering = ["vendor", "reference"]
        constraints = [
            models.UniqueConstraint(
                fields=["vendor", "reference"], name="%(class)s_unique_reference"
            ),
            models.CheckConstraint(
                condition=models.Q(gpus_per_server__gt=0), name="%(class)s_gpus_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=QuoteStatus.values),
                name="%(class)s_status_known",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.vendor} {self.reference}: {self.server_description}"

    HEAD_FIELDS: tuple[str, ...] = (
        "vendor",
        "reference",
        "server_description",
        "gpu",
        "gpus_per_server",
    )
    """The fields that say who quoted what, first in every form and API body."""
    TAIL_FIELDS: tuple[str, ...] = ("valid_until", "status", "notes")
    """The fields that say whether the quote still stands, last in every form and API body."""
    FIGURES: tuple[str, ...] = ()
    """The quote's own figures, between head and tail (set by each kind of quote)."""

    @classmethod
    def edit_fields(cls) -> list[str]:
        """The fields a catalog editor writes, in the order pages, the API and the admin show
        them (``is_demo`` and the currency are not written by hand in the pages)."""
        return [*cls.HEAD_FIELDS, *cls.FIGURES, *cls.TAIL_FIELDS]


class DedicatedQuote(Quote):
    """A vendor's offer to lease dedicated GPU servers by the month.

    ``usd_per_server_month`` per server, each month of the term; ``setup_usd`` once, for the
    whole order; ``included_egress_tb`` of internet egress a month for the whole order, then
    ``overage_usd_per_tb``. These are the meanings of the scenario's dedicated-option fields the
    quote supplies (docs: scenario-format.md), so a quote's figures enter a scenario unchanged.
    """

    gpu = models.ForeignKey(GpuModel, on_delete=models.PROTECT, related_name="dedicated_quotes")
    usd_per_server_month = models.DecimalField(**MONEY, help_text="[USD per server-month]")
    setup_usd = models.DecimalField(
        **MONEY, default=Decimal(0), help_text="[USD] once, for the whole order"
    )
    term_months = models.PositiveSmallIntegerField()
    included_egress_tb = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        default=Decimal(0),
        help_text="[TB/month] for the whole order",
    )
    overage_usd_per_tb = models.DecimalField(
        **MONEY, default=Decimal(0), help_text="[USD/TB] beyond the included egress"
    )
    history = HistoricalRecords()

    FIGURES = (
        "usd_per_server_month",
        "setup_usd",
        "term_months",
        "included_egress_tb",
        "overage_usd_per_tb",
    )

    class Meta(Quote.Meta):
        constraints = [
            *Quote.Meta.constraints,
            models.CheckConstraint(
                condition=models.Q(term_months__gt=0), name="dedicated_quote_term_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(usd_per_server_month__gt=0),
                name="dedicated_quote_fee_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(setup_usd__gte=0)
                & models.Q(included_egress_tb__gte=0)
                & models.Q(overage_usd_per_tb__gte=0),
                name="dedicated_quote_amounts_not_negative",
            ),
        ]


class PurchaseQuote(Quote):
    """A reseller's offer to sell GPU servers to own and host.

    ``capex_usd_per_server`` once per server; ``server_kw`` its power draw at load;
    ``support_fraction_per_year`` the yearly support contract as a fraction of capex.
    """

    gpu = models.ForeignKey(GpuModel, on_delete=models.PROTECT, related_name="purchase_quotes")
    capex_usd_per_server = models.DecimalField(**MONEY, help_text="[USD per server]")
    server_kw = models.DecimalField(
        max_digits=8, decimal_places=3, help_text="server power at load [kW]"
    )
    lead_time_months = models.PositiveSmallIntegerField(help_text="order to delivery [months]")
    support_fraction_per_year = models.DecimalField(
        max_digits=6, decimal_places=4, default=Decimal(0), help_text="[fraction of capex/year]"
    )
    history = HistoricalRecords()

    FIGURES = (
        "capex_usd_per_server",
        "server_kw",
        "lead_time_months",
        "support_fraction_per_year",
    )

    class Meta(Quote.Meta):
        constraints = [
            *Quote.Meta.constraints,
            models.CheckConstraint(
                condition=models.Q(capex_usd_per_server__gt=0),
                name="purchase_quote_capex_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(server_kw__gt=0), name="purchase_quote_kw_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(support_fraction_per_year__gte=0)
                & models.Q(support_fraction_per_year__lte=1),
                name="purchase_quote_support_fraction_range",
            ),
        ]
