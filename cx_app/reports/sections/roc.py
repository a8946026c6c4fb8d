"""ROC: each level's AUC beside the random-selection area, the curves, and every point."""

from __future__ import annotations

import pandas as pd

from cx_app.models.names import model_display_name
from cx_app.models.results import Results
from cx_app.reports.blocks import (
    Block,
    ChartBlock,
    NativeChart,
    Paragraph,
    Section,
    Table,
    TableColumn,
)
from cx_app.reports.charts import auc_bars, random_selection_lines, roc_chart

CHART_POINTS = 250
"""Points drawn per curve; the points table keeps all."""


def section(results: Results) -> Section:
    blocks: list[Block] = []
    names = list(dict.fromkeys(n for m in results.models.values() for n in m.roc))
    for level_name in names:
        curves = {model_display_name(m): r.roc[level_name] for m, r in results.models.items()
                  if level_name in r.roc}
        auc_rows = tuple((m, c.auc, c.random_auc) for m, c in curves.items())
        blocks.append(Table(
            f"AUC — level {level_name}",
            (TableColumn("model", "Model"), TableColumn("auc", "AUC", "float"),
             TableColumn("random_auc", "Random-selection area", "float")), auc_rows,
            native_chart=NativeChart("bar", f"AUC — level {level_name}", "model",
                                     ("auc", "random_auc"), y_title="Area")))
        points = tuple((m, x, y) for m, c in curves.items()
                       for x, y in zip(c.fpr, c.tpr, strict=True))
        if not points:
            continue
        drawn = pd.DataFrame(points, columns=["model", "fpr", "tpr"])
        random_lines = random_selection_lines({m: c.tpr[-1] for m, c in curves.items() if c.tpr})
        blocks += [
            ChartBlock(f"ROC — level {level_name}",
                       roc_chart(drawn, random_lines, max_points=CHART_POINTS).to_dict(),
                       note="Dashed: the random-selection line, which ends below 1 when the "
                            "positive group has intragroup mismatch."),
            ChartBlock(f"AUC — level {level_name}", auc_bars(
                pd.DataFrame(auc_rows, columns=["model", "auc", "random_auc"]).fillna(0.0)
            ).to_dict()),
            Table(f"ROC points — level {level_name}",
                  (TableColumn("model", "Model"), TableColumn("fpr", "FPR", "float"),
                   TableColumn("tpr", "TPR", "float")), points,
                  native_chart=NativeChart("scatter", f"ROC — level {level_name}", "fpr",
                                           ("tpr",), series="model",
                                           x_title="False positive rate",
                                           y_title="True positive rate"))]
    return Section("roc", "ROC", tuple(blocks) or (
        Paragraph("The results hold no ROC curves.", "note"),))
