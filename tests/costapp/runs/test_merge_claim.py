"""The merge's claim, in this process: one merge holds it, only a holder known to be gone is taken
over (its own message delivered again, or its heartbeat silent), and only the holder finishes the
run."""

import json
from datetime import timedelta

import pytest
import redis
from django.utils import timezone

from costapp.models import SimulationRun
from costapp.runs import merging, pipeline, requeue

from .test_pipeline import a_copy, finished_run  # noqa: F401 (fixtures)


def all_but_the_last_unit(run: SimulationRun) -> tuple[str, int]:
    """Land every unit of ``run`` but its last; the last one's (kind, unit)."""
    *first, (last_kind, last_unit, _blocks) = run.units
    for kind, unit, _blocks in first:
        pipeline.run_block_execute(run_id=run.id, kind=kind, unit=unit)
    return last_kind, last_unit


def silent(run: SimulationRun, seconds: float) -> None:
    SimulationRun.objects.filter(pk=run.pk).update(
        heartbeat=timezone.now() - timedelta(seconds=seconds)
    )


def finish(run: SimulationRun, like: SimulationRun, owner: str) -> bool:
    return pipeline.run_finish(
        run_id=run.id,
        result=like.result,
        monthly_breakdown_usd=like.monthly_breakdown_usd,
        owner=owner,
    )


def test_a_live_merge_keeps_its_claim_and_a_silent_one_is_taken_over_and_cannot_finish(
    finished_run,  # noqa: F811
):
    run = a_copy(finished_run, status="running", attempts=1)
    assert merging.merge_claim(run.id, "first")
    assert not merging.merge_claim(run.id, "second")  # "first" beat just now: under way
    silent(run, merging.MERGE_STALE_S - 2)
    assert not merging.merge_claim(run.id, "second")
    run.refresh_from_db()
    assert (run.merge_owner, run.resumed, run.attempts) == ("first", None, 1)

    silent(run, merging.MERGE_STALE_S + 1)
    before = timezone.now()
    assert merging.merge_claim(run.id, "second")
    run.refresh_from_db()
    assert run.merge_owner == "second" and run.resumed_at_merge
    assert run.resumed >= before and run.attempts == 2
    assert not merging.merge_claim(run.id, "first")  # "second" holds it and beats

    assert not finish(run, finished_run, "first")  # the holder it was taken from: too late
    run.refresh_from_db()
    assert run.status == "running" and run.result is None
    assert finish(run, finished_run, "second")
    run.refresh_from_db()
    assert run.status == "succeeded" and json.dumps(run.result) == json.dumps(finished_run.result)
    assert not finish(run, finished_run, "second")  # once


def test_the_same_task_delivered_again_takes_its_own_merge_over_at_once(
    finished_run,  # noqa: F811
    client,
):
    run = a_copy(finished_run, status="running", attempts=1)
    last_kind, last_unit = all_but_the_last_unit(run)
    # the delivery that was to land the last unit claimed the merge and was lost (its process
    # killed); another message of the run lands that unit, finds the merge under way, leaves it
    assert merging.merge_claim(run.id, "lost-task")
    pipeline.run_block_execute(run_id=run.id, kind=last_kind, unit=last_unit, task_id="dup")
    run.refresh_from_db()
    assert (run.status, run.merge_owner, run.progress) == ("running", "lost-task", 99)
    # the lost task's own message, handed out again, merges at once
    pipeline.run_block_execute(run_id=run.id, kind=last_kind, unit=last_unit, task_id="lost-task")
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    assert run.resumed_at_merge and run.resumed is not None and run.attempts == 2
    assert json.dumps(run.result) == json.dumps(finished_run.result)
    client.force_login(run.scenario.owner)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'id="run-resumed"' in page and "Its worker was lost during the merge" in page


def test_a_service_error_in_the_merge_releases_its_claim_for_the_retry(
    finished_run,  # noqa: F811
    monkeypatch,
):
    run = a_copy(finished_run, status="running", attempts=1)
    last_kind, last_unit = all_but_the_last_unit(run)
    real_fetch = pipeline.payloads_fetch

    def redis_down(**_kwargs):
        raise redis.ConnectionError("Connection refused")

    monkeypatch.setattr(pipeline, "payloads_fetch", redis_down)
    with pytest.raises(redis.ConnectionError):
        pipeline.run_block_execute(run_id=run.id, kind=last_kind, unit=last_unit, task_id="t")
    run.refresh_from_db()
    assert (run.status, run.merge_started, run.merge_owner) == ("running", None, "")
    monkeypatch.setattr(pipeline, "payloads_fetch", real_fetch)
    pipeline.run_block_execute(run_id=run.id, kind=last_kind, unit=last_unit, task_id="t")
    run.refresh_from_db()
    assert run.status == "succeeded" and run.resumed is None and run.attempts == 1


def test_beat_requeues_a_silent_merge_sooner_than_a_silent_run(finished_run):  # noqa: F811
    merging_run = a_copy(finished_run, status="running", attempts=1)
    assert merging.merge_claim(merging_run.id, "gone")
    silent(merging_run, merging.MERGE_STALE_S + 5)
    blocks_run = a_copy(finished_run, status="running", attempts=1)
    silent(blocks_run, merging.MERGE_STALE_S + 5)

    assert requeue.runs_requeue_stale(stale_after=timedelta(seconds=60)) == [merging_run.id]
    merging_run.refresh_from_db()
    assert merging_run.resumed_at_merge and merging_run.resumed is not None
    # in-process, the run task ran at once: every unit computed again, merged by a new claim
    assert merging_run.status == "succeeded" and merging_run.attempts == 2
    assert json.dumps(merging_run.result) == json.dumps(finished_run.result)
    blocks_run.refresh_from_db()
    assert blocks_run.status == "running" and blocks_run.resumed is None
