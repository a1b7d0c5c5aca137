"""Shared pieces of the price-source parsers: plain rows, rejections, number reading.

No database here: a parser turns a file into typed rows and per-row rejections; the services
decide what to store.
"""

import csv
import hashlib
import io
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

CHUNK_BYTES = 1 << 20


class SourceError(ValueError):
    """A source cannot be read as a whole (unreadable file, missing column): names the file."""


class RowRejected(ValueError):
    """One row cannot be used; ``reason`` is the short counting key, the message the detail."""

    def __init__(self, reason: str, detail: str = "", subject: str = ""):
        super().__init__(detail or reason)
        self.reason = reason
        self.detail = detail or reason
        self.subject = subject


@dataclass(frozen=True)
class Rejection:
    """A row left out, with where it is and why."""

    file_name: str
    line_no: int
    reason: str
    detail: str
    subject: str = ""

    def __str__(self) -> str:
        return f"{self.file_name}:{self.line_no}: {self.reason}: {self.detail}"


@dataclass
class ParseReport:
    """What a parser saw in one file: rows read, accepted and rejected (by reason)."""

    file_name: str
    sha256: str
    rows_read: int = 0
    rows_accepted: int = 0
    rejections: list[Rejection] = field(default_factory=list)
    # Large feeds keep only the first ``keep_at_most`` rejections; the rest are counted here.
    keep_at_most: int | None = None
    dropped_by_reason: Counter = field(default_factory=Counter)
    bytes_read: int = 0
    stated_on: date | None = None  # the feed's own date (publication), when it states one
    rows_unconfirmed: int = 0
    # (instance type, GPU slug it is filed under, why the variant is not settled)
    unconfirmed: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def rejected_by_reason(self) -> Counter:
        return Counter(r.reason for r in self.rejections) + self.dropped_by_reason

    @property
    def rows_rejected(self) -> int:
        return self.rows_read - self.rows_accepted

    def reject(self, line_no: int, exc: RowRejected) -> None:
        if self.keep_at_most is not None and len(self.rejections) >= self.keep_at_most:
            self.dropped_by_reason[exc.reason] += 1
            return
        self.rejections.append(
            Rejection(self.file_name, line_no, exc.reason, exc.detail, exc.subject)
        )

    def lines(self, *, verbosity: int = 1) -> list[str]:
        """The report in words: rows read, accepted, rejected (by reason) and unconfirmed, the
        unconfirmed GPU variants, and the rejections by reason with their lines (unknown GPU
        names always in full; with ``verbosity`` 2 every rejection)."""
        rejected = len({r.line_no for r in self.rejections})
        by_reason = ", ".join(f"{reason}: {n}" for reason, n in self.rejected_by_reason.items())
        out = [
            f"{self.file_name}: {self.rows_read} rows read, "
            f"{self.rows_read - rejected} accepted, {rejected} rejected"
            + (f" ({by_reason})" if by_reason else "")
            + f", {self.rows_unconfirmed} unconfirmed"
        ]
        by_gpu: dict[tuple[str, str], list[str]] = defaultdict(list)
        for instance_type, slug, evidence in self.unconfirmed:
            by_gpu[(slug, evidence)].append(instance_type)
        for (slug, evidence), instances in by_gpu.items():
            out.append(
                f"  unconfirmed GPU variant, filed as {slug}: {', '.join(instances)} ({evidence})"
            )
        groups: dict[tuple[str, str], list[Rejection]] = defaultdict(list)
        for r in self.rejections:
            groups[(r.reason, r.subject)].append(r)
        for (reason, subject), items in groups.items():
            lines = ", ".join(str(r.line_no) for r in items)
            what = f"{reason} {subject!r}" if subject else reason
            if verbosity >= 2 or reason == "unknown GPU name":
                out.append(f"  {what} at {self.file_name} line(s) {lines}")
                if verbosity >= 2:
                    out += [f"    {r}" for r in items]
            else:
                example = "e.g. " if len(items) > 1 else ""
                out.append(f"  {what} at line(s) {lines}: {example}{items[0].detail}")
        return out


def file_sha256(path: Path | bytes) -> str:
    """SHA-256 of a file's bytes (or of fetched bytes), hex; a file is read in chunks, so any
    size fits in memory."""
    if isinstance(path, bytes):
        return hashlib.sha256(path).hexdigest()
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError as exc:
        raise SourceError(f"{path.name}: cannot read the file: {exc.strerror or exc}") from None


