"""Shared fixtures, and the rules for tests that need real services.

- Tests marked ``services`` need PostgreSQL, Redis and real Celery worker processes; tests marked
  ``browser`` need Chromium; tests marked ``registry`` install a tool from the package registry
  (the network). They run when ``GPU_TCO_SERVICES=1`` (as ``.ci/run`` does) and then
  fail loudly when what they need is missing; otherwise they are deselected, so ``uv run pytest``
  passes on a machine with no service running.
- With ``GPU_TCO_NO_SKIP=1`` (as ``.ci/run`` does) a skipped test is a failure.
- The shipped catalog is loaded once into each test database and committed, for the tests that
  ask for it (the ``catalog`` fixture); the other database tests see an empty catalog. The tests
  asking for it run first, so each test process loads it once and empties it once; a
  transactional test empties the database after it, and the rows the first load wrote are
  written back before the next test that asks for it (a copy, cheaper than a second load). A
  test may change the catalog: its transaction is rolled back.
- ``--database-tests-only`` keeps only the tests that use a database (``.ci/run``'s PostgreSQL
  pass: the others behave the same whatever the database, and ran on the embedded default).
- Tests marked ``long`` (half a minute or more on CI's machine) run first among the tests of their
  kind (pytest-django runs the database tests, then the transactional ones, then the others), so
  that under pytest-xdist none of them is left to end a run alone while the other processes wait.
- Hypothesis runs under the profile named by ``HYPOTHESIS_PROFILE``: ``quick`` (the default,
  a fifth of the examples) or ``ci`` (every example; ``.ci/run`` sets it): ``tests/examples.py``.
"""

import contextlib
import fnmatch
import io
import logging
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command

import tests.examples  # noqa: F401  (loads the Hypothesis profile HYPOTHESIS_PROFILE names)

ROOT = Path(__file__).resolve().parent.parent
SERVICE_MARKERS = ("services", "browser", "registry")
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in {"1", "true", "yes"}


def pytest_addoption(parser):
    parser.addoption(
        "--database-tests-only",
        action="store_true",
        help="deselect the tests that use no database (they ran on the embedded default)",
    )


def pytest_configure(config):
    config.pluginmanager.register(_LongFirst(), "gpu-tco-long-first")


