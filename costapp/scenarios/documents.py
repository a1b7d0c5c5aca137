"""The scenario document's two states on the cost side, named (docs/scenario-format.md).

``costapp.tco.normalize`` turns the first into the second; the engine's own types stay the
engine's (``costapp/tco/``), these are what the Django side passes around.
"""

from typing import Any, TypeAlias

ScenarioDocument: TypeAlias = Any
"""A scenario document as written: parsed JSON from a file, a request or a saved scenario, not
yet checked (so any JSON value; validation names what is wrong with it), catalog references
(``offer``, ``quote``, ``egress_provider``) still references."""

NormalizedDocument: TypeAlias = dict[str, Any]
"""A scenario document after ``normalize``: checked, every default filled in, every catalog
reference resolved to the numbers found (a run's frozen ``inputs``, a result's ``inputs``)."""
