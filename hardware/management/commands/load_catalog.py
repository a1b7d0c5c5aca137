"""``python manage.py load_catalog``: load the catalog shipped with the project. Idempotent.

Loads the GPU table, the SkyPilot price catalogs (every ``<cloud>.csv`` of the folder; the file
name is the provider, one not known yet is created) through the alias table, the egress tiers and
the demonstration quotes. Every file is read and checked before anything is written; prices are
then applied in one transaction. Per file it reports rows accepted, rejected (by reason; unknown
GPU names with file and line) and unconfirmed (a GPU whose variant the name does not settle).
Rejected rows do not fail the command; an unreadable file or a broken table does, naming the
file, and then nothing is written. Values edited by hand (prices, egress tiers) are kept and
reported, never reset.

Each price carries the date its source stated it: for the shipped files, the date the data README
gives (``hardware/data/stated_on.csv``), or ``--stated-on``; a file neither dates is taken as
stating its prices the day it is loaded. Reloading a file the catalog already holds changes no
date.
"""

from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone

from hardware.committed_services import CommittedLoad
from hardware.gpu_table import GPU_TABLE_PATH, GpuTableError, read_gpu_table
from hardware.selectors import current_prices
from hardware.services import (
    demo_quotes_load,
    egress_tiers_load,
    gpu_models_load,
    instance_prices_load,
)
from hardware.sources.aliases import ALIASES_PATH, read_aliases
from hardware.sources.common import ParseReport, Rejection, SourceError
from hardware.sources.egress import parse_egress_tiers
from hardware.sources.seed import read_stated_on
from hardware.sources.skypilot import parse_skypilot_vms

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
SKYPILOT_DIR = DATA_DIR / "prices" / "skypilot-v8"
EGRESS_PATH = DATA_DIR / "prices" / "egress_tiers.csv"


