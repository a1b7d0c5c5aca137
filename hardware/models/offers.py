"""Providers, their regions and instance offers, the offers' dated prices and the providers'
egress tiers."""

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

from hardware.catalog_version import CatalogQuerySet
from hardware.display.figures import decimal_text
from hardware.geography import GEOGRAPHIES, LABELS, region_geography
from hardware.models.gpus import GpuModel
from hardware.models.money import MONEY, MONEY_QUANTUM


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
    """A provider's region as the provider names it (``us-east-1``; Vast: ``"Texas, US, NA"``),
    with the geography a buyer filters by (``hardware.geography``)."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="regions")
    code = models.CharField(
        max_length=160, help_text="the provider's own region name, kept as written"
    )
    name = models.CharField(max_length=160, blank=True)
    geography = models.CharField(
        max_length=16,
        choices=[(geography, LABELS[geography]) for geography in GEOGRAPHIES],
        blank=True,
        help_text="the part of the world the region is in; empty when its code does not say "
        "(set from the code when the region is created, by hardware.geography)",
    )

    objects = CatalogQuerySet.as_manager()

    class Meta:
        ordering = ["provider__slug", "code"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "code"], name="region_unique_per_provider"),
            models.CheckConstraint(condition=~models.Q(code=""), name="region_code_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.provider.slug} {self.code}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A new region without a geography gets the one its code says (``region_geography``)."""
        if self._state.adding and not self.geography:
            self.geography = region_geography(self.code) or ""
        super().save(*args, **kwargs)


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
        bound = "no limit" if self.up_to_tb is None else f"up to {decimal_text(self.up_to_tb)} TB"
        return f"{self.provider.slug} egress {bound}: {decimal_text(self.usd_per_gb)} USD/GB"
