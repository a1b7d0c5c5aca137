"""Runs that show no sign of life, their tasks published again (beat's ``costapp.runs_requeue_stale``)."""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from costapp.models import SimulationRun
from costapp.runs import store
from costapp.runs.merging import MERGE_STALE_S

logger = logging.getLogger("costapp.runs.pipeline")


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
