"""Loading the token prices and the sourced assumptions shipped in ``hardware/data/``.

Each file is read whole and checked row by row first (``token_prices_read``,
``assumptions_read``: a row that cannot be used is rejected with file, line and reason, never
dropped silently; an unreadable file or a missing column raises ``SourceError`` naming the file),
then applied (``token_prices_apply``, ``assumptions_apply``): a row that states anything new for
its (provider, model) or key adds a row with ``first_seen = last_seen`` = the load's time, and
the old row stays as history; a row stating the same from another file moves ``last_seen``; the
very file the catalog already holds (same SHA-256) changes nothing, not even a date. A current
figure edited by hand (admin, API) is kept and the file's row is rejected naming both values.
``token_prices_load`` and ``assumptions_load`` do both for one file, in one transaction.

The traps of the files (``hardware/data/README.md``): token prices carry no stated day (their
source's commit date is not known), so they are loaded with ``stated_on`` empty and shown as of
unknown age (``stale``); Databricks' prices are LiteLLM's conversion from DBUs and carry float
noise (``15.000020000000002``), kept to the catalog's 10 decimal places; "Turbo" and "basic"
serving tiers are models of their own; an alias whose model changes over time
(``deepseek/deepseek-chat``) is loaded and flagged.
"""

import re
from collections import Counter
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Model
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from hardware.data_files import ASSUMPTIONS_PATH, DATA_DIR, TOKEN_PRICES_PATH
from hardware.hand_edits import hand_edited_ids
from hardware.models import Assumption, Confidence, TokenPrice
from hardware.sources.common import (
    ParseReport,
    Rejection,
    RowRejected,
    decimal_or_none,
    file_sha256,
    read_csv,
    text,
)

TOKEN_PRICE_COLUMNS = (
    "provider",
    "model",
    "input_usd_per_million",
    "output_usd_per_million",
    "source",
    "stated_on",
)
ASSUMPTION_COLUMNS = ("key", "value", "unit", "applies_to", "stated_on", "source", "confidence")

# Names whose model the seller changes over time: the price is of whatever model the alias
# names today, so it is flagged (hardware/data/README.md).
MOVING_ALIASES = {
    ("deepseek", "deepseek/deepseek-chat"): (
        "an alias: the model it names changes over time (now a later DeepSeek V3.x)"
    ),
}

QUANTUM = Decimal("1E-10")
MAX_INTEGER_DIGITS = {"money": 10, "value": 14}  # the models' max_digits minus decimal_places
PROVIDER_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_]*$")
# The option types a sourced figure can fill (docs/scenario-format.md, "Sourced assumptions"):
# a number field of a dedicated or on-prem option, or one of every GPU option (``option.``).
APPLIES_TO_RE = re.compile(r"^(dedicated|on_prem|option)\.([a-z][a-z0-9_]*)$")


@dataclass(frozen=True)
class TokenPriceRow:
    """One usable row of token_prices.csv."""

    line_no: int
    provider: str
    model: str
    usd_per_million_input_tokens: Decimal
    usd_per_million_output_tokens: Decimal
    source: str
    stated_on: date | None
    flag: str
    notes: str


@dataclass(frozen=True)
class AssumptionRow:
    """One usable row of assumptions.csv."""

    line_no: int
    key: str
    value: Decimal
    unit: str
    applies_to: str
    stated_on: date | None
    source: str
    confidence: str
    notes: str


@dataclass
class MarketFile:
    """A file read and checked: its usable rows and what was rejected."""

    rows: list[Any]
    report: ParseReport


@dataclass
class MarketLoadReport:
    """What loading one file did: rows read, rejected (file, line, reason), new rows, rows
    unchanged, and how many rows carry no stated day (loaded, shown as of unknown age)."""

    file_name: str
    rows_read: int = 0
    created: int = 0
    unchanged: int = 0
    undated: int = 0
    rejections: list[Rejection] = field(default_factory=list)

    @property
    def rows_rejected(self) -> int:
        return len({r.line_no for r in self.rejections})

    def lines(self) -> list[str]:
        """The report as printed by ``load_catalog``: a summary, then one line per rejection."""
        by_reason = Counter(r.reason for r in self.rejections)
        reasons = ", ".join(f"{reason}: {n}" for reason, n in by_reason.items())
        head = (
            f"{self.file_name}: {self.rows_read} rows read, "
            f"{self.rows_read - self.rows_rejected} accepted, {self.rows_rejected} rejected"
            + (f" ({reasons})" if reasons else "")
            + f"; {self.created} new, {self.unchanged} unchanged"
            + (f"; {self.undated} without a stated day (unknown age)" if self.undated else "")
        )
        return [head, *(f"  rejected {r}" for r in self.rejections)]


