"""Helpers of the browser tests: signing in, the screenshots folder, and finished runs shared
across tests.

A finished run is computed once per test session, through the real run pipeline (tasks in this
process, as on the embedded default), and its stored fields are kept; each test that needs one
gets a copy of those fields as a new run of its own scenario (transactional tests empty the
database after each test), so only the first test pays for the simulation.
"""

import copy
from pathlib import Path

from costapp.models import RunRisk, Scenario, SimulationRun
from tests.costapp.runs_helpers import scenario_document, stored_run
from tests.tco.helpers import scenario

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PASSWORD = "a long pass phrase"

VARIANTS = {
    "today": "64 × H100 fleet at today's prices",
    "cheaper-cloud": "64 × H100 fleet, GPU cloud at 2.49 USD",
    "mix": "Own a base, commit to a middle, rent the top",
}
"""The shared runs: the shipped uncertain H100 fleet scenario (2 000 paths) as it is, with the
GPU cloud's on-demand price lowered from 2.99 to 2.49 USD per GPU-hour, and the shipped format 1.3
mix scenario (1 000 paths, its joint sizing)."""


def console_problems(page) -> list[str]:
    """The page's console errors and uncaught errors from now on, in a list that fills as they
    come (the browser's own request for /favicon.ico, which the site does not serve, left out)."""
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.text} at {m.location}")
            if m.type == "error" and not m.location.get("url", "").endswith("/favicon.ico")
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    return problems


def log_in(page, live_server, username: str, password: str = PASSWORD) -> None:
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")


def variant_document(variant: str) -> dict:
    if variant == "mix":
        document = scenario("own-commit-rent-mix")
        document["simulation"] = {
            "paths": 1000,
            "seed": 5,
            "demand_multiplier": {"dist": "triangular", "low": 0.7, "mode": 1, "high": 1.4},
        }
        return document
    document = scenario_document(paths=2_000, seed=5)
    if variant == "cheaper-cloud":
        cloud = next(o for o in document["options"] if o["name"] == "GPU cloud on-demand")
        cloud["usd_per_gpu_hour"] = 2.49
    return document


def finished_run(owner, variant: str = "today", *, shared: bool = False) -> SimulationRun:
    """A succeeded run of a new scenario of ``owner``'s (the catalog must be loaded; ``shared``
    with every user): computed the first time, a copy of that run's stored fields (and its risk
    figures) afterwards (``stored_run``)."""
    scenario = Scenario.objects.create(
        owner=owner, name=VARIANTS[variant], document=variant_document(variant), shared=shared
    )
    return stored_run(scenario)


def run_before_format_1_3(owner, *, shared: bool = False) -> SimulationRun:
    """A run as stored before format 1.3 and the risk figures: a copy of the "today" run with
    engine 1.2.0, its result without the version 1.3 fields and no risk figures."""
    run = finished_run(owner, "today", shared=shared)
    RunRisk.objects.filter(run=run).delete()
    result = copy.deepcopy(run.result)
    result["engine_version"] = "1.2.0"
    for option in result["options"]:
        option.pop("tail_npv_usd", None)
        option.pop("layers", None)
    for sweep in result.get("sizing") or []:
        sweep.pop("tail_npv_usd", None)
    run.result = result
    run.engine_version = "1.2.0"
    run.save(update_fields=["result", "engine_version"])
    run.scenario.name = "64 × H100 fleet, run before format 1.3"
    run.scenario.save(update_fields=["name"])
    return run
