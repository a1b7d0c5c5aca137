"""Real ``refresh_prices`` processes on PostgreSQL: two of one source started together (one
applies, the other exits with the lock's code), one SIGKILLed mid-apply (its run failed by the
sweep once its lease lapsed, its staged rows removed, the next refresh applying), and one whose
database connection is ended mid-apply (one line, a failed run, no traceback)."""

import io
import os
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from hardware.models import InstancePrice, RefreshRun, StagedPrice
from hardware.refresh.pipeline import refresh_runs_sweep
from hardware.selectors import current_prices

from .test_pipeline import LAMBDA

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
H100_LINE = "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,"
LEASE_S = 3
# limits high enough for a feed of thousands of new offers to apply (it takes a while)
BIG_FEED_ENV = {"PRICE_REFRESH_MAX_NEW_OFFERS": "1000000", "PRICE_REFRESH_MAX_NEW_SHARE": "1000"}


@pytest.fixture
def loaded_catalog(postgres_database):
    call_command("load_catalog", verbosity=0, stdout=io.StringIO())
    return postgres_database


def big_feed(path: Path, new_types: int) -> Path:
    """The shipped lambda.csv, every on-demand price 1 % up, and ``new_types`` new H100 types."""
    header, *body = LAMBDA.read_text(encoding="utf-8").splitlines()

    def raised(line: str) -> str:
        cells = line.split(",")
        if cells[5]:
            cells[5] = str((Decimal(cells[5]) * Decimal("1.01")).quantize(Decimal("0.0001")))
        return ",".join(cells)

    template = next(line for line in body if line.startswith(H100_LINE))
    new = [
        template.replace("gpu_1x_h100_pcie,", f"gpu_1x_h100_pcie_n{i},", 1)
        for i in range(new_types)
    ]
    path.write_text("\n".join([header, *map(raised, body), *new]) + "\n", encoding="utf-8")
    return path


def refresh_process(db: dict, feed: Path, **env: str) -> subprocess.Popen:
    url = (
        f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}"
    )
    return subprocess.Popen(
        [sys.executable, "manage.py", "refresh_prices", "skypilot", "--file", str(feed)],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": url,
            "REDIS_URL": "",
            "PRICE_REFRESH_LEASE_SECONDS": str(LEASE_S),
            **BIG_FEED_ENV,
            **env,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def current_rows() -> list[tuple]:
    return sorted(
        current_prices().values_list(
            "pk", "offer__instance_type", "region__code", "billing", "usd_per_hour"
        )
    )


def applying_backend(process: subprocess.Popen, timeout_s: float = 120) -> int:
    """The PostgreSQL backend of a refresh inside its apply transaction (it holds a write lock
    on the offers or prices table until that transaction ends); its pid."""
    deadline = time.monotonic() + timeout_s
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT l.pid FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                "WHERE c.relname IN ('hardware_instanceoffer', 'hardware_instanceprice') "
                "AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid() LIMIT 1"
            )
            found = cursor.fetchone()
            if found:
                return found[0]
            if process.poll() is not None:
                out, err = process.communicate()
                pytest.fail(f"the refresh ended before applying:\n{out}\n{err}")
            time.sleep(0.02)
    process.kill()
    pytest.fail("the refresh did not start applying")


def test_two_refreshes_of_one_source_started_together_one_applies_the_other_exits_4(
    loaded_catalog, tmp_path
):
    feed = big_feed(tmp_path / "lambda.csv", 3000)
    rows_before = InstancePrice.objects.count()
    processes = [refresh_process(loaded_catalog, feed) for _ in range(2)]
    outputs = [p.communicate(timeout=600) for p in processes]
    codes = sorted(p.returncode for p in processes)
    assert codes == [0, 4], outputs
    locked_out, locked_err = outputs[[p.returncode for p in processes].index(4)]
    assert "not started: a refresh of skypilot-lambda is already running" in locked_err
    assert "Traceback" not in locked_err
    (run,) = RefreshRun.objects.all()
    assert run.status == "applied" and run.prices_added == 3000
    # one change per price: the shipped row and the refreshed one, never a third
    per_key: dict[tuple, int] = {}
    for key in InstancePrice.objects.filter(offer__provider__slug="lambda").values_list(
        "offer_id", "region_id", "billing"
    ):
        per_key[key] = per_key.get(key, 0) + 1
    assert max(per_key.values()) == 2
    assert InstancePrice.objects.count() == rows_before + 3000 + run.prices_changed


def test_a_refresh_killed_mid_apply_is_failed_by_the_sweep_and_the_next_refresh_applies(
    loaded_catalog, tmp_path, settings
):
    settings.PRICE_REFRESH_LEASE_SECONDS = LEASE_S
    settings.PRICE_REFRESH_MAX_NEW_OFFERS = 1_000_000
    settings.PRICE_REFRESH_MAX_NEW_SHARE = 1000
    feed = big_feed(tmp_path / "lambda.csv", 5000)
    before = current_rows()
    process = refresh_process(loaded_catalog, feed)
    applying_backend(process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    (run,) = RefreshRun.objects.all()
    assert run.status == "running" and StagedPrice.objects.filter(run=run).exists()

    killed_at = time.monotonic()
    while time.monotonic() - killed_at < LEASE_S + 30:
        if refresh_runs_sweep():
            break
        time.sleep(0.5)
    run.refresh_from_db()
    assert run.status == "failed", "the sweep did not fail the killed run"
    assert run.error.startswith("stopped without finishing") and "beat's sweep" in run.error
    assert not StagedPrice.objects.exists()
    assert current_rows() == before  # the killed transaction left nothing

    out = io.StringIO()
    call_command("refresh_prices", "skypilot", "--file", str(feed), stdout=out)
    applied = RefreshRun.objects.exclude(pk=run.pk).get()
    assert applied.status == "applied" and applied.prices_added == 5000, out.getvalue()


def test_a_database_error_mid_apply_ends_the_command_in_one_line_with_a_failed_run(
    loaded_catalog, tmp_path
):
    feed = big_feed(tmp_path / "lambda.csv", 5000)
    before = current_rows()
    process = refresh_process(loaded_catalog, feed)
    backend = applying_backend(process)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [backend])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    (line,) = [e for e in err.splitlines() if e.strip()]
    assert line.startswith("refresh skypilot lambda: failed: database error: ")
    (run,) = RefreshRun.objects.all()
    assert line.endswith(f"run {run.pk} failed")
    assert run.status == "failed" and run.error.startswith("database error: ")
    assert run.finished_at is not None
    assert not StagedPrice.objects.exists()
    assert current_rows() == before
