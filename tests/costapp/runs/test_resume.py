"""A run whose worker is lost resumes on its own: beat (embedded in the rescuing worker, on the
default settings) finds it silent for ``RUN_STALE_AFTER_S`` and publishes what is missing, and the
run succeeds within 120 s of the kill, equal to ``simulate``; its page says when it resumed.
Real Redis, PostgreSQL and Celery worker processes (run with GPU_TCO_SERVICES=1)."""

import json
import time

import pytest
from django.conf import settings

from costapp.models import SimulationRun
from costapp.scenarios import services

from ..runs_helpers import scenario_document
from .test_workers import alice, run_killed_mid_way  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_a_run_whose_worker_is_killed_resumes_within_120_s_by_beat_alone(
    client,
    alice,  # noqa: F811 (the fixture imported above)
    catalog,
    celery_workers,
):
    assert settings.RUN_STALE_AFTER_S + settings.RUN_STALE_CHECK_S <= 90  # the defaults
    doomed = celery_workers(concurrency=2, own_process_group=True)
    document = scenario_document(paths=40_000, seed=11)
    run_id, killed = run_killed_mid_way(client, document, doomed)
    assert SimulationRun.objects.get(pk=run_id).status == "running"
    # a new worker with beat: nothing else is done by hand
    celery_workers(concurrency=2, beat=True)
    while True:
        run = SimulationRun.objects.get(pk=run_id)
        if run.status != "running":
            break
        assert time.monotonic() - killed < 120, f"not resumed 120 s after the kill: {run.progress}"
        time.sleep(0.5)
    took = time.monotonic() - killed
    assert run.status == "succeeded", run.error
    assert run.resumed is not None and run.attempts >= 2
    assert json.dumps(run.result) == json.dumps(services.scenario_simulate(document=document))
    page = client.get(f"/runs/{run_id}/").content.decode()
    assert 'id="run-resumed"' in page and "Its worker was lost" in page
    print(f"resumed and finished {took:.0f} s after the kill")
