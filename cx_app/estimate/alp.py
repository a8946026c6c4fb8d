"""Actual-label-probabilistic (ALP) confusion matrix and the estimates it gives.

A[m, k] = Σ_{i: ŷ_i = k} p̂_im, rows = estimated actual class, columns = predicted (MATH.md §8;
the paper's matrix transposed); every metric of it goes through the engine. docs/alp.md has the
matrix, the gap (:func:`alp_gap`, Theorem 1's check, which chooses the calibration) and the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from cx_app.engine.catalogue import MACRO_SUMMARY
from cx_app.errors import AnalysisError
from cx_app.estimate.model_metadata import LARGE_GAP, LARGE_NET_ERROR, AlpGap, FullTrainingCheck
from cx_app.models.crossval import aligned_proba, class_positions

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from cx_app.engine.confusion import ConfusionMatrix
    from cx_app.engine.grouping import ResolvedPlan
    from cx_app.survey.nps import NetScoreGroups

__all__ = [
    "AlpGap",
    "FullTrainingCheck",
    "alp_confusion_matrix",
    "alp_gap",
    "alp_learning_curve",
    "compare_alp_cm",
    "full_training_alp_check",
    "net_score_calibration_error",
    "predicted_labels",
]

LEARNING_CURVE_SHARES: tuple[float, ...] = (0.03, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.78)
"""Training shares of the paper's learning curves (Figs. 3–5: 3 % to 78 %, test share 20 %)."""


def _check_proba(proba: np.ndarray, classes: Sequence) -> np.ndarray:
    p = np.asarray(proba, dtype=float)
    if p.ndim != 2 or p.shape[1] != len(classes):
        raise AnalysisError(
            f"class probabilities must be a table with one column per class "
            f"({len(classes)} classes: {list(classes)}), got shape {p.shape}"
        )
    if p.shape[0] == 0:
        raise AnalysisError("no respondents: the ALP matrix needs at least one row of probabilities")
    if not np.all(np.isfinite(p)) or np.any(p < -1e-9):
        raise AnalysisError("class probabilities must be finite and non-negative")
    sums = p.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
    if bad.size:
        raise AnalysisError(
            f"class probabilities of {bad.size} respondent(s) do not sum to 1 "
            f"(first: row {int(bad[0])}, sum {sums[bad[0]]:.6f})"
        )
    return p


def predicted_labels(proba: np.ndarray, classes: Sequence) -> np.ndarray:
    """The decision rule of the paper (eq. 17): the class with the largest probability; ties go
    to the first class in ``classes`` order (``numpy.argmax``)."""
    p = _check_proba(proba, classes)
    return np.asarray(classes, dtype=object)[p.argmax(axis=1)]


def alp_confusion_matrix(proba: np.ndarray, classes: Sequence,
                         y_pred: Sequence | None = None) -> ConfusionMatrix:
    """The ALP matrix ``A = Pᵀ · B`` (``B`` the one-hot predicted classes; the paper's eq. 19,
    transposed) as the engine's real-valued :class:`~cx_app.engine.confusion.ConfusionMatrix`,
    rows = estimated actual class, columns = predicted; ``y_pred`` defaults to the arg-max rule.

    >>> import numpy as np
    >>> cm = alp_confusion_matrix(np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]), [0, 1])
    >>> np.round(np.asarray(cm.counts), 2).tolist()
    [[1.4, 0.3], [0.6, 0.7]]
    """
    from cx_app.engine.confusion import ConfusionMatrix

    p = _check_proba(proba, classes)
    k = len(classes)
    if y_pred is None:
        pred = p.argmax(axis=1)
    else:
        if len(y_pred) != p.shape[0]:
            raise AnalysisError(
                f"{len(y_pred)} predicted labels for {p.shape[0]} rows of probabilities"
            )
        pred = class_positions(y_pred, classes, "predicted label")
    onehot = np.zeros((p.shape[0], k))
    onehot[np.arange(p.shape[0]), pred] = 1.0
    return ConfusionMatrix(tuple(classes), p.T @ onehot)


NET_SCORE_BINS = 10
"""Equal-count bins of the estimated net score for :func:`net_score_calibration_error`."""


def _net_columns(classes: Sequence, groups: NetScoreGroups) -> tuple[list[int], list[int]]:
    pos = [i for i, c in enumerate(classes) if c in groups.positive]
    neg = [i for i, c in enumerate(classes) if c in groups.negative]
    return pos, neg


def net_parts(proba: np.ndarray, classes: Sequence, groups: NetScoreGroups
              ) -> tuple[np.ndarray, np.ndarray]:
    """Each respondent's probability of the positive group and of the negative group."""
    p = np.asarray(proba, dtype=float)
    pos, neg = _net_columns(classes, groups)
    return p[:, pos].sum(axis=1), p[:, neg].sum(axis=1)


def net_outcome(answers: Sequence, groups: NetScoreGroups) -> np.ndarray:
    """Each answer's net-score outcome s_i: +1 positive group, −1 negative, 0 neutral."""
    y = np.asarray(answers)
    return (np.isin(y, list(groups.positive)).astype(float)
            - np.isin(y, list(groups.negative)).astype(float))


