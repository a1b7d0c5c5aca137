"""The catalog shipped with the project (``hardware/data/``), loaded whole: what ``load_catalog``
and ``demo`` run, and the tests' catalog. Every file is read and checked first; then everything is
written in one transaction by the services of ``hardware.services`` and ``hardware.hosted.load``.
"""

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from hardware.committed.services import CommittedLoad
from hardware.coverage import coverage_record
from hardware.data_files import ALIASES_PATH, EGRESS_PATH, GPU_TABLE_PATH, SKYPILOT_DIR
from hardware.gpu_table import GpuTableError, read_gpu_table
from hardware.hosted.load import (
    MarketLoadReport,
    assumptions_apply,
    assumptions_read,
    token_prices_apply,
    token_prices_read,
)
from hardware.models import CoverageReport
from hardware.selectors import current_prices
from hardware.services import (
    LoadCounts,
    PriceLoadCounts,
    demo_quotes_load,
    egress_tiers_load,
    gpu_models_load,
    instance_prices_load,
)
from hardware.sources.aliases import read_aliases
from hardware.sources.common import ParseReport, SourceError
from hardware.sources.egress import parse_egress_tiers
from hardware.sources.seed import read_stated_on
from hardware.sources.skypilot import parse_skypilot_vms


class CatalogLoadError(ValueError):
    """The shipped catalog cannot be loaded (an unreadable file, a broken table): names the file.
    Nothing was written."""


@dataclass
class PriceFileLoad:
    """One price file of a catalog load: what its parser saw and what the load did with it."""

    report: ParseReport
    rows: int
    stated_on: date
    counts: PriceLoadCounts


@dataclass
class CatalogLoad:
    """What ``catalog_load`` read and did, file by file; ``lines`` puts it in words."""

    gpu_table: str
    gpu_rows: int
    gpus: LoadCounts
    price_files: list[PriceFileLoad]
    egress_report: ParseReport
    egress: LoadCounts
    demo_quotes: LoadCounts | None
    current_prices: int
    market: list[MarketLoadReport]
    committed: list[tuple[ParseReport, list[str]]]

    def lines(self, *, verbosity: int = 1) -> list[str]:
        """The load in a few lines per file (``verbosity`` 2: every rejected row too)."""
        g = self.gpus
        out = [
            f"{self.gpu_table}: {self.gpu_rows} rows read, {g.created} created, "
            f"{g.updated} updated, {g.unchanged} unchanged"
        ]
        for price_file in self.price_files:
            pc = price_file.counts
            out += price_file.report.lines(verbosity=verbosity)
            out.append(
                f"  {price_file.rows} prices stated on {price_file.stated_on.isoformat()}: "
                f"{pc.created} new, {pc.unchanged} unchanged; {pc.offers_created} new offers, "
                f"{pc.regions_created} new regions"
            )
        for report, done in self.committed:
            out += report.lines(verbosity=verbosity) + done
        out += self.egress_report.lines(verbosity=verbosity)
        e = self.egress
        out.append(
            f"  egress tiers: {e.created} created, {e.updated} updated, "
            f"{e.unchanged} unchanged, {e.deleted} removed"
        )
        out += [f"  kept, not reloaded: {kept}" for kept in e.kept]
        if self.demo_quotes is not None:
            out.append(
                f"demo quotes: {self.demo_quotes.created} created, "
                f"{self.demo_quotes.unchanged} already there"
            )
        out.append(f"current prices: {self.current_prices}")
        out += [line for report in self.market for line in report.lines()]
        return out


def catalog_load(
    *,
    skypilot_dir: Path = SKYPILOT_DIR,
    egress_path: Path = EGRESS_PATH,
    aliases_path: Path = ALIASES_PATH,
    gpu_table_path: Path = GPU_TABLE_PATH,
    demo: bool = True,
    stated_on: date | None = None,
) -> CatalogLoad:
    """Load the catalog shipped with the project (``hardware/data/``); idempotent.

    The GPU table, every SkyPilot price catalog of ``skypilot_dir`` (``<cloud>.csv``: the file
    name is the provider, one not known yet is created) through the alias table, the egress
    tiers and, with ``demo``, the demonstration quotes. Every file is read and checked first
    (``CatalogLoadError`` naming the file, and nothing written, when one cannot be used); then
    everything is written in one transaction. Rejected rows do not stop the load; values edited
    by hand (prices, egress tiers) are kept and reported, never reset.

    Each price carries the date its source stated it: ``stated_on``, else the date
    ``hardware/data/stated_on.csv`` gives the file, else the day of the load.
    """
    try:
        gpu_rows = read_gpu_table(gpu_table_path)
    except (OSError, GpuTableError) as exc:
        raise CatalogLoadError(f"cannot read the GPU table: {exc}") from exc
    try:
        aliases = read_aliases(aliases_path, known_slugs={r.slug for r in gpu_rows})
        paths = sorted(skypilot_dir.glob("*.csv"))
        if not paths:
            raise SourceError(f"{skypilot_dir}: no <cloud>.csv file")
        parsed = [  # any cloud: the file name is the provider
            parse_skypilot_vms(
                path, cloud=path.stem, aliases=aliases, file_name=f"{skypilot_dir.name}/{path.name}"
            )
            for path in paths
        ]
        egress_rows, egress_report = parse_egress_tiers(egress_path)
        stated = read_stated_on()
        market_files = [token_prices_read(), assumptions_read()]
        committed = CommittedLoad.read(gpu_rows=gpu_rows, aliases_path=aliases_path)
    except SourceError as exc:
        raise CatalogLoadError(f"nothing loaded: {exc}") from exc

    observed_at = timezone.now()

    def stated_day(file_name: str) -> date:
        """The date the file's source stated it; the load day when nothing dates it."""
        return stated_on or stated.get(f"prices/{file_name}") or timezone.localdate(observed_at)

    with transaction.atomic():
        gpus = gpu_models_load(rows=gpu_rows)
        price_files = []
        for rows, report in parsed:
            day = stated_day(report.file_name)
            counts = instance_prices_load(
                rows=rows,
                source_name=report.file_name,
                source_sha256=report.sha256,
                observed_at=observed_at,
                stated_on=day,
            )
            report.rejections.extend(counts.rejections)
            price_files.append(PriceFileLoad(report, len(rows), day, counts))
        egress = egress_tiers_load(
            rows=egress_rows,
            source_name=egress_report.file_name,
            stated_on=stated_day(egress_report.file_name),
        )
        committed.apply(observed_at=observed_at)  # after the offers SkyPilot creates
        for path, (_, report) in zip(paths, parsed, strict=True):
            coverage_record(
                source=CoverageReport.LOAD_CATALOG,
                provider=path.stem,
                report=report,
                recorded_at=observed_at,
            )
        for report in (committed.committed_report, committed.epoch_report):
            coverage_record(
                source=CoverageReport.LOAD_CATALOG,
                provider="",
                report=report,
                recorded_at=observed_at,
            )
        demo_quotes = demo_quotes_load() if demo else None
        market = [
            token_prices_apply(market_files[0], observed_at=observed_at),
            assumptions_apply(market_files[1], observed_at=observed_at),
        ]
    return CatalogLoad(
        gpu_table=gpu_table_path.name,
        gpu_rows=len(gpu_rows),
        gpus=gpus,
        price_files=price_files,
        egress_report=egress_report,
        egress=egress,
        demo_quotes=demo_quotes,
        current_prices=current_prices().count(),
        market=market,
        committed=list(committed.summaries()),
    )
