"""The data-quality report of one import: what was read, what was used, what was left out and why.

Every respondent row read from the file is either used or listed in ``excluded`` with one
reason (the first problem found, in the order target → attributes → missing attributes, after
the duplicate-id check). Row numbers are the sheet's row numbers as Excel shows them (header on
row 1 → first data row is 2; for CSV files, the line number). Completely blank rows are not
respondents: they are skipped before ``rows_read`` and counted in ``blank_rows`` and the notes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

OUT_OF_SCALE = "out-of-scale score"
NON_NUMERIC = "non-numeric text"
DECIMAL = "decimal where an integer scale is expected"
MISSING_TARGET = "missing target"
MISSING_ATTRIBUTE = "missing attribute score"
DUPLICATE_ID = "duplicate respondent id"
EXCEL_ERROR = "Excel error cell"
"""A formula error (``#N/A``, ``#DIV/0!``, ...; the value shows which) in an .xlsx/.xlsm
worksheet. Error cells of .xls and .ods workbooks cannot be told apart from blanks (calamine
reads them as empty text) and count as missing."""
DATE_IN_SCORE = "date in a score column"
"""A cell formatted as a date (or time) where a score is expected."""

REASONS: tuple[str, ...] = (
    DUPLICATE_ID, MISSING_TARGET, EXCEL_ERROR, DATE_IN_SCORE, NON_NUMERIC, DECIMAL, OUT_OF_SCALE,
    MISSING_ATTRIBUTE,
)
"""Every exclusion reason, in the order a report lists them."""


@dataclass(frozen=True)
class ExcludedRow:
    """One respondent left out: sheet row (as Excel shows it), column header, reason, value."""

    row: int
    column: str
    reason: str
    value: str

    def to_dict(self) -> dict:
        return {"row": self.row, "column": self.column, "reason": self.reason,
                "value": self.value}


@dataclass(frozen=True)
class DataQualityReport:
    """Counts of rows read, used and excluded (with reasons), imputed cells, and notes."""

    rows_read: int
    rows_used: int
    excluded: tuple[ExcludedRow, ...] = ()
    imputed: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    blank_rows: int = 0

    def __post_init__(self) -> None:
        if self.rows_used + len(self.excluded) != self.rows_read:
            raise ValueError(
                f"report does not add up: {self.rows_used} used + {len(self.excluded)} excluded "
                f"!= {self.rows_read} read"
            )

    @property
    def rows_excluded(self) -> int:
        return len(self.excluded)

    def counts_by_reason(self) -> dict[str, int]:
        """Excluded rows per reason (reasons with no rows are left out), in :data:`REASONS`
        order."""
        counts = Counter(e.reason for e in self.excluded)
        return {r: counts[r] for r in (*REASONS, *sorted(set(counts) - set(REASONS)))
                if counts[r]}

    def first_rows(self, limit: int = 5) -> dict[str, list[ExcludedRow]]:
        """The first ``limit`` excluded rows of each reason."""
        out: dict[str, list[ExcludedRow]] = {}
        for item in self.excluded:
            rows = out.setdefault(item.reason, [])
            if len(rows) < limit:
                rows.append(item)
        return {r: out[r] for r in self.counts_by_reason()}

    def to_dict(self) -> dict:
        return {
            "rows_read": self.rows_read,
            "rows_used": self.rows_used,
            "rows_excluded": self.rows_excluded,
            "blank_rows": self.blank_rows,
            "counts_by_reason": self.counts_by_reason(),
            "excluded": [e.to_dict() for e in self.excluded],
            "imputed": dict(self.imputed),
            "notes": list(self.notes),
        }

    def to_frame(self) -> pd.DataFrame:
        """The excluded rows as a table (row, column, reason, value)."""
        return pd.DataFrame([e.to_dict() for e in self.excluded],
                            columns=["row", "column", "reason", "value"])

    def to_text(self, limit: int = 5) -> str:
        """A plain-text report for the CLI."""
        lines = [f"rows read: {self.rows_read}", f"rows used: {self.rows_used}",
                 f"rows excluded: {self.rows_excluded}"]
        for reason, rows in self.first_rows(limit).items():
            count = self.counts_by_reason()[reason]
            lines.append(f"  {reason}: {count}")
            for e in rows:
                lines.append(f"    row {e.row}, column {e.column!r}: {e.value!r}")
            if count > len(rows):
                lines.append(f"    ... and {count - len(rows)} more")
        imputed = {k: v for k, v in self.imputed.items() if v}
        if imputed:
            lines.append("imputed (median) cells: " + ", ".join(
                f"{k} {v}" for k, v in imputed.items()))
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)
