"""The beat schedule of the price refreshes, built from PRICE_SOURCES."""

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from celery.beat import ScheduleEntry

from costapp.celery import app
from hardware.refresh.beat import REFRESH_TASK, price_source_settings, refresh_beat_schedule
from hardware.sources.registry import SKYPILOT_CLOUDS

ROOT = Path(__file__).resolve().parents[3]


def test_one_entry_per_source_with_a_url_and_none_for_a_source_without():
    schedule = refresh_beat_schedule(
        {
            "azure": {"url": "https://feeds.example/azure", "interval_minutes": 60},
            "gcp": {"url": ""},
            "oracle": {"url": "http://127.0.0.1:8000/oracle.json"},
        },
        default_interval_minutes=720,
    )
    assert schedule == {
        "refresh-azure": {
            "task": "hardware.refresh_source",
            "schedule": timedelta(hours=1),
            "args": ("azure",),
            "options": {"expires": 3600.0},
        },
        "refresh-oracle": {
            "task": "hardware.refresh_source",
            "schedule": timedelta(hours=12),
            "args": ("oracle",),
            "options": {"expires": 43200.0},
        },
    }


def test_no_url_anywhere_is_an_empty_schedule():
    assert refresh_beat_schedule({"azure": {"url": "  "}, "gcp": {}}) == {}


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ({"azure": {"url": "ftp://x"}}, r"PRICE_SOURCES\['azure'\].url: 'ftp://x' is not an http"),
        ({"azure": {"url": "https://x", "interval_minutes": 0}}, r"\.interval_minutes: 0 is not"),
        ({"gcp": {"url": "https://x", "interval_minutes": "60"}}, r"\['gcp'\]\.interval_minutes"),
        ({"gcp": {"url": "https://x", "interval": 60}}, r"\['gcp'\]: unknown key\(s\) interval"),
        ({"Bad Name": {"url": "https://x"}}, r"'Bad Name' is not a source name"),
        ({"gcp": "https://x"}, r"\['gcp'\]: not a mapping"),
    ],
)
def test_a_bad_setting_names_the_source_and_the_field(sources, message):
    with pytest.raises(ValueError, match=message):
        refresh_beat_schedule(sources)


def test_celery_beat_reads_the_entries():
    schedule = refresh_beat_schedule({"gcp": {"url": "https://x", "interval_minutes": 15}})
    entry = ScheduleEntry(name="refresh-gcp", app=app, **schedule["refresh-gcp"])
    assert entry.task == REFRESH_TASK and entry.args == ("gcp",)
    due, next_in_s = entry.is_due()
    assert not due and 899 <= next_in_s <= 900  # first run one interval after beat starts
    assert entry.schedule.run_every == timedelta(minutes=15)
    assert entry.options == {"expires": 900.0}


def settings_in_a_fresh_process(**environment: str) -> dict:
    """The price-refresh entries of CELERY_BEAT_SCHEDULE (``beat``; the names of all its entries
    in ``beat_names``) and PRICE_SOURCES, as costapp.settings builds them from ``environment``."""
    code = (
        "import json, costapp.settings as s; "
        "beat = {k: v for k, v in s.CELERY_BEAT_SCHEDULE.items() if k.startswith('refresh-')}; "
        "print(json.dumps({'beat': beat, 'beat_names': sorted(s.CELERY_BEAT_SCHEDULE), "
        "'sources': s.PRICE_SOURCES}, default=str))"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PRICE_SOURCE", "PRICE_REFRESH", "DJANGO_SETTINGS"))
    }
    env.update(DEBUG="true", **environment)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode:
        return {"error": done.stderr}
    return json.loads(done.stdout)


def test_settings_build_the_schedule_from_the_environment():
    got = settings_in_a_fresh_process(
        PRICE_SOURCE_GCP_URL="https://feeds.example/v1/skus?key=k",
        PRICE_SOURCE_GCP_INTERVAL_MINUTES="90",
        PRICE_REFRESH_INTERVAL_MINUTES="30",
        PRICE_SOURCE_ORACLE_URL="https://feeds.example/oracle",
    )
    assert set(got["sources"]) == {"aws", "azure", "gcp", "oracle"} | {
        f"skypilot-{cloud}" for cloud in SKYPILOT_CLOUDS
    }
    assert got["sources"]["azure"] == {"url": "", "interval_minutes": 30}
    assert got["beat"] == {
        "refresh-gcp": {
            "task": "hardware.refresh_source",
            "schedule": "1:30:00",
            "args": ["gcp"],
            "options": {"expires": 5400.0},
        },
        "refresh-oracle": {
            "task": "hardware.refresh_source",
            "schedule": "0:30:00",
            "args": ["oracle"],
            "options": {"expires": 1800.0},
        },
    }


def test_settings_without_source_urls_schedule_nothing():
    got = settings_in_a_fresh_process()
    assert got["beat"] == {}
    assert "runs-requeue-stale" in got["beat_names"]  # the runs' own entry is always there


def test_a_bad_source_setting_stops_the_settings_with_the_reason():
    got = settings_in_a_fresh_process(PRICE_SOURCE_AZURE_URL="prices.example/azure")
    assert "ImproperlyConfigured: PRICE_SOURCES['azure'].url" in got["error"]


def test_seconds_and_a_queue_from_the_environment():
    got = settings_in_a_fresh_process(
        PRICE_SOURCE_ORACLE_URL="http://127.0.0.1:9/oracle",
        PRICE_SOURCE_ORACLE_INTERVAL_SECONDS="2",
        PRICE_REFRESH_QUEUE="refreshes",
    )
    assert got["beat"] == {
        "refresh-oracle": {
            "task": "hardware.refresh_source",
            "schedule": "0:00:02",
            "args": ["oracle"],
            "options": {"expires": 2.0, "queue": "refreshes"},
        }
    }
    bad = settings_in_a_fresh_process(
        PRICE_SOURCE_ORACLE_URL="http://127.0.0.1:9/oracle",
        PRICE_SOURCE_ORACLE_INTERVAL_SECONDS="0",
    )
    assert "PRICE_SOURCES['oracle'].interval_seconds: 0 is not a whole number" in bad["error"]


class _Environment:
    """The environment as django-environ reads it, from a dict."""

    def __init__(self, values):
        self.values = values

    def str(self, var, default=""):
        return self.values.get(var, default)

    def int(self, var, default=None):
        return int(self.values[var]) if var in self.values else default


def test_price_source_settings_read_each_http_format_under_its_own_names():
    env = _Environment(
        {
            "PRICE_SOURCE_GCP_URL": "https://feeds.example/skus",
            "PRICE_SOURCE_GCP_INTERVAL_MINUTES": "90",
            "PRICE_SOURCE_ORACLE_INTERVAL_SECONDS": "5",
            "PRICE_SOURCE_AWS_URL": "https://feeds.example/AmazonEC2/index.json",
            # the Pricing API's pages are read from files only
            "PRICE_SOURCE_AWS_PRICING_API_URL": "https://not.read/aws",
        }
    )
    assert price_source_settings(env, default_interval_minutes=60) == {
        "aws": {"url": "https://feeds.example/AmazonEC2/index.json", "interval_minutes": 60},
        "azure": {"url": "", "interval_minutes": 60},
        "gcp": {"url": "https://feeds.example/skus", "interval_minutes": 90},
        "oracle": {"url": "", "interval_minutes": 60, "interval_seconds": 5},
        **{f"skypilot-{cloud}": {"url": "", "interval_minutes": 60} for cloud in SKYPILOT_CLOUDS},
    }
