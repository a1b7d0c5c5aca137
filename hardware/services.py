"""Writes to the catalog. Every service is keyword-only and idempotent."""

from dataclasses import asdict, dataclass

from django.db import transaction

from .gpu_table import GpuRow
from .models import GpuModel


@dataclass
class LoadCounts:
    """What a load did: rows created, updated and left as they were."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0


@transaction.atomic
def gpu_models_load(*, rows: list[GpuRow]) -> LoadCounts:
    """Create or update one ``GpuModel`` per row; a row equal to the stored one is left alone."""
    counts = LoadCounts()
    existing = {gpu.slug: gpu for gpu in GpuModel.objects.all()}
    for row in rows:
        values = asdict(row)
        gpu = existing.get(row.slug)
        if gpu is None:
            GpuModel.objects.create(**values)
            counts.created += 1
            continue
        changed = [name for name, value in values.items() if getattr(gpu, name) != value]
        if changed:
            for name in changed:
                setattr(gpu, name, values[name])
            gpu.full_clean()
            gpu.save(update_fields=changed)
            counts.updated += 1
        else:
            counts.unchanged += 1
    return counts
