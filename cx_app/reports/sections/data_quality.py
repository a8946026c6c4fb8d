"""Data quality: rows read, used and excluded (with reasons), imputed cells, notes."""

from __future__ import annotations

from cx_app.models.results import Results
from cx_app.reports.blocks import Block, Column, Paragraph, Section, Table
from cx_app.reports.formatting import cell, facts_table


def section(results: Results, respondent_data: bool) -> Section:
    quality = results.quality
    blocks: list[Block] = [facts_table("Rows", [
        ("Rows read", quality.rows_read, "int"), ("Rows used", quality.rows_used, "int"),
        ("Rows excluded", quality.rows_excluded, "int"),
        ("Blank rows skipped", quality.blank_rows, "int")])]
    if quality.counts_by_reason:
        blocks.append(Table("Excluded rows by reason",
                            (Column("reason", "Reason"), Column("rows", "Rows", "int")),
                            tuple(quality.counts_by_reason.items())))
    if quality.excluded:
        columns = (Column("row", "Row", "int"), Column("column", "Column"),
                   Column("reason", "Reason"))
        if respondent_data:
            columns += (Column("value", "Value"),)
        blocks.append(Table(
            "Excluded rows", columns,
            tuple((e.row, e.column, e.reason, *((cell(e.value),) if respondent_data else ()))
                  for e in quality.excluded),
            note="" if respondent_data else
            "The offending values are left out of this report (respondent-level data)."))
    imputed = {k: v for k, v in quality.imputed.items() if v}
    if imputed:
        blocks.append(Table("Imputed cells (median)",
                            (Column("attribute", "Attribute"), Column("cells", "Cells", "int")),
                            tuple(imputed.items())))
    blocks += [Paragraph(note, "note") for note in quality.notes]
    return Section("data_quality", "Data quality", tuple(blocks))

