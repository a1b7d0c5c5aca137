"""What a finished run sets going besides its charts: ``run_succeeded`` is sent, with the run's
id, once a run's result is stored and its charts are built. A receiver does its own step off the
request (it publishes its own task by name); its failure is logged and never undoes the run.
What such a step kept for a read-only link of the run is read back by :func:`answer_words`."""

import logging
from typing import Any

from django.dispatch import Signal

from costapp.models import SimulationRun

logger = logging.getLogger(__name__)

run_succeeded = Signal()
"""Sent with ``run_id`` once a run has succeeded."""


def run_succeeded_send(run_id: int) -> None:
    """Tell the receivers that run ``run_id`` succeeded; a receiver's error is logged."""
    for _receiver, outcome in run_succeeded.send_robust(sender=None, run_id=run_id):
        if isinstance(outcome, Exception):
            logger.error("run %s: a follow-up step failed: %s", run_id, outcome, exc_info=outcome)


def answer_words(run: SimulationRun) -> dict[str, Any] | None:
    """What a question asked of this run answers, as a read-only link may show it (kept by the
    question's step under ``shared``: the sentence, the prices it rests on, whether the next offers
    change it and its figures, quotes named only as "a quote"); None when the run answers no
    question."""
    for changes in run.questions.values_list("changes", flat=True):
        if changes and changes.get("run") == run.pk and changes.get("shared"):
            found: dict[str, Any] = changes["shared"]
            return found
    return None
