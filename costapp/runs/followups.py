"""What a finished run sets going besides its charts: ``run_succeeded`` is sent, with the run's
id, once a run's result is stored and its charts are built. A receiver does its own step off the
request (it publishes its own task by name); its failure is logged and never undoes the run."""

import logging

from django.dispatch import Signal

logger = logging.getLogger(__name__)

run_succeeded = Signal()
"""Sent with ``run_id`` once a run has succeeded."""


def run_succeeded_send(run_id: int) -> None:
    """Tell the receivers that run ``run_id`` succeeded; a receiver's error is logged."""
    for _receiver, outcome in run_succeeded.send_robust(sender=None, run_id=run_id):
        if isinstance(outcome, Exception):
            logger.error("run %s: a follow-up step failed: %s", run_id, outcome, exc_info=outcome)
