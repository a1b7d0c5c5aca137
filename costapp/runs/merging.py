"""The merge's claim: one merge of a run at a time, and a merge whose worker was lost taken over.

A merge claims the run (:func:`merge_claim`) under the name of its owner, the id of the task
merging (the block task that landed the last unit, or the merge task), and beats while it works
(:func:`merge_heartbeat`: the run's ``heartbeat`` every :data:`MERGE_HEARTBEAT_S`). Another merge
may take the claim over only when its holder is known to be gone:

- the claim is its own: its message was delivered again, which happens only once the delivery
  that claimed it ended without finishing (its pool process lost, as
  ``CELERY_TASK_REJECT_ON_WORKER_LOST`` hands the message out again at once, or its worker lost,
  after the visibility timeout; a task is stopped by its time limit before that timeout), so the
  merge is taken over at once;
- or the holder's heartbeat stopped for :data:`MERGE_STALE_S` (its whole worker lost: beat's
  requeue, :func:`costapp.runs.requeue.runs_requeue_stale`, looks for such runs too).

Only the holder of the claim finishes the run (:func:`costapp.runs.pipeline.run_finish` is
conditional on it), so two merges never both finish it, even when a holder that was thought gone
was only slow.
"""

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from costapp.faults import SERVICE_ERRORS
from costapp.models import SimulationRun

logger = logging.getLogger(__name__)

Status = SimulationRun.Status

MERGE_HEARTBEAT_S = 5.0
"""How often a merge under way writes the run's heartbeat [s]."""
MERGE_STALE_S = 20.0
"""A claimed merge whose run shows no heartbeat for this long lost its worker [s] (four beats
missed)."""

CLAIM_FIELDS = (
    "status",
    "merge_started",
    "merge_owner",
    "heartbeat",
    "attempts",
    "resumed",
    "resumed_at_merge",
)


def merge_claim(run_id: int, owner: str) -> bool:
    """Claim a running run's merge for ``owner``: True when free, or when its holder is gone
    (``owner`` itself, delivered again; or a holder silent for :data:`MERGE_STALE_S`: the run is
    then marked resumed at its merge, and the attempt counted); False when the run is not running
    or another merge is under way. Under the row lock, so two claims never both succeed."""
    now = timezone.now()
    with transaction.atomic():
        run = (
            SimulationRun.objects.select_for_update().filter(pk=run_id).only(*CLAIM_FIELDS).first()
        )
        if run is None or run.status != Status.RUNNING:
            logger.info("run %s: merge skipped (run not running)", run_id)
            return False
        lost = ""
        if run.merge_started is not None:
            silent = run.heartbeat is None or run.heartbeat <= now - timedelta(
                seconds=MERGE_STALE_S
            )
            if run.merge_owner == owner:
                lost = "its message came back: the delivery that claimed the merge was lost"
            elif silent:
                lost = f"its merger showed no sign of life for {MERGE_STALE_S:.0f} s"
            else:
                logger.info("run %s: merge skipped (a merge is under way)", run_id)
                return False
        run.merge_started = run.heartbeat = now
        run.merge_owner = owner
        fields = ["merge_started", "merge_owner", "heartbeat"]
        if lost:
            run.resumed, run.resumed_at_merge = now, True
            run.attempts += 1
            fields += ["resumed", "resumed_at_merge", "attempts"]
        run.save(update_fields=fields)
    if lost:
        logger.warning("run %s: merge taken over (attempt %s): %s", run_id, run.attempts, lost)
    return True


def merge_release(run_id: int, owner: str) -> None:
    """Give up ``owner``'s claim (a service failed under the merge: its task tries again, and
    the claim is no longer its own). Best effort: with the database down, the retry finds the
    claim its own and takes it over."""
    try:
        SimulationRun.objects.filter(pk=run_id, merge_owner=owner).update(
            merge_started=None, merge_owner=""
        )
    except SERVICE_ERRORS:
        logger.warning("run %s: the merge's claim could not be released", run_id)


@contextmanager
def merge_heartbeat(
    run_id: int, owner: str, *, beat_s: float = MERGE_HEARTBEAT_S
) -> Iterator[None]:
    """Write the run's heartbeat every ``beat_s`` while the block runs, from a thread of its own
    (the merge's own thread is busy in the engine), as long as ``owner`` holds the claim. The
    thread has a database connection of its own, closed when it stops. In-process (no broker)
    nothing else could take the merge over: no thread."""
    from costapp.runs.store import tasks_in_process

    if tasks_in_process():
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(beat_s):
                try:
                    SimulationRun.objects.filter(
                        pk=run_id, status=Status.RUNNING, merge_owner=owner
                    ).update(heartbeat=timezone.now())
                except SERVICE_ERRORS as exc:
                    logger.warning("run %s: the merge's heartbeat failed: %s", run_id, exc)
        finally:
            connections.close_all()  # this thread's own

    thread = threading.Thread(target=beat, name=f"merge-heartbeat-{run_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def merge_pause_point(run_id: int) -> None:
    """The tests' window into a merge under way (``tests/costapp/runs/test_merge_kill.py``): with
    the setting ``RUN_MERGE_PAUSE_FILE`` (only the tests' settings have it, from the environment
    variable of that name) naming a file that exists, the first merge to get here removes the
    file, writes its process id to the same name with ``.paused`` appended, and sleeps
    ``RUN_MERGE_PAUSE_S`` (default 60) with its claim held and its heartbeat beating."""
    _pause_point("merge", run_id)


def block_pause_point(run_id: int) -> None:
    """The tests' window into a block task holding its run's row
    (``tests/costapp/runs/test_frozen_worker.py``): as :func:`merge_pause_point`, with the
    settings ``RUN_BLOCK_PAUSE_FILE`` and ``RUN_BLOCK_PAUSE_S``, inside the transaction that
    stores the block, the run's row locked."""
    _pause_point("block", run_id)


def _pause_point(what: str, run_id: int) -> None:
    name = what.upper()
    pause_file = getattr(settings, f"RUN_{name}_PAUSE_FILE", "")
    if not pause_file:
        return
    try:
        os.unlink(pause_file)  # only one gets it
    except FileNotFoundError:
        return
    seconds = float(getattr(settings, f"RUN_{name}_PAUSE_S", 60))
    written = Path(f"{pause_file}.paused.part")
    written.write_text(f"{os.getpid()}\n")
    written.replace(f"{pause_file}.paused")  # whole when it appears
    logger.warning("run %s: %s paused %.0f s in process %s", run_id, what, seconds, os.getpid())
    time.sleep(seconds)
