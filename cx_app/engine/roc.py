"""ROC curves of a reduced 2×2+IM problem, and one-vs-rest for the unreduced classes.

MATH.md §7, reduced-matrix paper §4.3, eqs. 37–43; the method in docs/engine.md ("ROC of a
2×2+IM"). Score s_i = Σ_{c ∈ positive group} p̂_ic; inside the chosen group the predicted class
descends level by level by maximum likelihood, which does not depend on the threshold, so the
sweep over all distinct scores is one sort plus cumulative sums (O(N log N)). The curve ends at
(1, TP_ML/P_actual), below 1 whenever the positive group has IM. The paper's θ runs the other
way; the curve is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cx_app.engine.confusion import labels_to_indices, normalize_labels
from cx_app.engine.grouping import ResolvedPlan
from cx_app.errors import AnalysisError

__all__ = ["OvrRoc", "RocCurve", "descend_to_class", "ovr_roc", "reduced_roc"]


@dataclass(frozen=True, eq=False)
class RocCurve:
    """Points of a ROC curve, from threshold +inf (0, 0) to the lowest score.

    ``tpr_max``: the last TPR; ``random_auc``: the area under the random-selection line
    (0,0)→(1, tpr_max); ``undefined``: no positive or no negative respondents (rates and AUC 0).
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray
    auc: float
    random_auc: float
    tpr_max: float
    positive: Any = None
    p_actual: float = 0
    n_actual: float = 0
    undefined: bool = False


