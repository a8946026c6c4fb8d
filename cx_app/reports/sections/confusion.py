"""Confusion matrices: every model at every level, rows = actual, columns = predicted."""

from __future__ import annotations

from cx_app.models.names import model_display_name
from cx_app.models.results import LevelDocument, Results, finite
from cx_app.reports.blocks import Block, MatrixBlock, Paragraph, Section
from cx_app.reports.definitions import plain_name


def level_matrix(title: str, level: LevelDocument, real_valued: bool = False) -> MatrixBlock:
    """One level's matrix; real-valued (two decimals) when said or when a count is not whole."""
    counts = tuple(tuple(finite(x) for x in row) for row in level.matrix)
    real = real_valued or any(x is not None and not x.is_integer() for row in counts for x in row)
    return MatrixBlock(title, tuple(map(plain_name, level.labels)), counts,
                       None if level.im is None else tuple(level.im),
                       None if level.positive is None else plain_name(level.positive), real)


def section(results: Results) -> Section:
    blocks: list[Block] = [Paragraph(
        "Rows are the actual class, columns the predicted class. Reduced levels carry the "
        "intragroup mismatch (IM) as an extra row and column (the column repeats the row).",
        "note")]
    for level_name in results.level_names():
        blocks += [level_matrix(f"{model_display_name(model_id)} — level {level_name}", level)
                   for model_id, level in results.levels(level_name).items()]
    return Section("confusion", "Confusion matrices", tuple(blocks))
