"""Without Redis the sign-in limits count in the database: with two gunicorn workers, the
eleventh wrong password for an account is refused whichever worker hears it."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import _database_url
from tests.costapp.test_faults_services import free_port
from tests.factories import UserFactory

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]


def token_post(port: int, password: str) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/auth/tokens/",
        data=f'{{"username": "sam", "password": "{password}"}}'.encode(),
        headers={"Content-Type": "application/json", "Connection": "close"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def pair_post(port: int, held: str, sent: str) -> tuple[int, int]:
    """Two sign-ins that two different workers answer: the first's request is held half-sent,
    which keeps the (sync) worker that accepted it waiting on it, so the second is accepted by
    the other worker; then the first is finished. Returns both statuses, first then second."""
    body = json.dumps({"username": "sam", "password": held}).encode()
    head = (
        "POST /api/v1/auth/tokens/ HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as holder:
        holder.sendall(head[:20])  # half a request line: its worker waits for the rest
        second = token_post(port, sent)
        holder.sendall(head[20:] + body)
        answer = b""
        while chunk := holder.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1]), second


@pytest.fixture
def two_workers(postgres_database, tmp_path):
    """gunicorn with two worker processes on the test database and no Redis; its access log
    names the worker (process id) that answered each request."""
    port, log = free_port(), tmp_path / "access.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _database_url(postgres_database),
        "REDIS_URL": "",
    }
    server = subprocess.Popen(
        [
            sys.executable, "-m", "gunicorn", "costapp.wsgi:application",
            "--workers", "2", "--bind", f"127.0.0.1:{port}",
            "--access-logfile", str(log), "--access-logformat", "%(p)s %(s)s",
        ],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30)
                break
            except OSError:  # not listening yet
                assert time.monotonic() < deadline, "gunicorn did not answer within 90 s"
                time.sleep(0.5)
        yield port, log
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_eleventh_wrong_password_is_refused_by_either_worker(two_workers, settings):
    port, log = two_workers
    UserFactory(username="sam", password="right horse battery")
    answers = [status for n in range(5) for status in pair_post(port, f"wrong {n}", f"again {n}")]
    assert answers == [401] * 10
    refused = [status for _ in range(3) for status in pair_post(port, "wrong", "wrong again")]
    refused.append(token_post(port, "right horse battery"))
    assert refused == [429] * 7
    lines = [line.split() for line in log.read_text().splitlines()]
    by_status: dict[str, set[str]] = {}
    for pid, status in lines:
        by_status.setdefault(status, set()).add(pid)
    # Each worker heard wrong passwords and each refused the ones past the tenth.
    assert len(by_status["401"]) == 2, lines
    assert len(by_status["429"]) == 2, lines
