"""Scenario format 1.2 through ``manage.py simulate`` and ``POST /api/v1/simulate/``: the new
figures in the table and the JSON, and each new field's bad values rejected whole at their path
(stderr and exit 2 on the command line, HTTP 400 with ``document.``-prefixed paths over the API)."""

import json

import pytest

from tests.tco.documents_v12 import (
    BAD_FIELDS,
    all_bad_fields,
    bad,
    failing_goodput,
    served_and_trained,
)

from ..runs_helpers import analyst, post_json
from .test_simulate import SCENARIOS, run_simulate

URL = "/api/v1/simulate/"


def stderr_fields(result) -> list[str]:
    return [line.split(": ", 1)[0] for line in result.stderr.decode().strip().splitlines()]


def test_the_command_rejects_every_bad_new_field_at_once_each_at_its_path(tmp_path):
    doc, paths = all_bad_fields()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    result = run_simulate(str(path), "--json")
    assert result.returncode == 2 and result.stdout == b""
    assert sorted(stderr_fields(result)) == sorted(paths)


@pytest.mark.parametrize(
    ("doc", "field", "start"),
    [
        (failing_goodput(), "workloads[1]", "goodput below 0.1 on option dedicated in month 1: "),
        (bad((("workloads", 2, "gpus"), 2**63)), "workloads[2].gpus", "must be ≤ 1e+07"),
        (bad((("options", 4, "gpu"), "h100-sxm")), "options[4].gpu", "does not apply"),
        (bad((("workloads", 1, "min_replicas"), 1)), "workloads[1].min_replicas", "does not apply"),
    ],
    ids=["goodput", "2^63-gpus", "api-gpu", "min_replicas-training"],
)
def test_the_command_rejects_a_demand_stage_or_misplaced_field_with_its_path(
    tmp_path, doc, field, start
):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    result = run_simulate(str(path))
    assert result.returncode == 2 and result.stdout == b""
    [line] = result.stderr.decode().strip().splitlines()
    assert line.startswith(f"{field}: {start}")


def test_the_table_shows_tokens_goodput_and_an_api_option_without_a_gpu():
    result = run_simulate(str(SCENARIOS / "serve-70b-host-or-api.json"))
    assert result.returncode == 0, result.stderr.decode()
    lines = result.stdout.decode().splitlines()
    header = next(line for line in lines if line.startswith("option"))
    assert "USD/M tokens" in header and "goodput" in header
    expected = json.loads((SCENARIOS / "expected" / "serve-70b-host-or-api.json").read_text())
    hosted = next(o for o in expected["options"] if o["type"] == "api")
    [row] = [line for line in lines if line.startswith(hosted["name"][:40])]
    cells = row[len(hosted["name"]) :].split()
    assert cells[:2] == ["api", "-"]
    assert f"{hosted['all_in_usd_per_million_tokens']:.2f}" in cells


def test_the_json_carries_the_new_figures_and_an_empty_sources_list(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(served_and_trained()))
    result = run_simulate(str(path), "--json")
    assert result.returncode == 0, result.stderr.decode()
    document = json.loads(result.stdout)
    assert document["sources"] == [] and document["engine_version"] == "1.3.0"
    tokens = next(o for o in document["options"] if o["type"] == "api")
    assert tokens["gpu"] is None and tokens["goodput"] is None
    assert all(o["all_in_usd_per_million_tokens"] > 0 for o in document["options"])


@pytest.fixture
def analyst_client(db, client):
    client.force_login(analyst("ann"))
    return client


@pytest.mark.parametrize(
    ("change", "path"), [case[1:] for case in BAD_FIELDS], ids=[case[0] for case in BAD_FIELDS]
)
def test_the_api_rejects_each_bad_new_field_at_its_path(analyst_client, catalog, change, path):
    response = post_json(analyst_client, URL, bad(change))
    assert response.status_code == 400, response.content[:300]
    assert [e["field"] for e in response.json()["errors"]] == [f"document.{path}"]


def test_the_api_rejects_goodput_below_a_tenth_at_the_workload(analyst_client, catalog):
    response = post_json(analyst_client, URL, failing_goodput())
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "document.workloads[1]"
    assert error["message"].startswith("goodput below 0.1 on option dedicated in month 1: ")


def test_the_api_prices_a_document_with_resident_replicas_goodput_and_tokens(
    analyst_client, catalog
):
    response = post_json(analyst_client, URL, served_and_trained())
    assert response.status_code == 200, response.content[:300]
    result = response.json()
    assert result["sources"] == []
    assert [o["type"] for o in result["options"]] == [
        "cloud",
        "cloud",
        "dedicated",
        "on_prem",
        "api",
    ]
    assert 0 < result["options"][0]["goodput"] < 1
