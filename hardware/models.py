"""The catalog: GPU models and the market data around them."""

from datetime import date, timedelta
from decimal import Decimal
from typing import Any, TypedDict

from django.conf import settings
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

from .catalog_version import CatalogQuerySet


class GpuModel(models.Model):
    """A GPU model with its datasheet figures; scenarios refer to it by ``slug``.

    Throughput figures are dense (no sparsity); an empty figure means it is not published (the GPU
    lacks that precision, or its maker states no dense figure). Loaded from
    ``hardware/data/gpus.csv``; each figure of the GPUs added later has its source in
    ``hardware/data/gpu_specs_sources.csv``.
    """

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    vendor = models.CharField(max_length=40)
    form_factor = models.CharField(max_length=80, blank=True)
    memory_gb = models.DecimalField(
        max_digits=8, decimal_places=2, help_text="GPU memory [GB, 1e9 bytes]"
    )
    memory_bandwidth_tb_s = models.DecimalField(
        max_digits=8, decimal_places=3, help_text="memory bandwidth [TB/s]"
    )
    bf16_dense_tflops = models.DecimalField(max_digits=10, decimal_places=3, null=True, blank=True)
    fp16_dense_tflops = models.DecimalField(max_digits=10, decimal_places=3, null=True, blank=True)
    fp8_dense_tflops = models.DecimalField(max_digits=10, decimal_places=3, null=True, blank=True)
    tf32_dense_tflops = models.DecimalField(max_digits=10, decimal_places=3, null=True, blank=True)
    int8_dense_tops = models.DecimalField(max_digits=10, decimal_places=3, null=True, blank=True)
    fp32_tflops = models.DecimalField(max_digits=10, decimal_places=3, null=True, blank=True)
    tdp_w = models.PositiveIntegerField(null=True, blank=True, help_text="board power [W]")
    interconnect = models.CharField(max_length=120, blank=True)
    release_date = models.DateField(null=True, blank=True)
    notes = models.TextField(blank=True)

    objects = CatalogQuerySet.as_manager()

    class Meta:
        ordering = ["vendor", "name"]
        verbose_name = "GPU model"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(memory_gb__gt=0), name="gpumodel_memory_gb_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(memory_bandwidth_tb_s__gt=0), name="gpumodel_bandwidth_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name


# Money: USD as Decimal with 10 decimal places (up to 10 integer digits).
class _MoneyDigits(TypedDict):
    max_digits: int
    decimal_places: int


MONEY: _MoneyDigits = {"max_digits": 20, "decimal_places": 10}


MONEY_QUANTUM = Decimal("1E-10")


class ProviderKind(models.TextChoices):
    """Kinds of provider (names of the API contract, docs/api.md)."""

    HYPERSCALER = "hyperscaler", "hyperscaler"
    GPU_CLOUD = "gpu-cloud", "GPU cloud"
    MARKETPLACE = "marketplace", "marketplace"
    DEDICATED_HOST = "dedicated-host", "dedicated host"
    RESELLER = "reseller", "reseller"
    COLOCATION = "colocation", "colocation"


class Provider(models.Model):
    """A seller of GPU capacity: a cloud, a GPU cloud, a marketplace, a host or a reseller."""

    Kind = ProviderKind

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    website = models.URLField(blank=True)
    egress_note = models.TextField(
        blank=True,
        help_text="what the provider publishes about internet egress, e.g. that a marketplace "
        "passes its host's pricing through",
    )

    objects = CatalogQuerySet.as_manager()

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=ProviderKind.values),
                name="provider_kind_known",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def egress_known(self) -> bool:
        """Whether the catalog holds this provider's egress tiers (without them, egress is not
        free but unknown). Lists annotate it instead: ``hardware.selectors.providers_list``."""
        annotated = getattr(self, "egress_tier_count", None)
        if annotated is not None:
            return bool(annotated)
        return self.egress_tiers.exists()


