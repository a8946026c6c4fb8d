"""Everything about one cross-validated model, derived from its cached predictions.

:func:`evaluate_result` never refits (a new plan: call it again). From a
:class:`~cx_app.models.crossval.CrossValResult` it computes the pooled out-of-fold confusion
matrix at every level of the plan, each fold's metrics at every level (what the paired t-tests
use) and the ROC: for "original" the **macro-average** of the one-vs-rest curves (per-class
TPR interpolated on a 201-point FPR grid) with the macro AUC; for each 2×2 level the reduced
ROC of MATH.md §7 with its random-selection area.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any

import numpy as np
from pydantic import (
    Field,
    FieldSerializationInfo,
    InstanceOf,
    PlainSerializer,
    computed_field,
    field_serializer,
)

from cx_app.engine.confusion import confusion_matrix
from cx_app.engine.levels import Level, reduce_confusion
from cx_app.engine.roc import ovr_roc, reduced_roc, thin_curve
from cx_app.errors import AnalysisError
from cx_app.models.crossval import CrossValResult
from cx_app.models.results import CrossValidationSummary, finite
from cx_app.result import Finite, Result

MACRO_GRID = np.linspace(0.0, 1.0, 201)
MAX_STORED_POINTS = 1000
"""At most this many points of a ROC curve are written to results.json (one per threshold
would be ~N points per model)."""

class RocSummary(Result):
    """One ROC curve of a level. Its JSON holds the curve thinned by :func:`thin_curve`
    (``points``: the full curve's); ``auc`` is always the full curve's area."""

    fpr: np.ndarray
    tpr: np.ndarray
    auc: Finite
    random_auc: Finite
    kind: str  # "ovr macro-average" or "reduced 2x2+IM"
    per_class_auc: dict[Any, float | None] | None = Field(default=None,
                                                          exclude_if=lambda v: v is None)

    @computed_field
    @property
    def points(self) -> int:
        return len(self.fpr)

    @field_serializer("fpr", "tpr")
    def _thinned(self, _: np.ndarray, info: FieldSerializationInfo) -> list[float]:
        thinned = thin_curve(self.fpr, self.tpr)[info.field_name == "tpr"]
        return [round(float(v), 6) for v in thinned]

    @field_serializer("per_class_auc")
    def _per_class(self, aucs: dict | None) -> dict[str, float | None] | None:
        return None if aucs is None else {str(k): finite(v) for k, v in aucs.items()}


class ModelEvaluation(Result):
    """Levels, per-fold metrics and ROC of one cross-validated model."""

    algorithm_id: str = Field(alias="algorithm")
    classes: tuple = Field(exclude=True)
    folds: int = Field(exclude=True)
    fold: np.ndarray = Field(repr=False, exclude=True)
    levels: tuple[InstanceOf[Level], ...]
    per_fold: dict[str, dict[str, tuple[float, ...]]] = Field(exclude=True)
    roc: dict[str, RocSummary]
    fit_seconds: Annotated[float, PlainSerializer(lambda v: round(v, 4))]
    fold_sizes: tuple[int, ...]
    cv_summary: CrossValidationSummary = Field(alias="cross_validation")
    weighted: bool | None = None

    def level(self, name: str) -> Level:
        for lvl in self.levels:
            if lvl.name == name:
                return lvl
        raise AnalysisError(
            f"no level '{name}' (levels: {', '.join(lvl.name for lvl in self.levels)})"
        )

    def per_fold_values(self, level: str, metric: str) -> np.ndarray:
        """The k per-fold values of ``metric`` at ``level`` (what the paired tests compare)."""
        self.level(level)
        values = self.per_fold[level]
        if metric not in values:
            raise AnalysisError(
                f"level '{level}' has no per-fold metric '{metric}'; available: {', '.join(values)}"
            )
        return np.asarray(values[metric], dtype=float)

    def mean(self, level: str, metric: str) -> float:
        return float(self.per_fold_values(level, metric).mean())

    @field_serializer("levels")
    def _levels(self, levels: tuple[Level, ...]) -> dict[str, Any]:
        """Each level's matrix and metrics with its per-fold values, by level name."""
        return {lvl.name: {**{k: v for k, v in lvl.to_dict().items() if k != "name"},
                           "per_fold": {m: [finite(v) for v in vs]
                                        for m, vs in self.per_fold[lvl.name].items()}}
                for lvl in levels}


def _scalar_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in metrics.items()
        if isinstance(v, int | float | np.number) and not isinstance(v, bool)
    }


def _macro_curve(y_true: np.ndarray, proba: np.ndarray, classes: tuple) -> RocSummary:
    ovr = ovr_roc(y_true, proba, classes)
    curves = [c for c in ovr.curves.values() if c is not None]
    if curves:
        tpr = np.mean([np.interp(MACRO_GRID, c.fpr, c.tpr) for c in curves], axis=0)
        tpr[0] = 0.0
    else:
        tpr = np.zeros_like(MACRO_GRID)
    auc = ovr.macro_auc if ovr.macro_auc is not None else math.nan
    return RocSummary(fpr=MACRO_GRID, tpr=tpr, auc=auc, random_auc=0.5,
                      kind="ovr macro-average", per_class_auc=dict(ovr.auc))


def evaluate_result(cv: CrossValResult, resolved_plan: Any) -> ModelEvaluation:
    """Levels, per-fold metrics and ROC of ``cv`` under ``resolved_plan`` (no refitting)."""
    classes = tuple(resolved_plan.classes)
    if tuple(map(str, classes)) != tuple(map(str, cv.classes)):
        raise AnalysisError(
            f"the plan's classes {list(classes)} differ from the model's {list(cv.classes)}"
        )
    levels = reduce_confusion(confusion_matrix(cv.y_true, cv.y_pred, labels=classes), resolved_plan)
    per_fold: dict[str, dict[str, list[float]]] = {lvl.name: {} for lvl in levels}
    for f in range(cv.folds):
        test = cv.fold == f
        fold_levels = reduce_confusion(
            confusion_matrix(cv.y_true[test], cv.y_pred[test], labels=classes), resolved_plan
        )
        for lvl in fold_levels:
            for metric, value in _scalar_metrics(lvl.metrics).items():
                per_fold[lvl.name].setdefault(metric, []).append(value)
    roc: dict[str, RocSummary] = {"original": _macro_curve(cv.y_true, cv.proba, classes)}
    for lvl, step in zip(levels[1:], resolved_plan.steps, strict=True):
        if lvl.is_binary:
            curve = reduced_roc(cv.y_true, cv.proba, resolved_plan, classes=classes, step=step.name)
            roc[lvl.name] = RocSummary(fpr=curve.fpr, tpr=curve.tpr, auc=curve.auc,
                                       random_auc=curve.random_auc, kind="reduced 2x2+IM")
    return ModelEvaluation(
        algorithm_id=cv.algorithm_id,
        classes=classes,
        folds=cv.folds,
        fold=cv.fold,
        levels=levels,
        per_fold={k: {m: tuple(v) for m, v in d.items()} for k, d in per_fold.items()},
        roc=roc,
        fit_seconds=cv.fit_seconds,
        fold_sizes=tuple(int(s) for s in np.bincount(cv.fold, minlength=cv.folds)),
        cv_summary=cv.summary(),
        weighted=cv.weighted,
    )