def _amount(raw: dict, column: str, integer_digits: int) -> Decimal:
    value = decimal_or_none(raw, column)
    if value is None:
        raise RowRejected("missing value", f"{column} is empty")
    value = value.quantize(QUANTUM, rounding=ROUND_HALF_EVEN)
    if value.adjusted() >= integer_digits:
        raise RowRejected("bad number", f"{column} {text(raw, column)!r} is too large")
    return value


def _stated_on(raw: dict) -> date | None:
    cell = text(raw, "stated_on")
    if not cell:
        return None
    try:
        return date.fromisoformat(cell)
    except ValueError:
        raise RowRejected("bad date", f"stated_on {cell!r} is not a date (YYYY-MM-DD)") from None


def _required(raw: dict, column: str) -> str:
    cell = text(raw, column)
    if not cell:
        raise RowRejected("missing value", f"{column} is empty")
    return cell


def _read(path: Path, file_name: str | None, columns: tuple[str, ...], parse: Any) -> MarketFile:
    name = file_name or path.name
    sha256 = file_sha256(path)
    _, raw_rows = read_csv(path, columns)
    report = ParseReport(file_name=name, sha256=sha256)
    rows: list[Any] = []
    seen: dict[tuple, int] = {}
    for line_no, raw in raw_rows:
        report.rows_read += 1
        try:
            row = parse(line_no, raw)
            identity = _identity(row)
            if identity in seen:
                raise RowRejected(
                    "duplicate row", f"{' '.join(identity)} already on line {seen[identity]}"
                )
            seen[identity] = line_no
        except RowRejected as exc:
            report.reject(line_no, exc)
            continue
        rows.append(row)
    report.rows_accepted = len(rows)
    return MarketFile(rows=rows, report=report)


def _identity(row: TokenPriceRow | AssumptionRow) -> tuple[str, ...]:
    if isinstance(row, TokenPriceRow):
        return (row.provider, row.model)
    return (row.key,)


def _token_price_row(line_no: int, raw: dict) -> TokenPriceRow:
    provider = _required(raw, "provider")
    if not PROVIDER_RE.match(provider) or len(provider) > 64:
        raise RowRejected(
            "bad provider", f"provider {provider!r}: lower-case letters, digits, _ . - (64 at most)"
        )
    model = _required(raw, "model")
    if len(model) > 200:
        raise RowRejected("bad model", f"model {model[:40]!r}…: longer than 200 characters")
    return TokenPriceRow(
        line_no=line_no,
        provider=provider,
        model=model,
        usd_per_million_input_tokens=_amount(raw, "input_usd_per_million", 10),
        usd_per_million_output_tokens=_amount(raw, "output_usd_per_million", 10),
        source=_required(raw, "source"),
        stated_on=_stated_on(raw),
        flag=MOVING_ALIASES.get((provider, model), ""),
        notes=text(raw, "notes"),
    )


def _assumption_row(line_no: int, raw: dict) -> AssumptionRow:
    key = _required(raw, "key")
    if not KEY_RE.match(key) or len(key) > 80:
        raise RowRejected("bad key", f"key {key!r}: lower-case letters, digits and _ (80 at most)")
    applies_to = _required(raw, "applies_to")
    if not APPLIES_TO_RE.match(applies_to):
        raise RowRejected(
            "bad applies_to",
            f"applies_to {applies_to!r} is not <dedicated|on_prem|option>.<field>",
        )
    confidence = _required(raw, "confidence").lower()
    if confidence not in Confidence.values:
        raise RowRejected(
            "bad confidence",
            f"confidence {text(raw, 'confidence')!r} is not one of {', '.join(Confidence.values)}",
        )
    return AssumptionRow(
        line_no=line_no,
        key=key,
        value=_amount(raw, "value", 14),
        unit=_required(raw, "unit"),
        applies_to=applies_to,
        stated_on=_stated_on(raw),
        source=_required(raw, "source"),
        confidence=confidence,
        notes=text(raw, "notes"),
    )


def token_prices_read(
    path: Path = TOKEN_PRICES_PATH, *, file_name: str | None = None
) -> MarketFile:
    """Read and check a token price table (columns ``provider``, ``model``,
    ``input_usd_per_million``, ``output_usd_per_million``, ``source``, ``stated_on``, ``notes``).
    Raise ``SourceError`` when the file cannot be read as a whole."""
    return _read(path, file_name or _data_name(path), TOKEN_PRICE_COLUMNS, _token_price_row)


