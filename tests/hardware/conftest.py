"""Fixtures for the catalog tests."""

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from hardware.management.commands.load_catalog import SKYPILOT_DIR


@pytest.fixture
def catalog(db):
    """The whole shipped catalog loaded into the test database; returns the command's output."""
    out = io.StringIO()
    call_command("load_catalog", stdout=out)
    return out.getvalue()


@pytest.fixture
def skypilot_copy(tmp_path) -> Path:
    """A writable copy of the shipped SkyPilot folder (same folder name, so same source names)."""
    target = tmp_path / SKYPILOT_DIR.name
    shutil.copytree(SKYPILOT_DIR, target)
    return target


def load(**options) -> str:
    """Run load_catalog with options; return what it printed."""
    out = io.StringIO()
    call_command("load_catalog", stdout=out, **options)
    return out.getvalue()
