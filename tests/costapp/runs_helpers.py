"""Helpers shared by the scenario and run tests."""

import json
import time
from pathlib import Path

from django.contrib.auth.models import Group, User

from accounts.roles import ANALYST

SCENARIOS = Path(__file__).resolve().parents[1] / "tco" / "scenarios"


def scenario_document(name: str = "uncertain-h100-fleet", **simulation) -> dict:
    """A shipped scenario document, with simulation settings replaced where given."""
    document = json.loads((SCENARIOS / f"{name}.json").read_text())
    if simulation:
        document["simulation"] = {**document.get("simulation", {}), **simulation}
    return document


def analyst(username: str) -> User:
    """A user in the analyst group."""
    user = User.objects.create_user(username=username, password="pw-" + username)
    user.groups.add(Group.objects.get(name=ANALYST))
    return user


def post_json(client, url: str, body, **extra):
    return client.post(
        url,
        data=body if isinstance(body, str | bytes) else json.dumps(body),
        content_type="application/json",
        **extra,
    )


def wait_for_run(
    client, run_url: str, *, timeout_s: float = 120, until=("succeeded", "failed", "cancelled")
):
    """Poll a run until its status is one of ``until``; the run body and the progress values seen."""
    seen = []
    deadline = time.monotonic() + timeout_s
    while True:
        body = client.get(run_url).json()
        seen.append(body["progress"])
        if body["status"] in until:
            return body, seen
        if time.monotonic() > deadline:
            raise AssertionError(f"run still {body['status']} after {timeout_s} s: {body}")
        time.sleep(0.05)
