"""Epoch AI's hardware prices (``hardware/data/prices/epoch_hardware_prices.csv``) -> dated
committed prices per GPU-hour.

The file mixes purchase prices and cloud prices per chip-hour (on-demand, 1-year and 3-year),
each with the date and archived page it came from. Read here: the 1- and 3-year prices
(``commit_1y``, ``commit_3y``) of a row that settles

- the provider: ``Vendor`` is one of ``PROVIDERS`` (a seller the catalog does not know, or none,
  is "provider not settled");
- the region: ``Location`` names one region the provider's table in
  ``hardware.sources.committed.REGION_CODES`` knows (several regions, or none, is "region not
  settled");
- the GPU variant: ``Hardware model`` through the alias rows of source ``epoch`` in
  ``hardware/data/aliases.csv``, with the instance the row names in ``Notes`` or ``Cloud GPU
  description`` as the instance text (an ``NVIDIA A100`` in Azure's ``ND96asr A100 v4`` is the
  40 GB SXM4 module; with no instance named it is "GPU variant not settled").

Every other row is reported with its line and reason ("no committed price" for purchase and
on-demand-only rows). The file's traps: a UTF-8 BOM, newlines inside quoted fields (``line_no``
is the line the record starts on) and one empty record.
"""

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

from hardware.sources.aliases import AliasTable
from hardware.sources.committed import region_code, stated_date
from hardware.sources.common import (
    ParseReport,
    RowRejected,
    decimal_or_none,
    file_sha256,
    read_csv,
    text,
)

COLUMNS = (
    "Price source",
    "Price date",
    "Hardware model",
    "Vendor",
    "Location",
    "Price per chip-hour (1-year CUD)",
    "Price per chip-hour (3-year CUD)",
    "Notes",
    "Cloud GPU description",
)
TERMS = (
    ("Price per chip-hour (1-year CUD)", "commit_1y"),
    ("Price per chip-hour (3-year CUD)", "commit_3y"),
)
PROVIDERS = {"Microsoft Azure": "azure", "Amazon Web Services": "aws", "Google Cloud": "gcp"}
# An AWS instance type named in the notes (p4d.24xlarge).
AWS_INSTANCE = re.compile(r"\b([a-z][0-9][a-z0-9-]*\.[0-9]*x?large)\b")


@dataclass(frozen=True)
class CommittedObservation:
    """One dated committed price of a GPU at a provider and region [USD per GPU-hour]."""

    line_no: int
    provider: str
    region: str
    gpu_slug: str
    gpu_evidence: str
    billing: str
    usd_per_gpu_hour: Decimal
    stated_on: date
    instance: str  # the instance text the row gives (notes, description), may be empty
    aws_instance: str  # the AWS instance type it names, if any
    source_url: str


def parse_epoch_prices(
    path: Path, *, aliases: AliasTable, file_name: str | None = None
) -> tuple[list[CommittedObservation], ParseReport]:
    """Parse the file; raise ``SourceError`` on a broken table. Each row not loaded is in the
    report with its line and reason."""
    report = ParseReport(file_name=file_name or path.name, sha256=file_sha256(path))
    _, records = read_csv(path, COLUMNS)
    found: list[CommittedObservation] = []
    for line_no, raw in records:
        report.rows_read += 1
        try:
            found.extend(_parse_row(line_no, raw, aliases))
        except RowRejected as exc:
            report.reject(line_no, exc)
    report.rows_accepted = report.rows_read - len({r.line_no for r in report.rejections})
    return found, report


def _parse_row(line_no: int, raw: dict, aliases: AliasTable) -> list[CommittedObservation]:
    if not any(text(raw, c) for c in raw if c):
        raise RowRejected("empty record", "every cell is empty")
    stated = [(billing, decimal_or_none(raw, column)) for column, billing in TERMS]
    prices = [(billing, usd) for billing, usd in stated if usd]
    model = text(raw, "Hardware model")
    if not prices:
        raise RowRejected("no committed price", f"{model}: no 1- or 3-year price per chip-hour")
    vendor = text(raw, "Vendor")
    provider = PROVIDERS.get(vendor)
    if provider is None:
        raise RowRejected(
            "provider not settled", f"{vendor or 'no vendor'}: not a provider of the catalog"
        )
    instance = " ".join(t for t in (text(raw, "Notes"), text(raw, "Cloud GPU description")) if t)
    gpu = aliases.resolve_variant(model, None, instance)
    if not gpu.confirmed:
        raise RowRejected("GPU variant not settled", gpu.evidence, subject=model)
    region = region_code(provider, text(raw, "Location"))
    stated_on = stated_date(text(raw, "Price date"))
    found = AWS_INSTANCE.search(instance) if provider == "aws" else None
    return [
        CommittedObservation(
            line_no=line_no,
            provider=provider,
            region=region,
            gpu_slug=gpu.slug,
            gpu_evidence=gpu.evidence or f"the source names the GPU {model!r}",
            billing=billing,
            usd_per_gpu_hour=usd,
            stated_on=stated_on,
            instance=instance[:200],
            aws_instance=found.group(1) if found else "",
            source_url=text(raw, "Price source")[:500],
        )
        for billing, usd in prices
    ]
