"""The app against real services: PostgreSQL, Redis, a Celery worker process."""

import pytest
from django.db import connection
from django.test import override_settings

from costapp import health
from costapp.celery import app


@pytest.mark.services
def test_the_suite_runs_on_postgresql(postgres_database, db):
    assert connection.vendor == "postgresql"
    assert postgres_database["NAME"].startswith("test_")


@pytest.mark.services
def test_healthz_reports_a_real_redis_broker_and_the_run_queues_workers(
    client, redis_url, db, celery_worker_process
):
    health._workers_seen.clear()
    response = client.get("/healthz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["broker"] == {"status": "ok", "kind": "redis"}
    assert body["workers"]["status"] == "ok" and body["workers"]["workers"] >= 1
    assert redis_url.split("@")[-1] not in response.content.decode()


@pytest.mark.services
def test_tasks_go_to_a_real_broker_not_in_process(redis_url):
    assert app.conf.task_always_eager is False
    assert app.conf.broker_url.startswith("redis://")


@pytest.mark.services
def test_a_real_worker_process_answers(celery_worker_process):
    replies = app.control.ping(destination=[celery_worker_process["nodename"]], timeout=5)
    assert replies and celery_worker_process["nodename"] in replies[0]


@pytest.mark.django_db
def test_healthz_answers_503_when_the_broker_is_down(client):
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["broker"]["status"] == "down" and body["database"]["status"] == "ok"
    assert body["workers"]["status"] == "down"
