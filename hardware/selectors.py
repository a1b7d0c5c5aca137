"""Reads from the catalog."""

from collections.abc import Iterable

from .gpu_table import engine_figures, read_gpu_table
from .models import GpuModel


def gpu_figures(*, slugs: Iterable[str] | None = None) -> dict[str, dict[str, float | None]]:
    """The engine's figures per GPU slug, from the database (all GPUs, or only ``slugs``)."""
    queryset = GpuModel.objects.all()
    if slugs is not None:
        queryset = queryset.filter(slug__in=list(slugs))
    return {gpu.slug: engine_figures(gpu) for gpu in queryset}  # type: ignore[arg-type]


def gpu_figures_from_table() -> dict[str, dict[str, float | None]]:
    """The engine's figures per GPU slug from the table shipped with the project (no database)."""
    return {row.slug: engine_figures(row) for row in read_gpu_table()}
