"""Scenarios and runs through the API on the embedded default: tasks run in this process."""

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.test import override_settings

from accounts.roles import ADMIN, ANALYST, VIEWER
from costapp.models import RunBlock, Scenario, SimulationRun
from costapp.runs import pipeline
from costapp.scenarios import services
from tests.factories import UserFactory

from ..factories import ScenarioFactory
from ..runs_helpers import analyst, post_json, scenario_document


@pytest.fixture
def alice(db, client):
    user = analyst("alice")
    client.force_login(user)
    return user


def create_scenario(client, document=None, **fields):
    body = {"name": "fleet", "description": "", "shared": False, "document": document, **fields}
    if body["document"] is None:
        body["document"] = scenario_document(paths=2_500, seed=3)
    response = post_json(client, "/api/v1/scenarios/", body)
    assert response.status_code == 201, response.content
    return response.json()


def test_a_run_is_created_queued_and_succeeds_in_process_with_the_simulate_result(
    client, alice, catalog, tasks_in_process, tmp_path
):
    scenario = create_scenario(client)
    response = post_json(client, f"/api/v1/scenarios/{scenario['id']}/runs/", {})
    assert response.status_code == 202, response.content
    run = response.json()
    assert response["Location"].endswith(f"/api/v1/runs/{run['id']}/")
    assert run["url"] == response["Location"]
    body = client.get(response["Location"]).json()
    assert body["status"] == "succeeded" and body["progress"] == 100
    assert body["seed"] == 3 and body["paths"] == 2_500
    assert body["started"] and body["finished"] and body["engine_version"]
    expected = services.scenario_simulate(document=scenario_document(paths=2_500, seed=3))
    assert json.dumps(body["result"]) == json.dumps(expected)
    # ... which is what `manage.py simulate --json` prints for the same document
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario_document(paths=2_500, seed=3)))
    printed = io.StringIO()
    call_command("simulate", str(path), "--json", stdout=printed)
    assert json.dumps(json.loads(printed.getvalue())) == json.dumps(body["result"])
    assert RunBlock.objects.count() == 0  # blocks are dropped once merged
    assert set(body) == {
        "id",
        "url",
        "scenario",
        "status",
        "progress",
        "seed",
        "paths",
        "created",
        "started",
        "finished",
        "engine_version",
        "error",
        "result",
    }


def test_seed_and_paths_override_the_documents_and_a_rerun_repeats_the_last_run(
    client, alice, catalog, tasks_in_process
):
    scenario = create_scenario(client)
    url = f"/api/v1/scenarios/{scenario['id']}/runs/"
    first = post_json(client, url, {"seed": 11, "paths": 1_200}).json()
    assert (first["seed"], first["paths"]) == (11, 1_200)
    expected = services.scenario_simulate(document=scenario_document(paths=1_200, seed=11))
    assert json.dumps(first["result"]) == json.dumps(expected)
    again = post_json(client, url, {}).json()
    assert (again["seed"], again["paths"]) == (11, 1_200)
    assert json.dumps(again["result"]) == json.dumps(first["result"])
    runs = SimulationRun.objects.order_by("id")
    assert runs[1].inputs_copied_from_id == runs[0].id
    assert runs[1].inputs == runs[0].inputs


def test_a_rerun_keeps_frozen_prices_unless_reprice(client, alice, catalog, tasks_in_process):
    from hardware.models import DedicatedQuote

    quote = DedicatedQuote.objects.order_by("id").first()
    assert quote is not None, "the catalog ships dedicated quotes"
    document = scenario_document("h100-fleet-buy-vs-rent")
    document["options"] = [
        {"name": "rent", "type": "cloud", "billing": "on_demand", "usd_per_gpu_hour": 3.0},
        {"name": "quoted", "type": "dedicated", "quote": quote.id},
    ]
    document["workloads"][0]["gpu"] = quote.gpu.slug
    document.pop("baseline", None)
    scenario = create_scenario(client, document=document)
    url = f"/api/v1/scenarios/{scenario['id']}/runs/"
    first = post_json(client, url, {}).json()
    assert first["status"] == "succeeded", first["error"]
    old_fee = first["result"]["inputs"]["options"][1]["usd_per_server_month"]
    quote.usd_per_server_month = quote.usd_per_server_month * 2
    quote.save()
    copied = post_json(client, url, {}).json()
    assert copied["result"]["inputs"]["options"][1]["usd_per_server_month"] == old_fee
    repriced = post_json(client, url, {"reprice": True}).json()
    assert repriced["result"]["inputs"]["options"][1]["usd_per_server_month"] == 2 * old_fee


def test_runs_list_newest_first_filtered_by_scenario_and_paginated(
    client, alice, catalog, tasks_in_process
):
    one = create_scenario(client, document=scenario_document(paths=0))
    two = create_scenario(client, document=scenario_document(paths=0))
    ids = [
        post_json(client, f"/api/v1/scenarios/{s['id']}/runs/", {}).json()["id"]
        for s in (one, two, one)
    ]
    body = client.get(f"/api/v1/runs/?scenario={one['id']}").json()
    assert body["count"] == 2 and [r["id"] for r in body["results"]] == [ids[2], ids[0]]
    page = client.get("/api/v1/runs/?page_size=1&page=2").json()
    assert page["count"] == 3 and [r["id"] for r in page["results"]] == [ids[1]]
    assert page["next"] and page["previous"]


