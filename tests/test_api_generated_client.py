"""A client generated from the live OpenAPI schema works: openapi-python-client, installed from
the package registry into a scratch tool environment (``uv tool run``), builds a package from the
live server's ``/api/schema/``, and that package, imported as it is, signs in for a token, saves a
scenario, runs it on a real Celery worker, reads the run's result as typed models, prices a
document at once through ``simulate/``, and gets the API's errors as the typed error envelope,
never as an exception.

Marked ``services`` (a live server, a worker, Redis) and ``registry`` (the generator comes from
the registry): it runs with ``GPU_TCO_SERVICES=1``, as in CI, and fails there, loudly, when the
registry cannot be reached."""

import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from accounts.roles import ANALYST
from tests.costapp.runs_helpers import scenario_document
from tests.factories import UserFactory

pytestmark = [pytest.mark.services, pytest.mark.registry]

GENERATOR = "openapi-python-client==0.29.1"
PACKAGE = "gpu_tco_client"
SCENARIOS = Path(__file__).resolve().parent / "tco" / "scenarios"
RUN_SECONDS = 60


@pytest.fixture(scope="module")
def generated(live_server, tmp_path_factory):
    """The client package generated from the live server's schema, imported."""
    uv = os.environ.get("UV") or shutil.which("uv")
    if not uv:
        pytest.fail("this test needs uv on PATH to install the client generator")
    root = tmp_path_factory.mktemp("generated")
    config = root / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run over the generated code
    command = [
        *(uv, "tool", "run", "--isolated", "--from", GENERATOR, "openapi-python-client"),
        *("generate", "--url", f"{live_server.url}/api/schema/", "--meta", "none"),
        *("--output-path", str(root / PACKAGE), "--config", str(config), "--fail-on-warning"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.fail(
            f"generating the client failed (is the package registry reachable?): exit"
            f" {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    sys.path.insert(0, str(root))
    try:

        def load(name: str):
            return importlib.import_module(f"{PACKAGE}.{name}")

        package = importlib.import_module(PACKAGE)
        yield SimpleNamespace(
            Client=package.Client,
            AuthenticatedClient=package.AuthenticatedClient,
            api=SimpleNamespace(
                **{
                    name: load(f"api.v1.v1_{name}")
                    for name in (
                        "auth_tokens_create",
                        "scenarios_create",
                        "scenarios_runs_create",
                        "runs_retrieve",
                        "simulate_create",
                    )
                }
            ),
            models=load("models"),
        )
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


@pytest.fixture
def connect(generated, live_server):
    """``connect(token=None)``: a generated client of the live server (with the token, an
    authenticated one), raising on any status the schema does not list; all closed at the end,
    so no server thread keeps its database connection past the test."""
    made = []

    def connect(token: str | None = None):
        options = {"base_url": live_server.url, "raise_on_unexpected_status": True, "timeout": 30.0}
        if token is None:
            made.append(generated.Client(**options))
        else:
            made.append(generated.AuthenticatedClient(token=token, prefix="Token", **options))
        return made[-1]

    yield connect
    for client in made:
        client.get_httpx_client().close()


def test_a_generated_client_runs_a_scenario_and_reads_typed_results_and_errors(
    generated, connect, catalog, celery_worker_process
):
    api, models = generated.api, generated.models
    UserFactory(username="client", roles=[ANALYST])
    anonymous = connect()

    # a token, from username and password
    answer = api.auth_tokens_create.sync_detailed(
        client=anonymous,
        body=models.TokenCreateRequest(username="client", password="pw-client"),
    )
    assert answer.status_code == 201, answer.content
    assert isinstance(answer.parsed, models.NewToken)
    client = connect(answer.parsed.key)

    # a scenario saved, then run on the worker
    document = scenario_document("uncertain-h100-fleet", paths=2_000, seed=7)
    saved = api.scenarios_create.sync_detailed(
        client=client,
        body=models.ScenarioRequest(
            name="fleet", document=models.ScenarioDocument.from_dict(document)
        ),
    )
    assert saved.status_code == 201, saved.content
    scenario = saved.parsed
    assert isinstance(scenario, models.Scenario)
    assert isinstance(scenario.document, models.ScenarioDocument)
    assert scenario.document.to_dict() == document
    started = api.scenarios_runs_create.sync_detailed(
        id=scenario.id, client=client, body=models.RunCreateRequest()
    )
    assert started.status_code == 202, started.content
    run = started.parsed
    assert isinstance(run, models.Run) and run.result is None
    deadline = time.monotonic() + RUN_SECONDS
    while True:
        read = api.runs_retrieve.sync_detailed(id=run.id, client=client)
        assert read.status_code == 200, read.content
        run = read.parsed
        if run.status.value not in ("queued", "running") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert run.status.value == "succeeded", (run.status, run.error)

    # the result, typed: every field of every option named by the schema
    result = run.result
    assert isinstance(result, models.ResultDocument)
    assert isinstance(result.inputs, models.ScenarioDocument)
    assert result.inputs.simulation.paths == 2_000
    assert [option.name for option in result.options] == [o["name"] for o in document["options"]]
    for option in result.options:
        assert isinstance(option, models.ResultDocumentOptionsItem)
        assert option.additional_properties == {}, option.additional_keys
        assert isinstance(option.total_usd, float) and option.total_usd > 0
        assert isinstance(option.breakdown_usd.compute, float)
        assert isinstance(option.p90_usd, float) and option.p10_usd <= option.p90_usd
        assert isinstance(option.feasible, bool)
        assert len(option.monthly_usd) == document["horizon_months"] + 1
    assert result.cheapest in {option.name for option in result.options}
    raw = json.loads(read.content)["result"]
    assert result.to_dict() == raw  # the models keep every figure as the server sent it

    # the same document priced at once (simulate/ takes at most 1 000 paths)
    small = scenario_document("uncertain-h100-fleet", paths=500, seed=7)
    priced = api.simulate_create.sync_detailed(
        client=client, body=models.ScenarioDocument.from_dict(small)
    )
    assert priced.status_code == 200, priced.content
    assert isinstance(priced.parsed, models.ResultDocument)
    assert isinstance(priced.parsed.options[0].total_usd, float)
    assert priced.parsed.options[0].total_usd == result.options[0].total_usd  # the same months

    # format 1.3: a scenario with a mix saved and priced, its layers and joint sizing typed
    mix_document = json.loads((SCENARIOS / "own-commit-rent-mix.json").read_text())
    saved_mix = api.scenarios_create.sync_detailed(
        client=client,
        body=models.ScenarioRequest(
            name="own, commit, rent", document=models.ScenarioDocument.from_dict(mix_document)
        ),
    )
    assert saved_mix.status_code == 201, saved_mix.content
    assert saved_mix.parsed.document.to_dict() == mix_document
    priced_mix = api.simulate_create.sync_detailed(
        client=client, body=models.ScenarioDocument.from_dict(mix_document)
    )
    assert priced_mix.status_code == 200, priced_mix.content
    the_mix = priced_mix.parsed.options[3]
    assert the_mix.type_.value == "mix"
    assert [layer.role.value for layer in the_mix.layers] == ["layer", "layer", "rest"]
    assert all(isinstance(layer.served_gpu_hours, float) for layer in the_mix.layers)
    assert the_mix.layers[2].provisioned_gpus is None
    assert the_mix.additional_properties == {}
    [joint] = priced_mix.parsed.sizing
    assert joint.field.value == "layers" and joint.best == [1, 0]
    assert priced_mix.parsed.to_dict() == json.loads(priced_mix.content)

    # a bad document: a 400 parsed into the error envelope, not raised
    small["options"][4]["pue"] = 0.5
    small["surprise"] = 1
    refused = api.simulate_create.sync_detailed(
        client=client, body=models.ScenarioDocument.from_dict(small)
    )
    assert refused.status_code == 400
    assert isinstance(refused.parsed, models.Errors)
    fields = [error.field for error in refused.parsed.errors]
    assert {"document.options[4].pue", "document.surprise"} <= set(fields)
    assert all(f.startswith("document.") for f in fields)
    assert all(isinstance(error.message, str) and error.message for error in refused.parsed.errors)
    not_saved = api.scenarios_create.sync_detailed(
        client=client,
        body=models.ScenarioRequest(name="bad", document=models.ScenarioDocument.from_dict(small)),
    )
    assert not_saved.status_code == 400 and isinstance(not_saved.parsed, models.Errors)

    # without the token: 401, in the envelope too
    denied = api.runs_retrieve.sync_detailed(id=run.id, client=anonymous)
    assert denied.status_code == 401 and isinstance(denied.parsed, models.Errors)
