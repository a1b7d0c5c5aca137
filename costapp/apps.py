from django.apps import AppConfig


class CostappConfig(AppConfig):
    """Scenarios, simulation runs and the cost engine."""

    name = "costapp"
    verbose_name = "Cost of ownership"
