"""Probability calibration, judged by what it does to the ALP estimate.

Calibration is never assumed to help (one-vs-rest calibration of an 11-class model can make the
ALP estimate worse): the method with the smallest held-out gap score wins, ties going to the
simpler one (docs/alp.md, "The gap, and how calibration is chosen"). Also the multiclass Brier
score and the top-label expected calibration error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from sklearn.metrics import brier_score_loss

from cx_app.errors import AnalysisError
from cx_app.estimate.alp import _check_proba, alp_gap
from cx_app.estimate.model_metadata import LARGE_GAP, LARGE_NET_ERROR, AlpGap
from cx_app.models.crossval import class_positions
from cx_app.result import Result, flattened

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from cx_app.models.crossval import CrossValResult
    from cx_app.survey.nps import NetScoreGroups

__all__ = [
    "CALIBRATION_METHODS",
    "CalibrationChoice",
    "CalibrationReport",
    "COARSE_PROBABILITY_ALGORITHMS",
    "brier_score",
    "calibration_report",
    "choose_calibration",
    "coarse_probability_advice",
    "compare_calibrations",
    "expected_calibration_error",
    "gap_advice",
]

CALIBRATION_METHODS: tuple[str, ...] = ("none", "temperature", "sigmoid", "isotonic")
"""In order of simplicity: ties in the held-out gap go to the earlier one."""

COARSE_PROBABILITY_ALGORITHMS: frozenset[str] = frozenset({"knn"})
"""Algorithms whose probabilities take only a few distinct values (k-nearest neighbours: votes
j/k), too coarse for ALP: warned about whatever the calibration."""


def brier_score(y_true: Sequence, proba: np.ndarray, classes: Sequence) -> float:
    """Multiclass Brier score, (1/N)·Σ_i Σ_k (p̂_ik − 1[y_i = k])², in [0, 2]
    (scikit-learn's ``brier_score_loss`` without the binary halving)."""
    p = _check_proba(proba, classes)
    order = sorted(range(len(classes)), key=lambda i: classes[i])
    labels = [classes[i] for i in order]
    return float(brier_score_loss(np.asarray(y_true), p[:, order], labels=labels,
                                  scale_by_half=False))


def expected_calibration_error(y_true: Sequence, proba: np.ndarray, classes: Sequence, *,
                               n_bins: int = 10) -> float:
    """Top-label ECE: Σ_b (n_b/N)·|accuracy_b − mean confidence_b| over ``n_bins`` equal-width
    bins of the maximum probability (bins (0, 1/B], ..., ((B−1)/B, 1])."""
    p = _check_proba(proba, classes)
    true_idx = class_positions(y_true, classes, "actual label")
    pred = p.argmax(axis=1)
    conf = p[np.arange(len(pred)), pred]
    correct = (pred == true_idx).astype(float)
    bins = np.clip(np.ceil(conf * n_bins).astype(int) - 1, 0, n_bins - 1)
    # (n_b/N)·|mean correct − mean confidence| = |Σ_b correct − Σ_b confidence|/N
    gaps = np.bincount(bins, weights=correct - conf, minlength=n_bins)
    return float(np.abs(gaps).sum() / len(conf))


class CalibrationReport(Result):
    """Held-out quality of one calibration method's probabilities (its JSON: the gap's keys
    beside method, brier and ece)."""

    method: str
    gap: AlpGap
    brier: float
    ece: float

    flat_json = flattened("gap")


def calibration_report(method: str, y_true: Sequence, proba: np.ndarray,
                       classes: Sequence, *, groups: NetScoreGroups | None = None,
                       ) -> CalibrationReport:
    """Held-out gap (with the net-score terms when ``groups`` are given), Brier and ECE."""
    return CalibrationReport(method=method, gap=alp_gap(y_true, proba, classes, groups=groups),
                             brier=brier_score(y_true, proba, classes),
                             ece=expected_calibration_error(y_true, proba, classes))


_REMEDIES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "Logistic regression": ("temperature or sigmoid", ("train on more respondents",)),
    "Ordinal logistic regression": ("temperature", ("train on more respondents",)),
    "Decision tree": ("temperature or sigmoid", ("use shallower trees",)),
    "Random forest": ("temperature or sigmoid", ("use shallower trees", "use logistic regression "
                                                 "for estimating new waves")),
    "XGBoost": ("temperature or sigmoid", ("lower the learning rate or depth", "use logistic "
                                           "regression for estimating new waves")),
    "k-nearest neighbours": (None, ("use logistic regression or the ordinal model for estimating "
                                    "new waves, or many more neighbours with distance weighting",)),
}
"""Per algorithm: the calibrations to try (None: none helps) and the other remedies."""
_DEFAULT_REMEDY = ("temperature or sigmoid", ("train on more respondents", "use logistic "
                                              "regression for estimating new waves"))


def _remedy(algorithm: str, compared: Sequence[str]) -> str:
    """What to do about a large gap; calibration only when it was not already compared (a
    comparison of several methods kept the best, and the gap is still large).

    >>> _remedy("Logistic regression", ())
    'calibrate (temperature or sigmoid) or train on more respondents'
    >>> _remedy("Random forest", ("none", "temperature", "sigmoid", "isotonic"))
    'use shallower trees or use logistic regression for estimating new waves (the calibrations compared: as trained, temperature, sigmoid, isotonic; none brings it within bounds)'
    """
    calibrations, others = _REMEDIES.get(algorithm, _DEFAULT_REMEDY)
    steps = list(others)
    if calibrations and len(compared) <= 1:
        steps.insert(0, f"calibrate ({calibrations})")
    # "a or b"; "a, or b" when a has an "or" of its own (outside brackets); "a, b, or c"
    plain_or = len(steps) == 1 or (len(steps) == 2
                                   and " or " not in re.sub(r"\(.*?\)", "", steps[0]))
    text = " or ".join(steps) if plain_or else ", ".join(steps[:-1]) + ", or " + steps[-1]
    if len(compared) > 1:
        names = ", ".join("as trained" if m == "none" else m for m in compared)
        text += f" (the calibrations compared: {names}; none brings it within bounds)"
    return text


