"""Benchmark of the catalog API: ``uv run python bench/api.py``.

Serves the demo catalog (``load_catalog``) with gunicorn (gthread, keep-alive) on PostgreSQL, in
its own database (``gputco_api_bench`` by default, dropped and made anew), with a private
``redis-server`` for the cache (throttles and cached pages; ``--redis-url`` to use another) and
the production settings otherwise (throttle ``API_THROTTLE_RATE``, page cache
``API_PAGE_CACHE_SECONDS``; ``--page-cache-seconds 0`` renders every page). It drives ``GET
/api/v1/prices/current/`` with ``--tokens`` viewer tokens in turn (each token has its own
throttle budget, as a fleet of clients would) at page sizes 50 and 500, then raises the
page-size-50 rate step by step to find the highest rate it sustains.

The load generator is a second process on 127.0.0.1: one asyncio event loop, open loop and
bounded. It schedules ``rate × duration`` requests at a fixed rate (request *i* due at
``start + i / rate``) over at most ``--connections`` keep-alive connections with pre-written
requests, and stops ``GRACE_S`` after the last one was due whatever happens. Latency is measured
from the moment a request was due, so a server that falls behind shows it (no coordinated
omission); a request never answered counts as late as the run lasted. Each measured run follows
``WARM_UP_S`` at its own rate, not measured, so it measures the steady state. It prints the rate
achieved, p50 / p99 latency, the answers that were not 200 and the errors, and CPU time per
request: of the generator itself, and of the server (gunicorn workers, the PostgreSQL backends of
the bench database, redis-server), which does not depend on how busy the machine is.

Target (issue 12): page size 50, p99 under 50 ms at 400 requests per second or more on the
2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
PATH = "/api/v1/prices/current/"
DEFAULT_DATABASE = "gputco_api_bench"
GRACE_S = 10.0  # a run stops this long after its last request was due, answered or not
WARM_UP_S = 2.0  # before each measured run, this long at its rate (not measured)
TARGET_P99_MS = 50.0


# --- the load generator (second process) ---------------------------------------------------------


def request_bytes(*, port: int, token: str, url: str) -> bytes:
    """One keep-alive GET, written once and sent as is."""
    return (
        f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Token {token}\r\n"
        "Accept: application/json\r\n\r\n"
    ).encode()


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes
) -> tuple[int, bool]:
    """Send one request, read its answer; (status, whether the server closes the connection)."""
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    lower = head.lower()
    at = lower.find(b"\r\ncontent-length:")
    if at < 0:
        raise ConnectionError("answer without Content-Length")
    length = int(lower[at + 17 : lower.index(b"\r\n", at + 2)])
    await reader.readexactly(length)
    return status, b"\r\nconnection: close" in lower


async def _generate(
    *, port: int, requests: list[bytes], rate: float, duration: float, connections: int
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    total = int(rate * duration)
    start = loop.time() + 0.2
    hard_stop = start + duration + GRACE_S
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    freed = asyncio.Condition()
    opened = 0
    results: list[tuple[float, float, float, int]] = []  # due, sent, done, status
    errors: list[str] = []

    async def connection() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        nonlocal opened
        async with freed:
            while not idle and opened >= connections:
                await freed.wait()
            if idle:
                return idle.pop()
            opened += 1
        try:
            return await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            opened -= 1
            raise

    async def release(
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter], broken: bool
    ) -> None:
        nonlocal opened
        async with freed:
            if broken:
                conn[1].close()
                opened -= 1
            else:
                idle.append(conn)
            freed.notify()

    async def one(index: int, due: float) -> None:
        conn = None
        try:
            conn = await connection()
            sent = loop.time()
            status, close = await _exchange(*conn, requests[index % len(requests)])
            await release(conn, close)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            errors.append(type(exc).__name__)
            if conn is not None:
                await release(conn, True)
            status, sent = 0, loop.time()
        results.append((due, sent, loop.time(), status))

    tasks = []
    for index in range(total):
        due = start + index / rate
        if due > hard_stop:
            break
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one(index, due)))
    if tasks:
        await asyncio.wait(tasks, timeout=max(0.0, hard_stop - loop.time()))
    ended = loop.time()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for reader_writer in idle:
        reader_writer[1].close()
    answered = [r for r in results if r[3] != 0]
    if not answered:
        return {"requests": 0, "scheduled": total, "errors": errors[:5]}
    # a request never answered counts with the time it waited until the end: at least that late
    unanswered = total - len(answered)
    latency = sorted([r[2] - r[0] for r in answered] + [ended - start] * unanswered)
    service = sorted(r[2] - r[1] for r in answered)
    ok = sum(1 for r in answered if r[3] == 200)
    first_due = min(r[0] for r in answered)
    last_done = max(r[2] for r in answered)

    def pct(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] * 1000

    return {
        "target_rps": rate,
        "scheduled": total,
        "requests": len(answered),
        "ok": ok,
        "non_200": len(answered) - ok,
        "statuses": sorted({r[3] for r in answered}),
        "errors": errors[:5],
        "error_count": len(errors),
        "achieved_rps": ok / max(last_done - first_due, 1e-9),
        "p50_ms": pct(latency, 0.50),
        "p99_ms": pct(latency, 0.99),
        "max_ms": latency[-1] * 1000,
        "service_p50_ms": pct(service, 0.50),
        "service_p99_ms": pct(service, 0.99),
        "connections_opened": opened,
        "wall_s": last_done - first_due,
    }


def generate(
    *, port: int, tokens: list[str], url: str, rate: float, duration: float, connections: int
) -> dict[str, Any]:
    """Send ``rate × duration`` GET requests at a fixed rate (open loop, one event loop, at most
    ``connections`` keep-alive connections, the tokens in turn); return the measurements with the
    CPU time this process took."""
    requests = [request_bytes(port=port, token=token, url=url) for token in tokens]
    before = resource.getrusage(resource.RUSAGE_SELF)
    result = asyncio.run(
        _generate(
            port=port, requests=requests, rate=rate, duration=duration, connections=connections
        )
    )
    after = resource.getrusage(resource.RUSAGE_SELF)
    result["generator_cpu_s"] = (after.ru_utime - before.ru_utime) + (
        after.ru_stime - before.ru_stime
    )
    return result


# --- the server (this process) ------------------------------------------------------------------


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the processes ``pids`` so far [s]."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(p) for p in text)
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def recreate_database(server_url: str, name: str) -> None:
    import psycopg

    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise SystemExit(f"unusual database name: {name}")
    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")


def manage(env: dict[str, str], *args: str, capture: bool = False) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        text=True,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
    )
    return done.stdout or ""


TOKEN_SNIPPET = """
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from accounts.services import token_create
user, _ = get_user_model().objects.get_or_create(username="bench-viewer")
user.groups.set([Group.objects.get(name="viewer")])
for _ in range(COUNT):
    print("TOKEN", token_create(user=user)[1])
