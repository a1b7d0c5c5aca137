from django.apps import AppConfig


class HardwareConfig(AppConfig):
    """The catalog: GPU models, providers, offers, prices, egress tiers and quotes."""

    name = "hardware"
    verbose_name = "Catalog"
