"""An offer's price history chart (pure: its Plotly figure): x the days the sources stated the
prices, one line per region and billing named in words, a lone price a dot with its value and
date written beside it, date ticks that never repeat a day."""

import json
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import plotly.graph_objects as go
import plotly.io as pio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hardware.display.price_chart import (
    MAX_TICKS,
    DatedPrice,
    date_ticks,
    price_history_chart,
    spread_labels,
)

LOADED = datetime(2026, 12, 2, 3, 29, tzinfo=UTC)  # when the catalog loaded them all


def dated(region, billing, day, usd_per_gpu_hour, *, gpus=8, zone=""):
    usd = Decimal(usd_per_gpu_hour)
    return DatedPrice(
        region=region,
        billing=billing,
        stated_on=date.fromisoformat(day),
        usd_per_gpu_hour=usd,
        usd_per_hour=usd * gpus,
        zone=zone,
        source="skypilot-v8/aws.csv",
        first_seen=LOADED,
        last_seen=LOADED,
    )


def checked(figure: dict) -> dict:
    """``figure`` built again by plotly with every property checked, as JSON data."""
    return json.loads(pio.to_json(go.Figure(figure), validate=True))


def tick_days(axis: dict) -> list[date]:
    """The days plotly puts a tick at on ``axis`` (linear ticks from ``tick0`` by ``dtick``, or
    the listed ``tickvals``), within its range."""
    if axis.get("tickmode") == "array":
        return [date.fromisoformat(v) for v in axis["tickvals"]]
    start, end = (date.fromisoformat(v) for v in axis["range"])
    day, ticks, step = date.fromisoformat(axis["tick0"]), [], axis["dtick"]
    while day <= end:
        if day >= start:
            ticks.append(day)
        if isinstance(step, str):  # "M3": months
            months = day.month - 1 + int(step[1:])
            day = date(day.year + months // 12, months % 12 + 1, 1)
        else:
            day += timedelta(milliseconds=step)
    return ticks


def tick_labels(axis: dict) -> list[str]:
    if axis.get("tickmode") == "array":
        return axis["ticktext"]
    return [day.strftime(axis["tickformat"]) for day in tick_days(axis)]


def test_one_price_per_series_is_a_dot_with_its_value_and_date_beside_it():
    prices = [
        dated("us-east-1", "on-demand", "2025-10-01", "6.88"),
        dated("us-east-2", "on-demand", "2025-10-01", "6.88"),  # the same dot as us-east-1's
        dated("us-east-1", "spot", "2025-10-01", "2.49975", zone="use1-az4"),
        dated("ap-south-1", "spot", "2025-10-01", "0.9494"),
    ]
    chart = price_history_chart("Amazon Web Services p5.48xlarge: price per GPU-hour", prices)
    figure = chart.figure
    names = [t["name"] for t in figure["data"]]
    assert names == [
        "us-east-1, on-demand",
        "us-east-2, on-demand",
        "ap-south-1, spot",
        "us-east-1, spot",
    ]
    assert {t["mode"] for t in figure["data"]} == {"markers"}
    assert all(t["x"] == ["2025-10-01"] for t in figure["data"])  # the stated day, not the load
    labels = [a["text"] for a in figure["layout"]["annotations"]]
    assert sorted(labels) == ["$0.949 on 2025-10-01", "$2.50 on 2025-10-01", "$6.88 on 2025-10-01"]
    assert all(a["xanchor"] == "left" and a["ax"] > 0 for a in figure["layout"]["annotations"])
    # one tick, at the day, inside a range around it: never four ticks of the same day
    axis = figure["layout"]["xaxis"]
    assert axis["tickvals"] == ["2025-10-01"] and axis["ticktext"] == ["Oct 1<br>2025"]
    start, end = axis["range"]
    assert start < "2025-10-01" < end
    assert axis["title"]["text"] == "Day the source stated the price"
    assert figure["layout"]["yaxis"]["title"]["text"] == "Price [USD per GPU-hour]"
    assert figure["layout"]["yaxis"]["range"][0] == 0
    spot = next(t for t in figure["data"] if t["name"] == "us-east-1, spot")
    assert spot["text"] == ["$2.50 per GPU-hour (zone use1-az4)"]
    assert "stated %{x|%Y-%m-%d}" in spot["hovertemplate"]
    assert checked(figure) == figure
    # the table keeps the exact figures and the load times
    table = chart.tables[0]
    row = next(r for r in table.rows if r[0] == "us-east-1, spot")
    assert row == [
        "us-east-1, spot",
        "use1-az4",
        "2025-10-01",
        Decimal("2.49975"),
        Decimal("19.99800"),
        "skypilot-v8/aws.csv",
        LOADED,
        LOADED,
    ]


def test_labels_of_close_prices_are_moved_apart_and_stay_in_the_plot():
    prices = [dated(f"r-{i}", "on-demand", "2025-10-01", f"{6.80 + i / 100:.2f}") for i in range(8)]
    figure = price_history_chart("t", prices).figure
    layout = figure["layout"]
    low, high = layout["yaxis"]["range"]
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    at = sorted(a["ay"] for a in layout["annotations"])
    gaps = [(b - a) / (high - low) * plot_px for a, b in zip(at, at[1:], strict=False)]
    assert len(at) == 8 and min(gaps) >= 15.9  # 11 px text a line of 16 px
    assert low < at[0] and at[-1] < high
    # the legend lists every series below the plot, in the room the figure leaves for it
    assert layout["legend"]["orientation"] == "v" and layout["legend"]["yanchor"] == "bottom"
    assert layout["margin"]["b"] >= 80 + 20 * len(prices)


def test_many_prices_are_lines_by_their_stated_days_with_ticks_never_repeating_a_day():
    prices = [
        dated("us-east-1", "on-demand", "2025-03-01", "12.29"),
        dated("us-east-1", "on-demand", "2025-06-01", "9.50"),
        dated("us-east-1", "on-demand", "2025-10-01", "6.88"),
        # a spot price of another zone is the same region and billing: the same line
        dated("us-east-1", "spot", "2025-03-01", "3.10", zone="use1-az1"),
        dated("us-east-1", "spot", "2025-10-01", "2.50", zone="use1-az4"),
        dated("us-west-2", "1-year commitment", "2025-03-02", "2.40"),
    ]
    figure = price_history_chart("t", prices).figure
    lines = {t["name"]: t for t in figure["data"]}
    assert list(lines) == [
        "us-east-1, on-demand",
        "us-east-1, spot",
        "us-west-2, 1-year commitment",
    ]
    on_demand = lines["us-east-1, on-demand"]
    assert on_demand["mode"] == "lines+markers" and on_demand["line"]["shape"] == "hv"
    assert on_demand["x"] == ["2025-03-01", "2025-06-01", "2025-10-01"]
    assert on_demand["y"] == [12.29, 9.5, 6.88]
    assert on_demand["text"] == ["$12.29 per GPU-hour", "$9.50 per GPU-hour", "$6.88 per GPU-hour"]
    assert lines["us-east-1, spot"]["x"] == ["2025-03-01", "2025-10-01"]
    assert lines["us-west-2, 1-year commitment"]["mode"] == "markers"
    # only the lone price is labelled; it sits in the left half, its label to the right
    (label,) = figure["layout"]["annotations"]
    assert label["text"] == "$2.40 on 2025-03-02" and label["xanchor"] == "left"
    axis = figure["layout"]["xaxis"]
    labels = tick_labels(axis)
    assert 2 <= len(labels) <= MAX_TICKS and len(set(labels)) == len(labels), labels
    assert figure["layout"]["hovermode"] == "closest"
    assert checked(figure) == figure


def test_a_lone_price_at_the_end_of_the_axis_is_labelled_to_its_left():
    prices = [
        dated("us-east-1", "on-demand", "2025-01-01", "12.29"),
        dated("us-east-1", "on-demand", "2025-02-01", "9.50"),
        dated("us-east-1", "spot", "2025-02-01", "2.50"),
    ]
    (label,) = price_history_chart("t", prices).figure["layout"]["annotations"]
    assert label["xanchor"] == "right" and label["ax"] < 0


@given(
    first=st.dates(min_value=date(2015, 1, 1), max_value=date(2030, 1, 1)),
    span=st.integers(min_value=0, max_value=4000),
)
def test_date_ticks_are_few_distinct_days_within_the_range(first, span):
    last = first + timedelta(days=span)
    axis = date_ticks(first, last)
    start, end = (date.fromisoformat(v) for v in axis["range"])
    assert start < first <= last < end
    days = tick_days(axis)
    labels = tick_labels(axis)
    assert 1 <= len(days) <= MAX_TICKS, (first, last, axis)
    assert len(set(labels)) == len(labels), labels


@given(
    values=st.lists(st.floats(min_value=0, max_value=20), min_size=1, max_size=30),
    gap=st.floats(min_value=0.01, max_value=0.5),
)
def test_spread_labels_keep_their_order_a_gap_apart_within_the_range(values, gap):
    high = max(20.0, gap * (len(values) + 1))
    placed = spread_labels(values, gap, 0.0, high)
    order = sorted(range(len(values)), key=lambda i: (values[i], i))
    ys = [placed[i] for i in order]
    assert all(b - a >= gap - 1e-9 for a, b in zip(ys, ys[1:], strict=False))
    assert all(gap / 2 - 1e-9 <= y <= high - gap / 2 + 1e-9 for y in ys)


def test_spread_labels_leave_labels_that_do_not_crowd_at_their_values():
    assert spread_labels([1.0, 5.0, 9.0], 0.5, 0.0, 10.0) == [1.0, 5.0, 9.0]
    assert spread_labels([5.0, 5.0], 1.0, 0.0, 10.0) == [5.0, 6.0]
    assert spread_labels([10.0], 1.0, 0.0, 10.0) == [9.5]


@pytest.mark.parametrize("count", [1, 22])
def test_the_figure_is_as_high_at_every_width_and_holds_its_legend_and_labels(count):
    prices = [dated(f"region-{i:02d}", "spot", "2025-10-01", f"{1 + i}.00") for i in range(count)]
    layout = price_history_chart("t", prices).figure["layout"]
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    assert plot_px >= 16 * (count + 2) and plot_px >= 260
    assert "width" not in layout  # plotly.js fits the width to the page
