"""Every browser test starts as if it ran alone, whatever ran before it in the process: no failed
sign-in or request counted (the live server sees every test's browser at the same address, so
one test's failed logins would count against the next one's), nothing cached, no session.

The runs a browser test starts are computed by the session's real Celery worker when a Redis is
configured (``.ci/run`` runs them so, one at a time, on PostgreSQL and Redis), and in this process
otherwise, as on the embedded default (``run_tasks``)."""

import pytest

from tests.conftest import cache_forget, tasks_run_in_process


def _forget_everything(django_db_blocker) -> None:
    from django.contrib.sessions.models import Session

    from accounts import guessing, throttling

    cache_forget()
    guessing.FALLBACK.cache.clear()
    throttling.FALLBACK.cache.clear()
    with django_db_blocker.unblock():
        Session.objects.all().delete()


@pytest.fixture(autouse=True)
def limits_caches_and_sessions_reset(django_db_setup, django_db_blocker):
    """Before and after each browser test: the counts, the cache and the sessions forgotten."""
    _forget_everything(django_db_blocker)
    yield
    _forget_everything(django_db_blocker)


@pytest.fixture
def run_tasks(request):
    """Where the test's runs are computed: the session's real Celery worker when ``REDIS_URL``
    is set, otherwise in this process (in the live server's thread, as the page asks)."""
    from django.conf import settings

    if settings.REDIS_URL:
        request.getfixturevalue("celery_worker_process")
        yield
        return
    with tasks_run_in_process():
        yield
