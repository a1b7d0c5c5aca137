from django.apps import AppConfig


class CostappConfig(AppConfig):
    """Scenarios, simulation runs and the cost engine."""

    name = "costapp"
    verbose_name = "Cost of ownership"

    def ready(self) -> None:
        from costapp import checks  # noqa: F401 (registers the start-up checks)
        from costapp.catalog_references import scenarios_referring
        from hardware.references import checker_register

        checker_register(scenarios_referring)  # slugs saved scenarios name are not renamed
