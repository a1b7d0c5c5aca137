"""Benchmark of the catalog API: ``uv run python bench/api.py``.

Serves the demo catalog (``load_catalog``) with gunicorn on PostgreSQL, in its own database
(``gputco_api_bench`` by default, dropped and made anew), and drives ``GET
/api/v1/prices/current/`` with a viewer's token at page sizes 50 and 500 from a load generator in
a second process on 127.0.0.1.

The generator is open-loop and bounded: it schedules ``rate × duration`` requests at a fixed rate
(request *i* at ``start + i / rate``) over a pool of keep-alive connections, and stops at the end
of the duration plus a grace period whatever happens. Latency is measured from the moment a
request was due, so a server that falls behind shows it (no coordinated omission); the time from
sending to the last byte is printed as well. It prints the requests per second achieved, p50 and
p99 latency, the errors, the CPU time of the generator itself and of the gunicorn workers.

Target (issue 12): page size 50, p99 under 50 ms at 400 requests per second or more on the
2-core machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import resource
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PATH = "/api/v1/prices/current/"
DEFAULT_DATABASE = "gputco_api_bench"


# --- the load generator (second process) ---------------------------------------------------------


def generate(
    *,
    host: str,
    port: int,
    token: str,
    page_size: int,
    rate: float,
    duration: float,
    connections: int,
) -> dict[str, Any]:
    """Send ``rate × duration`` GET requests at a fixed rate; return the measurements."""
    total = int(rate * duration)
    lock = threading.Lock()
    counter = iter(range(total))
    results: list[tuple[float, float, float, int]] = []  # due, sent, done, status
    errors: list[str] = []
    headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
    url = f"{PATH}?page_size={page_size}"
    start = time.perf_counter() + 0.2
    hard_stop = start + duration + 10.0

    def worker() -> None:
        conn = http.client.HTTPConnection(host, port, timeout=10)
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                break
            due = start + i / rate
            now = time.perf_counter()
            if now > hard_stop:
                break
            if due > now:
                time.sleep(due - now)
            sent = time.perf_counter()
            try:
                conn.request("GET", url, headers=headers)
                response = conn.getresponse()
                response.read()
                status = response.status
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = http.client.HTTPConnection(host, port, timeout=10)
            except (OSError, http.client.HTTPException) as exc:
                status = 0
                with lock:
                    errors.append(type(exc).__name__)
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=10)
            done = time.perf_counter()
            with lock:
                results.append((due, sent, done, status))
        conn.close()

    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    threads = [threading.Thread(target=worker, daemon=True) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(0.0, hard_stop - time.perf_counter()) + 1)
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    if not results:
        return {"requests": 0, "errors": errors}
    first_due = min(r[0] for r in results)
    last_done = max(r[2] for r in results)
    latency = sorted(r[2] - r[0] for r in results)
    service = sorted(r[2] - r[1] for r in results)
    ok = sum(1 for r in results if r[3] == 200)

    def pct(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] * 1000

    return {
        "page_size": page_size,
        "target_rps": rate,
        "scheduled": total,
        "requests": len(results),
        "ok": ok,
        "non_200": len(results) - ok,
        "errors": errors[:5],
        "achieved_rps": len(results) / (last_done - first_due),
        "p50_ms": pct(latency, 0.50),
        "p99_ms": pct(latency, 0.99),
        "max_ms": latency[-1] * 1000,
        "service_p50_ms": pct(service, 0.50),
        "service_p99_ms": pct(service, 0.99),
        "generator_cpu_s": (cpu_after.ru_utime - cpu_before.ru_utime)
        + (cpu_after.ru_stime - cpu_before.ru_stime),
        "wall_s": last_done - first_due,
    }


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
print(token_create(user=user)[1])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    parser.add_argument("--redis-url", default="", help="REDIS_URL for the server (throttles)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per run")
    parser.add_argument("--rate-50", type=float, default=400.0, help="requests/s at page size 50")
    parser.add_argument("--rate-500", type=float, default=40.0, help="requests/s at page size 500")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--page-size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.generate:
        print(
            json.dumps(
                generate(
                    host="127.0.0.1",
                    port=args.port,
                    token=args.token,
                    page_size=args.page_size,
                    rate=args.rate,
                    duration=args.duration,
                    connections=args.connections,
                )
            )
        )
        return

    recreate_database(args.postgres, args.database)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "costapp.settings",
        "DATABASE_URL": f"{args.postgres}/{args.database}",
        "REDIS_URL": args.redis_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DEBUG": "false",
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CONN_MAX_AGE": "600",
        "API_THROTTLE_RATE": "1000000/minute",
        "LOG_LEVEL": "WARNING",
    }
    print(f"database {args.database}: migrate, load the catalog …", flush=True)
    manage(env, "migrate", "--verbosity", "0")
    manage(env, "load_catalog", "--verbosity", "0")
    token = manage(env, "shell", "-c", TOKEN_SNIPPET, capture=True).strip().splitlines()[-1]
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
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                probe = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                probe.request("GET", "/healthz")
                probe.getresponse().read()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("gunicorn did not start") from None
                time.sleep(0.3)
        workers = children(server.pid)
        print(
            f"gunicorn: {args.workers} workers × {args.threads} threads on 127.0.0.1:{port}; "
            f"{rows} current prices; cores: {os.cpu_count()}; load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
            flush=True,
        )
        for page_size, rate in ((50, args.rate_50), (500, args.rate_500)):
            # warm-up: a second at a tenth of the rate (connections, caches, query plans)
            run_generator(args, port, token, page_size, max(rate / 10, 5), 1.0)
            server_cpu = cpu_seconds(workers)
            result = run_generator(args, port, token, page_size, rate, args.duration)
            result["server_cpu_s"] = cpu_seconds(workers) - server_cpu
            report(result)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def run_generator(
    args: argparse.Namespace, port: int, token: str, page_size: int, rate: float, duration: float
) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--generate",
            "--port",
            str(port),
            "--token",
            token,
            "--page-size",
            str(page_size),
            "--rate",
            str(rate),
            "--duration",
            str(duration),
            "--connections",
            str(args.connections),
        ],
        check=True,
        text=True,
        stdout=subprocess.PIPE,
        timeout=duration + 60,
    )
    return json.loads(done.stdout)


def report(r: dict[str, Any]) -> None:
    if not r.get("requests"):
        print(f"no answers: {r}")
        return
    print(
        f"page_size={r['page_size']:>3}  target {r['target_rps']:.0f} req/s  "
        f"achieved {r['achieved_rps']:.1f} req/s  {r['requests']} of {r['scheduled']} scheduled requests "
        f"answered ({r['non_200']} not 200)  "
        f"p50 {r['p50_ms']:.1f} ms  p99 {r['p99_ms']:.1f} ms  max {r['max_ms']:.1f} ms  "
        f"(send→answer p50 {r['service_p50_ms']:.1f} / p99 {r['service_p99_ms']:.1f} ms)  "
        f"generator CPU {r['generator_cpu_s']:.2f} s, server CPU {r['server_cpu_s']:.2f} s "
        f"over {r['wall_s']:.1f} s wall",
        flush=True,
    )
    if r["errors"]:
        print(f"  errors: {r['errors']}")


if __name__ == "__main__":
    main()