def read_csv(
    path: Path | bytes, required: tuple[str, ...], *, name: str = ""
) -> tuple[list[str], list[tuple[int, dict]]]:
    """Read a CSV (UTF-8, BOM allowed, CRLF or LF) into ``(columns, [(line_no, row), ...])``.

    ``path`` is a file, or a fetched feed's bytes (named ``name`` in errors). Raise
    ``SourceError`` naming the file when it cannot be read, is not UTF-8 or lacks a required
    column. ``line_no`` is the physical line where the record starts.
    """
    shown = name or (path.name if isinstance(path, Path) else "feed")
    try:
        if isinstance(path, bytes):
            handle: Any = io.StringIO(path.decode("utf-8-sig"), newline="")
        else:
            handle = open(path, newline="", encoding="utf-8-sig")  # noqa: SIM115 (closed below)
        with handle:
            reader = csv.DictReader(handle)
            columns = [c.strip() for c in (reader.fieldnames or [])]
            missing = [c for c in required if c not in columns]
            if missing:
                raise SourceError(f"{shown}: missing column(s) {', '.join(missing)}")
            reader.fieldnames = columns
            rows = []
            line_no = reader.line_num + 1
            for raw in reader:
                rows.append((line_no, raw))
                line_no = reader.line_num + 1
    except OSError as exc:
        raise SourceError(f"{shown}: cannot read the file: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise SourceError(f"{shown}: not a readable CSV file: {exc}") from None
    return columns, rows


def text(raw: dict, column: str) -> str:
    """A cell, stripped; missing or ``None`` (short row) reads as empty."""
    value = raw.get(column)
    return value.strip() if isinstance(value, str) else ""


def decimal_or_none(raw: dict, column: str) -> Decimal | None:
    """A non-negative finite number, or ``None`` for an empty cell; raise ``RowRejected``."""
    cell = text(raw, column)
    if not cell:
        return None
    try:
        value = Decimal(cell)
    except InvalidOperation:
        raise RowRejected("bad number", f"{column} {cell!r} is not a number") from None
    if not value.is_finite() or value < 0:
        raise RowRejected("bad number", f"{column} {cell!r} is not a non-negative number")
    return value


def count_or_none(raw: dict, column: str) -> int | None:
    """A whole number written as ``8`` or ``8.0``, or ``None`` for an empty cell."""
    value = decimal_or_none(raw, column)
    if value is None:
        return None
    if value != value.to_integral_value():
        raise RowRejected("bad number", f"{column} {text(raw, column)!r} is not a whole number")
    return int(value)


@dataclass(frozen=True)
class PriceRow:
    """One observed price of an instance type in a region and billing model [USD/instance-hour].

    The one row type every parser gives (``hardware.sources.registry``), whatever the format:
    what ``hardware.services.instance_prices_load`` stores and a refresh stages.
    """

    provider: str
    instance_type: str
    gpu_slug: str
    gpu_count: int
    vcpus: Decimal | None
    memory_gib: Decimal | None
    host: str
    region: str
    zone: str
    billing: str
    usd_per_hour: Decimal
    line_no: int
    is_suspect: bool = False
    note: str = ""
    stated_on: date | None = None  # the date the source gave the price, where it says
    gpu_confirmed: bool = True
    gpu_evidence: str = ""
    zone_count: int | None = None
    zone_min_usd_per_hour: Decimal | None = None
    zone_median_usd_per_hour: Decimal | None = None
    zone_max_usd_per_hour: Decimal | None = None


@dataclass(frozen=True)
class FeedPrice:
    """One price a provider's feed states for one SKU in one region and billing [USD per unit].

    The feed's own terms, before the SKU is tied to a GPU instance: ``unit`` is what one price
    buys (``hour``, ``GiB-hour``), ``line_no`` the item's place in the feed
    (1-based, across pages), ``tier_start`` the usage from which a tiered rate applies.
    """

    provider: str
    sku: str
    description: str
    region: str
    billing: str
    unit: str
    usd: Decimal
    line_no: int
    stated_on: date | None = None
    tier_start: Decimal = Decimal(0)
    note: str = ""


# Converted prices keep the catalog's precision (hardware.models.MONEY: 10 decimal places).
USD_QUANTUM = Decimal("1E-10")


def json_document(data: bytes | str | Path, *, file_name: str) -> tuple[object, str]:
    """A JSON feed (bytes, text or a path) and the SHA-256 of its bytes; raise ``SourceError``."""
    if isinstance(data, Path):
        try:
            data = data.read_bytes()
        except OSError as exc:
            raise SourceError(f"{file_name}: cannot read the file: {exc.strerror or exc}") from None
    raw = data.encode() if isinstance(data, str) else data
    try:
        document = json.loads(raw.decode("utf-8-sig"), parse_float=Decimal, parse_int=Decimal)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{file_name}: not a JSON document: {exc}") from None
    return document, hashlib.sha256(raw).hexdigest()


def json_decimal(value: object, field_name: str) -> Decimal:
    """A finite, non-negative number from a JSON value (number or numeric string)."""
    if isinstance(value, bool) or value is None:
        raise RowRejected("bad number", f"{field_name} is {value!r}, not a number")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise RowRejected("bad number", f"{field_name} {value!r} is not a number") from None
    if not number.is_finite() or number < 0:
        raise RowRejected("bad number", f"{field_name} {value!r} is not a non-negative number")
    return number


def iso_date(value: object) -> date | None:
    """The date of an ISO 8601 timestamp (``2023-03-24T10:52:50.681Z``), or ``None``."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def paged_feed_prices(
    pages: Sequence[bytes | str | Path],
    *,
    file_name: str,
    page_items: Callable[..., tuple[list[Any], Any, str]],
    item_prices: Callable[[Any, int], Iterable["FeedPrice"]],
) -> tuple[list["FeedPrice"], ParseReport]:
    """Every usable price of a paged JSON feed (Azure Retail Prices, GCP Cloud Billing SKUs).

    ``page_items(data, file_name=...)`` reads one page into ``(items, next page, sha256)`` and
    raises ``SourceError`` when it is not a page of the feed (nothing of the feed is used then);
    ``item_prices(item, line_no)`` gives an item's prices or raises ``RowRejected``. ``line_no``
    counts items across the pages (1-based); the report's checksum lists every page's.
    """
    report = ParseReport(file_name=file_name, sha256="")
    shas: list[str] = []
    prices: list[FeedPrice] = []
    line_no = 0
    for page_no, data in enumerate(pages, start=1):
        items, _, sha256 = page_items(data, file_name=f"{file_name} page {page_no}")
        shas.append(sha256)
        for item in items:
            line_no += 1
            report.rows_read += 1
            try:
                prices.extend(item_prices(item, line_no))
            except RowRejected as exc:
                report.reject(line_no, exc)
    report.sha256 = ",".join(shas)
    report.rows_accepted = report.rows_read - len({r.line_no for r in report.rejections})
    return prices, report
