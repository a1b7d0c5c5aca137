"""GPU names used by price sources -> GPU slugs (``hardware/data/aliases.csv``).

Names are compared as catalogs spell them: case, spaces, hyphens and underscores do not matter,
vendor words (``NVIDIA``, ``Tesla``, ``GeForce``, ``Quadro``, ``AMD``, ``Instinct``) are dropped,
a memory suffix (``-40GB``) counts as the memory per GPU when the source states none, and a form
factor word in the name (``PCIE``, ``SXM4``, ``NVL``) counts as evidence of the variant. So
``NVIDIA-A100-SXM4-40GB``, ``Tesla A100 40GB SXM4`` and ``A100`` with 40 GiB in an ``*_sxm4``
instance all resolve to the same row.

A row matches when its name matches and its conditions hold: ``memory_gib_per_gpu`` within
``MEMORY_TOLERANCE`` of the memory per GPU, and ``instance_pattern`` (a regular expression, searched
case-insensitively in the instance name and in the form-factor words of the GPU name). The first
matching row wins. Each row says how sure it is (``status``) and why (``evidence``):

- ``confirmed``: the instance name, its memory or the provider's documentation of the instance
  type settles the variant;
- ``unconfirmed``: the variant cannot be settled; the row names the model it is filed under (never
  the fastest variant), and the offer is stored with ``gpu_confirmed`` false;
- ``rejected``: the row is refused with ``evidence`` as the reason.

A name without a matching row is unknown: never guessed.
"""

import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from hardware.data_files import ALIASES_PATH
from hardware.sources.common import RowRejected, SourceError, decimal_or_none, read_csv, text

COLUMNS = (
    "source",
    "accelerator_name",
    "memory_gib_per_gpu",
    "instance_pattern",
    "slug",
    "status",
    "evidence",
)
STATUSES = ("confirmed", "unconfirmed", "rejected")
# Sources round memory differently (GB written as MiB, 79.6 GiB usable of 80): 15 % still tells
# 16 from 32, 24 from 48 and 40 from 80 apart.
MEMORY_TOLERANCE = Decimal("0.15")
GIB_PER_GB = Decimal(10**9) / Decimal(2**30)
VENDOR_WORDS = frozenset({"nvidia", "tesla", "geforce", "quadro", "amd", "instinct"})
FORM_WORDS = {
    "pcie": "pcie",
    "sxm": "sxm",
    "sxm2": "sxm",
    "sxm4": "sxm",
    "sxm5": "sxm",
    "nvl": "nvl",
}
MEMORY_WORD = re.compile(r"^([0-9]+)gb?$")


@dataclass(frozen=True)
class GpuName:
    """A GPU name as catalogs spell it, reduced to what identifies the model.

    ``key``: the name's remaining words, lower case, joined (``rtxa5000``); ``memory_gib``: from a
    memory suffix (``-40GB``), in GiB; ``forms``: form-factor words (``pcie``, ``sxm``, ``nvl``).
    """

    key: str
    memory_gib: Decimal | None
    forms: tuple[str, ...]


def gpu_name(name: str) -> GpuName:
    """Reduce a catalog's GPU name (``NVIDIA A100-SXM4-40GB``) to its key, memory and forms."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    key: list[str] = []
    forms: list[str] = []
    memory = None
    for word in words:
        if word in VENDOR_WORDS:
            continue
        if word in FORM_WORDS:
            forms.append(FORM_WORDS[word])
            continue
        found = MEMORY_WORD.match(word)
        if found and key:  # "40GB" after a model name, never the name itself
            memory = Decimal(found.group(1)) * GIB_PER_GB
            continue
        key.append(word)
    return GpuName("".join(key), memory, tuple(forms))


@dataclass(frozen=True)
class GpuResolution:
    """What a source's GPU name means: the slug, whether the variant is settled, and why."""

    slug: str
    confirmed: bool
    evidence: str


