"""Fixtures for the catalog tests (the shipped catalog itself: ``catalog`` in ``tests/conftest.py``)."""

import csv
import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from hardware.data_files import EGRESS_PATH, SKYPILOT_DIR


@pytest.fixture
def skypilot_copy(tmp_path) -> Path:
    """A writable copy of the shipped SkyPilot folder (same folder name, so same source names)."""
    target = tmp_path / SKYPILOT_DIR.name
    shutil.copytree(SKYPILOT_DIR, target)
    return target


def shipped_rows(name: str) -> list[dict[str, str]]:
    """The rows of a shipped price file (``lambda.csv`` of the SkyPilot folder, or
    ``egress_tiers.csv``), read here so tests take the snapshot's figures from the snapshot."""
    path = EGRESS_PATH if name == EGRESS_PATH.name else SKYPILOT_DIR / name
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def lambda_regions_of(instance_type: str) -> set[str]:
    """The regions the shipped Lambda file prices ``instance_type`` in."""
    return {
        row["Region"] for row in shipped_rows("lambda.csv") if row["InstanceType"] == instance_type
    }


def load(**options) -> str:
    """Run load_catalog with options; return what it printed."""
    out = io.StringIO()
    call_command("load_catalog", stdout=out, **options)
    return out.getvalue()
