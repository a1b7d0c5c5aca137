"""Errors of the engine: a scenario document is rejected with every problem found in it.

Each problem is a :class:`FieldError` (a field path such as ``options[2].usd_per_gpu_hour`` and a
plain sentence); :class:`ScenarioError` carries all of them at once, so the command line can print
one ``path: message`` line per problem and the API can answer
``{"errors": [{"field": path, "message": text}, ...]}`` (docs: scenario-format.md, "Validation").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Control and format characters, lone surrogates, unassigned code points, line separators."""


HIDDEN_CHARACTERS = frozenset(
    "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2066\u2067\u2068\u2069\ufeff"
)
"""Characters that turn or hide text without showing themselves: the bidirectional marks,
embeddings, overrides and isolates, and the zero-width ones. A name holding one reads otherwise
than it is, so names refuse them."""


def hidden_characters(text: str) -> str:
    """The ``HIDDEN_CHARACTERS`` in ``text`` as a message's words ("U+202E, U+200B"), or ``""``
    when it has none."""
    found = sorted({char for char in text if char in HIDDEN_CHARACTERS})
    return ", ".join(f"U+{ord(char):04X}" for char in found)


def hidden_characters_error(text: str) -> str:
    """The message refusing a name that holds ``HIDDEN_CHARACTERS``, or ``""``."""
    found = hidden_characters(text)
    if not found:
        return ""
    return f"must not contain direction overrides or invisible characters ({found})"


def escape_text(text: str) -> str:
    r"""``text`` on one line: every control or format character, line or paragraph separator and
    lone surrogate written as an escape (a newline becomes ``\x0a``, U+2028 ``\u2028``).

    Printable text comes back unchanged, so escaping twice changes nothing.
    """
    if text.isprintable():
        return text
    out: list[str] = []
    for char in text:
        if char == " " or unicodedata.category(char) not in _ESCAPED_CATEGORIES:
            out.append(char)
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return "".join(out)


def join_path(path: str | None, key: str) -> str:
    """The path of field ``key`` inside ``path``: ``options[2]`` + ``gpu`` -> ``options[2].gpu``."""
    return key if path is None else f"{path}.{key}"


def item_path(path: str, index: int) -> str:
    """The path of item ``index`` of the list at ``path``: ``options[2]``."""
    return f"{path}[{index}]"


@dataclass(frozen=True)
class FieldError:
    """One problem in a scenario document.

    ``field`` is the path of the value at fault (``options[2].usd_per_gpu_hour``,
    ``workloads[0].gpu``, ``horizon_months``), or ``None`` for a problem with the whole document
    (invalid JSON, too large); ``message`` is a plain sentence such as ``"must be > 0"``.
    """

    field: str | None
    message: str

    def __post_init__(self) -> None:
        """Keys and values quoted from a document are escaped: a problem is always one line."""
        if self.field is not None:
            object.__setattr__(self, "field", escape_text(self.field))
        object.__setattr__(self, "message", escape_text(self.message))

    def __str__(self) -> str:
        """``path: message``, or the message alone for a whole-document problem."""
        return self.message if self.field is None else f"{self.field}: {self.message}"

    def as_dict(self) -> dict[str, str | None]:
        """The API form: ``{"field": path or None, "message": text}``."""
        return {"field": self.field, "message": self.message}


class ScenarioError(ValueError):
    """A scenario document was rejected: ``errors`` lists every problem found, in document order."""

    def __init__(self, errors: Iterable[FieldError]) -> None:
        """Keep the problems; ``str()`` gives one ``path: message`` line per problem."""
        self.errors: list[FieldError] = list(errors)
        super().__init__("\n".join(str(error) for error in self.errors))

    def __reduce__(self) -> tuple[type[ScenarioError], tuple[list[FieldError]]]:
        """Pickle by the list of problems (task queues pickle exceptions)."""
        return (type(self), (self.errors,))

    def as_dicts(self) -> list[dict[str, str | None]]:
        """The API body's ``errors`` list."""
        return [error.as_dict() for error in self.errors]
