"""The program deck laid out with python-pptx: 16:9, a title slide, then one message each.

Only layout lives here; every text goes through :func:`cx_app.safe_text.plain_text`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from cx_app.reports.blocks import Table
from cx_app.reports.charts import chart_png
from cx_app.reports.deck_slide import DeckSlide
from cx_app.reports.formatting import format_value
from cx_app.safe_text import plain_text

__all__ = ["MAX_TABLE_ROWS", "deck_bytes"]

MAX_TABLE_ROWS = 24


def _fit(png: bytes, width: float, height: float) -> tuple[float, float]:
    """The largest (width, height) of the PNG's aspect within the box (inches)."""
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    scale = min(width / w, height / h) if w and h else 1.0
    return w * scale, h * scale


def _text_box(slide: Any, text_lines: Sequence[str], box: tuple[float, float, float, float],
              size: int) -> None:
    from pptx.util import Inches, Pt

    frame = slide.shapes.add_textbox(*(Inches(v) for v in box)).text_frame
    frame.word_wrap = True
    for i, line in enumerate(text_lines):
        paragraph = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        paragraph.text = plain_text(line)
        paragraph.space_after = Pt(8)
        for run in paragraph.runs:
            run.font.size = Pt(size)


def _table(slide: Any, table: Table, box: tuple[float, float, float, float]) -> None:
    from pptx.util import Inches, Pt

    rows = list(table.rows)
    if len(rows) > MAX_TABLE_ROWS:
        rows = [*rows[:MAX_TABLE_ROWS - 1],
                (f"… {len(rows) - MAX_TABLE_ROWS + 1} more rows (see the Excel report)",
                 *[None] * (len(table.columns) - 1))]
    size = (12 if len(table.columns) <= 4 else 11) if len(rows) <= 10 else \
        10 if len(rows) <= 16 else 8
    left, top, width, _ = box
    height = 0.3 * (len(rows) + 1) * size / 12
    shape = slide.shapes.add_table(len(rows) + 1, len(table.columns), Inches(left),
                                   Inches(top), Inches(width), Inches(height)).table
    cells = [[c.title for c in table.columns]]
    cells += [[format_value(v, table.columns[j].kind) for j, v in enumerate(row)] for row in rows]
    for i, values in enumerate(cells):
        for j, value in enumerate(values):
            cell = shape.cell(i, j)
            cell.text = plain_text(str(value))
            for paragraph in cell.text_frame.paragraphs:
                for run in paragraph.runs:
                    run.font.size = Pt(size)


def _render(prs: Any, doc: DeckSlide, first: bool) -> None:
    from pptx.util import Inches, Pt

    slide = prs.slides.add_slide(prs.slide_layouts[0 if first else 5])
    title = slide.shapes.title
    title.text = plain_text(doc.title)
    if first:  # the template's placeholders are laid out for 4:3: placed again for 16:9
        subtitle = slide.placeholders[1]
        subtitle.text = plain_text(doc.subtitle)
        title.left, title.top, title.width, title.height = (Inches(0.8), Inches(2.2),
                                                            Inches(11.7), Inches(1.6))
        subtitle.left, subtitle.top, subtitle.width, subtitle.height = (
            Inches(0.8), Inches(4.0), Inches(11.7), Inches(1.2))
    else:
        title.left, title.top, title.width, title.height = (Inches(0.5), Inches(0.3),
                                                            Inches(12.3), Inches(1.2))
        for paragraph in title.text_frame.paragraphs:
            for run in paragraph.runs:
                run.font.size = Pt(26 if len(doc.title) < 90 else 20)
    if doc.notes:
        slide.notes_slide.notes_text_frame.text = plain_text(doc.notes)
    if first:
        return
    top, bottom, side_left = 1.6, 7.2, 0.5
    if doc.chart is not None:
        try:
            png = chart_png({**doc.chart, "width": 560})
        except Exception as exc:  # vl-convert errors are plain exceptions; the deck goes on
            _text_box(slide, [f"(chart not rendered: {exc})"], (0.5, top, 7.4, 1.0), 12)
        else:
            width, height = _fit(png, 7.4, bottom - top)
            slide.shapes.add_picture(io.BytesIO(png), Inches(0.5), Inches(top),
                                     Inches(width), Inches(height))
        side_left = 8.1
    side_width = 13.33 - 0.5 - side_left
    if doc.bullets:
        lines = len(doc.bullets) + sum(len(b) // 90 for b in doc.bullets)
        _text_box(slide, doc.bullets, (side_left, top, side_width, bottom - top),
                  18 if lines <= 6 and side_left < 1 else 14)
        top += min(0.45 * lines, 3.0) if doc.table is not None else 0
    if doc.table is not None:
        _table(slide, doc.table, (side_left, top, side_width, bottom - top))


def deck_bytes(slides: Sequence[DeckSlide]) -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    prs.slide_width, prs.slide_height = Inches(13.333), Inches(7.5)
    for i, doc in enumerate(slides):
        _render(prs, doc, first=i == 0)
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()