def test_monthly_csv_has_the_named_columns_and_one_row_per_option_and_month(
    client, alice, catalog, tasks_in_process
):
    scenario = create_scenario(client, document=scenario_document(paths=0))
    run = post_json(client, f"/api/v1/scenarios/{scenario['id']}/runs/", {}).json()
    response = client.get(f"/api/v1/runs/{run['id']}/monthly.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert response.content.decode().splitlines()[0] == (  # the contract's, then format 1.2's
        "option,month,compute,egress,support,setup,upfront,capex,financing,power,colo,staff,"
        "residual,bridge,burst,total_usd,cumulative_usd,all_in_usd_per_million_tokens"
    )
    result = run["result"]
    months = result["inputs"]["horizon_months"] + 1
    assert len(rows) == 1 + len(result["options"]) * months
    by_option = {}
    for row in rows[1:]:
        by_option.setdefault(row[0], []).append(row)
    for option in result["options"]:
        lines = by_option[option["name"]]
        assert [int(r[1]) for r in lines] == list(range(months))
        assert [float(r[15]) for r in lines] == option["monthly_usd"]
        assert [float(r[16]) for r in lines] == option["cumulative_usd"]
        for category_index, name in enumerate(result["options"][0]["breakdown_usd"]):
            column = [float(r[2 + category_index]) for r in lines]
            assert sum(column) == pytest.approx(option["breakdown_usd"][name], rel=1e-12, abs=1e-6)
        for r in lines:
            assert sum(float(v) for v in r[2:15]) == pytest.approx(float(r[15]), rel=1e-9, abs=1e-6)
    # the same file asked for as text/csv
    accept = client.get(f"/api/v1/runs/{run['id']}/monthly.csv", HTTP_ACCEPT="text/csv")
    assert accept.status_code == 200 and accept.content == response.content


def test_cancel_ends_a_queued_run_and_refuses_an_ended_one(client, alice, catalog):
    scenario = ScenarioFactory(owner=alice, document=scenario_document(paths=0))
    run = SimulationRun.objects.create(scenario=scenario, document_sha256="x")
    response = client.post(f"/api/v1/runs/{run.id}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    run.refresh_from_db()
    assert run.status == "cancelled" and run.finished is not None
    again = client.post(f"/api/v1/runs/{run.id}/cancel/")
    assert again.status_code == 409
    assert again.json() == {
        "errors": [{"field": None, "message": "The run has already ended (cancelled)."}]
    }
    # a cancelled run's tasks do nothing
    pipeline.run_execute(run_id=run.id)
    run.refresh_from_db()
    assert run.status == "cancelled" and run.attempts == 0


def test_an_invalid_document_answers_400_with_document_paths_and_stores_nothing(
    client, alice, catalog
):
    document = scenario_document()
    document["options"][1]["pue"] = 0.5
    document["horizon_months"] = 0
    response = post_json(client, "/api/v1/scenarios/", {"name": "bad", "document": document})
    assert response.status_code == 400
    fields = [e["field"] for e in response.json()["errors"]]
    assert "document.horizon_months" in fields
    assert all(f.startswith("document.") for f in fields), fields
    assert Scenario.objects.count() == 0
    # strict JSON: a duplicate key, NaN
    text = '{"name": "x", "document": {"name": "a", "name": "b", "horizon_months": NaN}}'
    response = post_json(client, "/api/v1/scenarios/", text)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "document", "message": 'duplicate key "name"'},
        {"field": "document.horizon_months", "message": "must be a finite number, not NaN"},
    ]
    assert Scenario.objects.count() == 0


def test_an_invalid_patch_changes_nothing(client, alice, catalog):
    scenario = create_scenario(client, document=scenario_document(paths=0))
    response = client.patch(
        f"/api/v1/scenarios/{scenario['id']}/",
        data=json.dumps({"name": "renamed", "document": {"name": "x"}}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} >= {
        "document.workloads",
        "document.options",
    }
    assert Scenario.objects.get().name == "fleet"


def test_the_run_body_is_checked(client, alice, catalog):
    scenario = create_scenario(client, document=scenario_document(paths=0))
    url = f"/api/v1/scenarios/{scenario['id']}/runs/"
    response = post_json(client, url, {"paths": 100_001, "seed": -1, "path": 5})
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"paths", "seed"} or fields == {"path"}
    response = post_json(client, url, {"paths": 100_001, "seed": -1})
    assert {e["field"] for e in response.json()["errors"]} == {"paths", "seed"}
    assert SimulationRun.objects.count() == 0


