"""The Excel workbook (openpyxl): one sheet per report section.

Every string goes through :func:`_put`: formula-like text becomes a quote-prefixed string cell.
Charts: PNGs of the Altair specs, and native Excel charts for ROC points and AUC.
"""

from __future__ import annotations

import io
import itertools
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.drawing.image import Image
from openpyxl.formatting.rule import ColorScaleRule
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from cx_app.atomic_files import atomic_path
from cx_app.reports.blocks import (
    BLOCK_KINDS,
    ChartBlock,
    MatrixBlock,
    NativeChart,
    Paragraph,
    Report,
    Table,
)
from cx_app.reports.charts import chart_png
from cx_app.safe_text import is_formula_like, plain_text, short_label

NUMBER_FORMATS = {"int": "0", "count": "#,##0", "float": "0.000", "percent": "0.0%",
                  "pvalue": "0.0000", "score": "0.0",
                  "pp": '+0.0" pp";-0.0" pp";0.0" pp"'}
_REAL_COUNT_FORMAT = "#,##0.00"
_MAX_CELL_TEXT = 32_767

_HEADER_FILL = PatternFill("solid", start_color="DCE6F0", end_color="DCE6F0")
_IM_FILL = PatternFill("solid", start_color="FCE4C8", end_color="FCE4C8")
_IM_FONT = Font(italic=True, bold=True, color="7A3E00")
_DASHED = Side(style="dashed", color="7A3E00")
_IM_BORDER = Border(left=_DASHED, right=_DASHED, top=_DASHED, bottom=_DASHED)
_THICK = Side(style="medium", color="1B1F23")
_TITLE_FONT = Font(bold=True, size=14)
_BLOCK_FONT = Font(bold=True, size=12)
_NOTE_FONT = Font(italic=True, color="555555")
_WARNING_FONT = Font(bold=True, color="9C2A00")
_ROW_PIXELS = 20


def _put(ws: Worksheet, row: int, column: int, value: Any, *, number_format: str | None = None,
         font: Font | None = None, fill: PatternFill | None = None) -> Any:
    cell = ws.cell(row=row, column=column)
    if isinstance(value, str):
        value = ILLEGAL_CHARACTERS_RE.sub("", value)[:_MAX_CELL_TEXT]
        cell.value = value
        if is_formula_like(value) or cell.data_type == "f":
            cell.data_type = "s"
            cell.quotePrefix = True
    else:
        cell.value = value
        if number_format and value is not None:
            cell.number_format = number_format
    if font is not None:
        cell.font = font
    if fill is not None:
        cell.fill = fill
    return cell


def _number_format(kind: str, values: list[Any]) -> str | None:
    if kind == "count" and any(isinstance(v, float) and not v.is_integer()
                               for v in values if v is not None):
        return _REAL_COUNT_FORMAT
    return NUMBER_FORMATS.get(kind)


