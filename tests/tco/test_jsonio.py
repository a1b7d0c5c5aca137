"""Strict JSON for scenario documents: what Python's json module lets through, loads refuses."""

from __future__ import annotations

import json
import pickle

import pytest

from costapp.tco.errors import FieldError, ScenarioError
from costapp.tco.jsonio import MAX_DOCUMENT_BYTES, loads


def problems(text: str | bytes) -> list[tuple[str | None, str]]:
    with pytest.raises(ScenarioError) as caught:
        loads(text)
    return [(error.field, error.message) for error in caught.value.errors]


def test_a_valid_document_parses_into_plain_dicts_and_lists():
    document = loads('{"name": "x", "options": [{"a": 1, "b": 2.5, "c": null, "d": true}]}')
    assert document == {"name": "x", "options": [{"a": 1, "b": 2.5, "c": None, "d": True}]}
    assert type(document) is dict and type(document["options"][0]) is dict


def test_bytes_are_read_as_utf8_with_or_without_a_byte_order_mark():
    assert loads('{"name": "café"}'.encode()) == {"name": "café"}
    assert loads(b"\xef\xbb\xbf" + b'{"a": 1}') == {"a": 1}


def test_bytes_that_are_not_utf8_are_rejected():
    [(field, message)] = problems(b'{"name": "\xff"}')
    assert field is None and "UTF-8" in message


def test_invalid_json_is_one_whole_document_error_with_line_and_column():
    [(field, message)] = problems('{\n  "name": "x",\n  "horizon_months": \n}')
    assert field is None
    assert message.startswith("not valid JSON") and "line 4, column 1" in message


def test_a_duplicate_key_at_the_top_level_names_the_key():
    assert problems('{"name": "a", "name": "b"}') == [(None, 'duplicate key "name"')]


def test_a_duplicate_key_in_a_nested_object_gives_the_path_of_that_object():
    text = '{"options": [{"type": "cloud"}, {"usd_per_gpu_hour": 1, "usd_per_gpu_hour": 2}]}'
    assert problems(text) == [("options[1]", 'duplicate key "usd_per_gpu_hour"')]


def test_a_key_repeated_three_times_is_reported_once():
    assert problems('{"a": {"x": 1, "x": 2, "x": 3}}') == [("a", 'duplicate key "x"')]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinities_are_rejected_at_their_path(constant):
    text = '{"options": [{"type": "cloud", "usd_per_gpu_hour": ' + constant + "}]}"
    [(field, message)] = problems(text)
    assert field == "options[0].usd_per_gpu_hour"
    assert message == f"must be a finite number, not {constant}"


def test_a_number_too_large_for_a_float_is_rejected_as_not_finite():
    assert problems('{"discount_rate": 1e999}') == [
        ("discount_rate", "must be a finite number, not 1e999")
    ]


def test_an_integer_with_too_many_digits_is_invalid_json_not_a_crash():
    [(field, message)] = problems('{"seed": ' + "9" * 5000 + "}")
    assert field is None and "too many digits" in message


def test_deep_nesting_is_rejected_not_a_crash():
    [(field, message)] = problems("[" * 100_000 + "]" * 100_000)
    assert field is None and message.startswith("not valid JSON")


def test_every_problem_of_the_text_is_reported_at_once():
    text = '{"a": NaN, "a": 1, "b": [{"c": Infinity}]}'
    assert set(problems(text)) == {
        (None, 'duplicate key "a"'),
        ("b[0].c", "must be a finite number, not Infinity"),
    }


def test_a_document_over_one_million_bytes_is_rejected():
    text = json.dumps({"name": "x" * MAX_DOCUMENT_BYTES})
    [(field, message)] = problems(text)
    assert field is None and "1 000 000 bytes" in message
    [(field, _)] = problems(text.encode())
    assert field is None


def test_the_size_limit_counts_utf8_bytes_not_characters():
    text = json.dumps({"name": "é" * (MAX_DOCUMENT_BYTES // 2)}, ensure_ascii=False)
    assert len(text) < MAX_DOCUMENT_BYTES < len(text.encode())
    assert problems(text)[0][0] is None


def test_a_document_of_exactly_one_million_bytes_is_accepted():
    padding = MAX_DOCUMENT_BYTES - len(json.dumps({"name": ""}))
    text = json.dumps({"name": "x" * padding})
    assert len(text.encode()) == MAX_DOCUMENT_BYTES
    assert loads(text)["name"] == "x" * padding


def test_a_scenario_error_prints_one_path_and_message_per_line():
    error = ScenarioError([FieldError("a[0].b", "must be > 0"), FieldError(None, "too large")])
    assert str(error) == "a[0].b: must be > 0\ntoo large"
    assert isinstance(error, ValueError)
    assert error.as_dicts() == [
        {"field": "a[0].b", "message": "must be > 0"},
        {"field": None, "message": "too large"},
    ]


def test_a_scenario_error_survives_pickling_with_its_errors():
    error = ScenarioError([FieldError("horizon_months", "must be a whole number")])
    copy = pickle.loads(pickle.dumps(error))
    assert copy.errors == error.errors and str(copy) == str(error)
