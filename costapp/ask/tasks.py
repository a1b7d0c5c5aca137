"""Ask's task: "what would change the answer" of a finished run, off the request. Nothing imports
this module: the step publishes it by name (:data:`costapp.ask.steps.ASK_CHANGES_TASK`), and the
Celery app registers it (``include`` in :mod:`costapp.celery`, and
:class:`costapp.apps.CostappConfig` for the web processes)."""

from celery import shared_task

from costapp.ask import steps
from costapp.faults import SERVICE_ERRORS


@shared_task(
    name=steps.ASK_CHANGES_TASK,
    acks_late=True,
    ignore_result=True,
    autoretry_for=SERVICE_ERRORS,
    retry_backoff=1,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=12,
)
def ask_changes_task(run_id: int) -> None:
    steps.question_changes_compute(run_id)