def net_score_calibration_error(true_idx: np.ndarray, proba: np.ndarray, classes: Sequence,
                                groups: NetScoreGroups, *, n_bins: int = NET_SCORE_BINS,
                                ) -> float:
    """Calibration error of the estimated net score, in points (0–200): the noise-corrected
    RMS of mean(e) − mean(s) over ``n_bins`` equal-count bins of e_i = p̂_i,P − p̂_i,N
    (docs/alp.md, "The gap"); unlike the pooled error, opposite errors do not cancel."""
    est, actual = net_estimates_and_outcomes(true_idx, proba, classes, groups)
    return binned_net_error(est, actual, n_bins)


def net_estimates_and_outcomes(true_idx: np.ndarray, proba: np.ndarray, classes: Sequence,
                               groups: NetScoreGroups) -> tuple[np.ndarray, np.ndarray]:
    """Each respondent's estimated net score e_i = p̂_i,P − p̂_i,N and outcome (+1, 0, −1)."""
    pos, neg = _net_columns(classes, groups)
    p = np.asarray(proba, dtype=float)
    est = p[:, pos].sum(axis=1) - p[:, neg].sum(axis=1)
    actual = (np.isin(true_idx, pos).astype(float) - np.isin(true_idx, neg).astype(float))
    return est, actual


def binned_net_error(est: np.ndarray, actual: np.ndarray, n_bins: int = NET_SCORE_BINS,
                     ) -> float:
    """:func:`net_score_calibration_error` from the estimates and outcomes."""
    n = len(est)
    total = 0.0
    for part in np.array_split(np.argsort(est, kind="stable"), max(1, min(n_bins, n))):
        if part.size == 0:
            continue
        d = est[part].mean() - actual[part].mean()
        v = actual[part].var(ddof=1) / part.size if part.size > 1 else 0.0
        total += part.size / n * (d * d - v)
    return 100.0 * float(np.sqrt(max(total, 0.0)))


def alp_gap(y_true: Sequence, proba: np.ndarray, classes: Sequence,
            y_pred: Sequence | None = None, *, groups: NetScoreGroups | None = None) -> AlpGap:
    """:class:`AlpGap` of probabilities against known labels (pooled over all rows given: pass
    out-of-fold arrays for a held-out gap); with the plan's net-score ``groups`` it includes
    the estimated NPS error."""
    p = _check_proba(proba, classes)
    if len(y_true) != p.shape[0]:
        raise AnalysisError(f"{len(y_true)} labels for {p.shape[0]} rows of probabilities")
    k = len(classes)
    true_idx = class_positions(y_true, classes, "actual label")
    pred_idx = p.argmax(axis=1) if y_pred is None else class_positions(y_pred, classes, "predicted label")
    n = p.shape[0]
    acc = float(np.mean(true_idx == pred_idx))
    acc_alp = float(p[np.arange(n), pred_idx].sum() / n)
    actual_share = np.bincount(true_idx, minlength=k) / n
    est_share = p.sum(axis=0) / n
    share_gap = 0.5 * float(np.abs(est_share - actual_share).sum())
    gap = acc_alp - acc
    net_gap = net_error = None
    score = max(abs(gap), share_gap) / LARGE_GAP
    if groups is not None:
        pos, neg = _net_columns(classes, groups)
        net_gap = 100.0 * float(est_share[pos].sum() - est_share[neg].sum()
                                - actual_share[pos].sum() + actual_share[neg].sum())
        net_error = net_score_calibration_error(true_idx, p, classes, groups)
        score = max(score, net_error / LARGE_NET_ERROR)
    return AlpGap(n=n, accuracy_cm=acc, accuracy_alp=acc_alp, accuracy_gap=gap,
                  share_gap=share_gap, score=score, net_gap=net_gap,
                  net_calibration_error=net_error)


def level_metrics(cm: ConfusionMatrix, resolved_plan: ResolvedPlan | None = None
                  ) -> dict[str, dict]:
    """Metrics of a (real-valued) matrix at every level of ``resolved_plan`` (without one, the
    "original" level only), computed by the engine: ``{level name: metrics dict}``."""
    from cx_app.engine.grouping import ResolvedPlan
    from cx_app.engine.levels import reduce_confusion

    plan = resolved_plan or ResolvedPlan(cm.labels, ())
    return {level.name: level.metrics for level in reduce_confusion(cm, plan)}


