"""Runs that show no sign of life, their tasks published again (beat's ``costapp.runs_requeue_stale``),
and units whose result was kept but never recorded, published again (:func:`units_requeue_unrecorded`)."""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from costapp.models import RunBlock, SimulationRun
from costapp.runs import store
from costapp.runs.merging import MERGE_STALE_S

logger = logging.getLogger("costapp.runs.pipeline")

UNRECORDED_AFTER_S = 20.0
"""A unit whose result was kept this long ago without its row being written lost its worker
between the two (a worker frozen holding the run's row, say) [s]: a block task keeps its result,
then records it under the row's lock at once, and one that waits for the lock keeps it again at
each try (a try every few seconds)."""


def runs_requeue_stale(*, stale_after: timedelta) -> list[int]:
    """Re-publish the run task of every queued or running run with no sign of life (started, a
    block landing, a merge's heartbeat) for ``stale_after``, or with a merge claimed and no
    heartbeat for ``costapp.runs.merging.MERGE_STALE_S`` (a merge beats every few seconds): its
    worker died, or its messages were lost. The run task publishes only the work not yet stored
    (the merge, when every unit is), and every step drops what is already done, so a run that
    can still finish is never harmed; nothing is marked failed here. The ids requeued."""
    now = timezone.now()
    cutoff = now - stale_after
    merge_cutoff = now - timedelta(seconds=MERGE_STALE_S)
    requeued: list[int] = []
    candidates = SimulationRun.objects.filter(status__in=SimulationRun.ACTIVE).filter(
        Q(heartbeat__lt=cutoff)
        | Q(heartbeat=None, created__lt=cutoff)
        | Q(merge_started__isnull=False, heartbeat__lt=merge_cutoff)
    )
    for run_id in candidates.values_list("pk", flat=True):
        with transaction.atomic():
            # a row locked now is being worked on, or held by a frozen worker until the
            # database ends its session: left for the next look, never waited on
            run = (
                SimulationRun.objects.select_for_update(skip_locked=True).filter(pk=run_id).first()
            )
            if run is None or run.status not in SimulationRun.ACTIVE:
                continue
            run.heartbeat = run.resumed = timezone.now()
            run.resumed_at_merge = run.merge_started is not None
            # a merger that died with the worker: its claim released, the merge begun again
            run.merge_started, run.merge_owner = None, ""
            fields = ["heartbeat", "resumed", "resumed_at_merge", "merge_started", "merge_owner"]
            run.save(update_fields=fields)
        where = " in its merge" if run.resumed_at_merge else ""
        logger.warning("run %s shows no sign of life%s: requeued", run_id, where)
        store.publish(store.RUN_EXECUTE_TASK, run_id)
        requeued.append(run_id)
    return requeued


def units_requeue_unrecorded(*, unrecorded_after_s: float = UNRECORDED_AFTER_S) -> list[int]:
    """Publish again the block task of every unit of a running run, quiet for
    ``unrecorded_after_s``, whose result was kept that long ago and never recorded: its task
    froze between the two, most likely holding the run's row (a paused container, a stalled
    VM), which the database releases only after ``WORKER_IDLE_IN_TRANSACTION_TIMEOUT_S``. Its
    unit, computed again meanwhile, is recorded as soon as the row is free, so the run finishes
    then rather than a whole ``RUN_STALE_AFTER_S`` after its other units land. Never waits on a
    row; a unit published twice lands once. The ids of the runs whose units were published."""
    cutoff = timezone.now() - timedelta(seconds=unrecorded_after_s)
    quiet = SimulationRun.objects.filter(status=SimulationRun.Status.RUNNING).filter(
        Q(heartbeat__lt=cutoff) | Q(heartbeat=None)
    )
    published: list[int] = []
    for run_id, units in quiet.values_list("pk", "units"):
        done = set(RunBlock.objects.filter(run_id=run_id).values_list("kind", "unit"))
        missing = [(kind, unit) for kind, unit, _blocks in units if (kind, unit) not in done]
        waiting = store.payloads_waiting_s(run_id=run_id, units=missing)
        lost = [
            key
            for key, seconds in zip(missing, waiting, strict=False)
            if seconds is not None and seconds >= unrecorded_after_s
        ]
        if not lost:
            continue
        store.payloads_touch(run_id=run_id, units=lost)  # not published again at the next look
        for kind, unit in lost:
            logger.warning(
                "run %s %s unit %s: kept, never recorded: published again", run_id, kind, unit
            )
            store.publish(store.RUN_BLOCK_TASK, run_id, kind, unit)
        published.append(run_id)
    return published
