"""``python manage.py refresh_prices SOURCE [--file PATH] [--provider SLUG] [--dry-run]``.

Refreshes one provider's prices from one feed through the pipeline of ``hardware.refresh.pipeline``
(parse, stage, validate, apply in one transaction, or hold for review) and prints the run's
summary. Sources: ``skypilot`` (a SkyPilot ``vms.csv``; the provider defaults to the file name
without extension, and without ``--file`` the shipped catalog of ``--provider`` is read), ``aws``
(an AWS Price List bulk offer file, streamed), ``aws-pricing-api`` (saved GetProducts pages;
``--file`` may be repeated), ``azure`` (saved Retail Prices API pages, repeated ``--file`` in
order), ``gcp`` (saved Cloud Billing Catalog SKU pages, likewise) and ``oracle`` (a saved price
list, GPU shapes and egress tiers). The scheduled refresh fetches the last three over HTTP
(``hardware.refresh.scheduled``). The command holds the source's lock while it works (the same lease
as the schedule and approvals; a dry run takes none).

Exit status: 0 applied or unchanged, 1 failed (a database error: one line on stderr, the run
failed), 2 bad arguments, 3 held for review, 4 another refresh of the source holds its lock
(nothing done, no run written).
"""

import re
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import Error as DatabaseError

from hardware.models import RefreshStatus
from hardware.refresh.pipeline import (
    SOURCES,
    RefreshDatabaseError,
    RefreshLocked,
    price_refresh,
    refresh_summary,
)
from hardware.sources.registry import HTTP_SOURCES, PRICE_SOURCES

MULTI_FILE_SOURCES = frozenset(name for name, s in PRICE_SOURCES.items() if s.many_files)

EXIT_STATUS = {
    RefreshStatus.APPLIED: 0,
    RefreshStatus.UNCHANGED: 0,
    RefreshStatus.HELD: 3,
    RefreshStatus.FAILED: 1,
}
EXIT_LOCKED = 4
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class Command(BaseCommand):
    help = (
        "Refresh one provider's prices from a price feed; hold it for review when it looks wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", help=f"feed format: {', '.join(SOURCES)}")
        parser.add_argument(
            "--file", dest="files", type=Path, action="append", default=[], help="the feed file"
        )
        parser.add_argument("--provider", help="provider slug (default: from the source)")
        parser.add_argument(
            "--dry-run", action="store_true", help="say what the feed would do; store nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        source, files, provider = options["source"], options["files"], options["provider"]
        if source not in SOURCES:
            raise CommandError(
                f"source: {source!r} is not one of {', '.join(SOURCES)}", returncode=2
            )
        shipped = PRICE_SOURCES[source].provider_files
        if shipped is not None:
            if not files and not provider:
                raise CommandError(f"--file or --provider is required for {source}", returncode=2)
            provider = provider or files[0].stem.lower()
            files = files or [shipped / f"{provider}.csv"]
        else:
            provider = provider or PRICE_SOURCES[source].provider
            if not files:
                raise CommandError(f"--file is required for {source}", returncode=2)
        if source not in MULTI_FILE_SOURCES and len(files) > 1:
            raise CommandError(f"--file: {source} reads one file", returncode=2)
        if not SLUG.match(provider):
            raise CommandError(
                f"--provider: {provider!r} is not a slug (lower-case letters, digits, -)",
                returncode=2,
            )
        if source in HTTP_SOURCES and provider != HTTP_SOURCES[source].provider:
            raise CommandError(
                f"--provider: {source} feeds are {HTTP_SOURCES[source].provider}'s, not {provider!r}",
                returncode=2,
            )
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise CommandError(f"--file: no such file: {', '.join(missing)}", returncode=2)

        try:
            run = price_refresh(
                source=source, paths=files, provider=provider, dry_run=options["dry_run"]
            )
        except RefreshLocked as exc:
            self.stderr.write(f"refresh {source} {provider}: not started: {exc}")
            sys.exit(EXIT_LOCKED)
        except (RefreshDatabaseError, DatabaseError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            self.stderr.write(f"refresh {source} {provider}: failed: {reason}")
            sys.exit(1)
        lines = refresh_summary(run=run)
        if options["dry_run"]:
            lines[0] += " (dry run: nothing stored)"
        self.stdout.write("\n".join(lines))
        status = EXIT_STATUS.get(RefreshStatus(run.status), 1)
        if status:
            sys.exit(status)
