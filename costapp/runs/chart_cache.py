"""The chart cache: a succeeded run's charts, built when it finishes and kept in the cache
(its result never changes), under a key holding the chart code's version. While the cache
(Redis) does not answer, the charts are built for each page instead: a finished run's page needs
only the database."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis import RedisError

from costapp.models import SimulationRun

if TYPE_CHECKING:
    from hardware.display.charts import Chart

# The charts (and plotly with them) are imported when a chart is asked for, not with the module:
# the workers import the pipeline, and only the task that finishes a run draws its charts.

logger = logging.getLogger(__name__)

RUN_CHARTS_CACHE_S = 86_400
"""How long a succeeded run's charts stay in the cache [s]."""


def run_charts_cache_key(kind: str, *, run: SimulationRun) -> str:
    """The cache key of a run's charts of ``kind`` (``run-charts``, ``run-sizing-charts``): the
    run, when it finished, and the version of the chart code (``costapp.charts.CHARTS_VERSION``),
    so figures cached before a change of the charts are never served after it."""
    from costapp import charts

    finished = run.finished.isoformat() if run.finished else ""
    return f"{kind}:{charts.CHARTS_VERSION}:{run.pk}:{finished}"


def _run_cached(*, run: SimulationRun, kind: str, build: Callable[[], list[Any]]) -> list[Any]:
    """What ``build()`` makes of a succeeded run, from the cache under
    :func:`run_charts_cache_key` (its result never changes once it finished); built and put
    there when missing (built, and not kept, while the cache does not answer)."""
    from django.core.cache import cache

    key = run_charts_cache_key(kind, run=run)
    try:
        found: list[Any] | None = cache.get(key)
    except RedisError:
        logger.warning("run %s: the chart cache does not answer, charts built again", run.pk)
        return build()
    if found is None:
        found = build()
        try:
            cache.set(key, found, RUN_CHARTS_CACHE_S)
        except RedisError:
            logger.warning("run %s: the chart cache does not answer, charts not kept", run.pk)
    return found


def run_charts(*, run: SimulationRun) -> list[Chart]:
    """The charts (``costapp.charts.result_charts``) of a succeeded run, from the cache: its
    result and cost curves never change. ``costapp.runs.pipeline.run_finish`` puts them there when the
    run finishes; they are built again here when the cache has lost them."""
    from costapp import charts

    assert run.result is not None
    return _run_cached(
        run=run, kind="run-charts", build=lambda: charts.result_charts(run.result, run.cost_curves)
    )


def run_sizing_charts(*, run: SimulationRun) -> list[Chart]:
    """The sizing charts (``costapp.charts.sizing_charts``, one per sweep) of a succeeded run,
    from the cache like :func:`run_charts`, with the P10–P90 bands stored beside the run (none
    for runs from before them)."""
    from costapp import charts

    assert run.result is not None
    if not run.result.get("sizing"):
        return []
    return _run_cached(
        run=run,
        kind="run-sizing-charts",
        build=lambda: charts.sizing_charts(run.result, run.sizing_bands),
    )
