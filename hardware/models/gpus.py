"""GPU models with their datasheet figures."""

from django.db import models

from hardware.catalog_version import CatalogQuerySet


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
    fp4_dense_tflops = models.DecimalField(
        max_digits=10,
        decimal_places=3,
        null=True,
        blank=True,
        help_text="dense FP4 throughput [TFLOP/s]; a catalog figure only: scenarios have no FP4 "
        "precision, so the engine never reads it",
    )
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
