"""The baseline in the reports: always answering the commonest class, and who is below it."""

from __future__ import annotations

from cx_app.models.names import model_display_name
from cx_app.models.results import Results
from cx_app.reports.blocks import Block, Paragraph, Table, TableColumn
from cx_app.reports.definitions import plain_name
from cx_app.reports.formatting import join


def below_sentences(results: Results) -> list[str]:
    out = []
    for model_id, model in results.models.items():
        levels = [name for name in model.below_baseline or [] if name in results.baseline]
        if not levels:
            continue
        parts = []
        for name in levels:
            base = results.baseline[name]
            accuracy = model.levels[name].metric("accuracy")
            parts.append(f"at {name} its accuracy is {accuracy:.1%}, always answering "
                         f"{plain_name(base.class_)} gets {base.accuracy:.1%}")
        out.append(f"{model_display_name(model_id)} is below the baseline (always answering "
                   f"the commonest class): {join(parts)}. Do not use it for this survey "
                   "at that level.")
    return out


def blocks(results: Results) -> list[Block]:
    if not results.baseline:
        return []
    below = {name: [model_display_name(m) for m, model in results.models.items()
                    if name in (model.below_baseline or [])] for name in results.baseline}
    table = Table(
        "Baseline: always answering the commonest class",
        (TableColumn("level", "Level"), TableColumn("class", "Always answering"),
         TableColumn("accuracy", "Accuracy of that answer", "percent"),
         TableColumn("below", "Models below it")),
        tuple((name, plain_name(base.class_), base.accuracy, ", ".join(below[name]) or "none")
              for name, base in results.baseline.items()),
        note="A model is worth reading only where its accuracy beats this answer that needs "
             "no model (same respondents, same grouping).")
    sentences = below_sentences(results)
    if not sentences:
        return [table, Paragraph("Every model beats the baseline at every level.", "note")]
    return [table, *(Paragraph(s, "warning") for s in sentences)]
