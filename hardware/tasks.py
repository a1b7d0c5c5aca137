"""Celery tasks of the catalog: thin wrappers that call a service with ids or names."""

from celery import shared_task

from .scheduled import feed_source_refresh


@shared_task(name="hardware.refresh_source")
def refresh_source(source: str) -> dict:
    """Refresh one price source from its URL (``hardware.scheduled``); what it did, as a dict."""
    return feed_source_refresh(source=source).as_dict()
