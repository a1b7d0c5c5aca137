"""Backup and restore of the production shape (README.md, "Backup and restore"): a pg_dump of a
database holding the catalog, a scenario and a finished run, restored with pg_restore into a new
database, holds every row of every table, the same (run with GPU_TCO_SERVICES=1)."""

import os
import shutil
import subprocess
import uuid

import psycopg
import pytest

from costapp.models import Scenario, SimulationRun
from hardware.models import GpuModel, InstancePrice
from tests.costapp.runs.test_pages import finished, pat  # noqa: F401
from tests.costapp.runs_helpers import scenario_document

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"this test needs {name} (apt-get install postgresql-client)")
    return found


def conninfo(database: dict, name: str) -> str:
    return psycopg.conninfo.make_conninfo(
        dbname=name,
        user=database["USER"],
        password=database["PASSWORD"] or None,
        host=database["HOST"] or "127.0.0.1",
        port=database["PORT"] or 5432,
    )


def every_row(database: dict, name: str) -> dict[str, list]:
    """Every row of every table of the public schema, sorted, by table."""
    with psycopg.connect(conninfo(database, name)) as db:
        tables = [
            row[0]
            for row in db.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        return {
            table: sorted(db.execute(f'SELECT * FROM "{table}"').fetchall(), key=repr)
            for table in tables
        }


def test_a_dump_restored_into_a_new_database_holds_the_same_catalog_scenarios_and_runs(
    postgres_database,
    finished,  # noqa: F811
    tmp_path,
):
    Scenario.objects.create(
        owner=finished.scenario.owner, name="second", document=scenario_document(), shared=True
    )
    assert GpuModel.objects.exists() and InstancePrice.objects.exists()
    assert SimulationRun.objects.get(pk=finished.pk).result is not None
    database = postgres_database
    env = {**os.environ, "PGPASSWORD": database["PASSWORD"] or ""}
    where = ["-h", database["HOST"] or "127.0.0.1", "-p", str(database["PORT"] or 5432)]
    where += ["-U", database["USER"]]
    dump = tmp_path / "gputco.dump"
    subprocess.run(
        [tool("pg_dump"), *where, "--format=custom", "--no-owner", "-f", dump, database["NAME"]],
        env=env,
        check=True,
    )
    restored = f"{database['NAME']}_restored_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(conninfo(database, "postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{restored}"')
    try:
        subprocess.run(
            [tool("pg_restore"), *where, "--no-owner", "--exit-on-error", "-d", restored, dump],
            env=env,
            check=True,
        )
        before, after = every_row(database, database["NAME"]), every_row(database, restored)
        assert list(after) == list(before)
        for table in before:
            assert after[table] == before[table], table
        for table in ("hardware_gpumodel", "costapp_scenario", "costapp_simulationrun"):
            assert after[table], f"{table} is empty"
    finally:
        with psycopg.connect(conninfo(database, "postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{restored}" WITH (FORCE)')