class _LongFirst:
    """The tests marked ``long`` first within each kind of pytest-django's order (the database
    tests, then the transactional ones, which empty the database after them, then the others),
    which is kept otherwise."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        items.sort(key=lambda item: (_database_kind(item), item.get_closest_marker("long") is None))


# tryfirst: before pytest-django's own (tryfirst too, registered earlier, so called after this),
# which then orders the tests by their use of the database, keeping this order within each kind.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if ENGINE_TESTS in Path(item.path).parents and _uses_database(item):
            raise pytest.UsageError(
                f"{item.nodeid}: the engine's tests (tests/tco) touch no database; .ci/run runs"
                " them once, on SQLite (the PostgreSQL pass ignores tests/tco)"
            )
    # The tests that ask for the shipped catalog first, so a test process loads it once.
    items.sort(key=lambda item: not _wants_catalog(item))
    database_only = config.getoption("database_tests_only")
    services = env_flag("GPU_TCO_SERVICES")
    kept, deselected = [], []
    for item in items:
        left_out = (database_only and not _uses_database(item)) or (
            not services and any(item.get_closest_marker(m) for m in SERVICE_MARKERS)
        )
        (deselected if left_out else kept).append(item)
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


# --- the shipped catalog ----------------------------------------------------------------------


class _Catalog:
    """The shipped catalog in this test process's database: loaded (and committed) by the first
    test that asks for it, emptied before a database test that does not, loaded again after a
    transactional test emptied the database."""

    def __init__(self) -> None:
        self.blocker = None  # pytest-django's database blocker, once the database is set up
        self.tables: list[str] = []  # the tables load_catalog writes, all empty before it
        self.output = ""  # what load_catalog printed, loading into an empty catalog
        # what the first load wrote: each table's columns and rows, written back after a
        # transactional test emptied the database (a copy of the rows, not a second load)
        self.rows: dict[str, tuple[list[str], list[tuple]]] = {}

    def present(self) -> bool:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {connection.ops.quote_name(self.tables[0])} LIMIT 1")
            return cursor.fetchone() is not None

    def load(self) -> None:
        out = io.StringIO()
        call_command("load_catalog", stdout=out)
        self.output = out.getvalue()

    def keep(self) -> None:
        """Keep the rows the first load wrote, table by table."""
        from django.db import connection

        with connection.cursor() as cursor:
            for table in self.tables:
                cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
                columns = [column[0] for column in cursor.description]
                rows = cursor.fetchall()
                if connection.vendor == "postgresql":  # JSON read as Python, written as JSON
                    from psycopg.types.json import Jsonb

                    rows = [
                        tuple(Jsonb(v) if isinstance(v, dict | list) else v for v in row)
                        for row in rows
                    ]
                self.rows[table] = (columns, rows)

    def restore(self) -> None:
        """Write the kept rows back into the emptied tables in one transaction (the foreign keys
        are checked at its commit), move the tables' id sequences past them, and mark the
        catalog changed, as a load would."""
        from django.apps import apps
        from django.core.management.color import no_style
        from django.db import connection, transaction

        from hardware.catalog_version import catalog_changed

        quote = connection.ops.quote_name
        with transaction.atomic(), connection.cursor() as cursor:
            for table, (columns, rows) in self.rows.items():
                if rows:
                    names = ", ".join(quote(column) for column in columns)
                    marks = ", ".join(["%s"] * len(columns))
                    cursor.executemany(
                        f"INSERT INTO {quote(table)} ({names}) VALUES ({marks})", rows
                    )
            models = [m for m in apps.get_models() if m._meta.db_table in self.rows]
            for statement in connection.ops.sequence_reset_sql(no_style(), models):
                cursor.execute(statement)
            catalog_changed()

    def empty(self) -> None:
        from django.core.management.color import no_style
        from django.db import connection

        statements = connection.ops.sql_flush(no_style(), self.tables, allow_cascade=True)
        connection.ops.execute_sql_flush(statements)

    def first_load(self, blocker) -> None:
        from django.db import connection

        def counts() -> dict[str, int]:
            with connection.cursor() as cursor:
                found = {}
                for table in connection.introspection.table_names():
                    cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
                    found[table] = cursor.fetchone()[0]
                return found

        with blocker.unblock():
            before = counts()
            self.load()
            after = counts()
        written = sorted(table for table in after if after[table] != before.get(table, 0))
        kept = [table for table in written if before.get(table, 0)]
        if kept or not written:
            pytest.fail(f"load_catalog wrote no table or one with rows before it: {kept}")
        self.tables = sorted(written, key=lambda table: -after[table])
        self.blocker = blocker
        with blocker.unblock():
            self.keep()

    def prepare(self, item) -> None:
        """Before ``item``'s fixtures: the catalog committed if it asks for it, none otherwise."""
        if self.blocker is None or not _uses_database(item):
            return
        with self.blocker.unblock():
            wanted, present = _wants_catalog(item), self.present()
            if wanted and not present:
                self.restore()
            elif present and not wanted:
                self.empty()


_CATALOG = _Catalog()
ENGINE_TESTS = ROOT / "tests" / "tco"


def _wants_catalog(item) -> bool:
    return "catalog" in getattr(item, "fixturenames", ())


def _database_kind(item) -> int:
    """0 a database test, 1 a transactional one, 2 none: pytest-django's order."""
    marker = item.get_closest_marker("django_db")
    names = getattr(item, "fixturenames", ())
    if (marker is not None and marker.kwargs.get("transaction")) or any(
        name in names for name in ("transactional_db", "live_server")
    ):
        return 1
    return 0 if _uses_database(item) else 2


