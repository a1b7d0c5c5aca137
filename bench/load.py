"""Load benchmark of the production shape with a worker killed: ``uv run python bench/load.py``.

Sets up what ``docker-compose.yml`` runs, on this machine: a throwaway PostgreSQL database
(``gputco_faults_load`` by default, dropped and made anew, dropped again at the end), a private
``redis-server``, the demo catalog (``load_catalog``), an analyst with a scenario
(``bench/uncertain-h100-fleet.json`` at ``--paths``), one run of it finished in-process and one
API token per user; then gunicorn (``--gunicorn-workers`` sync workers, as the image runs it) on
the production settings (no debug, throttles, cached API pages), ``--workers`` Celery worker
processes (``--concurrency`` pool processes each) consuming the run queue, and one beat.

Then locust, headless, in a process of its own (``bench/locustfile.py``: no Django there, locust
patches the standard library for gevent): ``--users`` signed-in users reading the pages
(dashboard, prices, GPUs, an offer, the scenarios, a run's page) and the API (prices/current,
gpus, scenarios, runs, a run) for ``--minutes`` (``--spawn-rate`` more a second at the start:
signing in hashes a password, the heaviest request of all), and one more starting a run through
the API every ``--run-every`` s. At ``--kill-at`` of the way (half, by default), as soon as its pool
process is computing (at most 30 s later), the first worker is SIGKILLed with its pool processes
(the messages it held are lost with it for the visibility timeout: beat's requeue finds their
runs silent), and started again ``--restart-after`` s later, as the compose file's
``restart: unless-stopped`` would (negative: never). When locust stops, this waits at most
``--finish-timeout`` s for every run to end.

It prints the requests, the answers of 5xx (the target: none) and those that never came, p50
and p99 latency per endpoint, the runs submitted / succeeded / other (and those resumed after the
kill), whether every succeeded run's result equals the in-process run's, and whether each target
held: no 5xx, every run finished (succeeded). Bounded: a hard timeout (``--hard-timeout``) ends
it whatever happens, and every process it started is stopped and the database dropped on the
way out.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.api import (  # noqa: E402
    children,
    cpu_seconds,
    free_port,
    manage,
    recreate_database,
    wait_for_server,
)
from bench.runs import SCENARIO, start_redis  # noqa: E402

DEFAULT_DATABASE = "gputco_faults_load"
LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"

SETUP_SNIPPET = """
import json
from pathlib import Path
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from accounts.services import token_create
from costapp.models import Scenario
from costapp.runs import pipeline
from hardware.models import InstanceOffer
config = json.loads(Path(CONFIG).read_text())
user = get_user_model().objects.create_user(config["username"], password=config["password"])
user.groups.set([Group.objects.get(name="analyst")])
document = json.loads(Path(config["scenario_file"]).read_text())
document["simulation"]["paths"] = config["paths"]
scenario = Scenario.objects.create(owner=user, name="load", document=document)
run = pipeline.run_create(scenario=scenario)
assert run.status == "succeeded", run.error
config.update(
    scenario=scenario.pk,
    run=run.pk,
    offer=InstanceOffer.objects.order_by("pk").values_list("pk", flat=True).first(),
    tokens=[token_create(user=user)[1] for _ in range(config["token_count"])],
    submit_token=token_create(user=user)[1],
)
Path(CONFIG).write_text(json.dumps(config))
"""


class HardTimeout(Exception):
    """The whole benchmark ran past ``--hard-timeout``."""


def _on_alarm(_signum: int, _frame: Any) -> None:
    raise HardTimeout


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """A process of the shape, in a process group of its own (stopped or killed as a whole)."""
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=open(log, "wb"),  # noqa: SIM115 (closed with the process)
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[bytes] | None, grace_s: float = 20) -> None:
    """SIGTERM the process group, SIGKILL it after ``grace_s``."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


def worker_command(index: int, concurrency: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "costapp",
        "worker",
        "--loglevel",
        "INFO",
        "--concurrency",
        str(concurrency),
        "-n",
        f"load-{index}-{secrets.token_hex(3)}@localhost",
    ]


def health(port: int) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            return dict(json.loads(answer.read()))
    except urllib.error.HTTPError as error:  # 503: a part is down, the body says which
        return dict(json.loads(error.read()))
    except OSError:
        return {}


