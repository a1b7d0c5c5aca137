"""Faults of the services (docs/api.md, "Basics"): a database or Redis error answers 503 with
``Retry-After``, in the API's error format under ``/api/`` and as a plain page elsewhere; while
Redis does not answer, the throttle, the sign-in limits, the chart cache and the page cache fall
back to this process, so reads that need no Redis keep answering; the run pipeline's tasks retry
a service error instead of failing the run. The same on the real services:
``tests/costapp/test_faults_services.py``."""

import logging
from unittest import mock

import pytest
import redis
from django.db import OperationalError
from django.test import override_settings
from rest_framework.test import APIClient

from accounts import fallback, guessing, throttling
from accounts.roles import ANALYST, VIEWER
from costapp.faults import SERVICE_ERRORS
from costapp.models import Scenario
from costapp.runs import pipeline
from tests.factories import UserFactory

from .runs.test_pages import finished, pat  # noqa: F401 (fixtures)
from .runs_helpers import scenario_document

pytestmark = pytest.mark.django_db

CLOSED_REDIS = "redis://127.0.0.1:1/0"
REDIS_DOWN_CACHES = {
    "default": {
        "BACKEND": "costapp.cache.RedisCache",
        "LOCATION": CLOSED_REDIS,
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
}


@pytest.fixture
def redis_down():
    """The cache is a Redis that does not answer (nothing listens on its port)."""
    throttling.FALLBACK.degraded = guessing.FALLBACK.degraded = False
    with override_settings(CACHES=REDIS_DOWN_CACHES):
        yield
    throttling.FALLBACK.cache.clear()
    guessing.FALLBACK.cache.clear()


def token_client(roles) -> APIClient:
    user = UserFactory(roles=roles)
    api = APIClient()
    api.force_authenticate(user)
    return api


def assert_503_error_format(response, words: str) -> None:
    assert response.status_code == 503, response.content
    assert response["Content-Type"].startswith("application/json")
    assert int(response["Retry-After"]) > 0
    (error,) = response.json()["errors"]
    assert error["field"] is None and words in error["message"]


def test_a_database_error_under_the_api_is_503_in_the_error_format():
    with mock.patch(
        "accounts.auth.TokenAuthentication.authenticate",
        side_effect=OperationalError("connection refused"),
    ):
        response = APIClient().get("/api/v1/gpus/", HTTP_AUTHORIZATION="Token x")
    assert_503_error_format(response, "the database")


def test_a_redis_error_under_the_api_is_503_in_the_error_format():
    api = token_client([VIEWER])
    with mock.patch(
        "hardware.api.views.GpuModelViewSet.list", side_effect=redis.ConnectionError("refused")
    ):
        response = api.get("/api/v1/gpus/")
    assert_503_error_format(response, "Redis")


def test_a_database_error_on_a_page_is_a_plain_503_page_saying_what_is_down(client):
    client.force_login(UserFactory(roles=[VIEWER]))
    with mock.patch("costapp.views.price_headlines", side_effect=OperationalError("gone")):
        response = client.get("/")
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    page = response.content.decode()
    assert "A service is down" in page and "the database (PostgreSQL)" in page


def test_other_errors_stay_500():
    api = token_client([VIEWER])
    api.raise_request_exception = False
    with mock.patch("hardware.api.views.GpuModelViewSet.list", side_effect=KeyError("x")):
        assert api.get("/api/v1/gpus/").status_code == 500


def test_with_redis_down_catalog_reads_answer_and_the_throttle_holds_per_process(
    redis_down, settings, caplog
):
    settings.API_THROTTLE_RATE = "3/minute"
    api = token_client([VIEWER])
    with caplog.at_level(logging.WARNING, logger=fallback.__name__):
        answers = [api.get("/api/v1/gpus/").status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    logged = [r for r in caplog.records if "Redis does not answer" in r.getMessage()]
    assert len(logged) == 1  # once per outage, not once per request


def test_with_redis_down_prices_current_answers_uncached(redis_down, settings, catalog):
    settings.API_PAGE_CACHE_SECONDS = 300
    response = token_client([VIEWER]).get("/api/v1/prices/current/?page_size=5")
    assert response.status_code == 200 and response.json()["count"] > 0


def test_with_redis_down_signing_in_works_and_guessing_is_limited_in_the_database(
    redis_down, settings
):
    settings.SIGN_IN_FAILURES_PER_ACCOUNT = 2
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    UserFactory(username="sam", roles=[VIEWER])

    def post(password: str) -> int:
        body = {"username": "sam", "password": password}
        return APIClient().post("/api/v1/auth/tokens/", body, format="json").status_code

    assert post("pw-sam") == 201
    assert [post("wrong"), post("wrong"), post("pw-sam")] == [401, 401, 429]


def test_with_redis_down_a_finished_runs_page_draws_its_charts(client, finished, redis_down):  # noqa: F811
    client.force_login(finished.scenario.owner)
    response = client.get(f"/runs/{finished.pk}/")
    assert response.status_code == 200
    assert "cumulative" in response.content.decode().lower()


def test_with_the_broker_down_starting_a_run_is_503_in_the_error_format(settings):
    settings.REDIS_URL = CLOSED_REDIS
    user = UserFactory(roles=[ANALYST])
    scenario = Scenario.objects.create(owner=user, name="s", document=scenario_document())
    api = APIClient()
    api.force_authenticate(user)
    response = api.post(f"/api/v1/scenarios/{scenario.pk}/runs/", {}, format="json")
    assert_503_error_format(response, "Redis")
    assert not scenario.runs.exists()


def test_the_pipeline_tasks_retry_service_errors_with_bounded_backoff():
    from costapp.runs import tasks

    for task in (tasks.run_block_task, tasks.run_merge_task, tasks.run_execute_task):
        assert set(SERVICE_ERRORS) <= set(task.autoretry_for)
        assert 0 < task.max_retries <= 20
        assert task.retry_backoff and 0 < task.retry_backoff_max <= 120
    assert issubclass(OperationalError, SERVICE_ERRORS)
    assert issubclass(redis.ConnectionError, SERVICE_ERRORS)


def test_a_block_meeting_a_database_error_lets_it_through_and_leaves_the_run_running(
    pat,  # noqa: F811
    catalog,
):
    scenario = Scenario.objects.create(owner=pat, name="s", document=scenario_document())
    with mock.patch("costapp.runs.store.units_publish"):
        run = pipeline.run_create(scenario=scenario)
    kind, unit, _blocks = run.units[0]
    with (
        mock.patch("costapp.runs.pipeline._run_work", side_effect=OperationalError("gone")),
        pytest.raises(OperationalError),
    ):
        pipeline.run_block_execute(run_id=run.pk, kind=kind, unit=unit)
    run.refresh_from_db()
    assert run.status == "running" and not run.error