class Region(models.Model):
    """A provider's region as the provider names it (``us-east-1``; Vast: ``"Texas, US, NA"``)."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="regions")
    code = models.CharField(
        max_length=160, help_text="the provider's own region name, kept as written"
    )
    name = models.CharField(max_length=160, blank=True)

    objects = CatalogQuerySet.as_manager()

    class Meta:
        ordering = ["provider__slug", "code"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "code"], name="region_unique_per_provider"),
            models.CheckConstraint(condition=~models.Q(code=""), name="region_code_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug} {self.code}"


class InstanceOffer(models.Model):
    """A cloud instance type with its GPUs: what one instance-hour buys.

    On a marketplace (``ProviderKind.MARKETPLACE``) ``host`` names the company behind the offer
    (Shadeform's ``lambdalabs_``, ``nebius_`` … prefixes). ``gpu_confirmed`` is false when the
    source's GPU name does not settle the variant (an ``H100`` that may be PCIe or SXM): the offer
    is then filed under the slower candidate and ``gpu_evidence`` says why.
    """

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="offers")
    instance_type = models.CharField(max_length=120)
    gpu = models.ForeignKey(GpuModel, on_delete=models.PROTECT, related_name="offers")
    gpu_count = models.PositiveSmallIntegerField(help_text="GPUs per instance")
    vcpus = models.DecimalField(
        max_digits=7, decimal_places=2, null=True, blank=True, help_text="vCPUs per instance"
    )
    memory_gib = models.DecimalField(
        max_digits=10, decimal_places=2, null=True, blank=True, help_text="host RAM [GiB]"
    )
    host = models.CharField(max_length=80, blank=True, help_text="marketplace host, if any")
    gpu_confirmed = models.BooleanField(
        default=True,
        help_text="false when the GPU variant could not be settled from evidence (aliases.csv)",
    )
    gpu_evidence = models.CharField(
        max_length=400, blank=True, help_text="why the GPU is this model, or why it is unsure"
    )

    objects = CatalogQuerySet.as_manager()

    class Meta:
        ordering = ["provider__slug", "instance_type"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "instance_type"], name="offer_unique_instance_per_provider"
            ),
            models.CheckConstraint(
                condition=models.Q(gpu_count__gt=0), name="offer_gpu_count_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug} {self.instance_type}"


class Billing(models.TextChoices):
    """How a cloud price is paid (names of the API contract)."""

    ON_DEMAND = "on_demand", "on-demand"
    SPOT = "spot", "spot"
    COMMIT_1Y = "commit_1y", "1-year commitment"
    COMMIT_3Y = "commit_3y", "3-year commitment"
    COMMIT_5Y = "commit_5y", "5-year commitment"


class InstancePrice(models.Model):
    """One price of an offer in a region and billing model, as observed over a time span.

    Prices form a dated history: a load adds a row only when the price (or the zone it applies
    in, or the spread across zones) changes; otherwise it moves ``last_seen``. The current price
    of an (offer, region, billing) is its row with the latest ``first_seen``.

    Two kinds of date: ``stated_on`` is when the source stated the price (a feed's publication
    or effective date; for the shipped snapshot, the date its data README gives for the file);
    ``first_seen`` / ``last_seen`` are when this catalog loaded it. A price is ``stale`` when
    ``stated_on`` is older than ``settings.PRICE_STALE_DAYS``. Loading a file the catalog already
    holds (same SHA-256) changes no date.

    ``flag`` says why a price looks wrong (empty: not flagged); the price is kept as stated.
    For spot prices from zones, ``zone`` is the lowest zone's and ``zone_count`` /
    ``zone_min_usd_per_hour`` / ``zone_median_usd_per_hour`` / ``zone_max_usd_per_hour`` the spread
    across the region's zones. ``usd_per_gpu_hour`` is derived from ``usd_per_hour`` and the
    offer's GPU count (``derive_usd_per_gpu_hour``) and stored so lists sort and filter on it.
    """

    offer = models.ForeignKey(InstanceOffer, on_delete=models.CASCADE, related_name="prices")
    region = models.ForeignKey(Region, on_delete=models.CASCADE, related_name="prices")
    billing = models.CharField(max_length=12, choices=Billing.choices)
    usd_per_hour = models.DecimalField(**MONEY, help_text="price of one instance-hour [USD/h]")
    usd_per_gpu_hour = models.DecimalField(
        **MONEY, help_text="usd_per_hour / gpu_count [USD per GPU-hour]"
    )
    zone = models.CharField(
        max_length=60, blank=True, help_text="availability zone the price applies in (spot)"
    )
    zone_count = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="zones of the region with a price (spot by zone)"
    )
    zone_min_usd_per_hour = models.DecimalField(
        **MONEY, null=True, blank=True, help_text="lowest zone's price [USD/h]"
    )
    zone_median_usd_per_hour = models.DecimalField(
        **MONEY, null=True, blank=True, help_text="median of the zones' prices [USD/h]"
    )
    zone_max_usd_per_hour = models.DecimalField(
        **MONEY, null=True, blank=True, help_text="highest zone's price [USD/h]"
    )
    stated_on = models.DateField(help_text="the date the source gave the price")
    first_seen = models.DateTimeField(help_text="when this catalog first loaded the price")
    last_seen = models.DateTimeField(help_text="when this catalog last loaded the price")
    source_name = models.CharField(max_length=200, help_text="file or feed the price came from")
    source_sha256 = models.CharField(max_length=64, blank=True)
    flag = models.CharField(
        max_length=300, blank=True, help_text="why the price looks wrong; empty = not flagged"
    )
    note = models.CharField(max_length=300, blank=True)
    vanished_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when an applied feed of its provider no longer listed it: not current since",
    )
    history = HistoricalRecords()

    objects = CatalogQuerySet.as_manager()

    class Meta:
        ordering = ["offer__provider__slug", "offer__instance_type", "region__code", "billing"]
        get_latest_by = "first_seen"
        indexes = [
            models.Index(
                fields=["offer", "region", "billing", "-first_seen"], name="price_key_latest"
            ),
            models.Index(fields=["usd_per_gpu_hour"], name="price_usd_per_gpu_hour"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["offer", "region", "billing", "first_seen"], name="price_unique_per_time"
            ),
            models.CheckConstraint(
                condition=models.Q(billing__in=Billing.values),
                name="price_billing_known",
            ),
            models.CheckConstraint(
                condition=models.Q(usd_per_hour__gte=0), name="price_usd_per_hour_not_negative"
            ),
            models.CheckConstraint(
                condition=models.Q(usd_per_gpu_hour__gte=0),
                name="price_usd_per_gpu_hour_not_negative",
            ),
            models.CheckConstraint(
                condition=models.Q(last_seen__gte=models.F("first_seen")),
                name="price_seen_in_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.offer} {self.region.code} {self.billing} {self.usd_per_hour}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Keep ``usd_per_gpu_hour`` derived from ``usd_per_hour`` and the offer's GPU count."""
        self.derive_usd_per_gpu_hour()
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "usd_per_hour" in update_fields:
            kwargs["update_fields"] = {*update_fields, "usd_per_gpu_hour"}
        super().save(*args, **kwargs)

    @property
    def is_suspect(self) -> bool:
        """Whether the price is flagged (``flag`` says why)."""
        return bool(self.flag)

    @property
    def stale(self) -> bool:
        """Whether the source stated this price longer ago than ``settings.PRICE_STALE_DAYS``."""
        return self.stated_on < stale_before()

    def derive_usd_per_gpu_hour(self) -> None:
        """Set ``usd_per_gpu_hour`` from ``usd_per_hour`` and the offer's GPU count (the one
        place it is derived; bulk loads call it too, as they bypass ``save``)."""
        self.usd_per_gpu_hour = (Decimal(self.usd_per_hour) / self.offer.gpu_count).quantize(
            MONEY_QUANTUM
        )


def stale_before(today: date | None = None) -> date:
    """The first day a price's ``stated_on`` must reach not to be stale (``PRICE_STALE_DAYS``)."""
    today = today or timezone.localdate()
    return today - timedelta(days=settings.PRICE_STALE_DAYS)


class EgressTier(models.Model):
    """One tier of a provider's internet egress fee, in the API contract's form.

    ``up_to_tb`` is cumulative per month (the tier covers traffic up to that many TB); empty means
    no limit (the last tier). A free allowance is a first tier priced 0.
    """

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="egress_tiers")
    up_to_tb = models.DecimalField(
        max_digits=12,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="[TB/month]; empty = no limit",
    )
    usd_per_gb = models.DecimalField(**MONEY, help_text="[USD/GB] within this tier")
    scope = models.CharField(max_length=200, blank=True, help_text="regions the tiers apply to")
    source = models.TextField(blank=True)
    stated_on = models.DateField(
        null=True, blank=True, help_text="the date the source gave the tiers"
    )
    history = HistoricalRecords()
    # Set before save() or delete(): simple_history's HistoricalRecords writes it into the history
    # row as the change's reason.
    _change_reason: str

    class Meta:
        ordering = ["provider__slug", models.F("up_to_tb").asc(nulls_last=True)]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "up_to_tb"], name="egress_tier_unique_bound"
            ),
            models.UniqueConstraint(
                fields=["provider"],
                condition=models.Q(up_to_tb__isnull=True),
                name="egress_tier_one_open_ended",
            ),
            models.CheckConstraint(
                condition=models.Q(usd_per_gb__gte=0), name="egress_tier_price_not_negative"
            ),
            models.CheckConstraint(
                condition=models.Q(up_to_tb__isnull=True) | models.Q(up_to_tb__gt=0),
                name="egress_tier_bound_positive",
            ),
        ]

    def __str__(self) -> str:
        bound = "no limit" if self.up_to_tb is None else f"up to {self.up_to_tb} TB"
        return f"{self.provider.slug} egress {bound}: {self.usd_per_gb} USD/GB"


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