class _SheetWriter:
    """Stacks blocks down one sheet and remembers what to freeze and how wide columns are."""

    def __init__(self, ws: Worksheet) -> None:
        self.ws = ws
        self.row = 1
        self.freeze: str | None = None
        self.widths: dict[int, int] = {}

    def _line(self, text: str, font: Font = _NOTE_FONT) -> None:
        if text:
            _put(self.ws, self.row, 1, text, font=font)
            self.row += 1

    def _im_cell(self, row: int, column: int, value: Any, fmt: str) -> None:
        _put(self.ws, row, column, value, number_format=fmt, font=_IM_FONT,
             fill=_IM_FILL).border = _IM_BORDER

    def _note_width(self, column: int, value: Any, cap: int = 60) -> None:
        if value is None:
            return
        text = f"{value:.4f}" if isinstance(value, float) else str(value)
        self.widths[column] = max(self.widths.get(column, 8), min(cap, len(text) + 2))

    def title(self, text: str) -> None:
        _put(self.ws, self.row, 1, text, font=_TITLE_FONT)
        self.row += 2

    def paragraph(self, block: Paragraph) -> None:
        font = {"note": _NOTE_FONT, "warning": _WARNING_FONT, "heading": _BLOCK_FONT}.get(
            block.style)
        _put(self.ws, self.row, 1, block.text, font=font)
        self.row += 1

    def table(self, block: Table) -> None:
        ws = self.ws
        self._line(block.title, _BLOCK_FONT)
        header_row = self.row
        for j, column in enumerate(block.columns, start=1):
            cell = _put(ws, header_row, j, column.title, font=Font(bold=True), fill=_HEADER_FILL)
            cell.alignment = Alignment(wrap_text=True, vertical="top")
            self._note_width(j, column.title, cap=24)
        if self.freeze is None:
            self.freeze = f"B{header_row + 1}" if len(block.columns) > 4 else f"A{header_row + 1}"
        formats = [_number_format(c.kind, block.column_values(c.key)) for c in block.columns]
        wide_text = {j for j, c in enumerate(block.columns) if c.kind == "text"
                     and any(isinstance(v, str) and len(v) > 60 for v in block.column_values(c.key))}
        for i, values in enumerate(block.rows, start=1):
            for j, value in enumerate(values):
                kind = block.kind(i - 1, j)
                fmt = formats[j] if kind == block.columns[j].kind else _number_format(kind,
                                                                                      [value])
                cell = _put(ws, header_row + i, j + 1, value, number_format=fmt)
                if j in wide_text:
                    cell.alignment = Alignment(wrap_text=True, vertical="top")
                self._note_width(j + 1, value)
        last_row = header_row + len(block.rows)
        if block.native_chart is not None and block.rows:
            self._native_chart(block, header_row, last_row)
        self.row = last_row + 1
        self._line(block.note)
        self.row += 1

    def _native_chart(self, block: Table, header_row: int, last_row: int) -> None:
        spec: NativeChart = block.native_chart
        keys = [c.key for c in block.columns]
        anchor = f"{get_column_letter(len(keys) + 2)}{header_row}"
        if spec.kind == "bar":
            chart = BarChart()
            chart.type = "col"
            for key in spec.y:
                col = keys.index(key) + 1
                chart.add_data(Reference(self.ws, min_col=col, min_row=header_row,
                                         max_row=last_row), titles_from_data=True)
            x = keys.index(spec.x) + 1
            chart.set_categories(Reference(self.ws, min_col=x, min_row=header_row + 1,
                                           max_row=last_row))
        else:
            chart = ScatterChart()
            chart.style = 13
            x_col, y_col = keys.index(spec.x) + 1, keys.index(spec.y[0]) + 1
            series_col = keys.index(spec.series) if spec.series else None
            rows = enumerate(block.rows, start=header_row + 1)  # (sheet row, values)
            for name, run in itertools.groupby(rows, lambda r: "" if series_col is None
                                               else str(r[1][series_col])):
                numbers = [r for r, _ in run]
                first, last = numbers[0], numbers[-1]
                series = Series(Reference(self.ws, min_col=y_col, min_row=first, max_row=last),
                                Reference(self.ws, min_col=x_col, min_row=first, max_row=last),
                                title=short_label(plain_text(name)) or spec.y[0])
                series.marker.symbol = "none"
                chart.series.append(series)
            chart.x_axis.scaling.min, chart.x_axis.scaling.max = 0, 1
            chart.y_axis.scaling.min, chart.y_axis.scaling.max = 0, 1
        chart.title = plain_text(spec.title)  # chart XML: no control character (issue 24)
        chart.x_axis.title = plain_text(spec.x_title) or None
        chart.y_axis.title = plain_text(spec.y_title) or None
        chart.x_axis.delete = False
        chart.y_axis.delete = False
        chart.width, chart.height = 14, 8
        self.ws.add_chart(chart, anchor)
        # keep the next block below the chart (about 16 rows at 15 pt)
        self.row = max(self.row, header_row + 17)

    def matrix(self, block: MatrixBlock) -> None:
        ws = self.ws
        self._line(block.title, _BLOCK_FONT)
        self._line(f"Positive group: {block.positive}" if block.positive else "")
        top = self.row
        m = len(block.labels)
        corner = _put(ws, top, 1, "Actual ↓ / Predicted →", font=Font(bold=True), fill=_HEADER_FILL)
        self._note_width(1, corner.value)
        labels = list(block.labels)
        has_im = block.im is not None
        fmt = _REAL_COUNT_FORMAT if block.real_valued else NUMBER_FORMATS["count"]
        for j, label in enumerate([*labels, *(["IM"] if has_im else [])], start=2):
            cell = _put(ws, top, j, label, font=Font(bold=True),
                        fill=_IM_FILL if (has_im and j == m + 2) else _HEADER_FILL)
            cell.alignment = Alignment(horizontal="center")
            self._note_width(j, label, cap=30)
        for i, label in enumerate(labels):
            r = top + 1 + i
            _put(ws, r, 1, label, font=Font(bold=True), fill=_HEADER_FILL)
            for j, value in enumerate(block.counts[i]):
                cell = _put(ws, r, j + 2, value, number_format=fmt)
                if i == j:
                    cell.border = Border(left=_THICK, right=_THICK, top=_THICK, bottom=_THICK)
                self._note_width(j + 2, value)
            if has_im:
                self._im_cell(r, m + 2, block.im[i], fmt)
        last = top + m
        if m:
            area = f"B{top + 1}:{get_column_letter(m + 1)}{last}"
            ws.conditional_formatting.add(area, ColorScaleRule(
                start_type="min", start_color="FFFFFF", end_type="max", end_color="4A7DB3"))
        if has_im:
            last += 1
            _put(ws, last, 1, "IM", font=_IM_FONT, fill=_IM_FILL)
            for j, value in enumerate(block.im):
                self._im_cell(last, j + 2, value, fmt)
            _put(ws, last, m + 2, None, fill=_IM_FILL)
        self.row = last + 1
        self._line(block.note)
        self.row += 1

    def chart(self, block: ChartBlock) -> None:
        self._line(block.title, _BLOCK_FONT)
        try:
            png = chart_png(block.spec, 1.0)
        except Exception as exc:  # vl-convert errors are plain exceptions; the report goes on
            _put(self.ws, self.row, 1, f"(chart not rendered: {exc})", font=_WARNING_FONT)
            self.row += 2
            return
        image = Image(io.BytesIO(png))
        self.ws.add_image(image, f"A{self.row}")
        self.row += int(image.height / _ROW_PIXELS) + 2
        if block.note:
            _put(self.ws, self.row - 1, 1, block.note, font=_NOTE_FONT)
            self.row += 1

    def finish(self) -> None:
        for column, width in self.widths.items():
            self.ws.column_dimensions[get_column_letter(column)].width = width
        self.ws.freeze_panes = self.freeze or "A3"


def write_excel(report: Report, path: str | Path | io.BytesIO, *, charts: bool = True) -> None:
    """``charts=False`` leaves out the chart images (faster; native charts stay)."""
    workbook = Workbook()
    workbook.remove(workbook.active)
    for section in report.sections:
        writer = _SheetWriter(workbook.create_sheet(plain_text(section.title)[:31]))
        writer.title(report.title if section.key == "summary" else section.title)
        for block in section.blocks:
            if charts or not isinstance(block, ChartBlock):
                getattr(writer, BLOCK_KINDS[type(block)])(block)
        writer.finish()
    workbook.properties.title = plain_text(report.title)
    workbook.properties.creator = "cx-app"
    if isinstance(path, io.BytesIO):
        workbook.save(path)
        return
    with atomic_path(path) as tmp:  # a killed run leaves the old workbook or none
        workbook.save(tmp)


def excel_bytes(report: Report, **options: Any) -> bytes:
    buffer = io.BytesIO()
    write_excel(report, buffer, **options)
    return buffer.getvalue()
