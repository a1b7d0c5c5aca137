"""A result's sizing sweeps (scenario format 1.1): each sweep's objective against the size, with
its P10–P90 band.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from costapp.charts.base import (
    BAND_ALPHA,
    rgba,
)
from costapp.reports import joint_sizing as joint
from costapp.reports import sizing_summary as summary
from hardware.display.charts import (
    Chart,
    Table,
    chart_layout,
    figure_json,
    series_color,
)

SIZING_GREY = "#8a93a3"


def _sizing_band(
    sweep: Mapping[str, Any], band: Mapping[str, Any] | None
) -> tuple[list[float], list[float]] | None:
    """The band's P10 and P90 lists when they belong to this sweep (same option, field and
    candidates), else None."""
    if band is None:
        return None
    same = (band.get("option"), band.get("field"), list(band.get("candidates") or ())) == (
        sweep["option"],
        sweep["field"],
        list(sweep["candidates"]),
    )
    return (list(band["p10_npv_usd"]), list(band["p90_npv_usd"])) if same else None


SIZE_TICKS = 10
"""At most about this many ticks on a sizing chart's size axis."""


def _size_ticks(sizes: Sequence[int], tozero: bool) -> dict[str, Any]:
    """The size axis's ticks: sizes are whole numbers, so ticks fall on the sweep's step (``tick0``
    the smallest size modulo the step: round numbers with a step of 1), every ``step`` × 1, 2, 5,
    10, 20, … sizes, the first such spacing that leaves at most ``SIZE_TICKS`` intervals over the
    axis (from 0 with ``tozero``); never a fractional tick, however narrow the sweep."""
    step = sizes[1] - sizes[0] if len(sizes) > 1 else 1
    span = max(sizes) - (0 if tozero else min(sizes))
    factor, k = 1, 0
    while span > SIZE_TICKS * step * factor:
        k += 1
        factor = (1, 2, 5)[k % 3] * 10 ** (k // 3)
    return {
        "tickmode": "linear",
        "tick0": sizes[0] % step,
        "dtick": step * factor,
        "tickformat": ",d",
    }


def sizing_chart(
    result: Mapping[str, Any], index: int, band: Mapping[str, Any] | None = None
) -> Chart:
    """Sweep ``index`` of the result's ``sizing``: the objective [USD] against the size (committed
    GPUs or servers), the scenario's own size and ``best`` marked, the candidates that do not
    qualify for best (not feasible, or leaving work undone on more paths than the sweep allows)
    drawn hollow and grey; with ``band`` (an entry of ``costapp.tco.sizing.sweeps_bands`` for this
    sweep) the P10–P90 band of the NPV over the paths."""
    sweep = result["sizing"][index]
    field, objective = sweep["field"], sweep["objective"]
    plural = summary.unit(field)
    found = summary.candidates(result, index)
    own = summary.own_size(result, index)
    best = sweep["best"]
    label = summary.objective_label(result, objective)
    spread = _sizing_band(sweep, band)
    n_paths = summary.paths(result)
    sizes = [c.size for c in found]
    values = [c.objective_usd for c in found]
    title = f"{sweep['option']}: {label} by number of {plural}"
    figure = go.Figure(
        layout=chart_layout(
            title,
            f"Size [{plural}]",  # as the table's first column
            f"{label[0].upper()}{label[1:]} [USD]",
        )
    )
    figure.update_yaxes(tickprefix="$", tickformat=",.3~s", separatethousands=True)
    tozero = min(sizes) <= max(1, max(sizes) // 10)
    figure.update_xaxes(rangemode="tozero" if tozero else "normal", **_size_ticks(sizes, tozero))
    color = series_color(0)
    hover = f"%{{x:,}} {plural}: %{{y:$,.0f}}<extra>%{{fullData.name}}</extra>"
    if spread is not None:
        p10, p90 = spread
        figure.add_trace(
            go.Scatter(
                x=sizes,
                y=p10,
                mode="lines",
                line={"width": 0, "color": color},
                name=f"NPV P10 over {n_paths:,} paths",
                legendgroup="band",
                showlegend=False,
                hovertemplate=hover,
            )
        )
        figure.add_trace(
            go.Scatter(
                x=sizes,
                y=p90,
                mode="lines",
                line={"width": 0, "color": color},
                fill="tonexty",
                fillcolor=rgba(color, BAND_ALPHA),
                name=f"NPV P10–P90 over {n_paths:,} paths",
                legendgroup="band",
                hovertemplate=hover,
            )
        )
    figure.add_trace(
        go.Scatter(
            x=sizes,
            y=values,
            mode="lines",
            line={"color": color, "width": 2},
            name=label[0].upper() + label[1:],
            hovertemplate=hover,
        )
    )
    ok = [c for c in found if c.qualifies]
    if ok:
        figure.add_trace(
            go.Scatter(
                x=[c.size for c in ok],
                y=[c.objective_usd for c in ok],
                mode="markers",
                marker={"color": color, "size": 7},
                name="Size that qualifies",
                hovertemplate=hover,
            )
        )
    not_ok = [c for c in found if not c.qualifies]
    if not_ok:
        figure.add_trace(
            go.Scatter(
                x=[c.size for c in not_ok],
                y=[c.objective_usd for c in not_ok],
                mode="markers",
                marker={
                    "color": "rgba(0,0,0,0)",
                    "size": 8,
                    "symbol": "circle-open",
                    "line": {"color": SIZING_GREY, "width": 2},
                },
                name="Leaves work undone: does not qualify",
                text=[c.reason for c in not_ok],
                hovertemplate=f"%{{x:,}} {plural}: %{{y:$,.0f}}<br>%{{text}}<extra></extra>",
            )
        )
    # the own size: a dotted line and a diamond (with its legend entry) when the sweep priced
    # it; between two sizes swept, the line alone, labelled; outside the range, nothing drawn
    # (the note says where it lies)
    mine = next((c for c in found if c.size == own), None)
    own_line = {"color": "#5b6475", "dash": "dot", "width": 1.5}
    if mine is not None:
        figure.add_vline(x=own, line=own_line)
        figure.add_trace(
            go.Scatter(
                x=[mine.size],
                y=[mine.objective_usd],
                mode="markers",
                marker={
                    "color": "#ffffff",
                    "size": 13,
                    "symbol": "diamond",
                    "line": {"color": "#1d2330", "width": 2},
                },
                name=f"The scenario's own size: {own:,}",
                hovertemplate=(
                    f"the scenario's own size, %{{x:,}} {plural}: %{{y:$,.0f}}<extra></extra>"
                ),
            )
        )
    elif sizes[0] < own < sizes[-1]:
        figure.add_vline(
            x=own,
            line=own_line,
            annotation_text=f"own size: {own:,} (not swept)",
            annotation_position="top",
        )
    if best is not None:
        at = found[sizes.index(int(best))]
        figure.add_trace(
            go.Scatter(
                x=[at.size],
                y=[at.objective_usd],
                mode="markers+text",
                marker={
                    "color": series_color(2),
                    "size": 17,
                    "symbol": "star",
                    "line": {"color": "#1d2330", "width": 1},
                },
                text=[f"best: {at.size:,}"],
                textposition="top center",
                name=f"Best: {at.size:,} {summary.unit(field, at.size)}",
                hovertemplate=f"best, %{{x:,}} {plural}: %{{y:$,.0f}}<extra></extra>",
            )
        )
    shortfall = sweep.get("shortfall_probability")
    columns = [f"Size [{plural}]", f"{label[0].upper()}{label[1:]} [USD]"]
    columns += [
        "NPV on the scenario's own values [USD]",
        "Total on the scenario's own values [USD]",
    ]
    if spread is not None:
        columns += ["NPV P10 over the paths [USD]", "NPV P90 over the paths [USD]"]
    if shortfall is not None:
        columns.append("Paths leaving work undone [%]")
    columns += ["Qualifies", "Marked"]
    rows: list[list[Any]] = []
    for i, c in enumerate(found):
        marks = [
            m for m, hit in (("best", c.size == best), ("scenario's own", c.size == own)) if hit
        ]
        row: list[Any] = [c.size, c.objective_usd, sweep["npv_usd"][i], sweep["total_usd"][i]]
        if spread is not None:
            row += [spread[0][i], spread[1][i]]
        if shortfall is not None:
            row.append(100.0 * shortfall[i])
        row += ["yes" if c.qualifies else f"no: {c.reason}", ", ".join(marks)]
        rows.append(row)
    caption = f"{sweep['option']}: {sweep['field']} from {sizes[0]:,} to {sizes[-1]:,}"
    note = "NPV is the present value of the costs over the horizon: lower is better."
    unswept = summary.own_size_unswept(result, index)
    if unswept:
        note += f" {unswept}, so it has no point on the chart."
    if spread is not None:
        note += (
            " The band holds the middle 80 % of the simulated futures (P10 to P90) at each size."
        )
    elif n_paths:
        note += " This run predates the P10–P90 band of the sizing charts: run it again to see it."
    return Chart(
        f"sizing-{index + 1}",
        title,
        figure_json(figure),
        [Table(caption, columns, rows)],
        note,
    )


def joint_sizing_chart(result: Mapping[str, Any], index: int) -> Chart | None:
    """A mix's joint sizing (format 1.3) over two layers as a heat map: the objective [USD] at
    each combination, the combinations that do not qualify left blank, the best and the
    scenario's own marked; None for one or three layers (the run page ranks those in a table)."""
    sweep = result["sizing"][index]
    found = joint.layers(result, index)
    if len(found) != 2:
        return None
    combos = joint.combinations(result, index)
    xs = sorted({c.sizes[1] for c in combos})
    ys = sorted({c.sizes[0] for c in combos})
    grid: list[list[float | None]] = [[None for _ in xs] for _ in ys]
    for c in combos:
        if c.qualifies:
            grid[ys.index(c.sizes[0])][xs.index(c.sizes[1])] = c.objective_usd
    label = summary.objective_label(result, sweep["objective"])
    title = f"{sweep['option']}: {label} by combination"
    figure = go.Figure(
        go.Heatmap(
            x=xs,
            y=ys,
            z=grid,
            colorscale="Viridis",
            reversescale=True,
            colorbar={"title": {"text": "USD"}, "tickformat": "$,.3s"},
            hovertemplate=(
                f"{found[0].plural}: %{{y}}<br>{found[1].plural}: %{{x}}<br>"
                f"{label}: %{{z:$,.0f}}<extra></extra>"
            ),
        )
    )
    marks = [("Best", sweep["best"], "circle", "#d62728")]
    own = joint.own_sizes(result, index)
    if list(own) != list(sweep["best"] or []):
        marks.append(("Scenario's own", own, "diamond-open", "#111111"))
    for name, sizes, symbol, color in marks:
        if sizes is None:
            continue
        figure.add_trace(
            go.Scatter(
                x=[sizes[1]],
                y=[sizes[0]],
                mode="markers",
                name=name,
                marker={"symbol": symbol, "size": 14, "color": color, "line": {"width": 2}},
                hovertemplate=f"{name}: %{{y}}, %{{x}}<extra></extra>",
            )
        )
    figure.update_layout(chart_layout(title, found[1].heading, found[0].heading))
    # ticks on the sizes priced (whole numbers only)
    figure.update_xaxes(tickmode="array", tickvals=xs, tickformat=",d")
    figure.update_yaxes(tickmode="array", tickvals=ys, tickformat=",d")
    table = Table(
        caption=f"{label} [USD] by combination (blank: does not qualify)",
        columns=[found[0].plural, found[1].plural, f"{label} [USD]", "qualifies"],
        rows=[
            [c.sizes[0], c.sizes[1], round(c.objective_usd, 2), "yes" if c.qualifies else "no"]
            for c in combos
        ],
    )
    return Chart(
        key=f"sizing-{index + 1}",
        title=title,
        figure=figure_json(figure),
        tables=[table],
    )


def sizing_charts(
    result: Mapping[str, Any], bands: Sequence[Mapping[str, Any]] | None = None
) -> list[Chart | None]:
    """One :func:`sizing_chart` per sweep of the result, in order (none without ``sizing``);
    ``bands`` are ``costapp.tco.sizing.sweeps_bands`` of the run (None: no band). A mix's joint
    sizing (format 1.3) gets :func:`joint_sizing_chart` (None beyond two layers)."""
    sweeps = result.get("sizing") or []
    return [
        joint_sizing_chart(result, i)
        if joint.is_joint(sweep)
        else sizing_chart(result, i, bands[i] if bands is not None and i < len(bands) else None)
        for i, sweep in enumerate(sweeps)
    ]
