"""Reading the GPU table shipped with the project (``hardware/data/gpus.csv``).

Plain Python, no database: used by ``load_catalog`` and, before the database is set up, by
``manage.py simulate``.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from hardware.data_files import GPU_TABLE_PATH
from hardware.sources.common import SourceError, read_csv

DECIMAL_FIELDS = (
    "memory_gb",
    "memory_bandwidth_tb_s",
    "bf16_dense_tflops",
    "fp16_dense_tflops",
    "fp8_dense_tflops",
    "fp4_dense_tflops",
    "tf32_dense_tflops",
    "int8_dense_tops",
    "fp32_tflops",
)
REQUIRED_FIELDS = ("slug", "name", "vendor", "memory_gb", "memory_bandwidth_tb_s")
TEXT_FIELDS = ("slug", "name", "vendor", "form_factor", "interconnect", "notes")


class GpuTableError(ValueError):
    """The GPU table cannot be read: names the file, line and column."""


@dataclass(frozen=True)
class GpuRow:
    """One row of the GPU table, typed; ``None`` where the table is empty."""

    slug: str
    name: str
    vendor: str
    form_factor: str
    memory_gb: Decimal
    memory_bandwidth_tb_s: Decimal
    bf16_dense_tflops: Decimal | None
    fp16_dense_tflops: Decimal | None
    fp8_dense_tflops: Decimal | None
    fp4_dense_tflops: Decimal | None
    tf32_dense_tflops: Decimal | None
    int8_dense_tops: Decimal | None
    fp32_tflops: Decimal | None
    tdp_w: int | None
    interconnect: str
    release_date: date | None
    notes: str


def read_gpu_table(path: Path = GPU_TABLE_PATH) -> list[GpuRow]:
    """Read and type every row of the GPU table; raise ``GpuTableError`` on a broken row."""
    try:
        _, records = read_csv(path, tuple(GpuRow.__dataclass_fields__))
    except SourceError as exc:
        raise GpuTableError(str(exc)) from None
    rows: list[GpuRow] = []
    seen: set[str] = set()
    for line_no, raw in records:
        rows.append(_parse_row(raw, path.name, line_no))
        if rows[-1].slug in seen:
            raise GpuTableError(f"{path.name}:{line_no}: slug {rows[-1].slug!r} repeats")
        seen.add(rows[-1].slug)
    return rows


def _parse_row(raw: dict[str, str], file_name: str, line_no: int) -> GpuRow:
    values: dict[str, object] = {}
    for field in REQUIRED_FIELDS:
        if not (raw.get(field) or "").strip():
            raise GpuTableError(f"{file_name}:{line_no}: {field} is required")
    for field in TEXT_FIELDS:
        values[field] = (raw.get(field) or "").strip()
    for field in DECIMAL_FIELDS:
        text = (raw.get(field) or "").strip()
        try:
            values[field] = Decimal(text) if text else None
        except InvalidOperation:
            raise GpuTableError(
                f"{file_name}:{line_no}: {field} {text!r} is not a number"
            ) from None
        if values[field] is not None and values[field] < 0:  # type: ignore[operator]
            raise GpuTableError(f"{file_name}:{line_no}: {field} must not be negative")
    tdp = (raw.get("tdp_w") or "").strip()
    try:
        values["tdp_w"] = int(tdp) if tdp else None
        text = (raw.get("release_date") or "").strip()
        values["release_date"] = date.fromisoformat(text) if text else None
    except ValueError as exc:
        raise GpuTableError(f"{file_name}:{line_no}: {exc}") from None
    return GpuRow(**values)  # type: ignore[arg-type]


def engine_figures(row: GpuRow) -> dict[str, float | None]:
    """The figures the engine uses for one GPU, as floats (``None`` where not available)."""

    def f(value: Decimal | None) -> float | None:
        return None if value is None else float(value)

    return {
        "memory_gb": f(row.memory_gb),
        "memory_bandwidth_tb_s": f(row.memory_bandwidth_tb_s),
        "bf16_dense_tflops": f(row.bf16_dense_tflops),
        "fp16_dense_tflops": f(row.fp16_dense_tflops),
        "fp8_dense_tflops": f(row.fp8_dense_tflops),
        "tf32_dense_tflops": f(row.tf32_dense_tflops),
    }
