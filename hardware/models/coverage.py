"""What the catalog could not name: the GPU and instance names each refresh or catalog load met
and could not map, counted per source and run."""

from django.db import models

from hardware.models.refresh_runs import RefreshRun


class NameKind(models.TextChoices):
    """What a name a feed used names."""

    GPU = "gpu", "GPU name"
    INSTANCE = "instance", "instance name"


class CoverageReport(models.Model):
    """One feed read by one refresh run (or one file of a ``load_catalog``): how many of its rows
    named something the catalog could not map (``names``, one row per name and reason)."""

    LOAD_CATALOG = "load_catalog"

    source = models.CharField(
        max_length=40, help_text="the refresh's source (skypilot-lambda, ...) or load_catalog"
    )
    provider = models.CharField(
        max_length=64, blank=True, help_text="provider slug the feed covers (empty: several)"
    )
    feed_name = models.CharField(max_length=300, help_text="file or feed read")
    recorded_at = models.DateTimeField(help_text="when the feed was read [UTC]")
    refresh_run = models.OneToOneField(
        RefreshRun,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="coverage",
        help_text="the refresh run (empty for a load_catalog)",
    )
    rows_read = models.PositiveIntegerField(default=0, help_text="rows read [count]")
    rows_unmapped = models.PositiveIntegerField(
        default=0, help_text="rows whose GPU or instance name could not be mapped [count]"
    )

    class Meta:
        ordering = ["-recorded_at", "-pk"]
        indexes = [models.Index(fields=["source", "-recorded_at"], name="coverage_latest")]

    def __str__(self) -> str:
        return f"{self.source} {self.feed_name} {self.recorded_at:%Y-%m-%d %H:%M}"


class UnmappedName(models.Model):
    """A GPU or instance name one feed used that the catalog could not map, with why, on how
    many rows, and the first such row as an example."""

    Kind = NameKind

    report = models.ForeignKey(CoverageReport, on_delete=models.CASCADE, related_name="names")
    kind = models.CharField(max_length=10, choices=NameKind.choices)
    name = models.CharField(max_length=200, help_text="the name as the feed wrote it")
    reason = models.CharField(
        max_length=60, help_text="unknown GPU name, GPU variant not settled, ..."
    )
    rows = models.PositiveIntegerField(help_text="rows of the feed naming it [count]")
    example_line = models.PositiveIntegerField(
        null=True, blank=True, help_text="the line (or item) of the first such row"
    )
    example = models.CharField(max_length=400, help_text="the first such row, in words")

    class Meta:
        ordering = ["report", "-rows", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["report", "kind", "name", "reason"], name="unmapped_name_once_per_report"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.reason}, {self.rows} rows)"
