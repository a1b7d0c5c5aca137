"""``python manage.py load_catalog``: load the catalog shipped with the project. Idempotent."""

from django.core.management.base import BaseCommand, CommandError

from hardware.gpu_table import GPU_TABLE_PATH, GpuTableError, read_gpu_table
from hardware.services import gpu_models_load


class Command(BaseCommand):
    help = "Load the catalog shipped with the project (GPU table). Loading twice changes nothing."

    def handle(self, *args, **options):
        try:
            rows = read_gpu_table()
        except (OSError, GpuTableError) as exc:
            raise CommandError(f"cannot read the GPU table: {exc}") from exc
        counts = gpu_models_load(rows=rows)
        self.stdout.write(
            f"{GPU_TABLE_PATH.name}: {len(rows)} rows read, {counts.created} created, "
            f"{counts.updated} updated, {counts.unchanged} unchanged"
        )
