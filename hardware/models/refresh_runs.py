"""Price refreshes: each run on record, its staged prices, and the lock of a source."""

from django.db import models

from hardware.models.money import MONEY
from hardware.models.offers import Billing


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
    prices_kept = models.JSONField(
        default=list,
        blank=True,
        help_text="rejected rows (line, reason) and the current price each keeps",
    )
    catalog_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="SHA-256 of the current prices and egress tiers the feed was checked against",
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
    """The lease that keeps two refreshes of one source from overlapping (command, schedule and
    approval alike; ``hardware.refresh.lease``).

    Taken by one conditional UPDATE (free, or its lease lapsed), renewed by its holder while it
    works and given back by its holder's ``token``; a dead holder's lease lapses at
    ``locked_until``.
    """

    source = models.CharField(max_length=40, unique=True)
    token = models.CharField(max_length=64, blank=True)
    locked_until = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.source} lock until {self.locked_until or '-'}"
