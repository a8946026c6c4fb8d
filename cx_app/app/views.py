"""Tables the pages show, built from an :class:`~cx_app.app.session.Analysis` (no widgets here):
the pages render them, the tests check them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from cx_app.engine.catalogue import (
    BINARY_METRICS,
    BINARY_SUMMARY,
    MULTICLASS_ALL,
    MULTICLASS_SUMMARY,
    metric_definition,
    metric_name,
)
from cx_app.models.analysis import BEST_MODEL_RULE, rank_models

if TYPE_CHECKING:
    from cx_app.app.session import Analysis


@dataclass(frozen=True)
class MetricTable:
    """A table of metrics with the display format of each metric column."""

    frame: pd.DataFrame
    percent_columns: tuple[str, ...]
    number_columns: tuple[str, ...]


def leaderboard(analysis: Analysis, level_index: int) -> MetricTable:
    """Every trained model's headline metrics at one level (the catalogue's
    ``MULTICLASS_SUMMARY``, or ``BINARY_SUMMARY`` on a 2×2+IM level), columns named by the
    catalogue, best model first by the one best-model rule (mean per-fold accuracy)."""
    rows, means, binary = [], {}, False
    for model_id in analysis.models:
        level = analysis.levels(model_id)[level_index]
        binary = binary or level.is_binary
        keys = BINARY_SUMMARY if level.is_binary else MULTICLASS_SUMMARY
        rows.append({"model": model_id, **{metric_name(k, binary=level.is_binary):
                                           level.metrics.get(k) for k in keys}})
        means[model_id] = analysis.evaluation(model_id).mean(level.name, BEST_MODEL_RULE[1])
    order = {m: i for i, m in enumerate(rank_models(means, BEST_MODEL_RULE[1]))}
    frame = pd.DataFrame(rows).sort_values("model", key=lambda s: s.map(order),
                         ignore_index=True)
    keys = BINARY_SUMMARY if binary else MULTICLASS_SUMMARY
    percent = tuple(metric_name(k, binary=binary) for k in keys
                    if metric_definition(k, binary=binary).format == "percent")
    number = tuple(metric_name(k, binary=binary) for k in keys
                   if metric_name(k, binary=binary) not in percent)
    return MetricTable(frame, percent, number)


def level_metric_table(analysis: Analysis, level_index: int) -> MetricTable:
    """Every metric of every trained model at one level, one column per metric key (every
    2×2+IM metric, or the catalogue's ``MULTICLASS_ALL``); ``percent_columns`` are rates,
    ``number_columns`` the others that are not counts (counts: the rest)."""
    binary = any(analysis.levels(m)[level_index].is_binary for m in analysis.models)
    keys = list(BINARY_METRICS) if binary else list(MULTICLASS_ALL)
    keys = [k for k in keys if any(k in analysis.levels(m)[level_index].metrics
                                   for m in analysis.models)]
    frame = pd.DataFrame([{"model": m, **{k: analysis.levels(m)[level_index].metrics.get(k)
                                          for k in keys}} for m in analysis.models])
    formats = {k: metric_definition(k, binary=binary).format for k in keys}
    return MetricTable(frame, tuple(k for k in keys if formats[k] == "percent"),
                       tuple(k for k in keys if formats[k] == "number"))
