"""Request bodies read as strictly as scenario documents (docs: scenario-format.md, "Validation"):
duplicate keys, ``NaN``, infinities and numbers too large for a float are errors naming their
path, not values silently kept or changed. Every body of the API is read so (the
``DEFAULT_PARSER_CLASSES`` setting): JSON only, at most ``MAX_BODY_BYTES`` (413 past it), nested
at most ``MAX_DEPTH`` deep, and no text holding NUL or a lone surrogate (400 naming its path)."""

from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings

from costapp.tco import MAX_DOCUMENT_BYTES, FieldError, ScenarioError, loads

MAX_BODY_BYTES = MAX_DOCUMENT_BYTES
"""The largest JSON body read, in bytes (a scenario document's limit)."""

MAX_DEPTH = 32
"""The deepest nesting of arrays and objects read (a scenario document needs 5)."""


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = f"The body is over {MAX_BODY_BYTES} bytes."
    default_code = "body_too_large"


def _item(path: str | None, key: Any) -> str:
    if isinstance(key, int):
        return f"{path or ''}[{key}]"
    return f"{path}.{key}" if path else str(key)


def text_problem(text: str) -> str | None:
    """Why ``text`` is refused (a NUL, a lone surrogate), or ``None``."""
    if "\x00" in text:
        return "holds a NUL character (U+0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone surrogate (U+{ord(text[exc.start]):04X}) at character {exc.start}"
    return None


def body_problems(value: Any) -> list[FieldError]:
    """NUL and lone surrogates in the keys and strings of a parsed body, and nesting deeper than
    ``MAX_DEPTH``, each with its path (walked without recursion)."""
    errors: list[FieldError] = []
    stack: list[tuple[Any, str | None, int]] = [(value, None, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                errors.append(FieldError(path, f"the text {problem}"))
            continue
        if isinstance(item, dict | list) and depth >= MAX_DEPTH:
            errors.append(FieldError(path, f"nested deeper than {MAX_DEPTH} levels"))
            continue
        if isinstance(item, dict):
            for key, child in reversed(item.items()):
                problem = text_problem(key)
                if problem is not None:
                    errors.append(FieldError(path, f"the key {key!r} {problem}"))
                    continue
                stack.append((child, _item(path, key), depth + 1))
        elif isinstance(item, list):
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], _item(path, index), depth + 1))
    return errors


def scenario_error_detail(
    errors: list[FieldError], *, prefix: str | None = None
) -> dict[str, list[str]]:
    """A ``ScenarioError``'s problems as a DRF error detail, each path under ``prefix``
    (``document`` gives ``document.options[1].pue``; a whole-document problem is ``document``)."""
    detail: dict[str, list[str]] = {}
    for error in errors:
        path = error.field
        if prefix is not None:
            if path is None:
                path = prefix
            else:
                path = f"{prefix}{'' if path.startswith('[') else '.'}{path}"
        detail.setdefault(path or api_settings.NON_FIELD_ERRORS_KEY, []).append(error.message)
    return detail


class StrictJSONParser(JSONParser):
    """JSON bodies through the engine's strict reader; problems answer 400 with their paths."""

    prefix: str | None = None
    """Where the body sits in the error paths (``document`` when the body is a document)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        text = stream.read(MAX_BODY_BYTES + 1) if stream is not None else b""
        if len(text) > MAX_BODY_BYTES:
            raise BodyTooLarge()
        try:
            body = loads(text)
        except ScenarioError as exc:
            raise ValidationError(scenario_error_detail(exc.errors, prefix=self.prefix)) from None
        problems = body_problems(body)
        if problems:
            raise ValidationError(scenario_error_detail(problems, prefix=self.prefix))
        return body


class DocumentJSONParser(StrictJSONParser):
    """A body that is a scenario document: error paths start with ``document``."""

    prefix = "document"
