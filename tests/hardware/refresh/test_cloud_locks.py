"""Each SkyPilot cloud refreshes under its own lock: a by-hand refresh of one cloud takes that
cloud's lock, the one its scheduled feed takes, and never another cloud's."""

import pytest

from hardware.data_files import SKYPILOT_DIR
from hardware.models import RefreshRun
from hardware.refresh.lease import RefreshLocked, lease_is_live, lease_take
from hardware.refresh.pipeline import price_refresh, refresh_run_start, refresh_runs_stopped_fail


def test_a_cloud_is_locked_by_its_own_feed_and_no_other_cloud(catalog):
    feed = lease_take(source="skypilot-lambda")  # lambda's scheduled feed is refreshing
    try:
        with pytest.raises(RefreshLocked, match="skypilot-lambda"):
            price_refresh(source="skypilot", paths=[SKYPILOT_DIR / "lambda.csv"], provider="lambda")
        other = lease_take(source="skypilot-aws")  # another cloud's by hand: its own lock
        other.release()
        assert not lease_is_live(source="skypilot")  # no lock over every cloud
    finally:
        feed.release()
    run = price_refresh(source="skypilot", paths=[SKYPILOT_DIR / "lambda.csv"], provider="lambda")
    assert run.status in ("applied", "unchanged") and run.source == "skypilot"


def test_a_stopped_run_is_failed_by_its_own_clouds_lock_only(catalog):
    lambda_run, aws_run = (
        refresh_run_start(source="skypilot", provider=cloud, feed_name=f"{cloud}.csv")
        for cloud in ("lambda", "aws")
    )
    assert RefreshRun.objects.filter(status="running").count() == 2
    assert refresh_runs_stopped_fail(source="skypilot-lambda", found_by="test") == [lambda_run.pk]
    aws_run.refresh_from_db()
    assert aws_run.status == "running"