class RefreshStatus(models.TextChoices):
    """Where a price refresh stands."""

    RUNNING = "running", "running"
    APPLIED = "applied", "applied"
    UNCHANGED = "unchanged", "unchanged"
    HELD = "held", "held for review"
    FAILED = "failed", "failed"
    APPROVED = "approved", "approved and applied"
    DISCARDED = "discarded", "discarded"


class RefreshRun(models.Model):
    """One price refresh of one provider from one feed: what was read, what it would change and
    what became of it.

    A feed is parsed into staged rows (``StagedPrice``), compared with the provider's current
    prices, then applied in one transaction, or held for review when it fails a check
    (``held_reasons``; ``conflicts`` lists hand-edited values with both values, and large moves).
    ``rejections`` keeps the first 100 rejected rows; ``rejected_by_reason`` counts them all.
    """

    Status = RefreshStatus

    source = models.CharField(max_length=40, help_text="feed format: skypilot, aws, ...")
    provider = models.SlugField(max_length=64, help_text="provider slug the feed covers")
    feed_name = models.CharField(max_length=300, help_text="file or feed read")
    feed_sha256 = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the feed's bytes"
    )
    feed_stated_on = models.DateField(
        null=True, blank=True, help_text="the feed's own date (publication), when it states one"
    )
    started_at = models.DateTimeField(help_text="when the run started [UTC]")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="when it ended [UTC]")
    status = models.CharField(
        max_length=12, choices=RefreshStatus.choices, default=RefreshStatus.RUNNING
    )
    bytes_read = models.BigIntegerField(default=0, help_text="feed size read [bytes]")
    rows_read = models.PositiveIntegerField(default=0, help_text="rows read [count]")
    rows_accepted = models.PositiveIntegerField(default=0, help_text="rows accepted [count]")
    rows_rejected = models.PositiveIntegerField(default=0, help_text="rows rejected [count]")
    rejected_by_reason = models.JSONField(
        default=dict, blank=True, help_text="rows rejected, counted by reason"
    )
    rejections = models.JSONField(
        default=list, blank=True, help_text="the first 100 rejected rows, with line and reason"
    )
    prices_added = models.PositiveIntegerField(default=0, help_text="prices added [count]")
    prices_changed = models.PositiveIntegerField(default=0, help_text="prices changed [count]")
    prices_unchanged = models.PositiveIntegerField(default=0, help_text="prices unchanged [count]")
    prices_vanished = models.PositiveIntegerField(
        default=0, help_text="prices no longer in the feed [count]"
    )
    held_reasons = models.JSONField(
        default=list, blank=True, help_text="why the run is held for review"
    )
    conflicts = models.JSONField(
        default=list, blank=True, help_text="hand-edited values and large moves, both values"
    )
    error = models.TextField(blank=True, help_text="why the feed could not be read or applied")
    feed_url = models.CharField(
        max_length=500, blank=True, help_text="where the feed was fetched (credentials hidden)"
    )
    etag = models.CharField(max_length=300, blank=True, help_text="the feed's ETag, as served")
    last_modified = models.CharField(
        max_length=100, blank=True, help_text="the feed's Last-Modified, as served"
    )
    not_modified = models.BooleanField(
        default=False, help_text="the server said the feed had not changed (304): not downloaded"
    )
    staged_egress_tiers = models.JSONField(
        default=list, blank=True, help_text="egress tiers the feed states, until applied"
    )
    egress_changes = models.JSONField(
        default=list, blank=True, help_text="egress tiers the feed changes: old and new USD/GB"
    )

    class Meta:
        ordering = ["-started_at", "-pk"]
        get_latest_by = "started_at"
        indexes = [
            models.Index(fields=["provider", "source", "-started_at"], name="refresh_run_latest")
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=RefreshStatus.values), name="refresh_run_status_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.provider} {self.started_at:%Y-%m-%d %H:%M} {self.status}"


