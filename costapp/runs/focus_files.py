"""The FOCUS forward plan as a file, streamed: CSV (a header, then one line per row) or Parquet
(row groups of ``ROW_GROUP`` rows, each written out as soon as it is full), so that memory
holds one row group however long the plan."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from costapp.runs.focus import COLUMN_NAMES, FOCUS_COLUMNS

ROW_GROUP = 2_000
"""Rows per Parquet row group and per CSV chunk sent."""

_ARROW_TYPES = {
    "string": pa.string(),
    "decimal": pa.float64(),
    "integer": pa.int64(),
    "datetime": pa.timestamp("s", tz="UTC"),
}

FOCUS_SCHEMA = pa.schema([(name, _ARROW_TYPES[kind]) for name, kind in FOCUS_COLUMNS])
"""The Parquet file's columns: FOCUS's strings as strings (ids among them), its decimals as
float64, its date-times as UTC timestamps."""


def text_cell(value: str) -> str:
    """A text cell of the CSV as written."""
    return value


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, str):
        return text_cell(value)
    return value


def _chunks(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= ROW_GROUP:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def focus_csv_stream(rows: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The CSV, UTF-8, a chunk of lines at a time."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMN_NAMES)
    yield out.getvalue().encode("utf-8")
    for chunk in _chunks(rows):
        out.seek(0)
        out.truncate()
        writer.writerows([[_csv_cell(row[name]) for name in COLUMN_NAMES] for row in chunk])
        yield out.getvalue().encode("utf-8")


class _Sink:
    """A write-only file the Parquet writer writes into, emptied after each row group."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts = []
        return data


def focus_parquet_stream(rows: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The Parquet file, a row group at a time, then its footer."""
    sink = _Sink()
    writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), FOCUS_SCHEMA)
    for chunk in _chunks(rows):
        table = pa.Table.from_pylist(chunk, schema=FOCUS_SCHEMA)
        writer.write_table(table, row_group_size=ROW_GROUP)
        yield sink.take()
    writer.close()
    yield sink.take()