def wait_for_workers(port: int, count: int, timeout_s: float = 120) -> None:
    """Until ``/healthz`` counts ``count`` workers on the run queue."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if health(port).get("workers", {}).get("workers", 0) >= count:
            return
        time.sleep(1)
    raise SystemExit(f"/healthz did not count {count} workers within {timeout_s:.0f} s")


def kill_when_busy(
    worker: subprocess.Popen[bytes], database_url: str, wait_s: float = 30
) -> tuple[bool, dict[str, int]]:
    """SIGKILL ``worker`` with its pool processes, once one of them is computing (its CPU time
    rising while a run is running), or after ``wait_s`` whatever it does; whether it was busy,
    and the runs by status then."""
    pool = children(worker.pid)
    deadline = time.monotonic() + wait_s
    before = cpu_seconds(pool)
    busy = False
    while not busy and time.monotonic() < deadline:
        time.sleep(0.05)
        now = cpu_seconds(pool)
        busy = now > before and run_counts(database_url).get("running", 0) > 0
        before = now
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=20)
    return busy, run_counts(database_url)


def run_counts(database_url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT status, COUNT(*) FROM costapp_simulationrun GROUP BY status"
        ).fetchall()
    return {status: count for status, count in rows}


def runs_summary(database_url: str, reference: int) -> dict[str, Any]:
    """The runs after the reference one: by status, those resumed, and how many succeeded with
    the reference run's result."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        expected = conn.execute(
            "SELECT result::text FROM costapp_simulationrun WHERE id = %s", [reference]
        ).fetchone()
        rows = conn.execute(
            "SELECT id, status, result::text, resumed IS NOT NULL, resumed_at_merge, error,"
            " EXTRACT(EPOCH FROM finished - created), EXTRACT(EPOCH FROM finished)"
            " FROM costapp_simulationrun"
            " WHERE id <> %s ORDER BY id",
            [reference],
        ).fetchall()
    by_status: dict[str, int] = {}
    for row in rows:
        by_status[row[1]] = by_status.get(row[1], 0) + 1
    succeeded = [row for row in rows if row[1] == "succeeded"]
    return {
        "runs": len(rows),
        "by_status": by_status,
        "equal": sum(1 for row in succeeded if expected and row[2] == expected[0]),
        "resumed": [
            (row[0], "merge" if row[4] else "blocks", float(row[7]) if row[7] else None)
            for row in rows
            if row[3]
        ],
        "errors": [(row[0], row[5]) for row in rows if row[5]][:5],
        "walls": sorted(float(row[6]) for row in succeeded if row[6] is not None),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(
    measured: dict[str, Any], runs: dict[str, Any], timeline: list[str], killed_epoch: float | None
) -> bool:
    """Print the figures; whether every target held."""
    by_endpoint = measured["by_endpoint"]
    total = sum(len(e["times_ms"]) for e in by_endpoint.values())
    server_errors = unanswered = 0
    print(
        f"\n{'endpoint':<40} {'requests':>8} {'5xx':>5} {'4xx':>5} {'none':>5} "
        f"{'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
    )
    for name in sorted(by_endpoint):
        entry = by_endpoint[name]
        statuses = {int(k): v for k, v in entry["statuses"].items()}
        five = sum(v for k, v in statuses.items() if k >= 500)
        four = sum(v for k, v in statuses.items() if 400 <= k < 500)
        none = statuses.get(0, 0)
        server_errors += five
        unanswered += none
        times = entry["times_ms"]
        print(
            f"{name:<40} {len(times):>8} {five:>5} {four:>5} {none:>5} "
            f"{percentile(times, 0.5):>8.0f} {percentile(times, 0.99):>8.0f} {max(times):>8.0f}"
        )
    every = [t for e in by_endpoint.values() for t in e["times_ms"]]
    wall = measured.get("wall_s") or 0
    print(
        f"{'all' + (f' ({total / wall:.1f} requests/s)' if wall else ''):<40} "
        f"{total:>8} {server_errors:>5} {'':>5} {unanswered:>5} "
        f"{percentile(every, 0.5):>8.0f} {percentile(every, 0.99):>8.0f} {max(every):>8.0f}"
    )
    for error, count in list(measured.get("errors", {}).items())[:5]:
        print(f"  never answered ({count}×): {error}")
    print("\n" + "\n".join(timeline))
    submitted = len(measured["runs_submitted"])
    status = runs["by_status"]
    succeeded = status.get("succeeded", 0)
    other = runs["runs"] - succeeded
    walls = runs["walls"]
    print(
        f"runs: {submitted} submitted (202), {runs['runs']} stored; {succeeded} succeeded, "
        f"{other} other {json.dumps({k: v for k, v in status.items() if k != 'succeeded'})}; "
        f"{runs['equal']} of {succeeded} equal to the in-process run's result"
    )
    for run_id, where, finished_epoch in runs["resumed"]:
        after = (
            f"finished {finished_epoch - killed_epoch:.0f} s after the kill"
            if finished_epoch and killed_epoch
            else "not finished"
        )
        print(f"  run {run_id} resumed (its worker lost in its {where}), {after}")
    if walls:
        print(
            f"run time, created to finished: p50 {percentile(walls, 0.5):.1f} s, "
            f"p99 {percentile(walls, 0.99):.1f} s, max {walls[-1]:.1f} s"
        )
    for run_id, error in runs["errors"]:
        print(f"  run {run_id}: {error[:300]}")
    no_5xx = server_errors == 0
    finished = (
        other == 0 and runs["runs"] == submitted and submitted > 0 and runs["equal"] == succeeded
    )
    print(
        f"target 0 responses of 5xx: {'held' if no_5xx else 'MISSED'} ({server_errors}); "
        f"target every run finished (succeeded, equal): {'held' if finished else 'MISSED'} "
        f"({succeeded} of {submitted})"
        + (f"; {unanswered} requests never answered" if unanswered else "")
    )
    return no_5xx and finished


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    parser.add_argument("--users", type=int, default=50, help="browsing users (and 1 submitter)")
    parser.add_argument("--spawn-rate", type=float, default=2.0, help="users started per second")
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--run-every", type=float, default=2.0, help="seconds between two runs")
    parser.add_argument("--paths", type=int, default=20_000, help="paths of each run")
    parser.add_argument("--wait-min", type=float, default=1.0, help="a user's pause [s], least")
    parser.add_argument("--wait-max", type=float, default=3.0, help="a user's pause [s], most")
    parser.add_argument("--gunicorn-workers", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument("--concurrency", type=int, default=1, help="pool processes per worker")
    parser.add_argument("--kill-at", type=float, default=0.5, help="share of the load's time")
    parser.add_argument("--restart-after", type=float, default=10.0, help="s; negative: never")
    parser.add_argument("--finish-timeout", type=float, default=240.0)
    parser.add_argument("--hard-timeout", type=float, default=900.0)
    parser.add_argument("--keep", action="store_true", help="keep the database and the logs")
    args = parser.parse_args()
    for name in ("users", "minutes", "run_every", "paths", "workers", "concurrency"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    if not 0 < args.kill_at < 1:
        parser.error("--kill-at must be between 0 and 1 (a share of the load's time)")
    duration_s = args.minutes * 60

    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(int(args.hard_timeout))
    workdir = Path(tempfile.mkdtemp(prefix="bench-load-"))
    database_url = f"{args.postgres}/{args.database}"
    processes: list[subprocess.Popen[bytes]] = []
    redis_process = None
    held = False
    try:
        recreate_database(args.postgres, args.database)
        redis_process, redis_url = start_redis(workdir)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "costapp.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "SECRET_KEY": secrets.token_urlsafe(50),
            "DEBUG": "false",
            "SECURE_SSL_REDIRECT": "false",
            "SESSION_COOKIE_SECURE": "false",
            "CSRF_COOKIE_SECURE": "false",
            "ALLOWED_HOSTS": "127.0.0.1",
            "LOG_LEVEL": "INFO",
        }
        config_path = workdir / "load.json"
        config_path.write_text(
            json.dumps(
                {
                    "username": "bench-load",
                    "password": secrets.token_urlsafe(16),
                    "scenario_file": str(SCENARIO),
                    "paths": args.paths,
                    "token_count": args.users,
                    "run_every": args.run_every,
                    "wait_min": args.wait_min,
                    "wait_max": args.wait_max,
                    "out": str(workdir / "measured.json"),
                }
            )
        )
        print(f"database {args.database}: migrate, load the catalog, the analyst …", flush=True)
        quiet = {**env, "LOG_LEVEL": "WARNING"}
        manage(quiet, "migrate", "--verbosity", "0")
        manage(quiet, "load_catalog", "--verbosity", "0")
        # the reference run in-process (no broker), the rest of the shape not yet started
        snippet = SETUP_SNIPPET.replace("CONFIG", repr(str(config_path)))
        manage({**quiet, "REDIS_URL": ""}, "shell", "-c", snippet)
        config = json.loads(config_path.read_text())

        port = free_port()
        gunicorn = start(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "costapp.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(args.gunicorn_workers),
            ],
            env,
            workdir / "gunicorn.log",
        )
        processes.append(gunicorn)
        workers = []
        for index in range(args.workers):
            log = workdir / f"worker-{index}.log"
            workers.append(start(worker_command(index, args.concurrency), env, log))
        processes.extend(workers)
        beat = start(
            [
                *[sys.executable, "-m", "celery", "-A", "costapp", "beat", "--loglevel", "INFO"],
                *["--schedule", str(workdir / "celerybeat-schedule")],
            ],
            env,
            workdir / "beat.log",
        )
        processes.append(beat)
        wait_for_server(gunicorn, port)
        wait_for_workers(port, args.workers)
        print(
            f"gunicorn: {args.gunicorn_workers} workers on 127.0.0.1:{port}; {args.workers} "
            f"Celery workers × {args.concurrency}; beat; {args.users} users + 1 submitting a "
            f"run ({args.paths:,} paths) every {args.run_every:g} s for {duration_s:.0f} s; "
            f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} before",
            flush=True,
        )

        locust = start(
            [
                *[sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless"],
                *["--users", str(args.users + 1), "--spawn-rate", str(args.spawn_rate)],
                *["--run-time", f"{duration_s:.0f}s", "--stop-timeout", "10"],
                *["--host", f"http://127.0.0.1:{port}", "--only-summary", "--loglevel", "WARNING"],
            ],
            {**os.environ, "LOAD_CONFIG": str(config_path)},
            workdir / "locust.log",
        )
        processes.append(locust)
        began = time.monotonic()
        timeline: list[str] = []
        killed_at = restarted = killed_epoch = None
        while locust.poll() is None:
            now = time.monotonic() - began
            if killed_at is None and now >= args.kill_at * duration_s:
                busy, counts = kill_when_busy(workers[0], database_url)
                killed_epoch = time.time()
                killed_at = now = time.monotonic() - began
                timeline.append(
                    f"{now:6.1f} s: worker 0 SIGKILLed with its pool processes, "
                    + ("computing" if busy else "idle: no unit of work came its way in 30 s")
                    + f" (runs then: {json.dumps(counts)})"
                )
            if (
                killed_at is not None
                and restarted is None
                and args.restart_after >= 0
                and now >= killed_at + args.restart_after
            ):
                log = workdir / "worker-0-again.log"
                workers[0] = start(worker_command(0, args.concurrency), env, log)
                processes.append(workers[0])
                restarted = now
                timeline.append(f"{now:6.1f} s: worker 0 started again")
            if now > duration_s + 60:
                timeline.append(f"{now:6.1f} s: locust did not stop by itself: stopped")
                stop(locust)
                break
            time.sleep(0.2)
        load_ended = time.monotonic()
        timeline.append(
            f"{load_ended - began:6.1f} s: the load stopped "
            f"(load average {os.getloadavg()[0]:.1f} over the last minute)"
        )
        deadline = load_ended + args.finish_timeout
        while True:
            active = sum(run_counts(database_url).get(s, 0) for s in ("queued", "running"))
            if not active or time.monotonic() > deadline:
                break
            time.sleep(1)
        timeline.append(
            f"{time.monotonic() - began:6.1f} s: "
            + (
                f"every run ended {time.monotonic() - load_ended:.0f} s after the load stopped"
                if not active
                else f"{active} runs still queued or running after {args.finish_timeout:.0f} s"
            )
        )
        measured_path = Path(config["out"])
        if not measured_path.exists():
            print(Path(workdir / "locust.log").read_text()[-3000:])
            raise SystemExit("locust wrote no measurements")
        measured = json.loads(measured_path.read_text())
        runs = runs_summary(database_url, config["run"])
        held = report(measured, runs, timeline, killed_epoch)
    except HardTimeout:
        print(f"stopped: the hard timeout ({args.hard_timeout:.0f} s) passed", flush=True)
    finally:
        signal.alarm(0)
        for process in reversed(processes):
            stop(process)
        if redis_process is not None:
            redis_process.terminate()
            redis_process.wait(timeout=10)
        if args.keep or not held:
            print(f"logs kept in {workdir}" + (f"; database {args.database} kept" * args.keep))
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        if not args.keep:
            _drop_database(args.postgres, args.database)
    return 0 if held else 1


def _drop_database(server_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


if __name__ == "__main__":
    sys.exit(main())
