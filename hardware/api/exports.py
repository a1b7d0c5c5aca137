"""The current prices as a table for spreadsheets: CSV, and an Excel workbook with typed numeric
cells, a header row, frozen panes and filters (pandas builds the table, openpyxl writes it)."""

import io

import pandas as pd
from django.db.models import QuerySet

from hardware.confidence import price_confidence, with_confidence
from hardware.display.cells import frame_inert, workbook_inert
from hardware.models import InstancePrice

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

# Column name -> the queryset path it comes from; names carry their units.
COLUMNS = {
    "provider": "offer__provider__slug",
    "instance_type": "offer__instance_type",
    "gpu": "offer__gpu__slug",
    "gpu_count": "offer__gpu_count",
    "region": "region__code",
    "zone": "zone",
    "billing": "billing",
    "usd_per_hour": "usd_per_hour",
    "usd_per_gpu_hour": "usd_per_gpu_hour",
    "first_seen_utc": "first_seen",
    "last_seen_utc": "last_seen",
    "source": "source_name",
    "price_id": "id",
}
MONEY_COLUMNS = ("usd_per_hour", "usd_per_gpu_hour")
TIME_COLUMNS = ("first_seen_utc", "last_seen_utc")


def price_table(rows: QuerySet[InstancePrice]) -> pd.DataFrame:
    """One row per price, in the queryset's order, with the columns of ``COLUMNS``, then its
    ``confidence`` (``high``, ``medium``, ``low``) and ``confidence_reasons`` in words, judged
    today (``hardware.confidence``).

    Money stays ``Decimal`` (exact in CSV); times are UTC.
    """
    rows = with_confidence(rows)
    records = list(rows.values_list(*COLUMNS.values()))
    table = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    judged = {price.pk: price_confidence(price) for price in rows.select_related("offer__provider")}
    table["confidence"] = [judged[pk].level for pk in table["price_id"]]
    table["confidence_reasons"] = ["; ".join(judged[pk].reasons) for pk in table["price_id"]]
    for column in TIME_COLUMNS:
        table[column] = pd.to_datetime(table[column], utc=True)
    table["gpu_count"] = table["gpu_count"].astype("int64")
    table["price_id"] = table["price_id"].astype("int64")
    return table


def price_csv(table: pd.DataFrame) -> bytes:
    """CSV with a header row; money as exact decimals, times as ISO 8601 UTC, text inert
    (``hardware.display.cells.cell_inert``)."""
    out = frame_inert(table)
    for column in TIME_COLUMNS:
        out[column] = out[column].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    return out.to_csv(index=False, lineterminator="\n").encode()


def price_workbook(table: pd.DataFrame) -> bytes:
    """An .xlsx workbook: sheet ``prices``, header row frozen, an auto-filter over the table,
    money and counts as numeric cells, times as date-time cells (UTC), text as inert text
    (``hardware.display.cells.workbook_inert``)."""
    out = table.copy()
    for column in MONEY_COLUMNS:
        out[column] = out[column].astype("float64")
    for column in TIME_COLUMNS:
        out[column] = out[column].dt.tz_convert("UTC").dt.tz_localize(None)
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
        out.to_excel(writer, sheet_name="prices", index=False)
        sheet = writer.sheets["prices"]
        sheet.freeze_panes = "A2"
        sheet.auto_filter.ref = sheet.dimensions
        for index, column in enumerate(out.columns, start=1):
            letter = sheet.cell(row=1, column=index).column_letter
            width = max(len(column), *(len(str(v)) for v in out[column].head(200)), 8)
            sheet.column_dimensions[letter].width = min(width + 2, 60)
            if column in MONEY_COLUMNS:
                for (cell,) in sheet.iter_rows(min_row=2, min_col=index, max_col=index):
                    cell.number_format = "0.0000######"
            if column in TIME_COLUMNS:
                for (cell,) in sheet.iter_rows(min_row=2, min_col=index, max_col=index):
                    cell.number_format = "yyyy-mm-dd hh:mm:ss"
        workbook_inert(writer.book)
    return buffer.getvalue()
