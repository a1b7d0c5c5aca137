"""The settings and the Celery beat schedule of the scheduled price refreshes.

Pure: environment in, settings out, and settings in, schedule out (no Django, no Celery import),
so ``costapp/settings.py`` can build ``PRICE_SOURCES`` (``price_source_settings``: one entry per
format the registry, ``hardware.sources.registry``, fetches over HTTP, read from the settings it
names) and ``CELERY_BEAT_SCHEDULE`` (``refresh_beat_schedule``) with it. One entry per source that has a URL, named
``refresh-<source>``, sending the task ``hardware.refresh_source`` with the source's name every
``interval_minutes`` (or ``interval_seconds``, for short intervals, which wins when given); a
source with an empty URL is off and has no entry. With ``queue`` the messages go to that queue
(a worker started with ``-Q`` for it). A message still waiting
when the next one is due expires rather than piling up behind a slow or stopped worker.
"""

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Protocol

from hardware.sources.registry import HTTP_SOURCES

REFRESH_TASK = "hardware.refresh_source"
DEFAULT_INTERVAL_MINUTES = 24 * 60
SOURCE_KEYS = frozenset({"url", "interval_minutes", "interval_seconds"})
SOURCE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class Environment(Protocol):
    """What is read from the environment (django-environ's ``Env``)."""

    def str(self, var: Any, default: Any = ...) -> Any: ...

    def int(self, var: Any, default: Any = ...) -> Any: ...


def price_source_settings(
    env: Environment, *, default_interval_minutes: int = DEFAULT_INTERVAL_MINUTES
) -> dict[str, dict[str, object]]:
    """``PRICE_SOURCES``: per HTTP format, its URL (``PRICE_SOURCE_<NAME>_URL``, empty: off) and
    interval (``..._INTERVAL_MINUTES``; ``..._INTERVAL_SECONDS``, for short intervals, wins when
    set)."""
    sources: dict[str, dict[str, object]] = {}
    for name, source in HTTP_SOURCES.items():
        entry: dict[str, object] = {
            "url": env.str(source.url_setting, default=""),
            "interval_minutes": env.int(
                source.interval_minutes_setting, default=default_interval_minutes
            ),
        }
        if env.str(source.interval_seconds_setting, default=""):
            entry["interval_seconds"] = env.int(source.interval_seconds_setting)
        sources[name] = entry
    return sources


def refresh_beat_schedule(
    sources: Mapping[str, Mapping[str, object]],
    *,
    default_interval_minutes: int = DEFAULT_INTERVAL_MINUTES,
    queue: str = "",
) -> dict[str, dict[str, object]]:
    """The beat entries for ``sources`` (``{name: {"url": ..., "interval_minutes": ...}}``).

    Raise ``ValueError`` naming the source and the field on a bad setting: an unknown key, a URL
    that is not http(s), an interval that is not a whole number of minutes above 0.
    """
    schedule: dict[str, dict[str, object]] = {}
    for name, source in sources.items():
        if not isinstance(name, str) or not SOURCE_NAME.match(name):
            raise ValueError(f"PRICE_SOURCES: {name!r} is not a source name (a-z, 0-9, - and _)")
        if not isinstance(source, Mapping):
            raise ValueError(f"PRICE_SOURCES[{name!r}]: not a mapping of url and interval_minutes")
        unknown = sorted(set(source) - SOURCE_KEYS)
        if unknown:
            raise ValueError(f"PRICE_SOURCES[{name!r}]: unknown key(s) {', '.join(unknown)}")
        url = source.get("url") or ""
        if not isinstance(url, str):
            raise ValueError(f"PRICE_SOURCES[{name!r}].url: not a text")
        url = url.strip()
        if not url:
            continue  # off
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"PRICE_SOURCES[{name!r}].url: {url[:40]!r} is not an http(s) URL")
        minutes = source.get("interval_minutes", default_interval_minutes)
        if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 1:
            raise ValueError(
                f"PRICE_SOURCES[{name!r}].interval_minutes: {minutes!r} is not a whole number "
                "of minutes above 0"
            )
        interval = timedelta(minutes=minutes)
        seconds = source.get("interval_seconds")
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 1:
                raise ValueError(
                    f"PRICE_SOURCES[{name!r}].interval_seconds: {seconds!r} is not a whole "
                    "number of seconds above 0"
                )
            interval = timedelta(seconds=seconds)
        options: dict[str, object] = {"expires": interval.total_seconds()}
        if queue:
            options["queue"] = queue
        schedule[f"refresh-{name}"] = {
            "task": REFRESH_TASK,
            "schedule": interval,
            "args": (name,),
            "options": options,
        }
    return schedule
