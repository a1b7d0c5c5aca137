"""The run pipeline's tasks are published by name and found by name: a worker's registry (and a
web process's, where the embedded default runs them in-process) holds every task name the
pipeline and beat send, and no module of the project imports the task module."""

import json
import subprocess
import sys
from pathlib import Path

import grimp

from costapp.runs import store

ROOT = Path(__file__).resolve().parents[3]

PIPELINE_TASKS = {
    store.RUN_EXECUTE_TASK,
    store.RUN_BLOCK_TASK,
    store.RUN_MERGE_TASK,
    store.RUNS_REQUEUE_STALE_TASK,
}

REGISTRY = """
import json, os
os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
import django
django.setup()  # a web process: the apps ready, no worker start
from costapp.celery import app
web = sorted(app.tasks)
app.loader.import_default_modules()  # what a worker (and beat) does before it takes messages
from django.conf import settings
print(json.dumps({
    "web": web,
    "worker": {name: bool(task.acks_late) for name, task in app.tasks.items()},
    "beat": sorted(entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()),
}))
"""


def registry() -> dict:
    """The task registries of a fresh process (none of this test process's imports in it): once
    Django is set up (a web process), then once a worker has imported its task modules."""
    done = subprocess.run(
        [sys.executable, "-c", REGISTRY],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_pipeline_task_names_are_the_ones_the_messages_and_beat_carry():
    assert {
        "costapp.run_execute",
        "costapp.run_block",
        "costapp.run_merge",
        "costapp.runs_requeue_stale",
    } == PIPELINE_TASKS


def test_a_worker_and_a_web_process_register_every_task_the_pipeline_and_beat_send():
    found = registry()
    for name in PIPELINE_TASKS | {"hardware.refresh_source"}:
        assert found["worker"].get(name) is True, name  # registered, and acknowledged late
    assert set(found["beat"]) <= set(found["worker"])
    assert "costapp.runs_requeue_stale" in found["beat"]
    # in-process (the embedded default) a task published by name runs only when registered
    assert set(found["web"]) >= PIPELINE_TASKS


def test_nothing_imports_the_task_modules():
    sys.path.insert(0, str(ROOT))
    try:
        graph = grimp.build_graph("costapp", "hardware", "accounts", "bench", cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))
    assert "costapp.runs.tasks" in graph.modules
    assert graph.find_modules_that_directly_import("costapp.runs.tasks") == set()
    assert graph.find_modules_that_directly_import("hardware.tasks") == set()
