"""Every shipped example gives its independently computed result through ``manage.py simulate
--json`` and through a run on real Celery workers, the two equal bit for bit (PostgreSQL, Redis
and worker processes; run with GPU_TCO_SERVICES=1)."""

import io
import json

import pytest
from django.core.management import call_command

from tests.tco.helpers import expected, scenario, scenario_names
from tests.tco.test_expected_scenarios import RELATIVE, assert_figure

from ..management.test_simulate import SCENARIOS
from ..runs_helpers import analyst, post_json
from .test_workers import watch

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def expected_rows(result: dict, want: dict) -> list[tuple[str, object, object]]:
    """Every (where, actual, expected) figure of the expected file's options and sweeps."""
    rows: list[tuple[str, object, object]] = [
        (key, result[key], want[key]) for key in ("cheapest", "baseline")
    ]
    for got, wanted in zip(result["options"], want["options"], strict=True):
        for key, value in wanted.items():
            where = f"{wanted['name']}.{key}"
            if isinstance(value, dict):
                rows.extend((f"{where}.{k}", got[key][k], v) for k, v in value.items())
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                for j, (a, w) in enumerate(zip(got[key], value, strict=True)):
                    rows.extend((f"{where}[{j}].{k}", a[k], v) for k, v in w.items())
            elif isinstance(value, list):
                rows.extend(
                    (f"{where}[{m}]", a, w)
                    for m, (a, w) in enumerate(zip(got[key], value, strict=True))
                )
            else:
                rows.append((where, got[key], value))
    for i, (got, wanted) in enumerate(
        zip(result.get("sizing", []), want.get("sizing", []), strict=True)
    ):
        for key, value in wanted.items():
            if key in ("candidates", "best") or not isinstance(value, list):
                rows.append((f"sizing[{i}].{key}", got[key], value))
            else:
                rows.extend(
                    (f"sizing[{i}].{key}[{j}]", a, w)
                    for j, (a, w) in enumerate(zip(got[key], value, strict=True))
                )
    return rows


def test_the_command_and_runs_on_workers_give_every_expected_result_bit_for_bit(
    client, catalog, celery_worker_process
):
    user = analyst("examples")
    client.force_login(user)
    started = {}
    for name in scenario_names():  # every run on the workers at once
        created = post_json(
            client, "/api/v1/scenarios/", {"name": name, "document": scenario(name)}
        )
        assert created.status_code == 201, created.content
        run = post_json(client, f"/api/v1/scenarios/{created.json()['id']}/runs/", {})
        assert run.status_code == 202, run.content
        started[name] = run
    assert len(started) == 9
    for name, run in started.items():
        out = io.StringIO()
        call_command("simulate", str(SCENARIOS / f"{name}.json"), "--json", stdout=out)
        from_command = json.loads(out.getvalue())
        assert watch(run.json()["id"], timeout_s=300)[-1] == ("succeeded", 100), name
        from_workers = client.get(run["Location"]).json()["result"]
        # the figures bit for bit; the document's warnings differ only where each side says
        # which catalog figures a zero leaves out
        assert json.dumps({**from_workers, "warnings": None}) == json.dumps(
            {**from_command, "warnings": None}
        ), name
        assert from_workers["engine_version"] == "1.3.0"
        rows = expected_rows(from_workers, expected(name))
        assert len(rows) > 20
        for where, actual, wanted in rows:
            if isinstance(wanted, list):  # a mix's candidate or best: its layers' sizes
                assert actual == wanted, f"{name}.{where}"
            else:
                assert_figure(actual, wanted, f"{name}.{where}", RELATIVE)
