"""The charts of a result page, in reading order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costapp.charts.breakdown import breakdown_chart
from costapp.charts.cumulative import cumulative_cost_chart
from costapp.charts.fan import fan_chart
from costapp.charts.layers import layers_charts
from costapp.charts.unit_cost import usd_per_busy_gpu_hour_chart, usd_per_million_tokens_chart
from costapp.charts.utilization import utilization_chart
from costapp.tco import mix_months
from hardware.display.charts import (
    Chart,
)


def result_charts(
    result: Mapping[str, Any], curves: Mapping[str, Any] | None = None
) -> list[Chart]:
    """The charts of a result page, in reading order: cumulative cost, breakdown, the fan (with
    a simulation; format 1.3: what each mix's layers serve, month by month, after the breakdown),
    the cost per million tokens (format 1.2, where tokens are served), cost per
    busy GPU-hour (GPU options), and cost against utilization (with ``curves``).

    A result with ``sizing`` (version 1.1) will add one chart per sweep (objective against size)
    here, built the same way: a figure and the table of its numbers."""
    charts = [cumulative_cost_chart(result), breakdown_chart(result)]
    if any(o["type"] == "mix" for o in result["options"]):  # format 1.3: each mix's layers
        charts.extend(layers_charts(result, mix_months(result["inputs"], result["gpus"])))
    fan = fan_chart(result)
    if fan is not None:
        charts.append(fan)
    tokens = usd_per_million_tokens_chart(result)
    if tokens is not None:
        charts.append(tokens)
    if any(o["type"] != "api" for o in result["options"]):
        charts.append(usd_per_busy_gpu_hour_chart(result))
    if curves is not None:
        utilization = utilization_chart(result, curves)
        if utilization is not None:
            charts.append(utilization)
    return charts
