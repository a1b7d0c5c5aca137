"""Helpers shared by the scenario and run tests."""

import json
from pathlib import Path

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
