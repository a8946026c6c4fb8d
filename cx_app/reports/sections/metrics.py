"""Metrics: every model's pooled out-of-fold metrics at each level, and the per-class values."""

from __future__ import annotations

from cx_app.engine.catalogue import BINARY_METRICS, MULTICLASS_METRICS, metric_name
from cx_app.models.names import model_display_name
from cx_app.models.results import LevelDocument, Results, finite
from cx_app.reports.blocks import Block, Paragraph, Section, Table, TableColumn
from cx_app.reports.definitions import plain_name
from cx_app.reports.formatting import metric_kind


def _metric_keys(levels: list[LevelDocument], binary: bool) -> list[str]:
    """The single-number metrics of the levels, in the catalogue's order (unknown keys last)."""
    found = list(dict.fromkeys(k for lv in levels for k in lv.scalar_metrics()))
    order = [*BINARY_METRICS, *MULTICLASS_METRICS] if binary else list(MULTICLASS_METRICS)
    return sorted(found, key=lambda k: (order.index(k) if k in order else len(order), k))


def section(results: Results) -> Section:
    blocks: list[Block] = []
    for level_name in results.level_names():
        levels = results.levels(level_name)
        binary = any(lv.is_binary for lv in levels.values())
        keys = _metric_keys(list(levels.values()), binary)
        positive = next((lv.positive for lv in levels.values() if lv.positive), None)
        blocks.append(Table(
            f"Level {level_name}",
            (TableColumn("model", "Model"),
             *(TableColumn(k, metric_name(k, binary=binary), metric_kind(k, binary))
               for k in keys)),
            tuple((model_display_name(m), *(lv.metric(k) for k in keys))
                  for m, lv in levels.items()),
            note=f"Positive group: {plain_name(positive)}." if positive else ""))
        if binary:
            continue
        rows = tuple((model_display_name(m), str(label), finite(v.get("precision")), finite(v.get("recall")),
                      finite(v.get("f1")), finite(v.get("support")), finite(v.get("im")))
                     for m, lv in levels.items() for label, v in lv.per_class().items())
        if rows:
            blocks.append(Table(
                f"Per-class metrics — level {level_name}",
                (TableColumn("model", "Model"), TableColumn("class", "Class"),
                 TableColumn("precision", "Precision", "percent"),
                 TableColumn("recall", "Recall", "percent"), TableColumn("f1", "F1", "percent"),
                 TableColumn("support", "Support (actual)", "count"), TableColumn("im", "IM", "count")),
                rows))
    return Section("metrics", "Metrics", tuple(blocks) or (
        Paragraph("The results hold no model metrics.", "note"),))
