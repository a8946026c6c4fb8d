"""The report's building blocks: sections made of paragraphs, tables, matrices and charts.

The section builders (:mod:`cx_app.reports.sections`) decide every number, label and sentence
and return these frozen blocks; the Excel and HTML writers only lay them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ColumnKind = Literal["text", "int", "count", "float", "percent", "pvalue", "score", "pp"]
"""How a column's numbers are shown: ``int`` whole numbers, ``count`` counts that may be
real-valued (ALP), ``float`` 3 decimals, ``percent`` a rate shown as %, ``pvalue`` 4 decimals,
``score`` a net score (NPS, −100..100) with one decimal, ``pp`` a difference of two rates in
percentage points (the value is already in points: 100 × the difference of the rates), signed,
one decimal."""


@dataclass(frozen=True)
class TableColumn:
    """One column of a report table: its key in the rows, its title, how its values are
    written (:data:`ColumnKind`)."""

    key: str
    title: str
    kind: ColumnKind = "text"


@dataclass(frozen=True)
class NativeChart:
    """A chart a spreadsheet can draw from its table: ``scatter`` (x, y per ``series``) or
    ``bar`` (``x`` the category column, ``y`` the value columns)."""

    kind: Literal["scatter", "bar"]
    title: str
    x: str
    y: tuple[str, ...]
    series: str | None = None
    x_title: str = ""
    y_title: str = ""


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[TableColumn, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""
    native_chart: NativeChart | None = None
    cell_kinds: tuple[tuple[ColumnKind | None, ...], ...] = ()
    """Optional per-row overrides of the columns' kinds (None: the column's kind), for a
    column whose rows hold different measures (accuracy as %, MCC as a number)."""

    def column_values(self, key: str) -> list[Any]:
        index = [c.key for c in self.columns].index(key)
        return [row[index] for row in self.rows]

    def kind(self, row: int, column: int) -> ColumnKind:
        """The kind of one cell: its row's override, else its column's kind."""
        if row < len(self.cell_kinds) and column < len(self.cell_kinds[row]):
            override = self.cell_kinds[row][column]
            if override is not None:
                return override
        return self.columns[column].kind


@dataclass(frozen=True)
class MatrixBlock:
    """A confusion matrix: rows = actual, columns = predicted; ``im`` the IM row/column."""

    title: str
    labels: tuple[str, ...]
    counts: tuple[tuple[float, ...], ...]
    im: tuple[float, ...] | None = None
    positive: str | None = None
    real_valued: bool = False
    note: str = ""


@dataclass(frozen=True)
class ChartBlock:
    """An Altair chart as a Vega-Lite spec (data inline): interactive in HTML, an image in
    Excel."""

    title: str
    spec: dict
    note: str = ""


@dataclass(frozen=True)
class Paragraph:
    text: str
    style: Literal["text", "note", "warning", "heading"] = "text"


Block = Paragraph | Table | MatrixBlock | ChartBlock


@dataclass(frozen=True)
class Section:
    key: str
    title: str  # also the Excel sheet name: at most 31 characters
    blocks: tuple[Block, ...]

    def tables(self) -> list[Table]:
        return [b for b in self.blocks if isinstance(b, Table)]


@dataclass(frozen=True)
class Report:
    title: str
    created: str
    sections: tuple[Section, ...]
    meta: dict = field(default_factory=dict)

    def section(self, key: str) -> Section:
        for s in self.sections:
            if s.key == key:
                return s
        raise KeyError(key)