class StagedPrice(models.Model):
    """A price row of a feed, staged by its ``RefreshRun`` until the run is applied or discarded.

    The plain row of ``hardware.sources`` as read (``stated_on``: the day the source stated it,
    empty when the feed states none; ``flag``: why the price looks wrong, empty when it does not;
    the GPU variant's confirmation and the spread of a spot price across zones as the loader
    stores them).
    """

    run = models.ForeignKey(RefreshRun, on_delete=models.CASCADE, related_name="staged_prices")
    line_no = models.PositiveIntegerField()
    instance_type = models.CharField(max_length=120)
    gpu_slug = models.SlugField(max_length=64)
    gpu_count = models.PositiveSmallIntegerField()
    vcpus = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    memory_gib = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    host = models.CharField(max_length=80, blank=True)
    region = models.CharField(max_length=160)
    zone = models.CharField(max_length=60, blank=True)
    billing = models.CharField(max_length=12, choices=Billing.choices)
    usd_per_hour = models.DecimalField(**MONEY, help_text="[USD per instance-hour]")
    zone_count = models.PositiveSmallIntegerField(null=True, blank=True)
    zone_min_usd_per_hour = models.DecimalField(**MONEY, null=True, blank=True)
    zone_median_usd_per_hour = models.DecimalField(**MONEY, null=True, blank=True)
    zone_max_usd_per_hour = models.DecimalField(**MONEY, null=True, blank=True)
    gpu_confirmed = models.BooleanField(default=True)
    gpu_evidence = models.CharField(max_length=400, blank=True)
    flag = models.CharField(max_length=300, blank=True, help_text="why the price looks wrong")
    note = models.CharField(max_length=300, blank=True)
    stated_on = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["run", "line_no", "billing"]

    def __str__(self) -> str:
        return f"{self.instance_type} {self.region} {self.billing} {self.usd_per_hour}"


class RefreshLock(models.Model):
    """The lease that keeps two refreshes of one source from overlapping (when Redis is not used).

    Taken by one conditional UPDATE (free, or its lease expired) and given back by its holder's
    ``token``; a lease outlives a dead worker by ``locked_until`` at most.
    """

    source = models.CharField(max_length=40, unique=True)
    token = models.CharField(max_length=64, blank=True)
    locked_until = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.source} lock until {self.locked_until or '-'}"


from .observation_models import MarketObservation  # noqa: E402, F401
