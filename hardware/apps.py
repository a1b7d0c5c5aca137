from django.apps import AppConfig
from django.db.models.signals import post_delete, post_migrate, post_save


class HardwareConfig(AppConfig):
    """The catalog: GPU models, providers, offers, prices, egress tiers and quotes."""

    name = "hardware"
    verbose_name = "Catalog"

    def ready(self) -> None:
        from hardware.catalog_version import on_catalog_write
        from hardware.models import GpuModel, InstanceOffer, InstancePrice, Provider, Region

        # What the price lists show: a write to any of these gives the catalog a new version.
        for model in (GpuModel, Provider, Region, InstanceOffer, InstancePrice):
            post_save.connect(on_catalog_write, sender=model, dispatch_uid=f"catalog-{model}")
            post_delete.connect(on_catalog_write, sender=model, dispatch_uid=f"catalog-{model}-d")
        post_migrate.connect(on_catalog_write, sender=self, dispatch_uid="catalog-migrate")
