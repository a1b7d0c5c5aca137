"""What the catalog cannot name: the GPU and instance names a feed used that could not be mapped.

Every refresh (``hardware.refresh.pipeline``, scheduled or by hand) and every ``load_catalog``
(``hardware.catalog_load``) hands its parse reports to ``coverage_record``, which keeps, per feed
and run, one ``hardware.models.CoverageReport`` and one ``hardware.models.UnmappedName`` per name
and reason: the rows naming it and the first of them as an example. A name counts as unmapped when
its row was rejected for one of ``UNMAPPED_REASONS`` (an unknown alias, a variant the alias table
cannot settle, an instance type or part no instance table lists), so a catalog editor adds an
alias or an instance row instead of guessing. ``coverage_reports`` reads them newest first;
``regions_without_geography`` lists the regions no geography was found for.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, OuterRef, QuerySet, Subquery

from hardware.models import CoverageReport, NameKind, RefreshRun, Region, UnmappedName
from hardware.sources.common import ParseReport

UNMAPPED_REASONS = {
    "unknown GPU name": NameKind.GPU,
    "GPU variant not settled": NameKind.GPU,
    "not a known GPU instance": NameKind.INSTANCE,
    "unknown GPU part": NameKind.INSTANCE,
    "unknown GPU family": NameKind.INSTANCE,
}
"""The rejection reasons that mean "the catalog could not name this", and what the name names."""
NOT_LISTED = "(more rows, not listed one by one)"
KEEP_EXAMPLE = 400


@dataclass(frozen=True)
class Unmapped:
    """One name a feed used and the catalog could not map: on how many rows, the first of them."""

    kind: str
    name: str
    reason: str
    rows: int
    example_line: int | None
    example: str


def unmapped_names(report: ParseReport) -> list[Unmapped]:
    """The names ``report``'s rejected rows could not map, most rows first (pure).

    A rejection without a subject is counted under its detail's name; rows a large feed only
    counted (``dropped_by_reason``) under ``NOT_LISTED``.
    """
    found: dict[tuple[str, str, str], list] = {}
    for rejection in report.rejections:
        kind = UNMAPPED_REASONS.get(rejection.reason)
        if kind is None:
            continue
        name = (rejection.subject or rejection.detail).strip()[:200]
        key = (str(kind), name, rejection.reason)
        if key in found:
            found[key][0] += 1
        else:
            found[key] = [1, rejection.line_no, rejection.detail[:KEEP_EXAMPLE]]
    for reason, count in report.dropped_by_reason.items():
        kind = UNMAPPED_REASONS.get(reason)
        if kind is not None and count:
            found[(str(kind), NOT_LISTED, reason)] = [count, None, f"{count} more row(s)"]
    names = [
        Unmapped(kind, name, reason, rows, line, example)
        for (kind, name, reason), (rows, line, example) in found.items()
    ]
    return sorted(names, key=lambda u: (-u.rows, u.kind, u.name, u.reason))


def coverage_record(
    *,
    source: str,
    provider: str,
    report: ParseReport,
    recorded_at: datetime,
    refresh_run: RefreshRun | None = None,
) -> CoverageReport:
    """Keep what one feed could not name (one report, one row per name and reason)."""
    names = unmapped_names(report)
    coverage = CoverageReport.objects.create(
        source=source[:40],
        provider=provider[:64],
        feed_name=report.file_name[:300],
        recorded_at=recorded_at,
        refresh_run=refresh_run,
        rows_read=report.rows_read,
        rows_unmapped=sum(n.rows for n in names),
    )
    UnmappedName.objects.bulk_create(
        [
            UnmappedName(
                report=coverage,
                kind=n.kind,
                name=n.name,
                reason=n.reason,
                rows=n.rows,
                example_line=n.example_line,
                example=n.example,
            )
            for n in names
        ]
    )
    return coverage


def coverage_reports(*, source: str = "", unmapped_only: bool = False) -> QuerySet[CoverageReport]:
    """Every feed's coverage, newest first, with its unmapped names (``source``: one source's;
    ``unmapped_only``: only the feeds that named something the catalog could not map)."""
    reports = CoverageReport.objects.select_related("refresh_run").prefetch_related("names")
    if source:
        reports = reports.filter(source=source)
    if unmapped_only:
        reports = reports.filter(rows_unmapped__gt=0)
    return reports.order_by("-recorded_at", "-pk")


def coverage_sources() -> list[str]:
    """The sources that have a coverage report, by name."""
    return sorted(set(CoverageReport.objects.order_by().values_list("source", flat=True)))


def regions_without_geography() -> QuerySet[Region]:
    """The regions no geography was found for, with how many price rows (history included) it has."""
    return (
        Region.objects.filter(geography="")
        .select_related("provider")
        .annotate(price_rows=Count("prices"))
        .order_by("provider__slug", "code")
    )


def latest_coverage(*, source: str = "") -> QuerySet[CoverageReport]:
    """The newest report of each source, provider and feed (``source``: of that source only), by
    source, provider and feed."""
    newest = CoverageReport.objects.filter(
        source=OuterRef("source"), provider=OuterRef("provider"), feed_name=OuterRef("feed_name")
    ).order_by("-recorded_at", "-pk")
    reports = CoverageReport.objects.filter(pk=Subquery(newest.values("pk")[:1]))
    if source:
        reports = reports.filter(source=source)
    return reports.order_by("source", "provider", "feed_name")
