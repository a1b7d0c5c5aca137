"""Internet egress tiers (``hardware/data/prices/egress_tiers.csv``) -> plain tier rows.

The contract's form: per provider, tiers in rising order of ``up_to_tb`` (cumulative TB per
month; empty = no limit, the last tier), each with its ``usd_per_gb``. A free allowance is a first
tier priced 0, stated as 0 by the source. ``source`` "same" repeats the provider's previous source.
When the source stated the tiers is the file's date (``stated_on.csv``), not a column.
"""

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from .common import (
    ParseReport,
    RowRejected,
    decimal_or_none,
    file_sha256,
    read_csv,
    text,
)

REQUIRED_COLUMNS = ("provider", "up_to_tb", "usd_per_gb")


@dataclass(frozen=True)
class EgressTierRow:
    """One egress tier: traffic up to ``up_to_tb`` [TB/month] (``None``: no limit) [USD/GB]."""

    provider: str
    up_to_tb: Decimal | None
    usd_per_gb: Decimal
    scope: str
    source: str
    line_no: int


def parse_egress_tiers(
    path: Path, *, providers: set[str] | None = None, file_name: str | None = None
) -> tuple[list[EgressTierRow], ParseReport]:
    """Parse the egress tier table; a provider whose tiers are out of order is rejected whole.

    With ``providers``, rows of other providers are rejected ("unknown provider").
    """
    report = ParseReport(file_name=file_name or path.name, sha256=file_sha256(path))
    _, records = read_csv(path, REQUIRED_COLUMNS)
    by_provider: dict[str, list[EgressTierRow]] = {}
    last_source: dict[str, str] = {}
    for line_no, raw in records:
        report.rows_read += 1
        try:
            provider = text(raw, "provider").lower()
            if not provider:
                raise RowRejected("no provider", "provider is empty")
            if providers is not None and provider not in providers:
                raise RowRejected("unknown provider", f"{provider!r} is not a known provider")
            usd_per_gb = decimal_or_none(raw, "usd_per_gb")
            if usd_per_gb is None:
                raise RowRejected("no price", "usd_per_gb is empty")
            up_to_tb = decimal_or_none(raw, "up_to_tb")
            if up_to_tb == 0:
                raise RowRejected("bad number", "up_to_tb must be above 0 (empty = no limit)")
        except RowRejected as exc:
            report.reject(line_no, exc)
            continue
        source = text(raw, "source")
        if source.lower() == "same":
            source = last_source.get(provider, "")
        last_source[provider] = source
        by_provider.setdefault(provider, []).append(
            EgressTierRow(
                provider, up_to_tb, usd_per_gb, text(raw, "scope"), source, line_no,
            )
        )  # fmt: skip
    rows: list[EgressTierRow] = []
    for tiers in by_provider.values():
        problem = _order_problem(tiers)
        if problem:
            for tier in tiers:
                report.reject(tier.line_no, RowRejected("tiers out of order", problem))
            continue
        rows.extend(tiers)
    report.rows_accepted = report.rows_read - len({r.line_no for r in report.rejections})
    return rows, report


def _order_problem(tiers: list[EgressTierRow]) -> str:
    bounds = [t.up_to_tb for t in tiers]
    provider = tiers[0].provider
    if bounds[-1] is not None:
        return f"{provider}: the last tier must have no limit (empty up_to_tb)"
    finite = [b for b in bounds[:-1] if b is not None]
    if len(finite) < len(bounds) - 1:
        return f"{provider}: only the last tier may have no limit"
    if any(a >= b for a, b in zip(finite, finite[1:], strict=False)):
        return f"{provider}: up_to_tb must rise from tier to tier"
    return ""
