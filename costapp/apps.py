from importlib import import_module

from django.apps import AppConfig


class CostappConfig(AppConfig):
    """Scenarios, simulation runs and the cost engine."""

    name = "costapp"
    verbose_name = "Cost of ownership"

    def ready(self) -> None:
        from costapp import checks  # noqa: F401 (registers the start-up checks)

        # The run pipeline's tasks, registered in every process (a worker has them through the
        # Celery app's ``include`` too): the pipeline publishes them by name, and on the embedded
        # default a task runs in-process only when it is registered. By name, so that no module
        # imports the task module.
        import_module("costapp.runs.tasks")
        import_module("costapp.ask.tasks")  # and the step's receiver, costapp.ask.steps
        import_module("costapp.watch.tasks")
        from costapp.watch.signals import signals_connect

        signals_connect()  # a price refresh applied prices the watched plans again

        from costapp.catalog_references import scenarios_referring
        from hardware.references import checker_register

        checker_register(scenarios_referring)  # slugs saved scenarios name are not renamed