def assumptions_read(path: Path = ASSUMPTIONS_PATH, *, file_name: str | None = None) -> MarketFile:
    """Read and check a table of sourced assumptions (columns ``key``, ``value``, ``unit``,
    ``applies_to``, ``stated_on``, ``source``, ``confidence``, ``notes``). Raise
    ``SourceError`` when the file cannot be read as a whole."""
    return _read(path, file_name or _data_name(path), ASSUMPTION_COLUMNS, _assumption_row)


def _data_name(path: Path) -> str:
    """A shipped file's name relative to ``hardware/data/``; another file's own name."""
    try:
        return path.resolve().relative_to(DATA_DIR).as_posix()
    except ValueError:
        return path.name


def _content(row: TokenPriceRow | AssumptionRow) -> dict[str, Any]:
    """What a row states: every field but its line."""
    return {f.name: getattr(row, f.name) for f in fields(row) if f.name != "line_no"}


def _apply(
    model: type[Model],
    identity: tuple[str, ...],
    read: MarketFile,
    observed_at: datetime | None,
) -> MarketLoadReport:
    report = read.report
    result = MarketLoadReport(
        file_name=report.file_name,
        rows_read=report.rows_read,
        rejections=list(report.rejections),
        undated=sum(1 for row in read.rows if row.stated_on is None),
    )
    if not read.rows:
        return result
    observed_at = observed_at or timezone.now()
    manager = model._default_manager
    current: dict[tuple, Any] = {}
    for obj in manager.order_by(*identity, "first_seen", "pk"):
        current[tuple(getattr(obj, name) for name in identity)] = obj  # latest wins
    hand = hand_edited_ids(model=model, ids=[obj.pk for obj in current.values()])
    new_rows: list[Model] = []
    seen_again: list[Model] = []
    for row in read.rows:
        content = _content(row)
        stored = current.get(tuple(content[name] for name in identity))
        if stored is not None and all(getattr(stored, k) == v for k, v in content.items()):
            if stored.source_sha256 != report.sha256 and stored.last_seen < observed_at:
                stored.last_seen = observed_at
                seen_again.append(stored)
            result.unchanged += 1
            continue
        if stored is not None and stored.pk in hand:
            differing = ", ".join(
                f"{k} {getattr(stored, k)!s} (edited by hand) / file {v!s}"
                for k, v in content.items()
                if getattr(stored, k) != v
            )
            result.rejections.append(
                Rejection(report.file_name, row.line_no, "hand-edited value kept", differing)
            )
            continue
        if stored is not None and stored.first_seen >= observed_at:
            result.rejections.append(
                Rejection(
                    report.file_name, row.line_no, "older than the stored value",
                    f"observed {observed_at:%Y-%m-%d %H:%M} but the stored one is from "
                    f"{stored.first_seen:%Y-%m-%d %H:%M}",
                )
            )  # fmt: skip
            continue
        new_rows.append(
            model(
                **content,
                first_seen=observed_at,
                last_seen=observed_at,
                source_name=report.file_name,
                source_sha256=report.sha256,
            )
        )
    for new in new_rows:
        new.full_clean(validate_unique=False, validate_constraints=False)
    if new_rows:
        bulk_create_with_history(
            new_rows, model, default_change_reason=f"loaded from {report.file_name}"
        )
    if seen_again:
        manager.bulk_update(seen_again, ["last_seen"])
    result.created = len(new_rows)
    return result


@transaction.atomic
def token_prices_apply(
    read: MarketFile, *, observed_at: datetime | None = None
) -> MarketLoadReport:
    """Store the token prices of a file read by ``token_prices_read`` (see the module)."""
    return _apply(TokenPrice, ("provider", "model"), read, observed_at)


@transaction.atomic
def assumptions_apply(read: MarketFile, *, observed_at: datetime | None = None) -> MarketLoadReport:
    """Store the sourced assumptions of a file read by ``assumptions_read`` (see the module)."""
    return _apply(Assumption, ("key",), read, observed_at)


@transaction.atomic
def token_prices_load(
    path: Path = TOKEN_PRICES_PATH, *, observed_at: datetime | None = None
) -> MarketLoadReport:
    """Read, check and store a token price table (idempotent: loading it twice changes nothing).
    Raise ``SourceError`` when the file cannot be read as a whole; then nothing is written."""
    return token_prices_apply(token_prices_read(path), observed_at=observed_at)


@transaction.atomic
def assumptions_load(
    path: Path = ASSUMPTIONS_PATH, *, observed_at: datetime | None = None
) -> MarketLoadReport:
    """Read, check and store a table of sourced assumptions (idempotent: loading it twice
    changes nothing). Raise ``SourceError`` when the file cannot be read as a whole."""
    return assumptions_apply(assumptions_read(path), observed_at=observed_at)
