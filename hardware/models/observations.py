"""Market observations: dated prices a source states for a GPU at a provider and region without
naming an instance offer of the catalog (``hardware/data/epoch_hardware_prices.csv``).

Imported at the end of ``hardware.models``, so the model is part of the ``hardware`` app.
"""

from django.db import models

from hardware.catalog_version import CatalogQuerySet

COMMIT_TERM_MONTHS = {"commit_1y": 12, "commit_3y": 36, "commit_5y": 60}
"""The term of each committed billing [months]: a committed option's ``term_months``."""
COMMITTED_CHOICES = [
    ("commit_1y", "1-year commitment"),
    ("commit_3y", "3-year commitment"),
    ("commit_5y", "5-year commitment"),
]


class MarketObservation(models.Model):
    """One price per GPU-hour a dated source stated for a GPU model at a provider and region, in a
    billing (Epoch AI's archived cloud price pages: 1- and 3-year commitments).

    ``offer`` is the catalog's instance offer the row was matched to (same provider, GPU and
    region, and the instance the row names where it names one); empty when the catalog holds no
    such offer, and the observation is then the only place the price is kept. ``line_no`` is the
    row's line in ``source_name``; one observation per (file, line, billing).
    """

    gpu = models.ForeignKey(
        "hardware.GpuModel", on_delete=models.PROTECT, related_name="market_observations"
    )
    provider = models.ForeignKey(
        "hardware.Provider", on_delete=models.CASCADE, related_name="market_observations"
    )
    region = models.ForeignKey(
        "hardware.Region", on_delete=models.CASCADE, related_name="market_observations"
    )
    offer = models.ForeignKey(
        "hardware.InstanceOffer",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="market_observations",
        help_text="the catalog's offer the row was matched to; empty: none in the catalog",
    )
    billing = models.CharField(max_length=12, choices=COMMITTED_CHOICES)
    usd_per_gpu_hour = models.DecimalField(
        max_digits=20, decimal_places=10, help_text="[USD per GPU-hour] as the source states it"
    )
    stated_on = models.DateField(help_text="the date the source gave the price")
    instance = models.CharField(
        max_length=200, blank=True, help_text="the instance the source names, if any"
    )
    gpu_evidence = models.CharField(max_length=400, help_text="why the GPU is this model")
    source_name = models.CharField(max_length=200, help_text="file the row came from")
    source_sha256 = models.CharField(max_length=64, blank=True)
    line_no = models.PositiveIntegerField(help_text="the row's line in the file")
    source_url = models.CharField(
        max_length=500, blank=True, help_text="the page the row cites, as written"
    )

    objects = CatalogQuerySet.as_manager()

    class Meta:
        ordering = ["gpu__slug", "provider__slug", "billing", "stated_on", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["source_name", "line_no", "billing"], name="observation_unique_row"
            ),
            models.CheckConstraint(
                condition=models.Q(billing__in=list(COMMIT_TERM_MONTHS)),
                name="observation_billing_committed",
            ),
            models.CheckConstraint(
                condition=models.Q(usd_per_gpu_hour__gt=0), name="observation_price_positive"
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.provider.slug} {self.gpu.slug} {self.region.code} {self.billing} "
            f"{self.usd_per_gpu_hour} on {self.stated_on}"
        )

    @property
    def term_months(self) -> int:
        return COMMIT_TERM_MONTHS[self.billing]