def _uses_database(item) -> bool:
    names = getattr(item, "fixturenames", ())
    return item.get_closest_marker("django_db") is not None or any(
        name in names for name in ("db", "transactional_db", "live_server")
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _CATALOG.prepare(item)


@pytest.fixture(scope="session")
def _catalog_database(django_db_setup, django_db_blocker) -> _Catalog:
    """The shipped catalog loaded into this process's test database, once."""
    _CATALOG.first_load(django_db_blocker)
    return _CATALOG


@pytest.fixture(autouse=True)
def commits_run_their_hooks(monkeypatch):
    """The code's own transactions commit, as far as their on-commit hooks (a run's tasks
    published, the catalog version moved on) can tell.

    pytest-django runs a database test inside a transaction of the test's own that is rolled back
    at its end, so a hook would never run. Here the test's transaction does not count: a hook
    registered outside the code's own transactions runs at once (as in autocommit), and those of
    the code's outermost transaction run, in order, when it ends without error (those of a block
    rolled back are dropped, as Django drops them). A transactional test commits for real."""
    from django.db import transaction
    from django.db.backends.base.base import BaseDatabaseWrapper

    def own_blocks(connection) -> list:
        return [block for block in connection.atomic_blocks if not block._from_testcase]

    def hooks_run(connection) -> None:
        hooks, connection.run_on_commit = connection.run_on_commit, []
        for _savepoints, func, robust in hooks:
            if robust:
                try:
                    func()
                except Exception:  # a robust hook's failure is logged, as Django does
                    logging.getLogger("django.db.backends.base").exception("on_commit hook")
            else:
                func()

    on_commit = BaseDatabaseWrapper.on_commit

    def on_commit_now_or_later(self, func, robust=False):
        on_commit(self, func, robust)
        if self.in_atomic_block and not own_blocks(self):
            hooks_run(self)

    exit_ = transaction.Atomic.__exit__

    def exit_committing(self, exc_type, exc_value, traceback):
        connection = transaction.get_connection(self.using)
        outermost = not self._from_testcase and own_blocks(connection) == [self]
        exit_(self, exc_type, exc_value, traceback)
        if not outermost or not connection.in_atomic_block:
            return
        if exc_type is None and not connection.needs_rollback:
            hooks_run(connection)
        else:  # the code's transaction rolled back: none of its hooks runs
            connection.run_on_commit = []

    monkeypatch.setattr(BaseDatabaseWrapper, "on_commit", on_commit_now_or_later)
    monkeypatch.setattr(transaction.Atomic, "__exit__", exit_committing)


def sign_in_failures_forget() -> None:
    """Forget every failed sign-in counted: the limiter's keys in the cache (found by their
    prefix) and the counts of the per-process stand-in."""
    from accounts import guessing

    cache_forget(f"*{guessing.KEY_PREFIX}:*")
    guessing.FALLBACK.cache.clear()


def cache_forget(pattern: str = "*") -> None:
    """Forget the app cache's keys matching ``pattern`` (a glob of the key as the code names it):
    in Redis only the cache's own keys (the same Redis database holds the broker's queues); in
    the embedded default's cache, this process's own, its stored keys."""
    from django.core.cache import cache

    made = cache.make_key(pattern, version="*")
    client_of = getattr(cache, "redis_client", None)
    if client_of is None:  # LocMemCache: its keys, as made, are in its (private) store
        for key in [key for key in list(cache._cache) if fnmatch.fnmatchcase(key, made)]:
            with cache._lock:
                cache._delete(key)
        return
    client = client_of()
    keys = list(client.scan_iter(match=made, count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture(autouse=True)
def sign_in_failures_forgotten():
    """Every test starts with no failed sign-in counted (the test client's address is the same
    in every test, and the cache outlives a test)."""
    yield
    sign_in_failures_forget()


@pytest.fixture
def catalog(_catalog_database, db) -> str:
    """The whole shipped catalog (GPU models, prices, egress tiers, demonstration quotes) in the
    test database; returns what ``load_catalog`` printed loading it into an empty catalog."""
    if not _catalog_database.present():  # (only if something emptied it unseen: put it back)
        _catalog_database.restore()
    return _catalog_database.output


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
    beat: bool = False,
) -> dict:
    """Start a real Celery worker process (prefork) on the test database and Redis and wait until
    it answers a ping; ``{"nodename", "process", "log"}``. With ``own_process_group`` the worker
    and its children form a process group of their own (to be killed as a whole); with ``queue``
    it consumes that queue only (``-Q``); with ``beat`` it runs the beat schedule too (``-B``, its
    schedule file beside the log)."""
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
            *(["-B", "-s", str(log_path.with_suffix(".beat-schedule"))] if beat else []),
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


def stop_celery_worker(*workers: dict) -> None:
    """Stop workers started by :func:`start_celery_worker` (warm shutdown, then kill), all asked
    at once, so their shutdowns overlap."""
    for worker in workers:
        if worker["process"].poll() is None:
            worker["process"].terminate()
    for worker in workers:
        process = worker["process"]
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
    stop_celery_worker(*started)
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


@contextlib.contextmanager
def tasks_run_in_process(*, results_in_redis: bool = False) -> Iterator[None]:
    """Tasks run in this process as they are published, as on the embedded default (whatever
    broker is configured), each block of paths a unit of its own (``RUN_BLOCKS_PER_TASK`` 1), so
    a run of a few thousand paths lands several units and merges them; a test wanting other units
    sets ``RUN_BLOCKS_PER_TASK`` itself. With ``results_in_redis`` the configured Redis is kept,
    so the blocks' results travel through it as on workers."""
    from django.test import override_settings

    from costapp.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    redis = {} if results_in_redis else {"REDIS_URL": ""}
    try:
        with override_settings(**redis, RUN_BLOCKS_PER_TASK=1):
            yield
    finally:
        app.conf.task_always_eager = before


@pytest.fixture
def tasks_in_process() -> Iterator[None]:
    """Tasks run in this process (:func:`tasks_run_in_process`), for the whole test."""
    with tasks_run_in_process():
        yield
