"""Celery tasks of the catalog: thin wrappers that call a service with ids or names."""

from celery import shared_task

from hardware.refresh.pipeline import refresh_runs_sweep
from hardware.refresh.scheduled import feed_source_refresh


@shared_task(name="hardware.refresh_source")
def refresh_source(source: str) -> dict:
    """Refresh one price source from its URL (``hardware.refresh.scheduled``); what it did, as a dict."""
    return feed_source_refresh(source=source).as_dict()


@shared_task(name="hardware.refresh_runs_sweep")
def refresh_runs_sweep_task() -> list[int]:
    """Fail the price refreshes that stopped without finishing (``refresh_runs_sweep``)."""
    return refresh_runs_sweep()
