"""A Monte Carlo run split into Celery tasks equals the run in one process, bit for bit."""

import json
from pathlib import Path

import pytest

from costapp import services
from costapp.celery import app

SCENARIOS = Path(__file__).resolve().parents[1] / "tco" / "scenarios"


def uncertain_fleet(paths: int) -> dict:
    document = json.loads((SCENARIOS / "uncertain-h100-fleet.json").read_text())
    document["simulation"]["paths"] = paths
    return document


@pytest.fixture
def tasks_in_process():
    """Tasks run in this process, as on the embedded default (whatever broker is configured)."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


@pytest.mark.django_db
def test_split_in_process_equals_one_run(catalog_gpus, tasks_in_process):
    document = uncertain_fleet(3_500)  # four blocks, the last one partial
    whole = services.scenario_simulate(document=document)
    split = services.scenario_simulate(document=document, split=True, blocks_per_task=3)
    assert json.dumps(split) == json.dumps(whole)
    assert whole["options"][0]["p10_usd"] < whole["options"][0]["p90_usd"]


@pytest.mark.services
@pytest.mark.django_db
def test_split_across_real_worker_processes_equals_one_run(celery_worker_process, catalog_gpus):
    assert app.conf.task_always_eager is False
    document = uncertain_fleet(5_500)  # six blocks, the last one partial: three tasks of two
    whole = services.scenario_simulate(document=document)
    split = services.scenario_simulate(document=document, split=True, blocks_per_task=2)
    assert json.dumps(split) == json.dumps(whole)
    log = celery_worker_process["log"].read_text()
    assert log.count("Task costapp.montecarlo_blocks[") >= 3, log[-2000:]
    assert "succeeded" in log
