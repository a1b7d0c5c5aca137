"""Cells of every spreadsheet the product writes (CSV and XLSX), made inert: a text cell never
becomes a formula in the spreadsheet that opens it.

The rule is OWASP's for CSV injection: a text cell starting with ``=``, ``+``, ``-``, ``@``, a tab
or a carriage return gets a leading apostrophe, so a spreadsheet shows the text and evaluates
nothing; numbers, dates and empty cells stay as they are. In a workbook every text cell is
written as text (never as a formula), after the same rule.
"""

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""The first characters by which a spreadsheet reads a text cell as a formula."""


def cell_inert(value: Any) -> Any:
    """``value`` as a spreadsheet cell that evaluates nothing: text starting with one of
    ``FORMULA_STARTS`` behind an apostrophe, anything else (numbers too) unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def rows_inert(rows: Iterable[Sequence[Any]]) -> Iterator[list[Any]]:
    """Rows for a CSV writer, every cell through ``cell_inert``."""
    for row in rows:
        yield [cell_inert(value) for value in row]


def frame_inert(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` with every text cell, and every column name, through ``cell_inert``."""
    out = table.copy()
    for column in out.columns:
        dtype = out[column].dtype
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            out[column] = out[column].map(cell_inert)
    out.columns = [cell_inert(column) for column in out.columns]
    return out


def workbook_inert(book: Any) -> None:
    """Every text cell of ``book``'s sheets (an openpyxl workbook) through ``cell_inert`` and typed as text, so no cell
    of the written file is a formula."""
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, str):
                    cell.value = cell_inert(cell.value)
                    cell.data_type = "s"
