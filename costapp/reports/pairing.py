"""Which workload and option of one run goes with which of another, for comparing two runs.

By position when both runs' inputs have as many workloads and as many options, of the same types
in the same order, and no name is at another place in the other run (a run and its copy with one
figure changed, or renamed); else by name. The
pairing says which it used, in words, and names each pair as the comparison writes it
("workload 1", "option 2 “Rent”", "option 3 “Buy 8×H100”").

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

KINDS = {"workloads": "workload", "options": "option"}


@dataclass(frozen=True)
class Pair:
    """An item (``kind``: "workload" or "option") at index ``a`` of run A's list and ``b`` of run
    B's (None: the run has no such item), with its words (``label``) and its names."""

    kind: str
    a: int | None
    b: int | None
    label: str
    name_a: str | None = None
    name_b: str | None = None

    @property
    def only_in(self) -> str:
        """ "A" or "B" when only one run has the item, else ""."""
        if self.b is None:
            return "A"
        if self.a is None:
            return "B"
        return ""


@dataclass(frozen=True)
class Pairing:
    """How the two runs' workloads and options were paired (``by``: "position" or "name"), the
    sentence saying so, the pairs in A's order then B's, and the pairs named differently in
    the two runs (paired by position), in words."""

    by: str
    said: str
    workloads: tuple[Pair, ...]
    options: tuple[Pair, ...]
    renamed: tuple[str, ...] = ()

    def pairs(self, section: str) -> tuple[Pair, ...]:
        return self.workloads if section == "workloads" else self.options

    def option_pair(self, side: str, name: Any) -> Pair | None:
        """The option pair whose option in run ``side`` ("A" or "B") has ``name``."""
        for pair in self.options:
            if (pair.name_a if side == "A" else pair.name_b) == name and name is not None:
                return pair
        return None


def _items(inputs: Mapping[str, Any], section: str) -> list[Mapping[str, Any]]:
    items = inputs.get(section)
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def _name(item: Mapping[str, Any]) -> str | None:
    name = item.get("name")
    return name if isinstance(name, str) else None


def count_words(count: int, kind: str) -> str:
    return f"{count:,} {kind}" + ("" if count == 1 else "s")


def _named(kind: str, number: int | None, name: str | None) -> str:
    head = kind if number is None else f"{kind} {number}"
    return f"{head} “{name}”" if name else head


def _by_position(section: str, a: list[Mapping[str, Any]], b: list[Mapping[str, Any]]) -> tuple[list[Pair], list[str]]:  # fmt: skip
    kind = KINDS[section]
    pairs: list[Pair] = []
    renamed: list[str] = []
    for index, (x, y) in enumerate(zip(a, b, strict=True)):
        name_a, name_b = _name(x), _name(y)
        same = name_a == name_b
        label = _named(kind, index + 1, name_a if same else None)
        pairs.append(Pair(kind, index, index, label, name_a, name_b))
        if not same:
            renamed.append(f"{kind} {index + 1} is “{name_a or ''}” in A and “{name_b or ''}” in B")
    return pairs, renamed


def _by_name(section: str, a: list[Mapping[str, Any]], b: list[Mapping[str, Any]]) -> list[Pair]:
    """Each item of A with the first item of B of the same name not yet paired (names are
    compared as written); the items left over are only in their run."""
    kind = KINDS[section]
    free = list(range(len(b)))
    pairs: list[Pair] = []
    for index, item in enumerate(a):
        name = _name(item)
        match = next((j for j in free if name is not None and _name(b[j]) == name), None)
        if match is None:
            pairs.append(Pair(kind, index, None, _named(kind, index + 1, name), name))
            continue
        free.remove(match)
        label = (
            _named(kind, index + 1, name)
            if match == index
            else f"{_named(kind, None, name)} ({index + 1} in A, {match + 1} in B)"
        )
        pairs.append(Pair(kind, index, match, label, name, name))
    for j in free:
        name = _name(b[j])
        pairs.append(Pair(kind, None, j, _named(kind, j + 1, name), None, name))
    return pairs


def _types(items: Sequence[Mapping[str, Any]]) -> list[Any]:
    return [item.get("type") for item in items]


def _first_type_change(sections: dict[str, tuple[list, list]]) -> str:
    for section, (a, b) in sections.items():
        for index, (x, y) in enumerate(zip(_types(a), _types(b), strict=True)):
            if x != y:
                return f"{KINDS[section]} {index + 1} is {x} in A and {y} in B"
    return ""


def _moved(sections: dict[str, tuple[list, list]]) -> str:
    """An item whose name is at another place in the other run, in words ("" for none)."""
    for section, (a, b) in sections.items():
        names_b = [_name(item) for item in b]
        for index, item in enumerate(a):
            name = _name(item)
            if name is None or name not in names_b or names_b[index] == name:
                continue
            at = names_b.index(name)
            return f"{KINDS[section]} “{name}” is {index + 1} in A and {at + 1} in B"
    return ""


def pairing_of(inputs_a: Mapping[str, Any], inputs_b: Mapping[str, Any]) -> Pairing:
    """The pairing of two runs' workloads and options (their results' ``inputs``): by position
    when both have as many workloads and options, of the same types in the same order, and no
    name is at another place in the other run (a run and its copy with figures changed or items
    renamed); else by name."""
    sections = {s: (_items(inputs_a, s), _items(inputs_b, s)) for s in KINDS}
    counts = {
        side: " and ".join(
            count_words(len(sections[s][i]), KINDS[s]) for s in ("workloads", "options")
        )
        for i, side in enumerate(("A", "B"))
    }
    same_counts = all(len(a) == len(b) for a, b in sections.values())
    same_types = same_counts and all(_types(a) == _types(b) for a, b in sections.values())
    moved = _moved(sections) if same_types else ""
    if same_types and not moved:
        workloads, renamed_w = _by_position("workloads", *sections["workloads"])
        options, renamed_o = _by_position("options", *sections["options"])
        renamed = (*renamed_w, *renamed_o)
        said = (
            f"Workloads and options paired by position: both runs have {counts['A']} of the "
            "same types."
        )
        if renamed:
            said += " Named differently: " + "; ".join(renamed) + "."
        return Pairing("position", said, tuple(workloads), tuple(options), renamed)
    if moved:
        why = f"both runs have {counts['A']} of the same types, but {moved}"
    elif same_counts:
        why = f"both runs have {counts['A']}, but {_first_type_change(sections)}"
    else:
        why = f"run A has {counts['A']}, run B {counts['B']}"
    return Pairing(
        "name",
        f"Workloads and options paired by name: {why}.",
        tuple(_by_name("workloads", *sections["workloads"])),
        tuple(_by_name("options", *sections["options"])),
    )


def results_pairing(a: Mapping[str, Any], b: Mapping[str, Any]) -> Pairing:
    """The pairing of two result documents: their inputs' workloads, and their options (the
    result's, in the inputs' order, with the figures the comparison pairs)."""
    return pairing_of(
        {"workloads": (a.get("inputs") or {}).get("workloads"), "options": a.get("options")},
        {"workloads": (b.get("inputs") or {}).get("workloads"), "options": b.get("options")},
    )
