"""A succeeded run's downloads: the rows of ``monthly.csv`` (docs/api.md) and the XLSX
workbook of the run page (sheets "monthly", "options" and "sources", "layers" where the
result has a mix, "sizing" where it has sweeps, and "risk" where it has a simulation; money as
dollars and shares as percentages, the numbers exact).
"""

import csv
import io
import json
from typing import Any

import pandas as pd

from costapp.models import RunRisk, SimulationRun
from costapp.reports.categories import COST_CATEGORIES
from costapp.reports.risk import COMMITMENT_KEYS, OPTION_KEYS
from hardware.display.cells import rows_inert, workbook_inert


def run_monthly_rows(*, run: SimulationRun) -> list[list[Any]]:
    """The rows of a succeeded run's ``monthly.csv`` (docs/api.md): per option and month 0 … H,
    the categories, ``total_usd`` and ``cumulative_usd`` [USD], then (format 1.2, after the
    contract's columns) the option's ``all_in_usd_per_million_tokens`` over the horizon, on each
    of its rows, empty where the scenario serves no tokens."""
    assert run.result is not None and run.monthly_breakdown_usd is not None
    rows: list[list[Any]] = []
    for option in run.result["options"]:
        categories = run.monthly_breakdown_usd[option["name"]]
        for month, (total, cumulative) in enumerate(
            zip(option["monthly_usd"], option["cumulative_usd"], strict=True)
        ):
            rows.append(
                [option["name"], month]
                + [categories[category.name][month] for category in COST_CATEGORIES]
                + [total, cumulative, option.get("all_in_usd_per_million_tokens")]
            )
    return rows


MONTHLY_CSV_COLUMNS = [
    "option",
    "month",
    *(category.name for category in COST_CATEGORIES),
    "total_usd",
    "cumulative_usd",
    "all_in_usd_per_million_tokens",
]
"""The columns of ``monthly.csv`` and of the workbook's sheet "monthly": the contract's
(docs/api.md), then the format 1.2 figure appended (a reader of the contract's columns by name or
position reads them unchanged)."""


OPTION_COLUMNS = [
    ("option", "name"),
    ("type", "type"),
    ("gpu", "gpu"),
    ("feasible", "feasible"),
    ("provisioned_gpus", "provisioned_gpus"),
    ("total_usd", "total_usd"),
    ("npv_usd", "npv_usd"),
    ("break_even_month", "break_even_month"),
    ("usd_per_busy_gpu_hour", "usd_per_busy_gpu_hour"),
    ("savings_vs_baseline_pct", "savings_vs_baseline_pct"),
    ("average_utilization", "average_utilization"),
    ("break_even_utilization", "break_even_utilization"),
    ("shortfall_gpu_hours", "shortfall_gpu_hours"),
    ("all_in_usd_per_million_tokens", "all_in_usd_per_million_tokens"),
    ("goodput", "goodput"),
    ("mean_npv_usd", "mean_npv_usd"),
    ("p90_npv_usd", "p90_npv_usd"),
    ("tail_npv_usd", "tail_npv_usd"),
    ("p10_usd", "p10_usd"),
    ("p50_usd", "p50_usd"),
    ("p90_usd", "p90_usd"),
    ("probability_cheapest", "probability_cheapest"),
]

LAYER_COLUMNS = ["mix", "layer", "role", "provisioned_gpus", "served_gpu_hours", "total_usd"]
"""The columns of the workbook's sheet "layers" (format 1.3: each mix's ``layers``, one row per
layer and rest)."""

SOURCE_COLUMNS = ["path", "value", "source", "stated_on", "flags"]
"""The columns of the workbook's sheet "sources" (the result's ``sources``; a tier list as JSON,
flags comma-separated)."""


def _source_cells(row: dict[str, Any]) -> list[Any]:
    value = row.get("value")
    return [
        row.get("path"),
        json.dumps(value) if isinstance(value, list | dict) else value,
        row.get("source"),
        row.get("stated_on"),
        ", ".join(row.get("flags") or []),
    ]


RISK_OPTION_COLUMNS = [("option", "name"), ("feasible", "feasible")] + [
    (key, key) for key in OPTION_KEYS
]
RISK_COMMITMENT_COLUMNS = list(COMMITMENT_KEYS)


def _risk_tables(run: SimulationRun) -> list[tuple[str, pd.DataFrame]]:
    """The sheet "risk": per option its NPV over the paths (mean, P90, mean of the worst tail)
    and its chance of being the cheapest; then, where the run stored its risk figures, each
    commitment's unused committed GPU-hours and their cost, and month by month the share of paths
    on which each option has cost least so far. None without a simulation."""
    assert run.result is not None
    simulation = run.result["inputs"].get("simulation") or {}
    if int(simulation.get("paths") or 0) <= 0:
        return []
    options = pd.DataFrame(
        [[option.get(key) for _c, key in RISK_OPTION_COLUMNS] for option in run.result["options"]],
        columns=[column for column, _key in RISK_OPTION_COLUMNS],
    )
    tables = [("NPV over the simulated futures, per option", options)]
    stored = RunRisk.objects.filter(run=run).defer("sorted_totals").first()
    if stored is None:
        return tables
    figures = stored.figures
    commitments = pd.DataFrame(
        [[row[column] for column in RISK_COMMITMENT_COLUMNS] for row in figures["commitments"]],
        columns=RISK_COMMITMENT_COLUMNS,
    )
    if not commitments.empty:
        tables.append(("Committed GPU-hours that no work uses, and their cost", commitments))
    names = list(figures["options"])
    leaders = pd.DataFrame(
        {"month": range(len(figures["cheapest_so_far"][names[0]]))}
        | {name: figures["cheapest_so_far"][name] for name in names}
    )
    tables.append(("Share of futures in which each option has cost least so far", leaders))
    return tables