"""


def backend_pids(database_url: str, name: str) -> list[int]:
    """Process ids of the PostgreSQL backends serving database ``name`` (the server's)."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [name],
        ).fetchall()
    return [row[0] for row in rows]


def server_cpu(processes: dict[str, list[int]]) -> dict[str, float]:
    return {what: cpu_seconds(pids) for what, pids in processes.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    parser.add_argument(
        "--redis-url",
        default="",
        help="REDIS_URL for the server; default: a private redis-server on a free port",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per run")
    parser.add_argument("--rate-50", type=float, default=400.0, help="requests/s at page size 50")
    parser.add_argument("--rate-500", type=float, default=40.0, help="requests/s at page size 500")
    parser.add_argument("--connections", type=int, default=32, help="at most, keep-alive")
    parser.add_argument("--tokens", type=int, default=64, help="viewer tokens, used in turn")
    parser.add_argument(
        "--page-cache-seconds",
        type=int,
        help="API_PAGE_CACHE_SECONDS for the server (0: every page rendered); default: the "
        "settings' (on, with Redis)",
    )
    parser.add_argument(
        "--find-max",
        type=int,
        default=6,
        metavar="STEPS",
        help="then raise the page-size-50 rate from --find-from by --step for at most STEPS runs "
        "of --step-duration s while p99 stays under 50 ms with every answer 200 (0: skip)",
    )
    parser.add_argument("--find-from", type=float, default=100.0, help="first rate of the search")
    parser.add_argument("--step", type=float, default=100.0)
    parser.add_argument("--step-duration", type=float, default=5.0)
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.generate:
        tokens = json.loads(sys.stdin.read())
        print(
            json.dumps(
                generate(
                    port=args.port,
                    tokens=tokens,
                    url=args.url,
                    rate=args.rate,
                    duration=args.duration,
                    connections=args.connections,
                )
            )
        )
        return

    from bench.runs import start_redis

    recreate_database(args.postgres, args.database)
    workdir = Path(tempfile.mkdtemp(prefix="bench-api-"))
    redis_process, redis_url = (None, args.redis_url) if args.redis_url else start_redis(workdir)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "costapp.settings",
        "DATABASE_URL": f"{args.postgres}/{args.database}",
        "REDIS_URL": redis_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DEBUG": "false",
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CONN_MAX_AGE": "600",
        "LOG_LEVEL": "WARNING",
    }
    if args.page_cache_seconds is not None:
        env["API_PAGE_CACHE_SECONDS"] = str(args.page_cache_seconds)
    server = None
    try:
        print(f"database {args.database}: migrate, load the catalog …", flush=True)
        manage(env, "migrate", "--verbosity", "0")
        manage(env, "load_catalog", "--verbosity", "0")
        out = manage(
            env, "shell", "-c", TOKEN_SNIPPET.replace("COUNT", str(args.tokens)), capture=True
        )
        tokens = [line.split()[1] for line in out.splitlines() if line.startswith("TOKEN ")]
        rows = (
            manage(
                env,
                "shell",
                "-c",
                "from hardware.selectors import current_prices; print(current_prices().count())",
                capture=True,
            )
            .strip()
            .splitlines()[-1]
        )
        import psycopg

        with psycopg.connect(env["DATABASE_URL"], autocommit=True) as conn:
            conn.execute("ANALYZE")  # fresh statistics, as autovacuum would give a live database
        port = free_port()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "costapp.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(args.workers),
                "--worker-class",
                "gthread",
                "--threads",
                str(args.threads),
                "--keep-alive",
                "30",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        wait_for_server(server, port)
        processes = {"gunicorn": children(server.pid)}
        if redis_process is not None:
            processes["redis"] = [redis_process.pid]
        cache = env.get("API_PAGE_CACHE_SECONDS", "the settings' default (300 s with Redis)")
        print(
            f"gunicorn: {args.workers} workers × {args.threads} threads on 127.0.0.1:{port}; "
            f"{rows} current prices; {len(tokens)} viewer tokens; page cache: {cache}; "
            f"cores: {os.cpu_count()}",
            flush=True,
        )

        def measure(page_size: int, rate: float, duration: float) -> dict[str, Any]:
            url = f"{PATH}?page_size={page_size}"
            # warm-up: two seconds at the rate itself, so that the keep-alive connections, the
            # server's threads (each with its database connection), the tokens and the cached
            # page are all in use before the measured run: it measures the steady state. (From
            # idle straight to 400 requests per second, the first half-second has requests up
            # to ~130 ms late while connections and threads start.)
            run_generator(args, port, tokens, url, rate, WARM_UP_S)
            processes["postgres"] = backend_pids(f"{args.postgres}/postgres", args.database)
            load = os.getloadavg()[0]
            before = server_cpu(processes)
            result = run_generator(args, port, tokens, url, rate, duration)
            after = server_cpu(processes)
            result.update(page_size=page_size, load_1min=load)
            result["server_cpu_s"] = {k: after[k] - before[k] for k in after}
            report(result)
            return result

        measure(50, args.rate_50, args.duration)
        measure(500, args.rate_500, args.duration)
        best = None
        for step in range(args.find_max):
            rate = args.find_from + step * args.step
            result = measure(50, rate, args.step_duration)
            if not sustained(result):
                break
            best = result
        if args.find_max:
            print(
                "highest page-size-50 rate sustained (p99 < 50 ms, every answer 200, ≥ 97 % of "
                "the rate): "
                + (
                    f"{best['achieved_rps']:.0f} req/s"
                    if best
                    else f"none from {args.find_from:.0f}"
                )
                + f" (tried up to {args.find_max} steps of {args.step:.0f} req/s)",
                flush=True,
            )
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
        if redis_process is not None:
            redis_process.terminate()
            redis_process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


def wait_for_server(server: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            return
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("gunicorn did not start") from None
            time.sleep(0.3)


def sustained(r: dict[str, Any]) -> bool:
    """Whether a run kept the target: p99 under 50 ms, every answer a 200, nearly the rate."""
    return (
        r.get("requests", 0) == r["scheduled"] == r.get("ok", 0)
        and r["p99_ms"] < TARGET_P99_MS
        and r["achieved_rps"] >= 0.97 * r["target_rps"]
    )


def run_generator(
    args: argparse.Namespace, port: int, tokens: list[str], url: str, rate: float, duration: float
) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--generate",
            "--port",
            str(port),
            "--url",
            url,
            "--rate",
            str(rate),
            "--duration",
            str(duration),
            "--connections",
            str(args.connections),
        ],
        check=True,
        text=True,
        input=json.dumps(tokens),
        stdout=subprocess.PIPE,
        timeout=duration + GRACE_S + 60,
    )
    return json.loads(done.stdout)