@dataclass(frozen=True)
class Alias:
    """One row of the alias table."""

    source: str
    accelerator_name: str
    memory_gib_per_gpu: Decimal | None
    instance_pattern: str
    slug: str
    status: str
    evidence: str
    line_no: int

    @property
    def name(self) -> GpuName:
        return gpu_name(self.accelerator_name)

    def matches(
        self, name: GpuName, memory_gib_per_gpu: Decimal | None, instance_type: str
    ) -> bool:
        own = self.name
        if own.key != name.key:
            return False
        if self.instance_pattern:
            pattern = re.compile(self.instance_pattern, re.IGNORECASE)
            places = (instance_type, *name.forms)
            if not any(pattern.search(place) for place in places):
                return False
        wanted = self.memory_gib_per_gpu if self.memory_gib_per_gpu is not None else own.memory_gib
        if wanted is not None:
            stated = memory_gib_per_gpu if memory_gib_per_gpu is not None else name.memory_gib
            if stated is None or abs(stated - wanted) > wanted * MEMORY_TOLERANCE:
                return False
        return True


class AliasTable:
    """The alias rows of one source, in file order."""

    def __init__(self, aliases: list[Alias]):
        self.aliases = aliases
        self.keys = {a.name.key for a in aliases}

    def resolve_variant(
        self, name: str, memory_gib_per_gpu: Decimal | None, instance_type: str
    ) -> GpuResolution:
        """The GPU a source's name means, with its evidence; raise ``RowRejected`` for a name
        with no matching row ("unknown GPU name") or a row that refuses it ("GPU variant not
        settled", with the row's evidence)."""
        reduced = gpu_name(name)
        for alias in self.aliases:
            if alias.matches(reduced, memory_gib_per_gpu, instance_type):
                if alias.status == "rejected":
                    raise RowRejected(
                        "GPU variant not settled",
                        f"{name!r} in {instance_type!r}: {alias.evidence}",
                        subject=name,
                    )
                return GpuResolution(alias.slug, alias.status == "confirmed", alias.evidence)
        memory = "" if memory_gib_per_gpu is None else f" with {memory_gib_per_gpu:.1f} GiB per GPU"
        if reduced.key in self.keys:
            detail = f"{name!r}{memory} in {instance_type!r} matches no row of aliases.csv"
        else:
            detail = f"{name!r} (instance {instance_type!r}) has no row in aliases.csv"
        raise RowRejected("unknown GPU name", detail, subject=name)

    def resolve(self, name: str, memory_gib_per_gpu: Decimal | None, instance_type: str) -> str:
        """The slug for a source's GPU name; raise ``RowRejected`` as ``resolve_variant``."""
        return self.resolve_variant(name, memory_gib_per_gpu, instance_type).slug


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
        name, slug, status = text(raw, "accelerator_name"), text(raw, "slug"), text(raw, "status")
        where = f"{path.name}:{line_no}"
        if not name:
            raise SourceError(f"{where}: accelerator_name is required")
        if status not in STATUSES:
            raise SourceError(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
        if status == "rejected" and slug:
            raise SourceError(f"{where}: a rejected row names no slug")
        if status != "rejected" and not slug:
            raise SourceError(f"{where}: slug is required")
        if status != "confirmed" and not text(raw, "evidence"):
            raise SourceError(f"{where}: an {status} row needs its evidence (the reason)")
        if slug and known_slugs is not None and slug not in known_slugs:
            raise SourceError(f"{where}: slug {slug!r} is not in the GPU table")
        pattern = text(raw, "instance_pattern")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SourceError(f"{where}: instance_pattern {pattern!r}: {exc}") from None
        try:
            memory = decimal_or_none(raw, "memory_gib_per_gpu")
        except RowRejected as exc:
            raise SourceError(f"{where}: {exc.detail}") from None
        aliases.append(
            Alias(source, name, memory, pattern, slug, status, text(raw, "evidence"), line_no)
        )
    return AliasTable(aliases)