def gap_advice(gap: AlpGap, algorithm_name: str = "this model", method: str = "none",
               compared: Sequence[str] = ()) -> str | None:
    """A warning naming the parts of the held-out ALP gap beyond their limits (LARGE_GAP,
    LARGE_NET_ERROR) with the remedy that fits the algorithm, else None; ``algorithm_name``
    may carry a model id in brackets; the methods ``compared`` are not advised again."""
    parts = []
    if abs(gap.accuracy_gap) > LARGE_GAP:
        direction = ("over-confident: the estimate is above" if gap.accuracy_gap > 0
                     else "under-confident: the estimate is below")
        parts.append(f"the accuracy estimated from the model's probabilities (ALP) is "
                     f"{gap.accuracy_alp:.3f} against a real {gap.accuracy_cm:.3f} "
                     f"({direction} the real accuracy)")
    if gap.share_gap > LARGE_GAP:
        parts.append(f"class shares off by {gap.share_gap:.3f}")
    net_error = gap.net_calibration_error or 0.0
    if net_error > LARGE_NET_ERROR:
        parts.append(f"the estimated net score is off by {net_error:.1f} points (RMS) across "
                     f"respondents with similar estimates ({gap.net_gap:+.1f} overall)")
    if not parts:
        return None
    remedy = _remedy(algorithm_name.split(" (")[0], compared)
    return (f"{algorithm_name}, {_calibrated(method)}: on held-out respondents, "
            + "; ".join(parts) + f". Estimates of new waves will be biased by about as much. "
            f"To reduce it: {remedy}.")


class CalibrationChoice(Result):
    """Held-out reports per method and the chosen (smallest gap score) method."""

    chosen: str
    reports: tuple[CalibrationReport, ...]
    warnings: tuple[str, ...] = ()


def _calibrated(method: str) -> str:
    """The calibration in words, after a model's name: "probabilities as trained" for none."""
    return "probabilities as trained" if method == "none" else f"probabilities recalibrated ({method})"


def coarse_probability_advice(algorithm_id: str, algorithm_name: str = "this model",
                              method: str = "none") -> str | None:
    """A warning for algorithms whose probabilities are too coarse for ALP (k-NN); else None."""
    if algorithm_id not in COARSE_PROBABILITY_ALGORITHMS:
        return None
    return (
        f"{algorithm_name} ({_calibrated(method)}) gives coarse probabilities (neighbour votes "
        "j/k take only a few values), so what it estimates from them (ALP) and its estimated "
        "net score are unreliable "
        "even after calibration (in our backtest the estimated net score missed by about 9 "
        "points). For estimating unlabeled waves use logistic regression or the ordinal model; if you keep "
        "k-NN, use many more neighbours with distance weighting."
    )


def choose_calibration(reports: Sequence[CalibrationReport], *,
                       algorithm_name: str = "this model",
                       algorithm_id: str = "") -> CalibrationChoice:
    """The method with the smallest held-out gap score; ties (within 1e-12) go to the method
    listed first in :data:`CALIBRATION_METHODS`. ``algorithm_id`` adds the coarse-probability
    warning for k-NN (:func:`coarse_probability_advice`)."""
    if not reports:
        raise AnalysisError("no calibration method was evaluated")
    rank = {m: i for i, m in enumerate(CALIBRATION_METHODS)}
    best = min(reports, key=lambda r: (round(r.gap.score, 12), rank.get(r.method, 99)))
    notes = [gap_advice(best.gap, algorithm_name, best.method, [r.method for r in reports]),
             coarse_probability_advice(algorithm_id, algorithm_name, best.method)]
    return CalibrationChoice(chosen=best.method, reports=tuple(reports),
                             warnings=tuple(n for n in notes if n))


def compare_calibrations(X: ArrayLike, y: ArrayLike, classes: Sequence, algorithm_id: str, *,
                         methods: Sequence[str] = CALIBRATION_METHODS, folds: int = 5,
                         seed: int = 0, settings: dict | None = None, n_jobs: int = 1,
                         progress: Callable | None = None, groups: NetScoreGroups | None = None,
                         keep_train_proba: bool = False,
                         missing_policy: str = "impute_indicator",
                         sample_weight: np.ndarray | None = None,
                         preset: str | None = None,
                         ) -> tuple[CalibrationChoice, dict[str, CrossValResult]]:
    """Cross-validate ``algorithm_id`` once per calibration method (same folds) and choose:
    ``(choice, {method: its CrossValResult})``. ``groups``: the plan's net-score groups (the
    gap then includes the estimated-NPS error)."""
    from cx_app.models.algorithms import get_algorithm
    from cx_app.models.crossval import cross_validate_model

    name = get_algorithm(algorithm_id).name
    results, reports = {}, []
    for method in methods:
        cv = cross_validate_model(X, y, classes, algorithm_id, folds=folds, seed=seed,
                                  settings=settings, n_jobs=n_jobs, progress=progress,
                                  calibration=method, keep_train_proba=keep_train_proba,
                                  missing_policy=missing_policy,
                                  sample_weight=sample_weight, preset=preset)
        results[method] = cv
        reports.append(calibration_report(method, cv.y_true, cv.proba, classes, groups=groups))
    return choose_calibration(reports, algorithm_name=name, algorithm_id=algorithm_id), results
