"""An offer's price history as the offer's page draws it (pure: plain values in, a
:class:`hardware.display.charts.Chart` out).

x is the day each source stated a price (``stated_on``), never when the catalog loaded it; one
line per region and billing, named in words; y is USD per GPU-hour. A series of one price is a
dot with its value and date written beside it; the labels are moved apart vertically so that no
two overlap, with a thin line back to their dot. The figure's height leaves room, at a phone's
width too, for those labels and for the legend below the plot: the figure is the same at every
width (plotly.js resizes its width only).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from hardware.display.charts import (
    TEMPLATE,
    Chart,
    Table,
    empty_figure,
    figure_json,
    scatter_trace,
    series_color,
)
from hardware.display.figures import usd_rate

BILLING_ORDER = ("on-demand", "spot", "1-year commitment", "3-year commitment", "5-year commitment")
BILLING_SYMBOLS = {
    "on-demand": "circle",
    "spot": "diamond",
    "1-year commitment": "square",
    "3-year commitment": "triangle-up",
    "5-year commitment": "star",
}
LABEL_GAP_PX = 16
"""The least vertical distance between two dots' labels (11 px text in a 16 px line)."""
LABEL_FONT_PX = 11
LEGEND_FONT_PX = 11
LEGEND_ROW_PX = 20
"""The legend lists one line a row, below the plot: as high at every width."""
TOP_PX = 56
AXIS_PX = 80  # x tick labels (two lines) and the x axis title below the plot
MIN_PLOT_PX = 260
MAX_TICKS = 5
"""At most this many date ticks, so that they fit side by side in a phone's width."""
# (the shortest step in days, plotly dtick, tick label format), finest first: the first whose
# ticks over the range are at most MAX_TICKS
TICK_STEPS: tuple[tuple[int, str | int, str], ...] = (
    (1, 86_400_000, "%b %-d<br>%Y"),
    (2, 2 * 86_400_000, "%b %-d<br>%Y"),
    (7, 7 * 86_400_000, "%b %-d<br>%Y"),
    (14, 14 * 86_400_000, "%b %-d<br>%Y"),
    (28, "M1", "%b<br>%Y"),
    (59, "M2", "%b<br>%Y"),
    (89, "M3", "%b<br>%Y"),
    (181, "M6", "%b<br>%Y"),
    (365, "M12", "%Y"),
    (730, "M24", "%Y"),
    (1826, "M60", "%Y"),
    (3652, "M120", "%Y"),
)


@dataclass(frozen=True)
class DatedPrice:
    """One price of an offer: where and how it is billed, the day its source stated it, and when
    the catalog loaded it (``first_seen`` / ``last_seen``, kept for the table only)."""

    region: str
    billing: str  # in words: "on-demand", "spot", "1-year commitment"
    stated_on: date
    usd_per_gpu_hour: Decimal
    usd_per_hour: Decimal
    zone: str = ""
    source: str = ""
    first_seen: datetime | None = None
    last_seen: datetime | None = None

    @property
    def series(self) -> str:
        """The line the price belongs to, in words: ``us-east-1, on-demand``."""
        return f"{self.region}, {self.billing}"


def _billing_rank(billing: str) -> int:
    return BILLING_ORDER.index(billing) if billing in BILLING_ORDER else len(BILLING_ORDER)


