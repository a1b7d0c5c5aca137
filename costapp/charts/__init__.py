"""Plotly figures of a result document (docs: scenario-format.md, "The result document"), one
module per kind of figure.

Pure functions: a result document (and, for cost against utilization, the curves of
``costapp.tco.curves``) in, a :class:`~hardware.display.charts.Chart` out, built with the parts of
:mod:`hardware.display.charts` (which also draws an offer's price history) and
:mod:`costapp.charts.base`. The names below are the package's face: the pages and the chart cache
call them here (``costapp.charts.result_charts``), so the cache reads the version of the code
that draws them (:data:`CHARTS_VERSION`) where it is defined.
"""

from costapp.charts.base import CHARTS_VERSION
from costapp.charts.breakdown import breakdown_chart
from costapp.charts.comparison import comparison_cumulative_chart
from costapp.charts.cumulative import cumulative_cost_chart
from costapp.charts.fan import fan_chart, has_simulation
from costapp.charts.result import result_charts
from costapp.charts.sizing import SIZE_TICKS, SIZING_GREY, sizing_chart, sizing_charts
from costapp.charts.unit_cost import usd_per_busy_gpu_hour_chart
from costapp.charts.utilization import utilization_chart
from hardware.display.charts import Chart, Table

__all__ = [
    "CHARTS_VERSION",
    "SIZE_TICKS",
    "SIZING_GREY",
    "Chart",
    "Table",
    "breakdown_chart",
    "comparison_cumulative_chart",
    "cumulative_cost_chart",
    "fan_chart",
    "has_simulation",
    "result_charts",
    "sizing_chart",
    "sizing_charts",
    "usd_per_busy_gpu_hour_chart",
    "utilization_chart",
]
