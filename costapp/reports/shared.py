"""A result as a read-only link (``/shared/<key>/``) shows it to people without an account: the
same figures, with every quote's vendor and reference said as "a quote" (in the sources, the
warnings and the assumptions) and no link into the catalog. Pure: a result in, a copy out."""

import copy
import re
from typing import Any

A_QUOTE = "a quote"

_QUOTE_SOURCE = re.compile(r"(?:dedicated-server|purchase) quote .+? from .+? \(quote \d+\)")
"""A quote as ``costapp.scenarios.sources`` names it in a source:
``dedicated-server quote REF from VENDOR (quote N)``."""

_QUOTE_WARNING = re.compile(r"uses (?:dedicated-server|purchase) quote .+? from .+?, which")
"""A quote as the catalog's warnings name it: ``uses purchase quote REF from VENDOR, which``."""


def quote_text_hidden(text: str) -> str:
    """``text`` with each quote's reference and vendor said as "a quote"."""
    text = _QUOTE_SOURCE.sub(A_QUOTE, text)
    return _QUOTE_WARNING.sub(f"uses {A_QUOTE}, which", text)


def shared_result(result: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``result`` for a read-only link: quotes named "a quote" in ``sources`` and
    ``warnings``, and each option's quote id in ``inputs`` replaced by "a quote"."""
    out = copy.deepcopy(result)
    for row in out.get("sources") or []:
        if isinstance(row.get("source"), str):
            row["source"] = quote_text_hidden(row["source"])
    out["warnings"] = [
        quote_text_hidden(w) if isinstance(w, str) else w for w in out.get("warnings") or []
    ]
    for option in (out.get("inputs") or {}).get("options") or []:
        if isinstance(option, dict) and "quote" in option:
            option["quote"] = A_QUOTE
    return out
