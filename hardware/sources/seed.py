"""The catalog's own data files beside the GPU table (``hardware/data/``) -> plain rows.

- ``providers.csv``: the providers the shipped catalog knows (slug, name, kind, website and what
  they publish about egress);
- ``demo_dedicated_quotes.csv`` and ``demo_purchase_quotes.csv``: demonstration quotes;
- ``stated_on.csv``: for each shipped price file, the date its source stated the prices (as the
  data README gives it).

A broken file raises ``SourceError`` naming the file and line: these are the project's own files.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from hardware.data_files import (
    DEMO_DEDICATED_PATH,
    DEMO_PURCHASE_PATH,
    PROVIDERS_PATH,
    STATED_ON_PATH,
)
from hardware.sources.common import SourceError, read_csv, text

PROVIDER_KINDS = (
    "hyperscaler",
    "gpu-cloud",
    "marketplace",
    "dedicated-host",
    "reseller",
    "colocation",
)
QUOTE_STATUSES = ("draft", "received", "accepted", "expired")
DEDICATED_COLUMNS = {
    "vendor": "text",
    "reference": "text",
    "server_description": "text",
    "gpu": "text",
    "gpus_per_server": "int",
    "usd_per_server_month": "decimal",
    "setup_usd": "decimal",
    "term_months": "int",
    "included_egress_tb": "decimal",
    "overage_usd_per_tb": "decimal",
    "valid_until": "date",
    "status": "status",
}
PURCHASE_COLUMNS = {
    "vendor": "text",
    "reference": "text",
    "server_description": "text",
    "gpu": "text",
    "gpus_per_server": "int",
    "capex_usd_per_server": "decimal",
    "server_kw": "decimal",
    "lead_time_months": "int",
    "support_fraction_per_year": "decimal",
    "valid_until": "date",
    "status": "status",
}


@dataclass(frozen=True)
class ProviderRow:
    """A provider of the shipped catalog."""

    slug: str
    name: str
    kind: str
    website: str
    egress_note: str


def read_providers(path: Path = PROVIDERS_PATH) -> dict[str, ProviderRow]:
    """The providers by slug."""
    _, rows = read_csv(path, ("slug", "name", "kind", "website", "egress_note"))
    providers: dict[str, ProviderRow] = {}
    for line_no, raw in rows:
        row = ProviderRow(*(text(raw, c) for c in ProviderRow.__dataclass_fields__))
        if not row.slug or not row.name:
            raise SourceError(f"{path.name}:{line_no}: slug and name are required")
        if row.kind not in PROVIDER_KINDS:
            raise SourceError(f"{path.name}:{line_no}: kind {row.kind!r} is not known")
        if row.slug in providers:
            raise SourceError(f"{path.name}:{line_no}: slug {row.slug!r} repeats")
        providers[row.slug] = row
    return providers


def _typed(kind: str, cell: str, where: str, column: str) -> Any:
    try:
        if kind == "int":
            return int(cell)
        if kind == "decimal":
            value = Decimal(cell)
            if not value.is_finite():
                raise InvalidOperation
            return value
        if kind == "date":
            return date.fromisoformat(cell) if cell else None
    except (ValueError, InvalidOperation):
        raise SourceError(f"{where}: {column} {cell!r} is not a {kind}") from None
    if kind == "status" and cell not in QUOTE_STATUSES:
        raise SourceError(f"{where}: status {cell!r} is not one of {', '.join(QUOTE_STATUSES)}")
    return cell


def _read_quotes(path: Path, columns: dict[str, str]) -> list[dict[str, Any]]:
    _, rows = read_csv(path, tuple(columns))
    quotes = []
    for line_no, raw in rows:
        where = f"{path.name}:{line_no}"
        quote = {}
        for column, kind in columns.items():
            cell = text(raw, column)
            if not cell and kind != "date":
                raise SourceError(f"{where}: {column} is required")
            quote[column] = _typed(kind, cell, where, column)
        quotes.append(quote)
    return quotes


def read_demo_quotes(
    dedicated_path: Path = DEMO_DEDICATED_PATH, purchase_path: Path = DEMO_PURCHASE_PATH
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The demonstration quotes: (dedicated, purchase), each a list of field -> typed value
    (``gpu`` is the GPU slug)."""
    return (
        _read_quotes(dedicated_path, DEDICATED_COLUMNS),
        _read_quotes(purchase_path, PURCHASE_COLUMNS),
    )


def read_stated_on(path: Path = STATED_ON_PATH) -> dict[str, date]:
    """The date each shipped price file's source stated its prices, by path under ``data/``."""
    _, rows = read_csv(path, ("file", "stated_on"))
    dates = {}
    for line_no, raw in rows:
        name = text(raw, "file")
        dates[name] = _typed("date", text(raw, "stated_on"), f"{path.name}:{line_no}", "stated_on")
        if not name or dates[name] is None:
            raise SourceError(f"{path.name}:{line_no}: file and stated_on are required")
    return dates
