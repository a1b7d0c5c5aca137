"""``POST /api/v1/simulate/``: a small document priced at once; any invalid document answers 400
with ``document.``-prefixed paths, never 500."""

import copy
import json
import math

import pytest

from costapp.scenarios import services

from ..runs_helpers import analyst, post_json, scenario_document

URL = "/api/v1/simulate/"


@pytest.fixture
def analyst_client(db, client):
    client.force_login(analyst("ann"))
    return client


def test_a_small_document_is_priced_at_once_as_simulate_prices_it(analyst_client, catalog):
    document = scenario_document(paths=1_000, seed=4)
    response = post_json(analyst_client, URL, document)
    assert response.status_code == 200, response.content
    expected = services.scenario_simulate(document=document)
    assert json.dumps(response.json()) == json.dumps(expected)


def test_more_than_1000_paths_is_refused_with_its_field(analyst_client, catalog):
    response = post_json(analyst_client, URL, scenario_document(paths=1_001))
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "document.simulation.paths"
    assert "1,000" in error["message"]


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ("", ["document.name", "document.workloads", "document.options"]),
        ("[1, 2]", ["document"]),
        ("{", ["document"]),
        ('{"name": "a", "name": "b"}', ["document"]),
        ('{"name": "x", "horizon_months": NaN}', ["document.horizon_months"]),
        ('{"name": "x", "horizon_months": 1e999}', ["document.horizon_months"]),
        ('{"name": "x", "options": [{"pue": -Infinity}]}', ["document.options[0].pue"]),
        ("[" * 100_000 + "]" * 100_000, ["document"]),
        (b"\xff\xfe", ["document"]),
    ],
)
def test_malformed_json_answers_400_naming_the_document(analyst_client, catalog, body, fields):
    response = post_json(analyst_client, URL, body)
    assert response.status_code == 400, response.content[:300]
    assert [e["field"] for e in response.json()["errors"]] == fields


def test_an_invalid_document_answers_400_with_every_problem(analyst_client, catalog):
    document = scenario_document(paths=5_000)
    document["options"][1]["pue"] = 0.5
    document["workloads"][0]["gpu"] = "no-such-gpu"
    document["surprise"] = 1
    response = post_json(analyst_client, URL, document)
    assert response.status_code == 400
    fields = [e["field"] for e in response.json()["errors"]]
    assert "document.workloads[0].gpu" in fields and "document.surprise" in fields
    assert fields[-1] == "document.simulation.paths"
    assert all(f.startswith("document.") for f in fields)


def _numbers(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, (*path, index))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path


def _strings(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))
    elif isinstance(value, str):
        yield path


def _replaced(document, path, value):
    changed = copy.deepcopy(document)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


def _finite(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


HOSTILE_NUMBERS = (1e308, -1e308, 5e-324, 1e-310, 10**400, 0, -1)
HOSTILE_TEXT = ("line\nbreak: forged", "nul\x00", "\u2028sep", "\ud800")


def test_hostile_values_never_answer_500(analyst_client, catalog):
    base = scenario_document(paths=50, seed=1)
    cases = [
        _replaced(base, path, value) for path in _numbers(base) for value in HOSTILE_NUMBERS
    ] + [_replaced(base, path, text) for path in _strings(base) for text in HOSTILE_TEXT]
    statuses = set()
    for document in cases:
        body = json.dumps(document)  # lone surrogates travel as \\ud800 escapes
        response = post_json(analyst_client, URL, body)
        statuses.add(response.status_code)
        assert response.status_code in (200, 400), (response.status_code, body[:300])
        data = response.json()
        if response.status_code == 400:
            assert data["errors"], body[:300]
            for error in data["errors"]:
                assert error["field"] == "document" or error["field"].startswith("document.")
        else:
            assert _finite(data), body[:300]
    assert statuses == {200, 400}