def run_monthly_csv(*, run: SimulationRun) -> str:
    """A succeeded run's ``monthly.csv``: the header (``MONTHLY_CSV_COLUMNS``), then the rows,
    every text cell inert (``hardware.display.cells.cell_inert``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(MONTHLY_CSV_COLUMNS)
    writer.writerows(rows_inert(run_monthly_rows(run=run)))
    return out.getvalue()


SIZING_COLUMNS = [
    "sweep",
    "option",
    "field",
    "objective",
    "candidate",
    "best",
    "feasible",
    "npv_usd",
    "total_usd",
    "mean_npv_usd",
    "p90_npv_usd",
    "tail_npv_usd",
    "shortfall_probability",
]
"""The columns of the workbook's sheet "sizing": one row per sweep and candidate (a mix's
candidate as its layers' sizes, "4 / 8"), the result's per-candidate figures beside it."""


def _sizing_rows(result: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for number, sweep in enumerate(result.get("sizing") or [], start=1):
        for index, candidate in enumerate(sweep["candidates"]):
            size = (
                " / ".join(str(n) for n in candidate) if isinstance(candidate, list) else candidate
            )
            rows.append(
                [number, sweep["option"], sweep["field"], sweep["objective"], size]
                + [candidate == sweep.get("best")]
                + [(sweep[key][index] if key in sweep else None) for key in SIZING_COLUMNS[6:]]
            )
    return rows


MONEY_FORMAT = '"$"#,##0.00'
SHARE_FORMAT = "0.0%"


def _formats_set(book: Any) -> None:
    """Money columns (a header naming ``_usd``) as dollars and shares
    (``probability_cheapest``, ``shortfall_probability``, ``average_utilization``) as
    percentages, in every sheet whose first row is its header; the values stay exact numbers."""
    shares = {"probability_cheapest", "shortfall_probability", "average_utilization"}
    for sheet in book.worksheets:
        for header_row in sheet.iter_rows():
            headers = [cell.value for cell in header_row]
            if not any(isinstance(h, str) and "_usd" in h for h in headers):
                continue  # a title row (the risk sheet's) or a table without money
            for column, header in enumerate(headers, start=1):
                if not isinstance(header, str):
                    continue
                kind = MONEY_FORMAT if "_usd" in header else None
                kind = SHARE_FORMAT if header in shares else kind
                if kind is None:
                    continue
                for cell in sheet.iter_rows(
                    min_row=header_row[0].row + 1, min_col=column, max_col=column
                ):
                    if isinstance(cell[0].value, int | float) and not isinstance(
                        cell[0].value, bool
                    ):
                        cell[0].number_format = kind


def run_workbook(*, run: SimulationRun) -> bytes:
    """The XLSX bytes of a succeeded run (pandas + openpyxl), every text cell written as inert
    text (``hardware.display.cells.workbook_inert``)."""
    assert run.result is not None
    monthly = pd.DataFrame(run_monthly_rows(run=run), columns=MONTHLY_CSV_COLUMNS)
    options = pd.DataFrame(
        [[option.get(key) for _column, key in OPTION_COLUMNS] for option in run.result["options"]],
        columns=[column for column, _key in OPTION_COLUMNS],
    )
    sources = pd.DataFrame(
        [_source_cells(row) for row in run.result.get("sources") or []], columns=SOURCE_COLUMNS
    )
    layers = pd.DataFrame(
        [
            [
                option["name"],
                layer["name"],
                layer["role"],
                layer["provisioned_gpus"],
                layer["served_gpu_hours"],
                layer["total_usd"],
            ]
            for option in run.result["options"]
            for layer in option.get("layers") or []
        ],
        columns=LAYER_COLUMNS,
    )
    out = io.BytesIO()
    with pd.ExcelWriter(out, engine="openpyxl") as writer:
        monthly.to_excel(writer, sheet_name="monthly", index=False, freeze_panes=(1, 0))
        options.to_excel(writer, sheet_name="options", index=False, freeze_panes=(1, 0))
        sources.to_excel(writer, sheet_name="sources", index=False, freeze_panes=(1, 0))
        if not layers.empty:  # format 1.3: a mix's layers
            layers.to_excel(writer, sheet_name="layers", index=False, freeze_panes=(1, 0))
        sizing = pd.DataFrame(_sizing_rows(run.result), columns=SIZING_COLUMNS)
        if not sizing.empty:
            sizing.to_excel(writer, sheet_name="sizing", index=False, freeze_panes=(1, 0))
        row = 0
        for title, table in _risk_tables(run):
            pd.DataFrame([[title]]).to_excel(
                writer, sheet_name="risk", index=False, header=False, startrow=row
            )
            table.to_excel(writer, sheet_name="risk", index=False, startrow=row + 1)
            row += len(table) + 3
        workbook_inert(writer.book)
        _formats_set(writer.book)
    return out.getvalue()
