"""``POST …/runs/`` with an ``Idempotency-Key``: the same key from the same user within a day
answers with the run it first started; without a key every start is a new run."""

from datetime import timedelta

import pytest
from django.utils import timezone

from costapp.models import RunRequest, Scenario, SimulationRun

from ..runs_helpers import analyst, post_json, scenario_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def owned(client, catalog):
    user = analyst("alice")
    client.force_login(user)
    make = lambda name: Scenario.objects.create(  # noqa: E731
        owner=user, name=name, document=scenario_document(paths=1_000, seed=3)
    )
    return make("fleet"), make("other")


def start(client, scenario, key=None, **body):
    extra = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return post_json(client, f"/api/v1/scenarios/{scenario.pk}/runs/", body, **extra)


def test_the_same_key_answers_with_the_first_run_and_starts_nothing(
    client, owned, tasks_in_process
):
    fleet, other = owned
    first = start(client, fleet, "3f1c9a3e-retry-me", paths=1_000)
    assert first.status_code == 202, first.content
    again = start(client, fleet, "3f1c9a3e-retry-me", paths=1_000)
    assert again.status_code == 202 and again.json()["id"] == first.json()["id"]
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert again["Location"] == first["Location"]
    assert SimulationRun.objects.count() == 1
    # another key, or none, starts another run
    assert start(client, fleet, "another-key").json()["id"] != first.json()["id"]
    assert start(client, fleet).json()["id"] != first.json()["id"]
    assert SimulationRun.objects.count() == 3
    # the key on another scenario is refused at the header
    refused = start(client, other, "3f1c9a3e-retry-me")
    assert refused.status_code == 400
    assert [e["field"] for e in refused.json()["errors"]] == ["Idempotency-Key"]
    assert SimulationRun.objects.count() == 3


def test_a_key_is_kept_a_day_and_a_malformed_one_is_refused(client, owned, tasks_in_process):
    fleet, _other = owned
    first = start(client, fleet, "day-old")
    RunRequest.objects.update(created=timezone.now() - timedelta(hours=24, minutes=1))
    later = start(client, fleet, "day-old")
    assert later.status_code == 202 and later.json()["id"] != first.json()["id"]
    assert RunRequest.objects.get().run_id == later.json()["id"]
    for bad in ("has space", "x" * 256, "é"):
        response = start(client, fleet, bad)
        assert response.status_code == 400, bad
        assert response.json()["errors"][0]["field"] == "Idempotency-Key"


def test_an_invalid_start_spends_no_key(client, owned, tasks_in_process):
    fleet, _other = owned
    good = fleet.document
    fleet.document = {**good, "horizon_months": 0}
    fleet.save()
    refused = start(client, fleet, "k1")
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "document.horizon_months"
    assert not RunRequest.objects.exists() and not SimulationRun.objects.exists()
    fleet.document = good
    fleet.save()
    assert start(client, fleet, "k1").status_code == 202