def report(r: dict[str, Any]) -> None:
    if not r.get("requests"):
        print(f"page_size={r['page_size']}: no answers: {r}", flush=True)
        return
    cpu = r["server_cpu_s"]
    server_ms = 1000 * sum(cpu.values()) / r["requests"]
    parts = ", ".join(f"{k} {1000 * v / r['requests']:.2f}" for k, v in cpu.items())
    print(
        f"page_size={r['page_size']:>3}  target {r['target_rps']:.0f} req/s  "
        f"achieved {r['achieved_rps']:.1f} req/s  {r['requests']} of {r['scheduled']} answered "
        f"({r['non_200']} not 200, {r['error_count']} errors)  "
        f"p50 {r['p50_ms']:.1f} ms  p99 {r['p99_ms']:.1f} ms  max {r['max_ms']:.1f} ms  "
        f"(send→answer p50 {r['service_p50_ms']:.1f} / p99 {r['service_p99_ms']:.1f} ms)  "
        f"load {r['load_1min']:.1f}\n"
        f"    CPU per request: server {server_ms:.2f} ms ({parts}); generator "
        f"{1000 * r['generator_cpu_s'] / r['requests']:.2f} ms "
        f"({r['generator_cpu_s']:.2f} s over {r['wall_s']:.1f} s wall); "
        f"{r['connections_opened']} connections",
        flush=True,
    )
    if r["errors"]:
        print(f"  errors: {r['errors']}", flush=True)


if __name__ == "__main__":
    main()
