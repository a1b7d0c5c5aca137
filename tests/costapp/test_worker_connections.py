"""A worker keeps its database connection from task to task, as a web process does between
requests, and lets go of it when ``CONN_MAX_AGE`` has passed or it broke
(``costapp.celery.db_connections_tidy`` on every task's start and end). Closing and breaking
connections needs a real server: those tests run on PostgreSQL (an in-memory SQLite database
lives only as long as its one connection)."""

import time
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.db import connection

from costapp.celery import app, db_connections_tidy


def task(*, eager: bool) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(is_eager=eager))


def test_celery_does_not_close_the_connection_after_every_task():
    assert settings.DATABASES["default"]["CONN_MAX_AGE"] > 0
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True
    assert app.conf.get("CELERY_DB_REUSE_MAX") >= 100


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_connection_is_kept_for_the_next_task_until_it_is_too_old():
    connection.ensure_connection()
    raw = connection.connection
    db_connections_tidy(sender=task(eager=False))
    assert connection.connection is raw
    connection.close_at = time.monotonic() - 1  # CONN_MAX_AGE has passed
    db_connections_tidy(sender=task(eager=False))
    assert connection.connection is None
    connection.ensure_connection()
    assert connection.connection is not raw


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_broken_connection_is_replaced_before_the_next_task_uses_it():
    from django.contrib.auth.models import User

    connection.ensure_connection()
    raw = connection.connection
    connection.errors_occurred = True  # what a failed query leaves behind
    raw.close()  # the server went away
    db_connections_tidy(sender=task(eager=False))
    assert User.objects.count() == 0  # a new connection answers
    assert connection.connection is not raw


@pytest.mark.django_db
def test_an_in_process_task_leaves_its_callers_connection_and_transaction_alone():
    connection.ensure_connection()
    raw, close_at = connection.connection, connection.close_at
    assert connection.in_atomic_block  # the test's transaction, as a request's would be
    connection.close_at = time.monotonic() - 1
    try:
        db_connections_tidy(sender=task(eager=True))
        assert connection.connection is raw and connection.in_atomic_block
    finally:
        connection.close_at = close_at
