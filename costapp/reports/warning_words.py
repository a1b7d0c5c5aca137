"""A result's warnings as a person reads them: field names said by their labels, GPU slugs by
their names, a provider's slug by its name, a price file or feed by what it is (never its path or address), a committed billing
by its term, the format's versions left out; grouped by what they are about, so a page shows the
figures first and the warnings after them, the first few open and the rest folded.

The engine writes its warnings for the record (they name fields and files exactly, and the result
document keeps them so); this is how the pages say them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from costapp.reports.field_labels import label_of
from costapp.tco import schema


def _field_names() -> frozenset[str]:
    names: set[str] = set()
    tables: list[object] = [
        value for key, value in vars(schema).items() if key.isupper() and key.endswith("FIELDS")
    ]
    for table in tables:
        if isinstance(table, Mapping):
            for key, value in table.items():
                if isinstance(value, Mapping):  # a table of tables, by type or billing
                    names.update(str(k) for k in value)
                names.add(str(key))
        elif isinstance(table, tuple):
            names.update(str(name) for name in table)
    return frozenset(name for name in names if "_" in name)


FIELD_NAMES = _field_names()
"""The document's field names with an underscore (those a person would not read as words)."""

QUOTED = re.compile(r'"[^"]*"')
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
VERSION_NOTE = re.compile(r"\s*\(version 1\.\d\)")
SET_FIELD = re.compile(r'set "(?P<name>[a-z_]+)": (?P<value>[^ ;,]+) for the version 1\.\d figure')
PRICE_FILE = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)*(?P<feed>skypilot)(?:-v\d+)?/(?P<cloud>[a-z0-9_-]+)\.csv\b"
)
FEED_NAMES = {"skypilot": "SkyPilot's price catalog"}
FILE_NAMES = {"committed/published.csv": "a published price list"}
"""Price files said by what they are (matched on the end of the path), any other "a price file"."""
ANY_FILE = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)*[\w.-]*[A-Za-z][\w.-]*\.(?:csv|json|xlsx|parquet|txt|xml|gz)\b"
)
FEED_URL = re.compile(r"\bhttps?://(?P<host>[^/\s,;()]+)[^\s,;()]*")
COMMITTED = re.compile(r"\bcommit-(?P<years>\d+)y\b")
"""A committed billing as the catalog codes it (``commit-1y``): "1-year committed"."""
PROVIDER_AT = re.compile(
    r"(?P<lead>\bprice of |\buses |\bthrough )(?P<slug>[a-z0-9][a-z0-9-]*)(?=[ ,])"
)
"""Where the catalog's warnings name a provider by its slug: ``the on-demand price of lambda
gpu_8x_h100_sxm5 in us-east-1``, ``uses lambda gpu_8x_h100_sxm5 in ..., whose GPU``, ``egress a
month through vast, whose egress price is unknown`` (only there, so a slug that is also a word,
``vast``, stays a word elsewhere)."""


def _file_words(path: str) -> str:
    return next((words for end, words in FILE_NAMES.items() if path.endswith(end)), "a price file")


def _outside_quotes(text: str, change) -> str:  # type: ignore[no-untyped-def]
    """``change`` applied to the parts of ``text`` outside double quotes (names stay as typed)."""
    parts: list[str] = []
    last = 0
    for quoted in QUOTED.finditer(text):
        parts.append(change(text[last : quoted.start()]))
        parts.append(quoted.group(0))
        last = quoted.end()
    parts.append(change(text[last:]))
    return "".join(parts)


def _label(name: str) -> str:
    """A field's label as it reads inside a sentence (its first letter lower, acronyms kept)."""
    label = label_of(name)
    return label[:1].lower() + label[1:] if label[1:2].islower() else label


def warning_in_words(
    text: str,
    gpu_names: Mapping[str, str] | None = None,
    provider_names: Mapping[str, str] | None = None,
) -> str:
    """One warning said for a person (see the module's description)."""
    names = gpu_names or {}
    providers = provider_names or {}
    text = SET_FIELD.sub(
        lambda m: f"set {_label(m.group('name'))} to {m.group('value')} to count none", text
    )

    def words(part: str) -> str:
        part = VERSION_NOTE.sub("", part)
        part = PRICE_FILE.sub(
            lambda m: (
                f"{FEED_NAMES[m.group('feed')]} for {m.group('cloud').replace('_', ' ').title()}"
            ),
            part,
        )
        part = FEED_URL.sub(lambda m: f"the price feed at {m.group('host')}", part)
        part = ANY_FILE.sub(lambda m: _file_words(m.group(0)), part)
        part = COMMITTED.sub(lambda m: f"{m.group('years')}-year committed", part)
        part = PROVIDER_AT.sub(
            lambda m: m.group("lead") + providers.get(m.group("slug"), m.group("slug")), part
        )
        part = SNAKE.sub(
            lambda m: _label(m.group(0)) if m.group(0) in FIELD_NAMES else m.group(0),
            part,
        )
        for slug, name in names.items():
            part = re.sub(rf"(?<![\w-]){re.escape(slug)}(?![\w-])", name, part)
        return part

    return _outside_quotes(text, words)


@dataclass
class WarningGroup:
    """The warnings about one workload, option or the scenario as a whole."""

    subject: str
    warnings: list[str] = field(default_factory=list)


SUBJECT = re.compile(r'^(?P<kind>Workload|Option) "(?P<name>[^"]+)"')


def warnings_grouped(
    warnings: Iterable[str],
    option_names: Iterable[str],
    gpu_names: Mapping[str, str] | None = None,
    provider_names: Mapping[str, str] | None = None,
) -> list[WarningGroup]:
    """The warnings in words, grouped by what they are about (a workload, an option, else the
    scenario), in the order each subject first appears; GPUs and providers by their names."""
    options = sorted(option_names, key=len, reverse=True)  # the longest name first
    groups: dict[str, WarningGroup] = {}
    for text in warnings:
        found = SUBJECT.match(text)
        rest = text
        if found:
            subject = f"{found.group('kind')} “{found.group('name')}”"
            rest = text[found.end() :].lstrip(": ")
        else:
            named = next((name for name in options if text.startswith(f"{name}:")), None)
            subject = f"Option “{named}”" if named else "The scenario"
            if named:
                rest = text[len(named) + 1 :].lstrip()
        said = warning_in_words(rest, gpu_names, provider_names)
        said = said[:1].upper() + said[1:]
        groups.setdefault(subject, WarningGroup(subject)).warnings.append(said)
    return list(groups.values())


def warnings_split(
    groups: list[WarningGroup], shown: int = 3
) -> tuple[list[WarningGroup], list[WarningGroup]]:
    """The groups holding the first ``shown`` warnings (open on the page) and those holding the
    rest (folded), each warning once, in order."""
    open_groups: list[WarningGroup] = []
    folded: list[WarningGroup] = []
    left = shown
    for group in groups:
        head, tail = group.warnings[:left], group.warnings[left:]
        left -= len(head)
        if head:
            open_groups.append(WarningGroup(group.subject, head))
        if tail:
            folded.append(WarningGroup(group.subject, tail))
    return open_groups, folded