def _checked(y_true: Any, proba: Any, classes: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(class indices of ``y_true``, ``proba`` as floats), checked against each other."""
    k = len(classes)
    p = np.asarray(proba, dtype=float)
    if p.ndim != 2 or p.shape[1] != k:
        raise ValueError(f"proba must have shape (n, {k}) (one column per class), got {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError("proba contains NaN or infinite values")
    y = labels_to_indices(y_true, classes, what="actual classes (y_true)")
    if len(y) != p.shape[0]:
        raise ValueError(f"y_true has {len(y)} values but proba has {p.shape[0]} rows")
    return y, p


def _group_sums(proba_t: np.ndarray, plan: ResolvedPlan, level: int) -> np.ndarray:
    """Summed probability of every label of ``level``: an (M, n) array (classes × rows in)."""
    if level == 0:
        return proba_t
    group_of = plan.steps[level - 1].group_of
    return np.stack([proba_t[group_of == a].sum(axis=0) for a in range(group_of.max() + 1)])


def descend_to_class(proba: np.ndarray, plan: ResolvedPlan, level: int, group: Any) -> np.ndarray:
    """Maximum-likelihood original class (index) inside ``group`` (one index, or one per row) of
    level ``level``, per row: at each level the member with the largest summed probability wins;
    ties go to the first listed."""
    return _descend(np.ascontiguousarray(np.asarray(proba, dtype=float).T), plan, level, group)


def _descend(proba_t: np.ndarray, plan: ResolvedPlan, level: int, group: Any) -> np.ndarray:
    n = proba_t.shape[1]
    chosen = np.broadcast_to(np.asarray(group, dtype=np.intp), (n,)).copy()
    for lvl in range(level, 0, -1):
        step = plan.steps[lvl - 1]
        sums = _group_sums(proba_t, plan, lvl - 1)
        nxt = np.zeros(n, dtype=np.intp)
        for b, g in enumerate(step.groups):
            rows = chosen == b
            if not rows.any():
                continue
            best_member = np.full(n, g.member_indices[0], dtype=np.intp)
            best = sums[g.member_indices[0]]
            for m in g.member_indices[1:]:
                better = sums[m] > best  # strictly larger: ties stay with the earlier member
                best_member[better] = m
                best = np.maximum(best, sums[m])
            nxt[rows] = best_member[rows]
        chosen = nxt
    return chosen


def _sweep(score: np.ndarray, gain_tp: np.ndarray, gain_fp: np.ndarray):
    """Cumulative TP and FP counts when every score ≥ t is positive, for each distinct t."""
    order = np.argsort(-score)  # order within tied scores is irrelevant: one point per score
    s = score[order]
    tp = np.cumsum(gain_tp[order])
    fp = np.cumsum(gain_fp[order])
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1] if len(s) else np.zeros(0, int)
    return s[last], tp[last], fp[last]


def _curve(thresholds, tp, fp, p_actual, n_actual, tpr_end, positive) -> RocCurve:
    undefined = p_actual == 0 or n_actual == 0
    tpr = np.r_[0.0, tp / p_actual] if p_actual else np.zeros(len(tp) + 1)
    fpr = np.r_[0.0, fp / n_actual] if n_actual else np.zeros(len(fp) + 1)
    thr = np.r_[np.inf, thresholds]
    tpr_max = float(tpr_end / p_actual) if p_actual else 0.0
    return RocCurve(
        fpr=fpr,
        tpr=tpr,
        thresholds=thr,
        auc=0.0 if undefined else float(np.trapezoid(tpr, fpr)),
        random_auc=0.0 if undefined else tpr_max / 2,
        tpr_max=tpr_max,
        positive=positive,
        p_actual=p_actual,
        n_actual=n_actual,
        undefined=bool(undefined),
    )


def reduced_roc(
    y_true: Any,
    proba: Any,
    plan: ResolvedPlan,
    *,
    classes: Sequence[Any] | None = None,
    step: int | str = -1,
) -> RocCurve:
    """ROC of the 2×2+IM of plan step ``step`` (default: the last), MATH.md §7.

    ``proba``: n×K, columns in the plan's class order; ``classes``, when given, is checked
    against it.
    """
    if not isinstance(plan, ResolvedPlan):
        raise TypeError("reduced_roc needs a ResolvedPlan (from resolve_plan)")
    if classes is not None and normalize_labels(classes) != plan.classes:
        raise AnalysisError(
            f"the probability columns' classes {list(classes)} are not the plan's "
            f"classes {list(plan.classes)}"
        )
    rs = plan.step(step)
    if rs.size != 2:
        raise AnalysisError(
            f"plan step '{rs.name}' has {rs.size} groups; a reduced ROC needs a 2×2+IM step"
        )
    y, p = _checked(y_true, proba, plan.classes)
    pos = rs.positive_index
    level = rs.index
    actual_pos = rs.group_of[y] == pos
    p_t = np.ascontiguousarray(p.T)  # (K, n): sums over classes become contiguous adds
    pred_if_pos = _descend(p_t, plan, level, pos)
    score = p_t[rs.group_of == pos].sum(axis=0)
    gain_tp = rs.tp_mask[y, pred_if_pos]  # only true for actual positives (same group)
    gain_fp = ~actual_pos
    thresholds, tp, fp = _sweep(score, gain_tp.astype(np.int64), gain_fp.astype(np.int64))
    p_actual = int(actual_pos.sum())
    n_actual = len(y) - p_actual
    return _curve(thresholds, tp, fp, p_actual, n_actual, int(gain_tp.sum()), rs.positive)


@dataclass(frozen=True, eq=False)
class OvrRoc:
    """One-vs-rest ROC per class; ``macro_auc`` = mean AUC over classes whose AUC is defined
    (a class absent from ``y_true``, or the only one present, has None and is ``undefined``)."""

    classes: tuple
    curves: dict
    auc: dict
    macro_auc: float | None
    undefined: tuple


def ovr_roc(y_true: Any, proba: Any, classes: Sequence[Any]) -> OvrRoc:
    """One-vs-rest ROC and AUC per class (scikit-learn's ``roc_curve``), and their macro mean."""
    from sklearn.metrics import roc_curve

    classes = normalize_labels(classes)
    y, p = _checked(y_true, proba, classes)
    curves, aucs, undefined = {}, {}, []
    for i, c in enumerate(classes):
        positive = y == i
        n_pos = int(positive.sum())
        if n_pos == 0 or n_pos == len(y):
            curves[c] = aucs[c] = None
            undefined.append(c)
            continue
        fpr, tpr, thr = roc_curve(positive, p[:, i], drop_intermediate=False)
        auc = float(np.trapezoid(tpr, fpr))
        curves[c] = RocCurve(fpr, tpr, thr, auc, 0.5, 1.0, c, n_pos, len(y) - n_pos)
        aucs[c] = auc
    defined = [a for a in aucs.values() if a is not None]
    return OvrRoc(
        classes=classes,
        curves=curves,
        auc=aucs,
        macro_auc=float(np.mean(defined)) if defined else None,
        undefined=tuple(undefined),
    )


def thin_curve(
    fpr: np.ndarray, tpr: np.ndarray, max_points: int = 1000
) -> tuple[np.ndarray, np.ndarray]:
    """The points of a piecewise-linear curve worth storing: its vertices (the drawn curve and
    its trapezoidal area unchanged), then at most ``max_points`` of them evenly spaced along
    its length, with both endpoints."""
    x, y = np.asarray(fpr, dtype=float), np.asarray(tpr, dtype=float)
    if max_points < 2:
        raise AnalysisError(f"a stored curve needs at least 2 points, got {max_points}")
    if len(x) > 1:
        moves = np.r_[True, (np.diff(x) != 0) | (np.diff(y) != 0)]
        moves[-1] = True
        x, y = x[moves], y[moves]
    if len(x) > 2:
        dx, dy = np.diff(x), np.diff(y)
        cross = dx[:-1] * dy[1:] - dy[:-1] * dx[1:]
        dot = dx[:-1] * dx[1:] + dy[:-1] * dy[1:]
        turns = (np.abs(cross) > 1e-12 * np.hypot(dx[:-1], dy[:-1]) * np.hypot(dx[1:], dy[1:])) | (
            dot <= 0
        )
        keep = np.r_[True, turns, True]
        x, y = x[keep], y[keep]
    if len(x) > max_points:
        length = np.r_[0.0, np.cumsum(np.hypot(np.diff(x), np.diff(y)))]
        idx = np.searchsorted(length, np.linspace(0.0, length[-1], max_points))
        idx = np.unique(np.r_[0, np.minimum(idx, len(x) - 1), len(x) - 1])
        x, y = x[idx], y[idx]
    return x, y
