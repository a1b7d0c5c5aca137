"""The users of ``bench/load.py``, run by locust in a process of its own (headless).

Nothing of the project is imported here (locust patches the standard library for gevent when it
starts; Django stays in the other processes). What the users need comes from the JSON file
``LOAD_CONFIG`` names: the analyst's username and password (the pages sign in through the sign-in
form), one API token per user, the scenario to run, a finished run, an offer; where to write what
was measured (``out``).

- :class:`Browser` (the ``--users``): signs in, then reads the pages (dashboard, prices, GPUs, an
  offer, the scenarios, a run's page, the run a moment ago submitted included) and the API
  (prices/current, gpus, scenarios, runs and one run), with its own token, a wait of ``wait_min``
  to ``wait_max`` s between two.
- :class:`Submitter` (one): starts a run of the scenario through the API every ``run_every`` s.

Every answer is recorded by endpoint (its name: the path with ids as ``[id]``): status and time.
When locust stops, ``out`` gets them as JSON (``{"by_endpoint": {name: {"times_ms": [...],
"statuses": {status: count}}}, "errors": {...}, "runs_submitted": [...], "wall_s": ...}``);
status 0 is an answer that never came (a connection error), its error counted in ``errors``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import time
from collections import Counter, defaultdict
from typing import Any

from locust import HttpUser, between, constant_pacing, events, task

CONFIG: dict[str, Any] = json.loads(open(os.environ["LOAD_CONFIG"]).read())  # noqa: SIM115
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')

TIMES: dict[str, list[float]] = defaultdict(list)
STATUSES: dict[str, Counter[int]] = defaultdict(Counter)
ERRORS: Counter[str] = Counter()
SUBMITTED: list[int] = []
"""The ids of the runs the submitter started, in order (the browsers read the latest)."""
TOKENS = itertools.cycle(CONFIG["tokens"])
STARTED: list[float] = []


@events.test_start.add_listener
def _started(**_kwargs: Any) -> None:
    STARTED.append(time.monotonic())


@events.request.add_listener
def _record(
    name: str,
    response_time: float,
    response: Any = None,
    exception: BaseException | None = None,
    **_kwargs: Any,
) -> None:
    status = getattr(response, "status_code", 0) or 0
    TIMES[name].append(response_time)
    STATUSES[name][status] += 1
    if status == 0 and exception is not None:
        ERRORS[f"{name}: {type(exception).__name__}: {exception}"[:300]] += 1


@events.quitting.add_listener
def _write(**_kwargs: Any) -> None:
    by_endpoint: dict[str, dict[str, Any]] = {
        name: {"times_ms": TIMES[name], "statuses": dict(STATUSES[name])} for name in TIMES
    }
    measured = {
        "by_endpoint": by_endpoint,
        "errors": dict(ERRORS),
        "runs_submitted": SUBMITTED,
        "wall_s": time.monotonic() - STARTED[0] if STARTED else None,
    }
    with open(CONFIG["out"], "w") as out:
        json.dump(measured, out)


class Browser(HttpUser):
    """A signed-in analyst reading pages and the API."""

    wait_time = between(CONFIG["wait_min"], CONFIG["wait_max"])
    weight = 1

    def on_start(self) -> None:
        self.token = next(TOKENS)
        form = self.client.get("/login/", name="/login/")
        found = CSRF.search(form.text)
        self.client.post(
            "/login/",
            data={
                "username": CONFIG["username"],
                "password": CONFIG["password"],
                "csrfmiddlewaretoken": found.group(1) if found else "",
            },
            headers={"Referer": f"{self.host}/login/"},
            name="/login/ (POST)",
            allow_redirects=False,
        )

    def api(self, path: str, name: str) -> None:
        self.client.get(
            path,
            headers={"Authorization": f"Token {self.token}", "Accept": "application/json"},
            name=name,
        )

    def a_run(self) -> int:
        """The run a moment ago submitted (running, or just finished), else the finished one."""
        return SUBMITTED[-1] if SUBMITTED and random.random() < 0.7 else CONFIG["run"]

    @task(3)
    def dashboard(self) -> None:
        self.client.get("/", name="/ (dashboard)")

    @task(3)
    def prices(self) -> None:
        self.client.get("/prices/", name="/prices/")

    @task(2)
    def gpus(self) -> None:
        self.client.get("/gpus/", name="/gpus/")

    @task(2)
    def offer(self) -> None:
        self.client.get(f"/offers/{CONFIG['offer']}/", name="/offers/[id]/")

    @task(2)
    def scenarios(self) -> None:
        self.client.get("/scenarios/", name="/scenarios/")

    @task(3)
    def run_page(self) -> None:
        run = self.a_run()
        self.client.get(f"/runs/{run}/", name="/runs/[id]/")
        self.client.get(f"/runs/{run}/status/", name="/runs/[id]/status/")

    @task(4)
    def api_prices(self) -> None:
        self.api("/api/v1/prices/current/?page_size=50", "/api/v1/prices/current/")

    @task(2)
    def api_gpus(self) -> None:
        self.api("/api/v1/gpus/", "/api/v1/gpus/")

    @task(2)
    def api_scenarios(self) -> None:
        self.api("/api/v1/scenarios/", "/api/v1/scenarios/")

    @task(2)
    def api_runs(self) -> None:
        self.api("/api/v1/runs/?page_size=10", "/api/v1/runs/")

    @task(3)
    def api_run(self) -> None:
        self.api(f"/api/v1/runs/{self.a_run()}/", "/api/v1/runs/[id]/")


class Submitter(HttpUser):
    """Starts a run of the scenario through the API every ``run_every`` s."""

    fixed_count = 1
    wait_time = constant_pacing(CONFIG["run_every"])

    def on_start(self) -> None:
        self.token = CONFIG["submit_token"]

    @task
    def submit(self) -> None:
        response = self.client.post(
            f"/api/v1/scenarios/{CONFIG['scenario']}/runs/",
            json={},
            headers={"Authorization": f"Token {self.token}"},
            name="/api/v1/scenarios/[id]/runs/ (POST)",
        )
        if response.status_code == 202:
            SUBMITTED.append(int(response.json()["id"]))
