"""The levels of a reduction: the original matrix, then one M×M+IM matrix per plan step.

MATH.md §4–§6, reduced-matrix paper Fig. 4–5, Tables 3–5.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from cx_app.engine.binary import binary_metrics
from cx_app.engine.confusion import ConfusionMatrix, LabelLookup, format_labels, multiclass_metrics
from cx_app.engine.grouping import ResolvedPlan, ResolvedStep
from cx_app.errors import AnalysisError
from cx_app.result import Array, Result

__all__ = ["Level", "align_to_classes", "level_metrics", "reduce_confusion"]


class Level(Result):
    """One level of a reduction: ``matrix`` M×M (rows actual, TP of each group on the
    diagonal), ``im`` (None for the original level), the ``positive`` group of a 2×2 step and a
    ``note`` to show with it (e.g. that the positive group was chosen by default)."""

    name: str
    labels: tuple
    matrix: Array
    im: Array | None
    positive: str | None
    metrics: dict
    note: str | None = Field(default=None, exclude=True)

    @property
    def is_binary(self) -> bool:
        return self.positive is not None and len(self.labels) == 2

    def to_frame(self):
        """The matrix as a DataFrame; reduced levels get the IM row and column (named "IM"),
        the column being the transpose of the row (Fig. 4) and the corner left empty."""
        import pandas as pd

        labels = list(self.labels)
        integral = self.matrix.dtype.kind in "iu"
        if self.im is None:
            data = self.matrix
            index = columns = labels
        else:
            m = len(labels)
            data = np.full((m + 1, m + 1), np.nan)
            data[:m, :m] = self.matrix
            data[m, :m] = self.im
            data[:m, m] = self.im
            index = columns = [*labels, "IM"]
        frame = pd.DataFrame(
            data,
            index=pd.Index(index, name="actual"),
            columns=pd.Index(columns, name="predicted"),
        )
        return frame.astype("Int64") if integral else frame


def level_metrics(matrix: Any, im: Any, labels: tuple, positive: str | None) -> dict:
    """Metrics of one level as plain Python: the multiclass keys, and on a 2×2 level with a
    positive group every binary key too (``undefined`` then lists binary metric names and the
    multiclass list moves to ``undefined_per_class``)."""
    mm = multiclass_metrics(matrix, im=im, labels=labels).to_dict()
    if positive is None or len(labels) != 2:
        return mm
    p = labels.index(positive)
    q = 1 - p
    imv = np.zeros(2, dtype=matrix.dtype) if im is None else im
    out = binary_metrics(
        tp=matrix[p, p], fn=matrix[p, q], fp=matrix[q, p], tn=matrix[q, q],
        imp=imv[p], imn=imv[q],
    )  # fmt: skip
    mm["undefined_per_class"] = mm.pop("undefined")
    mm.pop("accuracy")
    out.update(mm)
    return out


def align_to_classes(cm: ConfusionMatrix, classes: tuple) -> ConfusionMatrix:
    """``cm`` with its rows and columns in the order of ``classes`` (labels matched by value or
    ``str()``); AnalysisError when the label sets differ."""
    lookup = LabelLookup(cm.labels)
    order = [lookup.find(c) for c in classes]
    if len(cm.labels) != len(classes) or None in order or len(set(order)) != len(order):
        raise AnalysisError(
            f"the matrix's classes ({format_labels(cm.labels)}) differ from the plan's "
            f"classes ({format_labels(classes)})"
        )
    if order == list(range(len(classes))):
        return cm
    idx = np.asarray(order)
    return ConfusionMatrix(tuple(cm.labels[i] for i in idx), cm.counts[np.ix_(idx, idx)])


def _step_level(cm: ConfusionMatrix, step: ResolvedStep) -> Level:
    matrix, im = step.reduce(cm.counts)
    note = (f"plan step '{step.name}' names no positive group: the second group, "
            f"'{step.positive}', is taken as positive") if step.positive_is_default else None
    return Level(
        name=step.name,
        labels=step.labels,
        matrix=matrix,
        im=im,
        positive=step.positive,
        metrics=level_metrics(matrix, im, step.labels, step.positive),
        note=note,
    )


def reduce_confusion(cm: ConfusionMatrix, plan: ResolvedPlan) -> tuple[Level, ...]:
    """Level 0 ("original", no IM), then one reduced M×M+IM level per plan step.

    Works unchanged for real-valued matrices (ALP). The matrix's labels must be the plan's
    classes (any order; matched by value or ``str()``).
    """
    cm = align_to_classes(cm, plan.classes)
    levels = [
        Level(
            name="original",
            labels=plan.classes,
            matrix=np.asarray(cm.counts),
            im=None,
            positive=None,
            metrics=level_metrics(cm.counts, None, plan.classes, None),
        )
    ]
    levels.extend(_step_level(cm, step) for step in plan.steps)
    return tuple(levels)