def date_ticks(first: date, last: date) -> dict[str, Any]:
    """The x axis of days ``first`` to ``last``: its range (padded so a dot is never on the
    edge), and at most ``MAX_TICKS`` ticks, each a different day, month or year. One day alone
    gets a single tick at that day, the dot a fifth of the way in (its label beside it)."""
    if first == last:
        return {
            "range": [
                (first - timedelta(days=10)).isoformat(),
                (first + timedelta(days=40)).isoformat(),
            ],
            "tickmode": "array",
            "tickvals": [first.isoformat()],
            "ticktext": [f"{first:%b} {first.day}<br>{first.year}"],
        }
    span = (last - first).days
    pad = max(math.ceil(span * 0.08), 2)
    start, end = first - timedelta(days=pad), last + timedelta(days=pad)
    days = (end - start).days
    # a range of ``days`` holds at most days // step + 1 ticks
    _step, dtick, tickformat = next(
        (s for s in TICK_STEPS if days // s[0] + 1 <= MAX_TICKS), TICK_STEPS[-1]
    )
    if isinstance(dtick, str):  # months: ticks on the first of a month (of January for years)
        months = int(dtick[1:])
        tick0 = date(start.year, 1, 1) if months >= 12 else date(start.year, start.month, 1)
    else:
        tick0 = start
    return {
        "range": [start.isoformat(), end.isoformat()],
        "tickmode": "linear",
        "tick0": tick0.isoformat(),
        "dtick": dtick,
        "tickformat": tickformat,
    }


def spread_labels(values: Sequence[float], gap: float, low: float, high: float) -> list[float]:
    """Where to write the labels of dots at ``values`` (in the same order): as near each value
    as can be, at least ``gap`` apart, within ``[low + gap / 2, high - gap / 2]``. The range
    must hold them all: ``len(values) * gap <= high - low``."""
    if not values:
        return []
    order = sorted(range(len(values)), key=lambda i: (values[i], i))
    placed = [0.0] * len(values)
    floor = low + gap / 2
    for i in order:  # upwards: each label at its value, or just above the previous one
        placed[i] = max(values[i], floor)
        floor = placed[i] + gap
    ceiling = high - gap / 2
    for i in reversed(order):  # downwards: none above the top, each below the next one
        placed[i] = min(placed[i], ceiling)
        ceiling = placed[i] - gap
    return placed


def price_history_chart(title: str, prices: Sequence[DatedPrice]) -> Chart:
    """An offer's prices per GPU-hour [USD] by the day their sources stated them: one line per
    region and billing (a step: a price holds until the next one stated), a series of one price
    a dot with its value and date written beside it. ``title`` names the offer (the chart's
    table and its description); the figure's own title stays short to fit a phone's width."""
    series: dict[tuple[str, str], list[DatedPrice]] = {}
    for price in sorted(
        prices,
        key=lambda p: (_billing_rank(p.billing), p.billing, p.region, p.stated_on),
    ):
        series.setdefault((price.billing, price.region), []).append(price)
    regions = sorted({p.region for p in prices})
    names = [rows[0].series for rows in series.values()]
    dots = single_points([p for rows in series.values() for p in rows])
    days = [p.stated_on for p in prices]
    x_axis = date_ticks(min(days), max(days)) if days else {}

    top = max(float(p.usd_per_gpu_hour) for p in prices) if prices else 1.0
    y_high = top * 1.12 if top > 0 else 1.0
    plot_px = max(MIN_PLOT_PX, LABEL_GAP_PX * (len(dots) + 2))
    legend_px = LEGEND_ROW_PX * len(names) + 10
    height = TOP_PX + plot_px + AXIS_PX + legend_px
    figure = empty_figure(
        layout={
            "title": {
                "text": "Price per GPU-hour as stated",
                "font": {"size": 15},
            },
            "template": TEMPLATE,
            "height": height,
            "margin": {"t": TOP_PX, "r": 16, "b": AXIS_PX + legend_px, "l": 64},
            "hovermode": "closest",
            "showlegend": True,
            "legend": {
                "orientation": "v",
                "yref": "container",
                "y": 0,
                "yanchor": "bottom",
                "x": 0,
                "xanchor": "left",
                "font": {"size": LEGEND_FONT_PX},
                "maxheight": legend_px + 20,
            },
            "xaxis": {
                "title": {"text": "Day the source stated the price", "standoff": 8},
                "type": "date",
                "showgrid": True,
                "ticks": "outside",
                "automargin": False,
                **x_axis,
            },
            "yaxis": {
                "title": {"text": "Price [USD per GPU-hour]"},
                "range": [0, y_high],
                "tickformat": "$,.2f",
                "automargin": False,
                "rangemode": "tozero",
            },
        }
    )
    for (billing, region), rows in series.items():
        color = series_color(regions.index(region))
        hover = [
            f"{usd_rate(p.usd_per_gpu_hour)} per GPU-hour" + (f" (zone {p.zone})" if p.zone else "")
            for p in rows
        ]
        figure.add_trace(
            scatter_trace(
                x=[p.stated_on.isoformat() for p in rows],
                y=[float(p.usd_per_gpu_hour) for p in rows],
                text=hover,
                mode="markers" if len(rows) == 1 else "lines+markers",
                line={"shape": "hv", "color": color, "width": 2},
                marker={
                    "color": color,
                    "size": 9,
                    "symbol": BILLING_SYMBOLS.get(billing, "circle"),
                },
                name=rows[0].series,
                hovertemplate="%{fullData.name}<br>stated %{x|%Y-%m-%d}<br>%{text}<extra></extra>",
            )
        )
    figure.update_layout(annotations=_single_labels(dots, days, y_high, plot_px))
    table = Table(
        "Prices by the day their sources stated them",
        [
            "Region and billing",
            "Zone",
            "Stated on",
            "USD per GPU-hour",
            "USD per instance-hour",
            "Source",
            "First loaded (UTC)",
            "Last loaded (UTC)",
        ],
        [
            [
                p.series,
                p.zone,
                p.stated_on.isoformat(),
                p.usd_per_gpu_hour,
                p.usd_per_hour,
                p.source,
                p.first_seen,
                p.last_seen,
            ]
            for rows in series.values()
            for p in rows
        ],  # fmt: skip
    )
    return Chart("price-history", title, figure_json(figure), [table])


def single_points(prices: Sequence[DatedPrice]) -> list[tuple[date, Decimal, list[str]]]:
    """The dots to label: each series of one price, by its day and value (the dots of series
    with the same day and price are one dot, and get one label); with the series at each."""
    series: dict[str, list[DatedPrice]] = {}
    for price in prices:
        series.setdefault(price.series, []).append(price)
    dots: dict[tuple[date, str], tuple[date, Decimal, list[str]]] = {}
    for name, rows in series.items():
        if len(rows) == 1:
            price = rows[0]
            key = (price.stated_on, usd_rate(price.usd_per_gpu_hour))
            dots.setdefault(key, (price.stated_on, price.usd_per_gpu_hour, []))[2].append(name)
    return list(dots.values())


def _single_labels(
    dots: Sequence[tuple[date, Decimal, list[str]]],
    days: Sequence[date],
    y_high: float,
    plot_px: int,
) -> list[dict[str, Any]]:
    """The label of each dot of ``single_points``: its value and date beside it (to the right
    of a dot in the left half of the axis, to the left otherwise), moved apart by
    ``spread_labels`` with a thin line back to the dot."""
    if not dots:
        return []
    gap = LABEL_GAP_PX * y_high / plot_px
    at = spread_labels([float(usd) for _day, usd, _names in dots], gap, 0.0, y_high)
    first, last = min(days), max(days)
    middle = first + (last - first) / 2
    labels = []
    for (day, usd, names), y in zip(dots, at, strict=True):
        right = first == last or day <= middle
        labels.append(
            {
                "x": day.isoformat(),
                "y": float(usd),
                "xref": "x",
                "yref": "y",
                "ax": 14 if right else -14,
                "ay": y,
                "axref": "pixel",
                "ayref": "y",
                "xanchor": "left" if right else "right",
                "yanchor": "middle",
                "text": f"{usd_rate(usd)} on {day.isoformat()}",
                "showarrow": True,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#9aa3b2",
                "standoff": 5,
                "font": {"size": LABEL_FONT_PX, "color": "#1f2937"},
                "bgcolor": "rgba(255, 255, 255, 0.9)",  # a line behind a label never strikes it
                "name": "; ".join(names),
            }
        )
    return labels
