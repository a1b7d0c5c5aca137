"""Fixtures of the cost side's tests."""

import pytest
from django.test import override_settings

from costapp.celery import app


@pytest.fixture
def tasks_in_process():
    """Tasks run in this process, as on the embedded default (whatever broker is configured)."""
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    with override_settings(REDIS_URL="", RUN_BLOCKS_PER_TASK=2):
        yield
    app.conf.task_always_eager = before
