"""Request bodies read as strictly as scenario documents (docs: scenario-format.md, "Validation"):
duplicate keys, ``NaN``, infinities and numbers too large for a float are errors naming their
path, not values silently kept or changed."""

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings

from costapp.tco import FieldError, ScenarioError, loads


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
        text = stream.read() if stream is not None else b""
        try:
            return loads(text)
        except ScenarioError as exc:
            raise ValidationError(scenario_error_detail(exc.errors, prefix=self.prefix)) from None


class DocumentJSONParser(StrictJSONParser):
    """A body that is a scenario document: error paths start with ``document``."""

    prefix = "document"
