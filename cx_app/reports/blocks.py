"""The report's building blocks: sections made of paragraphs, tables, matrices and charts.

The section builders decide every number and sentence; the writers only lay blocks out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ColumnKind = Literal["text", "int", "count", "float", "percent", "pvalue", "score", "pp"]
"""``count`` may be real-valued (ALP); ``pp`` is already in points (100 × a difference of rates)."""


@dataclass(frozen=True)
class TableColumn:
    key: str
    title: str
    kind: ColumnKind = "text"


@dataclass(frozen=True)
class NativeChart:
    """A chart a spreadsheet draws from its table (``scatter``: x, y per ``series``)."""

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
    """Per-row overrides of the columns' kinds, for rows of different measures."""

    def column_values(self, key: str) -> list[Any]:
        index = [c.key for c in self.columns].index(key)
        return [row[index] for row in self.rows]

    def kind(self, row: int, column: int) -> ColumnKind:
        overrides = self.cell_kinds[row] if row < len(self.cell_kinds) else ()
        return (overrides[column] if column < len(overrides) else None) or self.columns[column].kind


@dataclass(frozen=True)
class MatrixBlock:
    """Rows = actual, columns = predicted; ``im`` the IM row/column."""

    title: str
    labels: tuple[str, ...]
    counts: tuple[tuple[float, ...], ...]
    im: tuple[float, ...] | None = None
    positive: str | None = None
    real_valued: bool = False
    note: str = ""


@dataclass(frozen=True)
class ChartBlock:
    """A Vega-Lite spec (data inline): interactive in HTML, an image in Excel."""

    title: str
    spec: dict
    note: str = ""


@dataclass(frozen=True)
class Paragraph:
    text: str
    style: Literal["text", "note", "warning", "heading"] = "text"


Block = Paragraph | Table | MatrixBlock | ChartBlock
BLOCK_KINDS: dict[type, str] = {Paragraph: "paragraph", Table: "table", MatrixBlock: "matrix",
                                ChartBlock: "chart"}
"""Each block's method in every writer."""


@dataclass(frozen=True)
class Section:
    key: str
    title: str  # also the Excel sheet name: at most 31 characters
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Report:
    title: str
    created: str
    sections: tuple[Section, ...]
