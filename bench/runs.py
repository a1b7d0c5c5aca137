"""Benchmark of runs on Celery workers: ``uv run python bench/runs.py``.

A 100 000-path, 36-month, 5-option run (``bench/uncertain-h100-fleet.json``) end to end, from
``costapp.runs.pipeline.run_create`` (the API's path: inputs frozen, the block tasks published) to the row
reading ``succeeded``, on a real Redis and real worker processes (prefork, one child each): one
worker process against two. Needs PostgreSQL (``DATABASE_URL``, default
``postgres://postgres@127.0.0.1:5432/gputco_bench_runs``; the database is created and migrated).
Redis: a private ``redis-server`` on a free port when the binary is there (so the byte counts
are this benchmark's alone), else ``REDIS_URL``. Numeric libraries run on one thread everywhere.

First, every step of the pipeline alone, one after another in this process with no worker
(submit, each unit, the merge, the charts built after it): their CPU and wall time, the serial
part (submit and merge) and what 1 and 2 workers would take from these figures, which a busy
machine distorts far less than it distorts the end-to-end wall times below.
Then the machine's own parallel scaling: the in-process engine (``costapp.scenarios.services.scenario_simulate``)
in one child process alone against two child processes at once, in turns over ``REPEATS``
rounds; twice the time alone over the time of each of two at once is the ceiling for the
speed-up of 2 workers over 1 here (two processes with no database, Redis or merge between them).
Then the runs on workers. The machine's speed drifts by a third within a minute, so the two
worker sets are measured in turns, not one after the other: one worker process consumes the
queue ``bench-runs-1``, two consume ``bench-runs-2`` (each set started with ``-Q`` and
``RUN_QUEUE`` for its queue, so the messages the workers publish stay on their set), and this
process routes each run with ``RUN_QUEUE``. After two warm-up runs per worker (so that no
worker's first imports and connections count), each of ``REPEATS`` rounds runs one run on each
set, which goes first alternating, and the in-process engine once. For each set: the median wall
time, the CPU time of its workers, of this process and of the whole machine during its runs,
checks the results equal the in-process engine's bit for bit, the time spent queued, in block
tasks and in the merge (from the run's row), and the bytes that travel through Redis per block
task and per block (Redis's own ``total_net_input_bytes`` and ``total_net_output_bytes``: task
messages, and the block results written once and read once by the merge). Then the speed-up of 2
workers over 1 (the ratio of the median walls, and the median of the rounds' ratios; also as a
share of the machine's ceiling) and the overhead of 1 worker over the in-process engine (its
median over the same rounds). Last, the most 2 workers could gain here: the part of the 1-worker
run that is not block tasks (submit, queued, merge) stays whole, the block tasks share out at
the machine's ceiling.
Then the same for a sizing run (``bench/size-the-fleet-sweep.json``: one sweep of 64 candidates
over 10 000 paths × 36 months, with its Monte Carlo), whose sweep blocks go to the workers beside
the Monte Carlo ones. ``--which montecarlo|sizing`` runs one of the two.
Targets: 2 workers ≥ 1.8 × one; one worker ≤ 1.5 × the in-process time + 1 s.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCENARIO = Path(__file__).resolve().parent / "uncertain-h100-fleet.json"
PATHS = 100_000
SIZING_SCENARIO = Path(__file__).resolve().parent / "size-the-fleet-sweep.json"
SIZING_PATHS = 10_000
REPEATS = 9
POLL_S = 0.1
TARGET_SPEEDUP = 1.8
TARGET_OVERHEAD_RATIO = 1.5
TARGET_OVERHEAD_S = 1.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(workdir: Path) -> tuple[subprocess.Popen[bytes] | None, str]:
    """A private redis-server (no persistence) when the binary is there; else ``REDIS_URL``."""
    binary = shutil.which("redis-server")
    if binary is None:
        url = os.environ.get("REDIS_URL", "")
        if not url:
            sys.exit("no redis-server binary and no REDIS_URL: nothing to run the workers on")
        return None, url
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    return process, f"redis://127.0.0.1:{port}/0"


def group_cpu_s(pgid: int) -> float:
    """User + system CPU time of the live processes of a process group [s]."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state, ppid, pgrp, ...
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLOCK_TICKS


