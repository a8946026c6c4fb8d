"""Survey text written out safely: never a live formula in Excel or CSV, never markup in HTML.

Column names, labels, segment values and comments come from the survey file, i.e. from whoever
wrote it. A spreadsheet evaluates a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and,
through DDE tricks, one that starts with a tab or carriage return) as a formula — "CSV
injection" (OWASP). The rules here:

- Excel (openpyxl): a formula-like string is stored as a *string cell* with Excel's quote
  prefix (what Excel itself does when you type ``'=1+1``), so the text shows verbatim and stays
  text even when the cell is edited. See :func:`cx_app.reports.excel`.
- CSV: a formula-like string gets a leading apostrophe, as OWASP recommends
  (:func:`neutralise_csv_value`, :func:`safe_csv_frame`, :func:`to_safe_csv`).
- HTML: every text is escaped with :func:`html.escape` (:func:`escape_html`).

Only strings are touched: a negative *number* stays a number.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet treat a cell as a formula (OWASP, CSV injection)."""

CSV_ENCODING = "utf-8-sig"
"""CSV downloads carry a byte-order mark so that Excel reads accented labels correctly."""


def is_formula_like(value: Any) -> bool:
    """True when ``value`` is a string a spreadsheet would evaluate as a formula.

    >>> is_formula_like("=HYPERLINK(\\"http://x\\")"), is_formula_like("-cmd"), is_formula_like(-3)
    (True, True, False)
    """
    return isinstance(value, str) and value.startswith(FORMULA_PREFIXES)


def neutralise_csv_value(value: Any) -> Any:
    """The value as it must appear in a CSV cell: formula-like strings get a leading ``'``.

    >>> neutralise_csv_value("@SUM(A1:A9)"), neutralise_csv_value("Promoter"), neutralise_csv_value(-1.5)
    ("'@SUM(A1:A9)", 'Promoter', -1.5)
    """
    if is_formula_like(value):
        return "'" + value
    return value


def _neutralise_label(label: Any) -> Any:
    if isinstance(label, tuple):
        return tuple(neutralise_csv_value(part) for part in label)
    return neutralise_csv_value(label)


def safe_csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose strings (cells, column names, index labels) are CSV-safe.

    Numeric columns are left as they are (negative numbers stay numbers); in text or mixed
    columns only the string cells are changed.
    """
    out = frame.copy()
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
            continue
        out.isetitem(position, column.map(neutralise_csv_value, na_action="ignore"))
    out.columns = pd.Index([_neutralise_label(c) for c in out.columns],
                           name=_neutralise_label(out.columns.name))
    out.index = pd.Index([_neutralise_label(i) for i in out.index],
                         name=_neutralise_label(out.index.name))
    return out


def to_safe_csv(frame: pd.DataFrame, *, index: bool = False) -> bytes:
    """``frame`` as CSV bytes (UTF-8 with BOM) with every formula-like string neutralised.

    The app's download buttons use this for every table that may hold survey text.
    """
    text = safe_csv_frame(frame).to_csv(index=index, lineterminator="\r\n")
    return text.encode(CSV_ENCODING)


def escape_html(value: Any) -> str:
    """``value`` as HTML text: ``<``, ``>``, ``&`` and both quotes escaped (:func:`html.escape`).

    >>> escape_html("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    """
    return html.escape("" if value is None else str(value), quote=True)
