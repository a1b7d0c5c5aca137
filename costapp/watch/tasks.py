"""The budget watch's Celery tasks, thin, by name: after a refresh, on beat's schedule, and the
settling of events whose runs have ended."""

from __future__ import annotations

from celery import shared_task

from costapp.watch import services


@shared_task(name="costapp.watch_reprice", acks_late=True)
def watch_reprice_task(refresh_run_id: int | None = None) -> int:
    trigger = "refresh" if refresh_run_id is not None else "schedule"
    return len(services.watches_reprice(trigger=trigger, refresh_run_id=refresh_run_id))


@shared_task(name="costapp.watch_settle", acks_late=True)
def watch_settle_task() -> int:
    return services.events_settle()
