"""Internet egress tiers (``hardware/data/prices/egress_tiers.csv``) -> plain tier rows, and the
rule every list of tiers keeps.

The contract's form (docs/scenario-format.md): per provider, tiers in rising order of
``up_to_tb`` (cumulative TB per month; empty = no limit), strictly increasing, the last one and
only the last one without limit, each with its ``usd_per_gb``. ``tier_order_problem`` is that
rule, in one place: the file parser here, the Oracle feed's parser, the catalog API's writes and
the admin all ask it. A free allowance is a first
tier priced 0, stated as 0 by the source. ``source`` "same" repeats the provider's previous source.
When the source stated the tiers is the file's date (``stated_on.csv``), not a column.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from hardware.sources.common import (
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


def tb_text(up_to_tb: Decimal) -> str:
    """A bound as written for people: ``10``, not ``10.0000`` [TB]."""
    return f"{up_to_tb.normalize():f}"


def tier_order_problem(
    bounds: Sequence[Decimal | None], *, complete: bool = True
) -> tuple[int, str] | None:
    """Where a provider's tier bounds (``up_to_tb`` in their order, ``None``: no limit) break the
    format's rule, as ``(index of the first tier at fault, why)``; ``None`` when they keep it.

    The rule: bounds strictly increasing, only the last tier without limit, and (``complete``,
    the whole list of a provider) the last one without limit. With ``complete`` false the list
    is a part that others finish (tiers added to a provider's stored ones).
    """
    previous: Decimal | None = None
    last = len(bounds) - 1
    for index, bound in enumerate(bounds):
        if bound is None:
            if index != last:
                return index, "only the last tier may have no limit"
            continue
        if previous is not None and bound <= previous:
            return index, (
                f"up_to_tb must rise from tier to tier: {tb_text(bound)} TB comes after "
                f"{tb_text(previous)} TB"
            )
        previous = bound
    if complete and bounds and bounds[-1] is not None:
        return last, "the last tier must have no limit (empty up_to_tb)"
    return None


def _order_problem(tiers: list[EgressTierRow]) -> str:
    found = tier_order_problem([t.up_to_tb for t in tiers])
    return f"{tiers[0].provider}: {found[1]}" if found else ""
