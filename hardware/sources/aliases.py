"""GPU names used by price sources -> GPU slugs (``hardware/data/aliases.csv``).

A row matches a source's accelerator name (case-insensitive) when its optional conditions hold:
``memory_gib_per_gpu`` within ``MEMORY_TOLERANCE`` of the GPU memory the source states, and
``instance_name_contains`` one of the words of the instance name (case-insensitive; words are
split on anything but letters and digits, so ``nvl`` finds ``1x-H100_NVL-32-65536`` but not
``nebius_H100-sxm5x8-NVLINK``, an SXM server with NVLink). The first matching row wins. A name
without a matching row is unknown: never guessed.
"""

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from .common import RowRejected, SourceError, decimal_or_none, read_csv, text

ALIASES_PATH = Path(__file__).resolve().parent.parent / "data" / "aliases.csv"
COLUMNS = ("source", "accelerator_name", "memory_gib_per_gpu", "instance_name_contains", "slug")
# Sources round memory differently (GB written as MiB, 79.6 GiB usable of 80): 15 % still tells
# 16 from 32, 24 from 48 and 40 from 80 apart.
MEMORY_TOLERANCE = Decimal("0.15")


def instance_words(instance_type: str) -> set[str]:
    """The lower-case words of an instance name (``gpu_1x_h100_pcie`` -> gpu, 1x, h100, pcie)."""
    return set(re.split(r"[^a-z0-9]+", instance_type.lower())) - {""}


@dataclass(frozen=True)
class Alias:
    """One row of the alias table."""

    source: str
    accelerator_name: str
    memory_gib_per_gpu: Decimal | None
    instance_name_contains: str
    slug: str
    line_no: int

    def matches(self, name: str, memory_gib_per_gpu: Decimal | None, instance_type: str) -> bool:
        if self.accelerator_name.lower() != name.lower():
            return False
        if self.instance_name_contains and (
            self.instance_name_contains.lower() not in instance_words(instance_type)
        ):
            return False
        if self.memory_gib_per_gpu is not None:
            if memory_gib_per_gpu is None:
                return False
            gap = abs(memory_gib_per_gpu - self.memory_gib_per_gpu)
            if gap > self.memory_gib_per_gpu * MEMORY_TOLERANCE:
                return False
        return True


class AliasTable:
    """The alias rows of one source, in file order."""

    def __init__(self, aliases: list[Alias]):
        self.aliases = aliases
        self.names = {a.accelerator_name.lower() for a in aliases}

    def resolve(self, name: str, memory_gib_per_gpu: Decimal | None, instance_type: str) -> str:
        """The slug for a source's GPU name; raise ``RowRejected('unknown GPU name')``."""
        for alias in self.aliases:
            if alias.matches(name, memory_gib_per_gpu, instance_type):
                return alias.slug
        memory = "" if memory_gib_per_gpu is None else f" with {memory_gib_per_gpu:.1f} GiB per GPU"
        if name.lower() in self.names:
            detail = f"{name!r}{memory} in {instance_type!r} matches no row of aliases.csv"
        else:
            detail = f"{name!r} (instance {instance_type!r}) has no row in aliases.csv"
        raise RowRejected("unknown GPU name", detail, subject=name)


def read_aliases(
    path: Path = ALIASES_PATH, *, source: str = "skypilot", known_slugs: set[str] | None = None
) -> AliasTable:
    """Read the alias rows of ``source``; raise ``SourceError`` on a broken table.

    With ``known_slugs``, a row naming a slug outside the GPU table breaks the table.
    """
    _, rows = read_csv(path, COLUMNS)
    aliases = []
    for line_no, raw in rows:
        if text(raw, "source") != source:
            continue
        name, slug = text(raw, "accelerator_name"), text(raw, "slug")
        if not name or not slug:
            raise SourceError(f"{path.name}:{line_no}: accelerator_name and slug are required")
        if known_slugs is not None and slug not in known_slugs:
            raise SourceError(f"{path.name}:{line_no}: slug {slug!r} is not in the GPU table")
        try:
            memory = decimal_or_none(raw, "memory_gib_per_gpu")
        except RowRejected as exc:
            raise SourceError(f"{path.name}:{line_no}: {exc.detail}") from None
        aliases.append(
            Alias(source, name, memory, text(raw, "instance_name_contains"), slug, line_no)
        )
    return AliasTable(aliases)
