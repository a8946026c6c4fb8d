"""Which trained model estimates new waves: the one whose held-out net score errs least.

The error is the out-of-fold net-score calibration error (too-flat probabilities pull a shifted
wave back towards the reference, issue 36). The first model (the analyst's default) is kept
unless another errs less beyond the noise of the comparison: a one-sided paired bootstrap test
at 10 % (:data:`CHOICE_Z` standard errors of the difference, both errors recomputed on the same
:data:`CHOICE_RESAMPLES` resamples of the respondents, :func:`calibration_error_replicates`).
Model files saved before the resamples were kept are compared by :data:`CHOICE_MARGIN` points
(docs/alp.md, "Which model estimates the waves").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from cx_app.errors import AnalysisError
from cx_app.result import Result

if TYPE_CHECKING:
    from cx_app.models.crossval import CrossValResult
    from cx_app.survey.nps import NetScoreGroups

__all__ = ["CHOICE_MARGIN", "CHOICE_RESAMPLES", "CHOICE_Z", "EstimationChoice",
           "calibration_error_replicates", "choose_estimation_model",
           "choose_from_crossvalidation", "heldout_net_error", "heldout_net_replicates"]

CHOICE_Z = 1.2815515655446004
"""Standard errors of the paired difference by which another model must err less than the
first: the one-sided 10 % normal quantile (``scipy.stats.norm.ppf(0.90)``). Not 5 %: keeping
a model whose estimates are too flat costs more than moving between two calibrated ones
(docs/alp.md, "Which model estimates the waves")."""
CHOICE_RESAMPLES = 200
"""Bootstrap resamples of the respondents for the standard error of that difference."""
CHOICE_MARGIN = 1.0
"""Points by which another model must err less when a model file keeps no resamples."""


class EstimationChoice(Result):
    """The model that estimates new waves, the held-out net-score error of every candidate
    (points; None: the model file keeps none) and the reason in plain words."""

    chosen: str
    errors: dict[str, float | None]
    reason: str


def heldout_net_error(cv) -> float | None:
    """A model's held-out net-score error (points) from its cross-validation figures
    (:class:`~cx_app.estimate.model_metadata.HeldOutFigures`, or anything with an
    ``alp_gap``); None when it was not kept."""
    gap = getattr(cv, "alp_gap", None)
    value = None if gap is None else gap.net_calibration_error
    return None if value is None else float(value)


def heldout_net_replicates(cv) -> tuple[float, ...] | None:
    """The same error on the choice's resamples (:func:`calibration_error_replicates`), as
    kept in the cross-validation figures; None in files saved before they were kept."""
    doc = getattr(cv, "net_score_error", None)
    values = None if doc is None else doc.calibration_error_replicates
    return None if values is None else tuple(float(v) for v in values)


def calibration_error_replicates(true_idx: np.ndarray, proba: np.ndarray, classes: Sequence,
                                 groups: NetScoreGroups, resamples: int = CHOICE_RESAMPLES,
                                 ) -> np.ndarray:
    """:func:`~cx_app.estimate.alp.net_score_calibration_error` on ``resamples`` bootstrap
    resamples of the respondents, drawn from a fixed seed and their number alone: every model
    of the same respondents (in the same order) gets the same resamples, so two models'
    replicates are paired."""
    from cx_app.estimate.alp import binned_net_error, net_estimates_and_outcomes

    est, actual = net_estimates_and_outcomes(np.asarray(true_idx), proba, classes, groups)
    n = len(est)
    rng = np.random.default_rng([36, n])
    rows = (rng.integers(0, n, n) for _ in range(resamples))
    return np.array([binned_net_error(est[i], actual[i]) for i in rows])


def _paired_se(replicates: Mapping[str, Sequence[float] | None] | None, a: str, b: str,
               ) -> float | None:
    """The bootstrap standard error of error(a) − error(b), when both keep paired replicates."""
    ra, rb = ((replicates or {}).get(m) for m in (a, b))
    if ra is None or rb is None or len(ra) != len(rb) or len(ra) < 2:
        return None
    return float(np.std(np.asarray(ra, dtype=float) - np.asarray(rb, dtype=float), ddof=1))


def choose_estimation_model(errors: Mapping[str, float | None],
                            names: Mapping[str, str] | None = None, *,
                            replicates: Mapping[str, Sequence[float] | None] | None = None,
                            margin: float = CHOICE_MARGIN) -> EstimationChoice:
    """The model (key of ``errors``, the first one the analyst's default) with the smallest
    held-out net-score error, the first kept unless another's is smaller beyond the noise of
    the comparison: by more than :data:`CHOICE_Z` standard errors of the paired difference
    when both keep ``replicates`` (:func:`calibration_error_replicates`), else by ``margin``
    points or more; ``names``: how each is named for analysts (default: its key).

    >>> names = {"lr": "logistic regression", "nb": "naive Bayes"}
    >>> c = choose_estimation_model({"lr": 3.4, "nb": 0.9}, names)
    >>> c.chosen
    'nb'
    >>> c.reason
    'estimated with the model whose held-out net-score error was smallest (naive Bayes, 0.9 points; logistic regression 3.4)'
    >>> choose_estimation_model({"lr": 0.8, "nb": 0.0}, names).reason
    'estimated with logistic regression (held-out net-score error 0.8 points): no other model errs less by 1.0 point or more (naive Bayes within sampling noise)'
    >>> noisy = {"lr": [1.0, 3.0, 0.5, 2.5], "nb": [0.0, 0.0, 0.5, 0.5]}
    >>> choose_estimation_model({"lr": 1.2, "nb": 0.0}, names, replicates=noisy).reason
    'estimated with logistic regression (held-out net-score error 1.2 points): naive Bayes errs less (within sampling noise) by 1.2 points, 0.9 standard errors of the difference: within the noise of the comparison (more than 1.28 needed)'
    """
    if not errors:
        raise AnalysisError("no trained model to estimate the wave with")
    names = dict(names or {})
    order = list(errors)
    first = order[0]

    def points(model, unit: str = "") -> str:
        """The error in words: below 0.05 it is within the sampling noise it was corrected for."""
        value = float(errors[model])
        return "within sampling noise" if value < 0.05 else f"{value:.1f}{unit}"

    def shown(models) -> str:
        return "; ".join(f"{names.get(m, m)} "
                         + ("not measured" if errors[m] is None else points(m))
                         for m in models)

    known = [m for m in order if errors[m] is not None]
    if not known:
        return EstimationChoice(
            chosen=first, errors=dict(errors),
            reason=f"estimated with {names.get(first, first)}, the first model: no model keeps "
                   "its held-out net-score error (trained before it was kept)")
    best = min(known, key=lambda m: (float(errors[m]), order.index(m)))
    if errors[first] is not None and best != first:
        difference = float(errors[first]) - float(errors[best])
        se = _paired_se(replicates, first, best)
        kept = f"estimated with {names.get(first, first)} (held-out net-score error " \
               f"{points(first, ' points')}): "
        if se is None and difference < margin:
            return EstimationChoice(chosen=first, errors=dict(errors), reason=(
                f"{kept}no other model errs less by {margin:.1f} point or more "
                f"({shown(order[1:])})"))
        if se is not None and difference <= CHOICE_Z * se:
            z = difference / se if se > 0 else 0.0
            return EstimationChoice(chosen=first, errors=dict(errors), reason=(
                f"{kept}{names.get(best, best)} errs less ({points(best, ' points')}) by "
                f"{difference:.1f} points, {z:.1f} standard errors of the difference: within "
                f"the noise of the comparison (more than {CHOICE_Z:.2f} needed)"))
    others = [m for m in order if m != best]
    return EstimationChoice(
        chosen=best, errors=dict(errors),
        reason=("estimated with the model whose held-out net-score error was smallest "
                f"({names.get(best, best)}, {points(best, ' points')}"
                + (f"; {shown(others)})" if others else ")")))


def choose_from_crossvalidation(results: Mapping[str, CrossValResult], groups: NetScoreGroups,
                                names: Mapping[str, str] | None = None) -> EstimationChoice:
    """:func:`choose_estimation_model` over cross-validated models of the same respondents
    (the app's trained models: ``results`` model id → its cross-validation), each error and
    its paired replicates measured on its out-of-fold probabilities
    (:func:`cx_app.estimate.alp.net_score_calibration_error`)."""
    from cx_app.estimate.alp import net_score_calibration_error

    errors, replicates = {}, {}
    for m, cv in results.items():
        y = cv.class_positions()
        errors[m] = net_score_calibration_error(y, cv.proba, cv.classes, groups)
        replicates[m] = calibration_error_replicates(y, cv.proba, cv.classes, groups)
    return choose_estimation_model(errors, names, replicates=replicates)