def start_workers(
    count: int, queue: str, env: dict[str, str], workdir: Path
) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    """``count`` worker processes consuming ``queue`` alone, publishing their own messages there
    too (``RUN_QUEUE``), once all answer a ping; the processes and their node names."""
    from costapp.celery import app

    workers = []
    names = []
    for index in range(count):
        name = f"{queue}-{index}-{secrets.token_hex(3)}@localhost"
        names.append(name)
        workers.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "costapp",
                    "worker",
                    "--loglevel",
                    "WARNING",
                    "--pool",
                    "prefork",
                    "--concurrency",
                    "1",
                    "-n",
                    name,
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-Q",
                    queue,
                ],
                cwd=ROOT,
                env={**env, "RUN_QUEUE": queue},
                stdout=open(workdir / f"worker-{queue}-{index}.log", "w"),  # noqa: SIM115
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        replies = app.control.ping(destination=names, timeout=1.0) or []
        if len(replies) == count:
            return workers, names
    sys.exit(f"{count} worker(s) did not answer within 90 s (logs in {workdir})")


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def redis_bytes(url: str) -> int:
    import redis

    stats = redis.Redis.from_url(url).info("stats")
    return int(stats["total_net_input_bytes"]) + int(stats["total_net_output_bytes"])


def one_run(scenario: Any) -> tuple[float, Any]:
    """Wall time from submitting a run to the moment its row says it succeeded [s] (the row's
    ``finished``, so the polling interval does not count), and the run."""
    from costapp.models import SimulationRun
    from costapp.runs import pipeline

    start = time.time()
    run = pipeline.run_create(scenario=scenario)
    while True:
        status = SimulationRun.objects.filter(pk=run.pk).values_list("status", flat=True).get()
        if status != "queued" and status != "running":
            break
        time.sleep(POLL_S)
    run.refresh_from_db()
    wall = run.finished.timestamp() - start if run.finished else time.time() - start
    if run.status != "succeeded":
        sys.exit(f"run {run.pk} ended {run.status}: {run.error}")
    return wall, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument(
        "--which",
        choices=("montecarlo", "sizing", "both"),
        default="both",
        help="the Monte Carlo run, the sizing run, or both (default)",
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    redis_process, redis_url = start_redis(workdir)
    database_url = os.environ.get(
        "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gputco_bench_runs"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "costapp.settings",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    try:
        _create_database(database_url)
        import django

        django.setup()
        _bench(env, workdir, args.repeats, redis_url, args.which)
        shutil.rmtree(workdir, ignore_errors=True)  # the worker logs stay only after a failure
    finally:
        if redis_process is not None:
            redis_process.terminate()
            redis_process.wait(timeout=10)


def _create_database(url: str) -> None:
    import psycopg
    from psycopg import sql

    base, _, name = url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _bench(env: dict[str, str], workdir: Path, repeats: int, redis_url: str, which: str) -> None:
    import io

    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", verbosity=0, stdout=io.StringIO())
    call_command("load_catalog", verbosity=0, stdout=io.StringIO())
    owner, _ = User.objects.get_or_create(username="bench-runs")
    if which in ("montecarlo", "both"):
        document = json.loads(SCENARIO.read_text(encoding="utf-8"))
        document["simulation"]["paths"] = PATHS
        print(f"== Monte Carlo: {SCENARIO.name}, {PATHS:,} paths")
        _bench_document(env, workdir, repeats, redis_url, owner, document)
    if which in ("sizing", "both"):
        document = json.loads(SIZING_SCENARIO.read_text(encoding="utf-8"))
        document["simulation"]["paths"] = SIZING_PATHS
        candidates = sum(
            len(range(s["min"], s["max"] + 1, s.get("step", 1))) for s in document["sizing"]
        )
        print(
            f"== Sizing: {SIZING_SCENARIO.name}, {candidates} candidates × {SIZING_PATHS:,} paths "
            f"(and its Monte Carlo)"
        )
        _bench_document(env, workdir, repeats, redis_url, owner, document)


def _bench_document(
    env: dict[str, str], workdir: Path, repeats: int, redis_url: str, owner: Any, document: Any
) -> None:
    from django.test import override_settings

    from costapp.celery import app
    from costapp.models import Scenario
    from costapp.scenarios import services

    paths = int(document["simulation"]["paths"])
    scenario = Scenario.objects.create(owner=owner, name="bench", document=document)
    app.control.purge()

    services.scenario_simulate(document=document)  # warm-up
    expected = services.scenario_simulate(document=document)
    charts_cpu = _serial_phases(scenario, repeats)
    ceiling = _parallel_scaling(document, repeats)

    sets = {1: "bench-runs-1", 2: "bench-runs-2"}
    started = {count: start_workers(count, queue, env, workdir) for count, queue in sets.items()}
    try:
        for count, queue in sets.items():
            for _ in range(2 * count):  # warm-up: imports, first connections, in every worker
                with override_settings(RUN_QUEUE=queue):
                    one_run(scenario)
                _settle(started[count][1])
        walls: dict[int, list[float]] = {1: [], 2: []}
        phases: dict[int, list[tuple[float, float, float]]] = {1: [], 2: []}
        cpu_workers = dict.fromkeys(sets, 0.0)
        cpu_here = dict.fromkeys(sets, 0.0)
        machine_cpu = dict.fromkeys(sets, 0.0)
        traffic = dict.fromkeys(sets, 0)
        engine_walls, engine_cpus = [], []
        for round_ in range(repeats):
            for count in (1, 2) if round_ % 2 == 0 else (2, 1):
                workers, names = started[count]
                before_cpu = sum(group_cpu_s(w.pid) for w in workers)
                before_here = time.process_time()
                before_bytes = redis_bytes(redis_url)
                before_machine = machine_busy_s()
                with override_settings(RUN_QUEUE=sets[count]):
                    wall, run = one_run(scenario)
                traffic[count] += redis_bytes(redis_url) - before_bytes
                cpu_here[count] += time.process_time() - before_here
                # the charts built after the run reads succeeded count in its CPU, not in the
                # next run's (the other set's, now); the control messages asking are not traffic
                _settle(names)
                machine_cpu[count] += machine_busy_s() - before_machine
                cpu_workers[count] += sum(group_cpu_s(w.pid) for w in workers) - before_cpu
                walls[count].append(wall)
                phases[count].append(
                    (
                        (run.started - run.created).total_seconds(),
                        (run.merge_started - run.started).total_seconds(),
                        (run.finished - run.merge_started).total_seconds(),
                    )
                )
                if json.dumps(run.result) != json.dumps(expected):
                    sys.exit(f"the result over {count} worker(s) differs from the in-process one")
            start, start_cpu = time.perf_counter(), time.process_time()
            if json.dumps(services.scenario_simulate(document=document)) != json.dumps(expected):
                sys.exit("the in-process engine's result changed from one call to the next")
            engine_walls.append(time.perf_counter() - start)
            engine_cpus.append(time.process_time() - start_cpu)
    finally:
        for workers, _names in started.values():
            stop_workers(workers)
    units = len(run.units)
    blocks = sum(len(b) for kind, _unit, b in run.units if kind != "deterministic")
    block_bytes = _stored_block_bytes(run)
    in_process = statistics.median(engine_walls)
    print(
        f"in-process engine, {paths:,} paths, one per round: median {in_process:.3f} s wall, "
        f"{statistics.median(engine_cpus):.3f} s CPU (of "
        f"{', '.join(f'{w:.3f}' for w in engine_walls)})"
    )
    medians: dict[int, float] = {}
    machine: dict[int, float] = {}
    for count in sets:
        medians[count] = statistics.median(walls[count])
        machine[count] = machine_cpu[count] / repeats
        print(
            f"{count} worker process(es): median {medians[count]:.3f} s wall end to end "
            f"(of {', '.join(f'{w:.3f}' for w in walls[count])}); CPU per run: workers "
            f"{cpu_workers[count] / repeats:.3f} s, this process {cpu_here[count] / repeats:.3f} "
            f"s, the whole machine during these runs {machine[count]:.3f} s; result equal to "
            "the in-process engine's bit for bit"
        )
        print(
            "  phases (median): queued "
            + ", block tasks ".join(
                f"{statistics.median(p[i] for p in phases[count]):.3f} s" for i in range(2)
            )
            + f", merge {statistics.median(p[2] for p in phases[count]):.3f} s"
        )
        per_run = traffic[count] / repeats
        print(
            f"  through Redis: {per_run / 1e3:,.1f} kB per run, "
            f"{per_run / units / 1e3:,.2f} kB per block task ({units} tasks of "
            f"{blocks} blocks in all), {per_run / blocks / 1e3:,.2f} kB per block "
            f"of 1 000 paths (in and out); the block results themselves, kept in Redis until the "
            f"merge: {block_bytes / 1e6:,.1f} MB per run, {block_bytes / blocks / 1e3:,.1f} kB "
            f"per block"
        )
    speedup = medians[1] / medians[2]
    per_round = statistics.median(one / two for one, two in zip(walls[1], walls[2], strict=True))
    budget = TARGET_OVERHEAD_RATIO * in_process + TARGET_OVERHEAD_S
    print(
        f"speed-up of 2 workers over 1: {speedup:.2f}x from the medians, {per_round:.2f}x the "
        f"median of the rounds' ratios (target >= {TARGET_SPEEDUP}x: "
        f"{'met' if speedup >= TARGET_SPEEDUP else 'NOT met'}); of the machine's ceiling "
        f"{ceiling:.2f}x: {speedup / ceiling:.0%} from the medians, {per_round / ceiling:.0%} "
        "per round"
    )
    print(
        f"1 worker end to end / in-process engine: {medians[1] / in_process:.2f}x, "
        f"+{medians[1] - in_process:.3f} s (target <= 1.5 x {in_process:.3f} + 1 s = "
        f"{budget:.3f} s: {'met' if medians[1] <= budget else 'NOT met'})"
    )
    cores = os.cpu_count() or 1
    floor = max(0.0, machine[2] - charts_cpu) / cores
    print(
        f"  why: a run costs the whole machine {machine[1]:.3f} s CPU with 1 worker, "
        f"{machine[2]:.3f} s with 2 (workers, their consumers, PostgreSQL, Redis, this process; "
        f"{charts_cpu:.3f} s of it the charts, built after the run reads succeeded). On "
        f"{cores} cores, 2 workers need about {floor:.3f} s for a run, a speed-up of about "
        f"{medians[1] / floor if floor else float('inf'):.2f}x at most: with 1 worker the other "
        "core was already doing the database's, Redis's and the consumers' share."
    )
    one_blocks = statistics.median(p[1] for p in phases[1])
    serial = max(0.0, medians[1] - one_blocks)
    bound = medians[1] / (serial + one_blocks / ceiling)
    print(
        f"  and: of the 1-worker run's {medians[1]:.3f} s, {serial:.3f} s is not block tasks "
        f"(submit, queued, merge: one process at a time however many workers there are) and "
        f"{one_blocks:.3f} s is; were the block tasks to share out at the machine's own scaling "
        f"({ceiling:.2f}x), 2 workers would take {serial + one_blocks / ceiling:.3f} s, a "
        f"speed-up of {bound:.2f}x at most (measured: {speedup:.2f}x, {speedup / bound:.0%} of it)"
    )
    print(f"cores: {cores}, load average: {os.getloadavg()}")


ENGINE_RUNS_PER_CHILD = 2


def _settle(names: list[str], timeout_s: float = 60) -> None:
    """Wait until the workers ``names`` run no task (the last run's charts are built after its
    row reads succeeded)."""
    from costapp.celery import app

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        replies = app.control.inspect(destination=names, timeout=1.0).active() or {}
        if len(replies) == len(names) and not any(replies.values()):
            return
        time.sleep(POLL_S)
    sys.exit(f"the workers {names} were still busy {timeout_s} s after their run")


def _engine_child(document: Any, barrier: Any, results: Any) -> None:
    """In a forked child: the in-process engine ``ENGINE_RUNS_PER_CHILD`` times, once every
    child of the round is ready; puts the wall time of each run [s]."""
    from django.db import connections

    from costapp.scenarios import services

    barrier.wait()
    walls = []
    for _ in range(ENGINE_RUNS_PER_CHILD):
        start = time.perf_counter()
        services.scenario_simulate(document=document)
        walls.append(time.perf_counter() - start)
    connections.close_all()
    results.put(walls)


def _parallel_scaling(document: Any, repeats: int) -> float:
    """The machine's own scaling from one process to two: the in-process engine in one forked
    child alone, then in two at once, in turns over ``repeats`` rounds; no database, Redis or
    merge between the two. Returns the throughput scaling, 2 × alone / together (median of the
    rounds), the ceiling for the speed-up of 2 workers over 1 on this machine."""
    import multiprocessing

    from django.db import connections

    context = multiprocessing.get_context("fork")
    connections.close_all()  # each child opens its own
    alone: list[float] = []
    together: list[float] = []
    for _ in range(repeats):
        for count, into in ((1, alone), (2, together)):
            barrier = context.Barrier(count)
            results = context.Queue()
            children = [
                context.Process(target=_engine_child, args=(document, barrier, results))
                for _ in range(count)
            ]
            for child in children:
                child.start()
            walls = [wall for _ in children for wall in results.get(timeout=600)]
            for child in children:
                child.join(timeout=60)
                if child.exitcode != 0:
                    sys.exit(f"an engine child process ended with code {child.exitcode}")
            into.append(statistics.median(walls))
    ceiling = statistics.median(2 * one / two for one, two in zip(alone, together, strict=True))
    print(
        f"  the machine's own scaling, the in-process engine in child processes "
        f"({ENGINE_RUNS_PER_CHILD} runs each, {repeats} rounds in turns): median "
        f"{statistics.median(alone):.3f} s per run alone (of "
        f"{', '.join(f'{w:.3f}' for w in alone)}), {statistics.median(together):.3f} s per run "
        f"of two at once (of {', '.join(f'{w:.3f}' for w in together)}); throughput "
        f"2 × alone / together {ceiling:.2f}x (median of the rounds): the ceiling for the "
        "speed-up of 2 workers over 1 on this machine (two processes with no database, Redis or "
        "merge between them)"
    )
    return ceiling


def machine_busy_s() -> float:
    """CPU time the whole machine spent busy so far, every core together (``/proc/stat``) [s]."""
    with open("/proc/stat", encoding="ascii") as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values) - idle) / CLOCK_TICKS


