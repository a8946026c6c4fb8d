"""Data quality: the two bases, the exclusions with their reasons, the gaps, the notes."""

from __future__ import annotations

from cx_app.models.results import Results
from cx_app.reports.blocks import Block, Paragraph, Section, Table, TableColumn
from cx_app.reports.formatting import cell
from cx_app.survey.quality import bases_rows

_SCOPE = {"survey": "out of the survey (not in the net score)",
          "model": "in the net score, not in the models"}


def section(results: Results, respondent_data: bool) -> Section:
    quality = results.quality
    respondents = quality.respondents if quality.respondents is not None else quality.rows_used
    blocks: list[Block] = [Table(
        "Bases", (TableColumn("base", "Base"), TableColumn("n", "Respondents", "int"),
                  TableColumn("why", "Why it differs")),
        tuple(bases_rows(quality.rows_read, respondents, quality.rows_used,
                         quality.out_of_survey, quality.out_of_models, quality.gaps,
                         results.dataset.missing_policy)),
        note=f"Blank rows skipped: {quality.blank_rows:,}." if quality.blank_rows else "")]
    if quality.excluded:
        columns = (TableColumn("row", "Row", "int"), TableColumn("column", "Column"),
                   TableColumn("reason", "Reason"), TableColumn("scope", "Left out of"))
        if respondent_data:
            columns += (TableColumn("value", "Value"),)
        blocks.append(Table(
            "Excluded rows", columns,
            tuple((e.row, e.column, e.reason, _SCOPE.get(e.scope or "", e.scope or ""),
                   *((cell(e.value),) if respondent_data else ()))
                  for e in quality.excluded),
            note="" if respondent_data else
            "The offending values are left out of this report (respondent-level data)."))
    gaps = {k: v for k, v in quality.gaps.items() if v}
    if gaps:
        base = max(quality.rows_used, 1)
        blocks.append(Table(
            "Unanswered attribute scores (n/a, blank, code) in the model base",
            (TableColumn("attribute", "Attribute"), TableColumn("cells", "Unanswered", "int"),
             TableColumn("share", "Share", "percent")),
            tuple((results.dataset.attribute_labels.get(k) or k, v, v / base)
                  for k, v in gaps.items())))
    blocks += [Paragraph(note, "note") for note in quality.notes]
    return Section("data_quality", "Data quality", tuple(blocks))