def compare_alp_cm(y_true: Sequence, proba: np.ndarray, classes: Sequence, *,
                   y_pred: Sequence | None = None, resolved_plan: ResolvedPlan | None = None,
                   ) -> dict[str, dict[str, dict[str, float]]]:
    """Regular confusion matrix vs ALP matrix on the same labelled rows (training rows or
    held-out folds): ``{level: {metric: {"cm", "alp", "gap" = alp − cm}}}`` at every level of
    ``resolved_plan``, metrics :data:`cx_app.engine.catalogue.MACRO_SUMMARY` (a model file's
    ``alp_vs_cm``)."""
    from cx_app.engine.confusion import confusion_matrix

    p = _check_proba(proba, classes)
    pred = predicted_labels(p, classes) if y_pred is None else np.asarray(y_pred, dtype=object)
    regular = confusion_matrix(list(y_true), list(pred), labels=tuple(classes))
    est = level_metrics(alp_confusion_matrix(p, classes, pred), resolved_plan)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for level, metrics in level_metrics(regular, resolved_plan).items():
        for name in MACRO_SUMMARY:
            if name in metrics and name in est[level]:
                a, b = float(metrics[name]), float(est[level][name])
                out.setdefault(level, {})[name] = {"cm": a, "alp": b, "gap": b - a}
    return out


def _learning_curve_point(estimator: Any, X: np.ndarray, y: np.ndarray, order: tuple,
                          n_train: int, n_test: int, classes: tuple) -> tuple:
    from sklearn.base import clone

    tr, te = order[0][:n_train], order[0][n_train:n_train + n_test]
    fitted = clone(estimator).fit(X[tr], y[tr])
    return (alp_gap(y[tr], aligned_proba(fitted, X[tr], classes), classes),
            alp_gap(y[te], aligned_proba(fitted, X[te], classes), classes))


def alp_learning_curve(X: ArrayLike, y: ArrayLike, classes: Sequence, estimator: Any, *,
                       train_shares: Sequence[float] = LEARNING_CURVE_SHARES,
                       test_share: float = 0.2, repeats: int = 1,
                       seed: int = 0) -> pd.DataFrame:
    """CM and ALP accuracy on the training and the test rows against the training share
    (the paper's Figs. 3–5): for each share and repeat a random training sample, then a random
    test sample of ``test_share`` of all rows from the rest; ``estimator`` is cloned per fit."""
    from joblib import Parallel, delayed

    from cx_app.models import cluster

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    n = len(y)
    n_test = int(round(test_share * n))
    rng = np.random.default_rng(seed)
    points = []  # (share, repeat, n_train, row order): drawn here, in order, then fitted
    for share in train_shares:
        n_train = int(round(share * n))
        if n_train < 2 or n_train + n_test > n:
            raise AnalysisError(
                f"training share {share:.0%} with test share {test_share:.0%} needs "
                f"between 2 and {n - n_test} training rows of {n}"
            )
        for r in range(repeats):
            order = rng.permutation(n)
            if len(np.unique(y[order[:n_train]])) < 2:
                continue  # a one-class sample cannot train a classifier
            points.append((share, r, n_train, order))
    Xs, ys = cluster.share(X, y)
    fit_point = cluster.task(_learning_curve_point)
    # the row order travels in a tuple: a task's own data, sent with it (not scattered)
    gaps = Parallel(n_jobs=1, batch_size=1)(
        delayed(fit_point)(estimator, Xs, ys, (order,), n_train, n_test, tuple(classes))
        for _, _, n_train, order in points
    )
    rows = [{
        "train_share": share, "repeat": r, "n_train": n_train, "n_test": n_test,
        "cm_train": g_tr.accuracy_cm, "alp_train": g_tr.accuracy_alp,
        "cm_test": g_te.accuracy_cm, "alp_test": g_te.accuracy_alp,
    } for (share, r, n_train, _), (g_tr, g_te) in zip(points, gaps, strict=True)]
    return pd.DataFrame(rows)


def full_training_alp_check(X: ArrayLike, y: ArrayLike, classes: Sequence,
                            fitted_estimator: Any, *,
                            heldout_y_true: Sequence, heldout_proba: np.ndarray,
                            overfit_margin: float = 0.05) -> FullTrainingCheck:
    """Compare a model fit on all rows (``fitted_estimator``) with its cross-validated twin."""
    X = np.asarray(X, dtype=float)
    p = aligned_proba(fitted_estimator, X, classes)
    full = alp_gap(y, p, classes)
    held = alp_gap(heldout_y_true, heldout_proba, classes)
    notes = []
    if full.accuracy_cm - held.accuracy_cm > overfit_margin:
        notes.append(
            f"resubstitution accuracy {full.accuracy_cm:.3f} is {full.accuracy_cm - held.accuracy_cm:.3f} "
            f"above the held-out accuracy {held.accuracy_cm:.3f}: the model over-fits; trust the "
            "held-out figures and those estimated from the probabilities (ALP), not the "
            "training accuracy"
        )
    if abs(full.accuracy_alp - held.accuracy_cm) > overfit_margin:
        notes.append(
            f"the accuracy estimated from the full-data model's probabilities (ALP, "
            f"{full.accuracy_alp:.3f}) differs from the "
            f"held-out accuracy ({held.accuracy_cm:.3f}) by more than {overfit_margin:.2f}: "
            "its probabilities are not calibrated on new data"
        )
    return FullTrainingCheck(n=len(y), heldout_cm=held.accuracy_cm,
                             heldout_alp=held.accuracy_alp, full_train_cm=full.accuracy_cm,
                             full_train_alp=full.accuracy_alp, notes=notes)
