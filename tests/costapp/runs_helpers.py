"""Helpers shared by the scenario and run tests."""

import json
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User

from accounts.roles import ANALYST
from tests.factories import UserFactory

SCENARIOS = Path(__file__).resolve().parents[1] / "tco" / "scenarios"


def scenario_document(name: str = "uncertain-h100-fleet", **simulation) -> dict:
    """A shipped scenario document, with simulation settings replaced where given."""
    document = json.loads((SCENARIOS / f"{name}.json").read_text())
    if simulation:
        document["simulation"] = {**document.get("simulation", {}), **simulation}
    return document


def analyst(username: str) -> User:
    """A user in the analyst group (password "pw-" and the username)."""
    return UserFactory(username=username, roles=[ANALYST])


def post_json(client, url: str, body, **extra):
    return client.post(
        url,
        data=body if isinstance(body, str | bytes) else json.dumps(body),
        content_type="application/json",
        **extra,
    )


def quoted_run(owner: User, shared: bool = False):
    """A succeeded run of a new scenario of ``owner``'s whose dedicated option prices the first
    shipped dedicated quote (the catalog must be loaded), computed in this process; returns the
    run and the quote."""
    from costapp.models import Scenario
    from costapp.runs import pipeline
    from hardware.models import DedicatedQuote
    from tests.conftest import tasks_run_in_process

    quote = DedicatedQuote.objects.order_by("id").first()
    assert quote is not None and quote.vendor and quote.reference
    document = scenario_document("h100-fleet-buy-vs-rent")
    document["options"] = [
        {"name": "rent", "type": "cloud", "billing": "on_demand", "usd_per_gpu_hour": 3.0},
        {"name": "leased", "type": "dedicated", "quote": quote.id},
    ]
    document["workloads"][0]["gpu"] = quote.gpu.slug
    document.pop("baseline", None)
    scenario = Scenario.objects.create(owner=owner, name="lease", document=document, shared=shared)
    with tasks_run_in_process():
        run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    return run, quote


_STORED: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {}
"""A document's first succeeded run in this process: its stored fields and its risk figures."""
NOT_COPIED = ("id", "scenario", "created", "inputs_copied_from")


def stored_run(scenario):
    """A succeeded run of ``scenario`` (the catalog loaded): the first time this process asks for
    its document, computed through the run pipeline with its tasks in this process; afterwards a
    new run of ``scenario`` holding a copy of that run's stored fields and risk figures, so only
    the first test pays for the simulation. For the tests that read a finished run, not for those
    checking what computing it does (its blocks, its cached charts, its progress)."""
    from costapp.models import RunRisk, SimulationRun
    from costapp.runs import pipeline
    from tests.conftest import tasks_run_in_process

    key = json.dumps(scenario.document, sort_keys=True)
    if key in _STORED:
        fields, risk = _STORED[key]
        run = SimulationRun.objects.create(scenario=scenario, **fields)
        if risk is not None:
            RunRisk.objects.create(run=run, **risk)
        return run
    with tasks_run_in_process():
        run = pipeline.run_create(scenario=scenario)
    assert run.status == "succeeded", run.error
    figures = RunRisk.objects.filter(run=run).first()
    _STORED[key] = (
        {
            field.attname: getattr(run, field.attname)
            for field in SimulationRun._meta.concrete_fields
            if field.name not in NOT_COPIED
        },
        None
        if figures is None
        else {"figures": figures.figures, "sorted_totals": figures.sorted_totals},
    )
    return run


def question_priced(client, data: dict, username: str = "lead", timeout_s: float = 180):
    """A question asked at ``/ask/`` with the form ``data`` by a new analyst ``username`` (signed
    in), its run priced in this process (tasks in process), waited for until it succeeds:
    (the analyst, the question, its run)."""
    import time

    from costapp.models import Question, SimulationRun

    lead = analyst(username)
    client.force_login(lead)
    assert client.post("/ask/", data).status_code == 302
    question = Question.objects.get(owner=lead)
    run = question.run
    deadline = time.monotonic() + timeout_s  # priced in this process, at once or soon after
    while run.status != SimulationRun.Status.SUCCEEDED and time.monotonic() < deadline:
        assert run.status not in ("failed", "cancelled"), run.error
        time.sleep(0.1)
        run.refresh_from_db()
    assert run.status == SimulationRun.Status.SUCCEEDED, run.error
    return lead, question, run