class Command(BaseCommand):
    help = (
        "Load the catalog shipped with the project: GPU table, SkyPilot prices, egress tiers, "
        "demo quotes. Loading the same files twice adds nothing and changes no date."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--skypilot-dir",
            type=Path,
            default=SKYPILOT_DIR,
            help="folder with the SkyPilot vms.csv copies named <cloud>.csv",
        )
        parser.add_argument("--egress", type=Path, default=EGRESS_PATH, help="egress tier table")
        parser.add_argument("--aliases", type=Path, default=ALIASES_PATH, help="GPU alias table")
        parser.add_argument("--no-demo", action="store_true", help="skip the demo quotes")
        parser.add_argument(
            "--stated-on",
            type=date.fromisoformat,
            default=None,
            help="the date the price files' source stated them (YYYY-MM-DD); default: the date "
            "hardware/data/stated_on.csv gives for each file",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.verbosity = options["verbosity"]
        try:
            gpu_rows = read_gpu_table()
        except (OSError, GpuTableError) as exc:
            raise CommandError(f"cannot read the GPU table: {exc}") from exc
        try:
            aliases = read_aliases(options["aliases"], known_slugs={r.slug for r in gpu_rows})
            parsed = []
            paths = sorted(options["skypilot_dir"].glob("*.csv"))
            if not paths:
                raise SourceError(f"{options['skypilot_dir']}: no <cloud>.csv file")
            for path in paths:  # any cloud: the file name is the provider
                cloud = path.stem
                name = f"{options['skypilot_dir'].name}/{path.name}"
                parsed.append(
                    parse_skypilot_vms(path, cloud=cloud, aliases=aliases, file_name=name)
                )
            egress_rows, egress_report = parse_egress_tiers(options["egress"])
            stated = read_stated_on()
            committed = CommittedLoad.read(gpu_rows=gpu_rows, aliases_path=options["aliases"])
        except SourceError as exc:
            raise CommandError(f"nothing loaded: {exc}") from exc

        observed_at = timezone.now()

        def stated_on(file_name: str) -> date:
            """The date the file's source stated it; the load day when nothing dates it."""
            return (
                options["stated_on"]
                or stated.get(f"prices/{file_name}")
                or timezone.localdate(observed_at)
            )

        price_dates = [stated_on(report.file_name) for _, report in parsed]
        egress_stated_on = stated_on(egress_report.file_name)
        with transaction.atomic():
            counts = gpu_models_load(rows=gpu_rows)
            price_counts = [
                instance_prices_load(
                    rows=rows,
                    source_name=report.file_name,
                    source_sha256=report.sha256,
                    observed_at=observed_at,
                    stated_on=day,
                )
                for (rows, report), day in zip(parsed, price_dates, strict=True)
            ]
            egress_counts = egress_tiers_load(
                rows=egress_rows, source_name=egress_report.file_name, stated_on=egress_stated_on
            )
            committed.apply(observed_at=observed_at)  # after the offers SkyPilot creates
            demo_counts = None if options["no_demo"] else demo_quotes_load()

        self.stdout.write(
            f"{GPU_TABLE_PATH.name}: {len(gpu_rows)} rows read, {counts.created} created, "
            f"{counts.updated} updated, {counts.unchanged} unchanged"
        )
        for (rows, report), pc, day in zip(parsed, price_counts, price_dates, strict=True):
            report.rejections.extend(pc.rejections)
            self._report(report)
            self.stdout.write(
                f"  {len(rows)} prices stated on {day.isoformat()}: {pc.created} new, "
                f"{pc.unchanged} unchanged; {pc.offers_created} new offers, "
                f"{pc.regions_created} new regions"
            )
        for committed_report, lines in committed.summaries():
            self._report(committed_report)
            self.stdout.write("\n".join(lines))
        self._report(egress_report)
        self.stdout.write(
            f"  egress tiers: {egress_counts.created} created, {egress_counts.updated} updated, "
            f"{egress_counts.unchanged} unchanged, {egress_counts.deleted} removed"
        )
        for kept in egress_counts.kept:
            self.stdout.write(f"  kept, not reloaded: {kept}")
        if demo_counts is not None:
            self.stdout.write(
                f"demo quotes: {demo_counts.created} created, {demo_counts.unchanged} already there"
            )
        self.stdout.write(f"current prices: {current_prices().count()}")

    def _report(self, report: ParseReport) -> None:
        rejected = len({r.line_no for r in report.rejections})
        by_reason = ", ".join(f"{reason}: {n}" for reason, n in report.rejected_by_reason.items())
        self.stdout.write(
            f"{report.file_name}: {report.rows_read} rows read, "
            f"{report.rows_read - rejected} accepted, {rejected} rejected"
            + (f" ({by_reason})" if by_reason else "")
            + f", {report.rows_unconfirmed} unconfirmed"
        )
        by_gpu: dict[tuple[str, str], list[str]] = defaultdict(list)
        for instance_type, slug, evidence in report.unconfirmed:
            by_gpu[(slug, evidence)].append(instance_type)
        for (slug, evidence), instances in by_gpu.items():
            self.stdout.write(
                f"  unconfirmed GPU variant, filed as {slug}: {', '.join(instances)} ({evidence})"
            )
        groups: dict[tuple[str, str], list[Rejection]] = defaultdict(list)
        for r in report.rejections:
            groups[(r.reason, r.subject)].append(r)
        for (reason, subject), items in groups.items():
            lines = ", ".join(str(r.line_no) for r in items)
            what = f"{reason} {subject!r}" if subject else reason
            if self.verbosity >= 2 or reason == "unknown GPU name":
                self.stdout.write(f"  {what} at {report.file_name} line(s) {lines}")
                if self.verbosity >= 2:
                    for r in items:
                        self.stdout.write(f"    {r}")
            else:
                example = "e.g. " if len(items) > 1 else ""
                self.stdout.write(f"  {what} at line(s) {lines}: {example}{items[0].detail}")