def _serial_phases(scenario: Any, repeats: int) -> float:
    """Every step of the pipeline run one after another in this process, with no worker (the
    messages the steps publish wait in Redis and are purged), each timed alone: CPU time, which a
    busy machine hardly changes, and wall time. From them, what the runs on workers would take on
    an idle machine, message latency aside: one worker does every step in turn; two share the
    units (each taking the next one as it frees up, in publishing order) and the rest is serial.
    Returns the CPU time of building a run's charts (after it reads succeeded) [s]."""
    from costapp.celery import app
    from costapp.runs import pipeline

    def timed(call: Any, **kwargs: Any) -> tuple[float, float, Any]:
        start, start_cpu = time.perf_counter(), time.process_time()
        value = call(**kwargs)
        return time.process_time() - start_cpu, time.perf_counter() - start, value

    real_merge = pipeline.run_merge
    merge_times: list[tuple[float, float]] = []

    def merge_timed(*, run_id: int, owner: str | None = None) -> None:
        merge_times.append(timed(real_merge, run_id=run_id, owner=owner)[:2])

    real_charts = pipeline._run_charts_build
    charts_times: list[tuple[float, float]] = []

    def charts_timed(run: Any) -> None:
        charts_times.append(timed(real_charts, run=run)[:2])

    samples = []
    pipeline.run_merge = merge_timed  # the last unit merges: time it apart
    pipeline._run_charts_build = charts_timed  # after the run reads succeeded: not in its time
    try:
        for _ in range(repeats + 1):  # the first one warms up
            merge_times.clear()
            charts_times.clear()
            # run_create publishes every unit's message (no worker takes them here; purged below)
            *submit, run = timed(pipeline.run_create, scenario=scenario)
            units = []
            for kind, unit, _blocks in run.units:
                cpu, wall, _none = timed(
                    pipeline.run_block_execute, run_id=run.pk, kind=kind, unit=unit
                )
                units.append((kind, cpu, wall))
            merge, charts = merge_times[0], charts_times[0]
            kind, cpu, wall = units[-1]
            units[-1] = (kind, cpu - merge[0], wall - merge[1])
            merge = (merge[0] - charts[0], merge[1] - charts[1])
            run.refresh_from_db()
            if run.status != "succeeded":
                sys.exit(f"run {run.pk} ended {run.status}: {run.error}")
            samples.append((submit, units, merge, charts))
    finally:
        pipeline.run_merge = real_merge
        pipeline._run_charts_build = real_charts
        app.control.purge()
    samples = samples[1:]

    def median(pick: Any) -> float:
        return statistics.median(pick(sample) for sample in samples)

    kinds = [kind for kind, _cpu, _wall in samples[0][1]]
    unit_cpu = [median(lambda s, i=i: s[1][i][1]) for i in range(len(kinds))]
    unit_wall = [median(lambda s, i=i: s[1][i][2]) for i in range(len(kinds))]
    submit_cpu, submit_wall = median(lambda s: s[0][0]), median(lambda s: s[0][1])
    merge_cpu, merge_wall = median(lambda s: s[2][0]), median(lambda s: s[2][1])
    charts_cpu, charts_wall = median(lambda s: s[3][0]), median(lambda s: s[3][1])
    print(
        "  steps alone, in this process, no worker (median CPU / wall): submit (run_create, "
        f"inputs frozen and every unit's message published) {submit_cpu:.3f} / "
        f"{submit_wall:.3f} s; merge (the last unit's, after its own work) {merge_cpu:.3f} / "
        f"{merge_wall:.3f} s; then the charts, built once the run reads succeeded "
        f"{charts_cpu:.3f} / {charts_wall:.3f} s"
    )
    by_kind: dict[str, list[float]] = {}
    for kind, cpu in zip(kinds, unit_cpu, strict=True):
        by_kind.setdefault(kind, []).append(cpu)
    print(
        f"  {len(kinds)} units (CPU, each with its row, Redis and progress writes): "
        + "; ".join(
            f"{kind} {len(cpus)} × {statistics.mean(cpus) * 1e3:.0f} ms (max {max(cpus) * 1e3:.0f})"
            for kind, cpus in by_kind.items()
        )
        + f"; in all {sum(unit_cpu):.3f} s CPU, {sum(unit_wall):.3f} s wall"
    )
    for label, units_s, serial_s in (
        ("CPU", unit_cpu, submit_cpu + merge_cpu),
        ("wall", unit_wall, submit_wall + merge_wall),
    ):
        one = serial_s + sum(units_s)
        shared = _two_workers_s(units_s)
        two = serial_s + shared
        print(
            f"  from the {label} times: serial part {serial_s:.3f} s, units "
            f"{sum(units_s):.3f} s (on two workers {shared:.3f} s); "
            f"1 worker ≈ {one:.3f} s, 2 workers ≈ {two:.3f} s, speed-up ≈ {one / two:.2f}x "
            "(message latency aside)"
        )
    return charts_cpu


def _two_workers_s(durations: list[float]) -> float:
    """When the last of ``durations`` ends, each started in turn on whichever of two workers is
    free first (a worker with prefetch 1 takes the next message when it is done) [s]."""
    free = [0.0, 0.0]
    for duration in durations:
        first = free.index(min(free))
        free[first] += duration
    return max(free)


def _stored_block_bytes(run: Any) -> int:
    """Bytes of block results a run keeps until its merge (computed again as a worker does)."""
    from costapp.runs.blocks import BLOCK_KINDS
    from costapp.tco import plan_build

    plan = plan_build(run.inputs, run.gpus)
    return sum(
        len(BLOCK_KINDS[kind].compute(plan, run.inputs, blocks))
        for kind, _unit, blocks in run.units
    )


if __name__ == "__main__":
    main()
