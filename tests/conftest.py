"""Shared fixtures."""

import io

import pytest
from django.core.management import call_command


@pytest.fixture
def catalog_gpus(db):
    """The GPU table loaded into the test database."""
    call_command("load_catalog", verbosity=0, stdout=io.StringIO())