def test_an_unreachable_broker_answers_503_and_stores_nothing(client, alice, catalog):
    scenario = create_scenario(client, document=scenario_document(paths=0))
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        response = post_json(client, f"/api/v1/scenarios/{scenario['id']}/runs/", {})
        assert response.status_code == 503
        assert response.json()["errors"][0]["field"] is None
        assert "does not answer" in response.json()["errors"][0]["message"]
        assert SimulationRun.objects.count() == 0
        # browsing keeps working
        assert client.get("/api/v1/scenarios/").status_code == 200
        assert client.get("/api/v1/runs/").status_code == 200


def test_an_engine_failure_ends_the_run_failed_with_the_message(
    client, alice, catalog, tasks_in_process
):
    scenario = create_scenario(client, document=scenario_document(paths=1_000))
    run = post_json(client, f"/api/v1/scenarios/{scenario['id']}/runs/", {}).json()
    stored = SimulationRun.objects.get(id=run["id"])
    # a run whose frozen inputs the engine cannot price (a GPU the figures do not hold)
    broken = SimulationRun.objects.create(
        scenario=stored.scenario,
        document_sha256=stored.document_sha256,
        inputs=stored.inputs,
        gpus={},
        units=[["montecarlo", 0, [0]]],
    )
    pipeline.run_execute(run_id=broken.id)
    response = client.get(f"/api/v1/runs/{broken.id}/")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "failed" and "h100-sxm" in body["error"] and body["result"] is None


# --- privacy ------------------------------------------------------------------------------------


def test_another_users_private_scenario_and_its_runs_answer_404_everywhere(
    client, alice, catalog, tasks_in_process
):
    scenario = create_scenario(client, document=scenario_document(paths=0))
    run = post_json(client, f"/api/v1/scenarios/{scenario['id']}/runs/", {}).json()
    client.force_login(analyst("bob"))
    for method, url in [
        ("get", f"/api/v1/scenarios/{scenario['id']}/"),
        ("put", f"/api/v1/scenarios/{scenario['id']}/"),
        ("patch", f"/api/v1/scenarios/{scenario['id']}/"),
        ("delete", f"/api/v1/scenarios/{scenario['id']}/"),
        ("post", f"/api/v1/scenarios/{scenario['id']}/runs/"),
        ("get", f"/api/v1/runs/{run['id']}/"),
        ("post", f"/api/v1/runs/{run['id']}/cancel/"),
        ("get", f"/api/v1/runs/{run['id']}/monthly.csv"),
    ]:
        if method == "get":
            response = client.get(url)
        else:
            response = getattr(client, method)(url, data="{}", content_type="application/json")
        assert response.status_code == 404, (method, url, response.status_code)
        assert response.json()["errors"][0]["field"] is None
    assert client.get("/api/v1/scenarios/").json()["count"] == 0
    assert client.get(f"/api/v1/runs/?scenario={scenario['id']}").json()["count"] == 0
    assert Scenario.objects.get().name == "fleet"


@pytest.mark.parametrize("role", [VIEWER, ANALYST, ADMIN])
def test_a_shared_scenario_is_readable_by_every_role_and_writable_by_its_owner_only(
    client, alice, catalog, tasks_in_process, role
):
    scenario = create_scenario(client, document=scenario_document(paths=0), shared=True)
    run = post_json(client, f"/api/v1/scenarios/{scenario['id']}/runs/", {}).json()
    private = create_scenario(client, document=scenario_document(paths=0))
    client.force_login(UserFactory(username="bob", roles=[role]))
    assert client.get(f"/api/v1/scenarios/{scenario['id']}/").json()["owner"] == "alice"
    assert client.get(f"/api/v1/runs/{run['id']}/").json()["status"] == "succeeded"
    assert client.get(f"/api/v1/runs/{run['id']}/monthly.csv").status_code == 200
    # another user's private scenario is not found, whatever the role (admins included)
    assert client.get(f"/api/v1/scenarios/{private['id']}/").status_code == 404
    for method, url in [
        ("patch", f"/api/v1/scenarios/{scenario['id']}/"),
        ("delete", f"/api/v1/scenarios/{scenario['id']}/"),
        ("post", f"/api/v1/scenarios/{scenario['id']}/runs/"),
        ("post", f"/api/v1/runs/{run['id']}/cancel/"),
    ]:
        response = getattr(client, method)(
            url, data='{"name": "mine"}', content_type="application/json"
        )
        assert response.status_code == 403, (method, url, response.status_code)
    assert Scenario.objects.get(pk=scenario["id"]).name == "fleet"
    assert SimulationRun.objects.count() == 1


def test_a_viewer_reads_scenarios_and_runs_but_writes_none(client, db):
    viewer = UserFactory(username="vera", roles=[VIEWER])
    client.force_login(viewer)
    assert client.get("/api/v1/scenarios/").json()["results"] == []
    assert client.get("/api/v1/runs/").json()["results"] == []
    created = post_json(client, "/api/v1/scenarios/", {"name": "x", "document": {}})
    assert created.status_code == 403
    assert post_json(client, "/api/v1/simulate/", {}).status_code == 403
    client.logout()
    assert client.get("/api/v1/runs/").status_code == 401
