"""Shared fixtures, and the rules for tests that need real services.

- Tests marked ``services`` need PostgreSQL, Redis and real Celery worker processes; tests marked
  ``browser`` need Chromium. They run when ``GPU_TCO_SERVICES=1`` (as ``.ci/run`` does) and then
  fail loudly when what they need is missing; otherwise they are deselected, so ``uv run pytest``
  passes on a machine with no service running.
- With ``GPU_TCO_NO_SKIP=1`` (as ``.ci/run`` does) a skipped test is a failure.
"""

import io
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent
SERVICE_MARKERS = ("services", "browser")
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in {"1", "true", "yes"}


def pytest_collection_modifyitems(config, items):
    if env_flag("GPU_TCO_SERVICES"):
        return
    kept, deselected = [], []
    for item in items:
        (deselected if any(item.get_closest_marker(m) for m in SERVICE_MARKERS) else kept).append(
            item
        )
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if env_flag("GPU_TCO_NO_SKIP") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"skipped tests fail under GPU_TCO_NO_SKIP: {reason}"


@pytest.fixture(autouse=True)
def sign_in_failures_forgotten():
    """Every test starts with no failed sign-in counted (the test client's address is the same
    in every test, and the cache outlives a test)."""
    yield
    from accounts import guessing

    guessing.forget_all()


@pytest.fixture
def catalog_gpus(db):
    """The GPU table loaded into the test database."""
    call_command("load_catalog", verbosity=0, stdout=io.StringIO())


# --- real services ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The real Redis the services tests use; fails when it is not configured or not answering."""
    from django.conf import settings

    url = settings.REDIS_URL
    if not url:
        pytest.fail("this test needs a real Redis: set REDIS_URL (bash .ci/run does)")
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {url} does not answer: {exc}")
    return url


@pytest.fixture(scope="session")
def postgres_database(django_db_setup, django_db_blocker) -> dict:
    """The test database's connection settings; fails unless it is PostgreSQL."""
    from django.db import connection

    with django_db_blocker.unblock():
        if connection.vendor != "postgresql":
            pytest.fail(
                "this test needs PostgreSQL: set DATABASE_URL=postgres://... (bash .ci/run does)"
            )
        return dict(connection.settings_dict)


def _database_url(db: dict) -> str:
    return (
        f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )


def start_celery_worker(
    *,
    redis_url: str,
    database: dict,
    log_path: Path,
    concurrency: int = 2,
    env: dict | None = None,
    own_process_group: bool = False,
    queue: str = "",
) -> dict:
    """Start a real Celery worker process (prefork) on the test database and Redis and wait until
    it answers a ping; ``{"nodename", "process", "log"}``. With ``own_process_group`` the worker
    and its children form a process group of their own (to be killed as a whole); with ``queue``
    it consumes that queue only (``-Q``)."""
    from costapp.celery import app

    nodename = f"tests-{uuid.uuid4().hex[:8]}@localhost"
    worker_env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _database_url(database),
        "REDIS_URL": redis_url,
        **(env or {}),
    }
    log = open(log_path, "w")  # noqa: SIM115 (closed by stop_celery_worker)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "costapp",
            "worker",
            "--loglevel",
            "INFO",
            "--pool",
            "prefork",
            "--concurrency",
            str(concurrency),
            "-n",
            nodename,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            *(["-Q", queue] if queue else []),
        ],
        cwd=ROOT,
        env=worker_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=own_process_group,
    )
    worker = {"nodename": nodename, "process": process, "log": log_path, "_file": log}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.close()
            pytest.fail(
                f"the Celery worker exited at start with code {process.returncode}:\n"
                + log_path.read_text()[-3000:]
            )
        if app.control.ping(destination=[nodename], timeout=1.0):
            return worker
    stop_celery_worker(worker)
    pytest.fail(
        "the Celery worker did not answer a ping within 60 s:\n" + log_path.read_text()[-3000:]
    )


def stop_celery_worker(worker: dict) -> None:
    """Stop a worker started by :func:`start_celery_worker` (warm shutdown, then kill)."""
    process = worker["process"]
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
    worker["_file"].close()


@pytest.fixture(scope="session")
def celery_worker_process(redis_url, postgres_database, tmp_path_factory):
    """A real Celery worker process (prefork, 2 children) on the test database and Redis."""
    from costapp.celery import app

    app.control.purge()
    worker = start_celery_worker(
        redis_url=redis_url,
        database=postgres_database,
        log_path=tmp_path_factory.mktemp("celery") / "worker.log",
    )
    yield worker
    stop_celery_worker(worker)


@pytest.fixture
def celery_workers(redis_url, postgres_database, tmp_path):
    """Start more real worker processes for one test (``celery_workers(concurrency=1, ...)``,
    arguments as :func:`start_celery_worker`); the session worker stops consuming meanwhile, so
    these workers alone run the test's tasks. All are stopped at the end of the test."""
    from costapp.celery import app

    started: list[dict] = []
    paused: list[str] = []

    def start(**options) -> dict:
        if not started:
            replies = app.control.cancel_consumer(app.conf.task_default_queue, reply=True)
            paused.extend(name for reply in replies or [] for name in reply)
        worker = start_celery_worker(
            redis_url=redis_url,
            database=postgres_database,
            log_path=tmp_path / f"worker-{len(started)}.log",
            **options,
        )
        started.append(worker)
        return worker

    yield start
    for worker in started:
        stop_celery_worker(worker)
    if paused:
        app.control.add_consumer(app.conf.task_default_queue, destination=paused, reply=True)


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    for path in CHROMIUM_PATHS:
        if Path(path).exists():
            return path
    found = shutil.which("chromium")
    if not found:
        pytest.fail("this test needs Chromium: apt-get install -y chromium (bash .ci/run does)")
    return found


@pytest.fixture(scope="session")
def browser(chromium_executable):
    """Headless Debian Chromium driven by Playwright (Playwright never downloads a browser)."""
    # The live server imports the URLconf (and with it the API, pandas and Plotly) on its first
    # request; on a busy machine that outlasts a page's timeout, so it is imported here first.
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (imported for its side effect)
    # Playwright's sync API runs an event loop in this thread; the live server's ORM calls happen
    # in the server's own thread, and the test's own ORM calls are not concurrent with it.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=chromium_executable,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield instance
        instance.close()
    if previous is None:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()
