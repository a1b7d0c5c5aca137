"""The inputs of two runs that differ, one row in words per difference: "workload 1,
utilization: 90 % → 30 %", "option 3 “Buy 8×H100”: only in run B".

Workloads and options are compared pair by pair (``costapp.reports.pairing``); a workload or
option only one run has is one row. Names are not differences: the scenario's is in the facts
of the two runs, and those of workloads and options paired by position named differently are in
the pairing's sentence. A reference to an option by name (``baseline``, a sizing sweep's
``option``) differs only when it names options that are not paired. Values read as
``costapp.reports.input_words`` writes them.

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costapp.reports.input_words import change_words, field_words, value_words, values_apart
from costapp.reports.pairing import Pair, Pairing

ABSENT: Any = object()
"""A value one of the two inputs does not have."""

WHOLE_VALUES = frozenset({"offer", "token_price", "egress_tiers"})
"""Fields compared and written as one value (an offer, a hosted model's price, egress tiers)."""


@dataclass(frozen=True)
class InputChange:
    """One difference: where (``where``: "workload 1", "" at the top level), which field in
    words (``field``: "" for a whole workload or option), both values (``ABSENT`` where a run has
    none) and as read, B − A in words (``change``), and a key naming it for the page
    (``key``: "workloads[0].utilization", by run A's place, else run B's)."""

    key: str
    where: str
    field: str
    a: Any
    b: Any
    a_text: str = ""
    b_text: str = ""
    change: str = ""
    delta: float | None = None
    delta_pct: float | None = None

    @property
    def only_in(self) -> str:
        """ "A" or "B" when only one run has it, else ""."""
        if self.a is ABSENT:
            return "B"
        if self.b is ABSENT:
            return "A"
        return ""

    @property
    def words(self) -> str:
        """The row in words."""
        head = ", ".join(part for part in (self.where, self.field) if part)
        head = head[:1].upper() + head[1:] if not self.where else head
        if self.only_in and not self.field:
            return f"{head}: only in run {self.only_in}"
        return f"{head}: {self.a_text} → {self.b_text}"


PROPER_WORDS = frozenset({"Monte"})
"""First words a label keeps capitalised after a comma (besides acronyms)."""


def _lower(label: str) -> str:
    """A label after a comma: its first letter small, unless its first word is an acronym
    ("USD per GPU hour") or a name ("Monte Carlo paths")."""
    first = label.split(" ", 1)[0]
    if (len(first) > 1 and first[:2].isupper()) or first in PROPER_WORDS:
        return label
    return label[:1].lower() + label[1:]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _same(a: Any, b: Any) -> bool:
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return x == y
    return bool(type(a) is type(b) and a == b)


def _change(
    key: str, where: str, field: str, a: Any, b: Any, *, name: str, parent: str = ""
) -> InputChange:
    if a is ABSENT or b is ABSENT:
        shown = value_words(b if a is ABSENT else a, name, parent)
        texts = ("not given", shown) if a is ABSENT else (shown, "not given")
    else:
        texts = values_apart(a, b, name, parent)
    x, y = _number(a), _number(b)
    delta = y - x if x is not None and y is not None else None
    delta_pct = 100 * delta / abs(x) if delta is not None and x else None
    words = change_words(a, b, name, parent) if delta is not None else ""
    return InputChange(key, where, field, a, b, *texts, words, delta, delta_pct)


def _mapping_diff(
    a: Mapping[str, Any], b: Mapping[str, Any], *, key: str, where: str, parent: str = "",
    heading: str = "", skip: frozenset[str] = frozenset(),
) -> list[InputChange]:  # fmt: skip
    """The differences of two mappings field by field (``heading``: the words before each
    field's, as "demand multiplier, "), nested mappings field by field too."""
    found: list[InputChange] = []
    for name in [*a, *(n for n in b if n not in a)]:
        if name in skip:
            continue
        x, y = a.get(name, ABSENT), b.get(name, ABSENT)
        if x is not ABSENT and y is not ABSENT and _same(x, y):
            continue
        path = f"{key}.{name}" if key else name
        words = heading + _lower(field_words(name)) if heading else field_words(name)
        words = _lower(words) if where else words
        if isinstance(x, Mapping) and isinstance(y, Mapping) and name not in WHOLE_VALUES:
            found += _mapping_diff(x, y, key=path, where=where, parent=name, heading=f"{words}, ")
            continue
        found.append(_change(path, where, words, x, y, name=name, parent=parent))
    return found


def _option_ref_same(pairing: Pairing, a: Any, b: Any) -> bool:
    """Whether two option names (``baseline``, a sweep's ``option``) name paired options (the
    same name when either names no option)."""
    pair_a, pair_b = pairing.option_pair("A", a), pairing.option_pair("B", b)
    if pair_a is None or pair_b is None:
        return _same(a, b)
    return pair_a is pair_b


def _items(inputs: Mapping[str, Any], section: str) -> list[Any]:
    items = inputs.get(section)
    return items if isinstance(items, list) else []


def _pair_diff(pair: Pair, section: str, a_items: list[Any], b_items: list[Any]) -> list[InputChange]:  # fmt: skip
    index = pair.a if pair.a is not None else pair.b
    key = f"{section}[{index}]" if pair.a is not None else f"B:{section}[{index}]"
    x = a_items[pair.a] if pair.a is not None and pair.a < len(a_items) else ABSENT
    y = b_items[pair.b] if pair.b is not None and pair.b < len(b_items) else ABSENT
    if x is ABSENT and y is ABSENT:
        return []
    if x is ABSENT or y is ABSENT:
        return [InputChange(key, pair.label, "", x, y)]
    return _mapping_diff(x, y, key=key, where=pair.label, skip=frozenset({"name"}))


def _sizing_diff(a: Any, b: Any, pairing: Pairing) -> list[InputChange]:
    sweeps_a = a if isinstance(a, list) else []
    sweeps_b = b if isinstance(b, list) else []
    found: list[InputChange] = []
    for index in range(max(len(sweeps_a), len(sweeps_b))):
        key = f"sizing[{index}]"
        where = f"sizing sweep {index + 1}"
        x = sweeps_a[index] if index < len(sweeps_a) else ABSENT
        y = sweeps_b[index] if index < len(sweeps_b) else ABSENT
        if x is ABSENT or y is ABSENT or not isinstance(x, Mapping) or not isinstance(y, Mapping):
            if not _same(x, y):
                found.append(InputChange(key, where, "", x, y))
            continue
        found += _mapping_diff(x, y, key=key, where=where, skip=frozenset({"option"}))
        if not _option_ref_same(pairing, x.get("option"), y.get("option")):
            found.append(_change(f"{key}.option", where, _lower(field_words("option")),
                                 x.get("option"), y.get("option"), name="option"))  # fmt: skip
    return found


def _whole(key: str, label: str, a: Any, b: Any) -> list[InputChange]:
    """A section one run has and the other not (``None`` or no such key in it): one row."""
    none_a, none_b = a is None or a is ABSENT, b is None or b is ABSENT
    if none_a and not none_b:
        return [InputChange(key, label, "", ABSENT, b)]
    if none_b and not none_a:
        return [InputChange(key, label, "", a, ABSENT)]
    return []


def inputs_changes(a: Mapping[str, Any], b: Mapping[str, Any], pairing: Pairing) -> list[InputChange]:  # fmt: skip
    """Every difference of two runs' inputs, in the inputs' order (the top-level fields, the
    workloads, the options, the simulation, the sizing sweeps)."""
    found: list[InputChange] = []
    keys = [*a, *(k for k in b if k not in a)]
    for key in keys:
        x, y = a.get(key, ABSENT), b.get(key, ABSENT)
        if key == "name":
            continue
        if key in ("workloads", "options"):
            items_a, items_b = _items(a, key), _items(b, key)
            for pair in pairing.pairs(key):
                found += _pair_diff(pair, key, items_a, items_b)
        elif key == "baseline":
            if not _option_ref_same(pairing, x, y):
                found.append(_change(key, "", field_words(key), x, y, name=key))
        elif key == "simulation":
            whole = _whole(key, "Monte Carlo simulation", x, y)
            if whole or not (isinstance(x, Mapping) and isinstance(y, Mapping)):
                found += whole
            else:
                found += _mapping_diff(x, y, key=key, where="simulation", parent="simulation")
        elif key == "sizing":
            found += _whole(key, "Sizing sweeps", x, y) or _sizing_diff(x, y, pairing)
        elif not (x is not ABSENT and y is not ABSENT and _same(x, y)):
            found.append(_change(key, "", field_words(key), x, y, name=key))
    return found
