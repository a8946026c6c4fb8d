"""Per-fold values: each metric in each cross-validation fold, and the δ/φ of every fold."""

from __future__ import annotations

import pandas as pd

from cx_app.engine.catalogue import metric_name
from cx_app.models.names import model_display_name
from cx_app.models.results import Results, finite
from cx_app.reports.blocks import Block, ChartBlock, Paragraph, Section, Table, TableColumn
from cx_app.reports.charts import rhombus_chart


def section(results: Results) -> Section:
    blocks: list[Block] = []
    for level_name in results.level_names():
        levels = results.levels(level_name)
        binary = any(lv.is_binary for lv in levels.values())
        rows, rhombus = [], []
        for model_id, level in levels.items():
            name = model_display_name(model_id)
            for metric, values in level.per_fold.items():
                rows.append((name, metric_name(metric, binary=binary), *map(finite, values)))
            deltas, phis = level.per_fold.get("delta", []), level.per_fold.get("phi", [])
            rhombus += [{"series": name, "label": f"fold {i + 1}", "delta": d, "phi": p}
                        for i, (d, p) in enumerate(zip(deltas, phis, strict=False))
                        if finite(d) is not None and finite(p) is not None]
        if not rows:
            continue
        width = max(len(r) - 2 for r in rows)
        blocks.append(Table(
            f"Level {level_name}",
            (TableColumn("model", "Model"), TableColumn("metric", "Metric"),
             *(TableColumn(f"fold_{i + 1}", f"Fold {i + 1}", "float") for i in range(width))),
            tuple(r + (None,) * (width + 2 - len(r)) for r in rows),
            note=f"One value per cross-validation fold ({results.folds or width} folds)."))
        if rhombus:
            blocks.append(ChartBlock(f"δ/φ per fold — level {level_name}",
                                     rhombus_chart(pd.DataFrame(rhombus)).to_dict(),
                                     note="One point per model and fold: spread shows variance, "
                                          "position shows bias (|δ| + |φ| ≤ 1)."))
    return Section("per_fold", "Per-fold values", tuple(blocks) or (
        Paragraph("The results hold no per-fold values.", "note"),))
