"""``python manage.py load_catalog``: load the catalog shipped with the project. Idempotent.

The work is ``hardware.catalog_load.catalog_load``'s: the GPU table, the SkyPilot price catalogs
(every ``<cloud>.csv`` of the folder; the file name is the provider, one not known yet is created)
through the alias table, the egress tiers and the demonstration quotes. Every file is read and
checked before anything is written; prices are then applied in one transaction. Per file it
reports rows accepted, rejected (by reason; unknown GPU names with file and line) and unconfirmed
(a GPU whose variant the name does not settle). Rejected rows do not fail the command; an
unreadable file or a broken table does, naming the file, and then nothing is written. Values
edited by hand (prices, egress tiers) are kept and reported, never reset.

With ``--if-empty`` it loads only into an empty catalog (no GPU model yet) and otherwise does
nothing: what the web container runs on every start.

Each price carries the date its source stated it: for the shipped files, the date the data README
gives (``hardware/data/stated_on.csv``), or ``--stated-on``; a file neither dates is taken as
stating its prices the day it is loaded. Reloading a file the catalog already holds changes no
date.
"""

from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from hardware.catalog_load import CatalogLoadError, catalog_load
from hardware.data_files import ALIASES_PATH, EGRESS_PATH, SKYPILOT_DIR
from hardware.models import GpuModel


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
            "--if-empty",
            action="store_true",
            help="load only into an empty catalog (no GPU model yet); otherwise do nothing",
        )
        parser.add_argument(
            "--stated-on",
            type=date.fromisoformat,
            default=None,
            help="the date the price files' source stated them (YYYY-MM-DD); default: the date "
            "hardware/data/stated_on.csv gives for each file",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["if_empty"] and GpuModel.objects.exists():
            self.stdout.write("the catalog is already loaded: nothing done (--if-empty)")
            return
        try:
            done = catalog_load(
                skypilot_dir=options["skypilot_dir"],
                egress_path=options["egress"],
                aliases_path=options["aliases"],
                demo=not options["no_demo"],
                stated_on=options["stated_on"],
            )
        except CatalogLoadError as exc:
            raise CommandError(str(exc)) from exc
        for line in done.lines(verbosity=options["verbosity"]):
            self.stdout.write(line)
