"""A throwaway Django set-up for the benchmarks that go through the app: a SQLite database in a
temporary folder, migrated, with the shipped catalog loaded, no broker (tasks run in-process)."""

from __future__ import annotations

import io
import os
import tempfile


def throwaway_django(prefix: str) -> None:
    """Point Django at a new SQLite database under a temporary folder named ``prefix``…, set it
    up (test environment: any host, the local memory mail), migrate it and load the catalog."""
    folder = tempfile.mkdtemp(prefix=prefix)
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DEBUG", "true")
    os.environ.pop("REDIS_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "costapp.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()
    call_command("migrate", verbosity=0)
    call_command("load_catalog", verbosity=0, stdout=io.StringIO())
