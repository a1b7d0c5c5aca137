"""Strict JSON for scenario documents (docs: scenario-format.md, "Validation").

Python's ``json`` module accepts what the contract rejects: it keeps the last of duplicate keys,
reads ``NaN``, ``Infinity`` and ``-Infinity``, and turns ``1e999`` into an infinity. :func:`loads`
rejects all of these, naming the path of the value at fault, and refuses documents over
:data:`MAX_DOCUMENT_BYTES`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import FieldError, ScenarioError, item_path, join_path

MAX_DOCUMENT_BYTES = 1_000_000
"""The largest scenario document accepted, in bytes of UTF-8 JSON."""


def document_size_error(size: int) -> FieldError | None:
    """The whole-document problem of a document of ``size`` bytes, or ``None`` within the limit."""
    if size > MAX_DOCUMENT_BYTES:
        return FieldError(None, f"the document is {size} bytes; at most 1 000 000 bytes of JSON")
    return None


class _NonFinite:
    """Stands in for ``NaN``, an infinity or an overflowing number until its path is known."""

    def __init__(self, text: str) -> None:
        self.text = text


class _Object(dict[str, Any]):
    """A JSON object as parsed, remembering the keys that appeared more than once."""

    duplicates: list[str]


def _object_from_pairs(pairs: list[tuple[str, Any]]) -> _Object:
    result = _Object()
    result.duplicates = []
    for key, value in pairs:
        if key in result and key not in result.duplicates:
            result.duplicates.append(key)
        result[key] = value
    return result


def _parse_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _clean(value: Any, path: str | None, errors: list[FieldError]) -> Any:
    """Plain dicts and lists in place of the parser's markers; problems appended to ``errors``."""
    if isinstance(value, _Object):
        for key in value.duplicates:
            errors.append(FieldError(path, f'duplicate key "{key}"'))
        return {key: _clean(item, join_path(path, key), errors) for key, item in value.items()}
    if isinstance(value, list):
        return [
            _clean(item, item_path(path or "", index), errors) for index, item in enumerate(value)
        ]
    if isinstance(value, _NonFinite):
        errors.append(FieldError(path, f"must be a finite number, not {value.text}"))
        return None
    return value


def loads(text: str | bytes) -> Any:
    """Parse a scenario document strictly; raise :class:`ScenarioError` when it is not acceptable.

    Rejected, each as a :class:`FieldError`: text that is not valid JSON (field ``None``; the
    message gives line and column), text over :data:`MAX_DOCUMENT_BYTES` bytes (field ``None``),
    a key repeated in one object (field: the path of that object, ``None`` for the top level; the
    message names the key), and ``NaN``, ``Infinity``, ``-Infinity`` or a number too large for a
    float (field: the path of the value). The shape of the document is not checked here: that is
    :func:`costapp.tco.validation.normalize`'s work.
    """
    if isinstance(text, bytes | bytearray):
        size = len(text)
    else:
        size = len(text.encode("utf-8", "surrogatepass"))
    too_large = document_size_error(size)
    if too_large is not None:
        raise ScenarioError([too_large])
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ScenarioError(
                [FieldError(None, f"the document is not UTF-8 text (byte {exc.start})")]
            ) from None

    def reject_constant(name: str) -> _NonFinite:
        return _NonFinite(name)

    try:
        parsed = json.loads(
            text,
            object_pairs_hook=_object_from_pairs,
            parse_float=_parse_float,
            parse_constant=reject_constant,
        )
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            [
                FieldError(
                    None, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
                )
            ]
        ) from None
    except RecursionError:
        raise ScenarioError([FieldError(None, "not valid JSON: nested too deeply")]) from None
    except ValueError:  # an integer literal with more digits than Python converts
        raise ScenarioError(
            [FieldError(None, "not valid JSON: a number has too many digits")]
        ) from None
    errors: list[FieldError] = []
    try:
        document = _clean(parsed, None, errors)
    except RecursionError:
        raise ScenarioError([FieldError(None, "not valid JSON: nested too deeply")]) from None
    if errors:
        raise ScenarioError(errors)
    return document
