"""Which trained model estimates new waves: the one whose held-out net score errs least.

The error is the out-of-fold net-score calibration error (too-flat probabilities pull a shifted
wave back towards the reference, issue 36); the first model (the analyst's default) is kept
unless another errs less by :data:`CHOICE_MARGIN` points, the error being itself noisy
(docs/alp.md, "Which model estimates the waves").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from cx_app.errors import AnalysisError
from cx_app.result import Result

if TYPE_CHECKING:
    from cx_app.models.crossval import CrossValResult
    from cx_app.survey.nps import NetScoreGroups

__all__ = ["CHOICE_MARGIN", "EstimationChoice", "choose_estimation_model",
           "choose_from_crossvalidation", "heldout_net_error"]

CHOICE_MARGIN = 1.0
"""Points by which another model's held-out net-score error must be smaller than the first
model's for it to estimate the waves instead."""


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


def choose_estimation_model(errors: Mapping[str, float | None],
                            names: Mapping[str, str] | None = None, *,
                            margin: float = CHOICE_MARGIN) -> EstimationChoice:
    """The model (key of ``errors``, the first one the analyst's default) with the smallest
    held-out net-score error, the first kept unless another's is smaller by ``margin`` points
    or more; ``names``: how each is named for analysts (default: its key).

    >>> names = {"lr": "logistic regression", "nb": "naive Bayes"}
    >>> c = choose_estimation_model({"lr": 3.4, "nb": 0.9}, names)
    >>> c.chosen
    'nb'
    >>> c.reason
    'estimated with the model whose held-out net-score error was smallest (naive Bayes, 0.9 points; logistic regression 3.4)'
    >>> choose_estimation_model({"lr": 0.8, "nb": 0.0}, names).reason
    'estimated with logistic regression (held-out net-score error 0.8 points): no other model errs less by 1.0 point or more (naive Bayes within sampling noise)'
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
    if errors[first] is not None and best != first \
            and float(errors[first]) - float(errors[best]) < margin:
        return EstimationChoice(
            chosen=first, errors=dict(errors),
            reason=(f"estimated with {names.get(first, first)} (held-out net-score error "
                    f"{points(first, ' points')}): no other model errs less by {margin:.1f} "
                    f"point or more ({shown(order[1:])})"))
    others = [m for m in order if m != best]
    return EstimationChoice(
        chosen=best, errors=dict(errors),
        reason=("estimated with the model whose held-out net-score error was smallest "
                f"({names.get(best, best)}, {points(best, ' points')}"
                + (f"; {shown(others)})" if others else ")")))

def choose_from_crossvalidation(results: Mapping[str, CrossValResult], groups: NetScoreGroups,
                                names: Mapping[str, str] | None = None, *,
                                margin: float = CHOICE_MARGIN) -> EstimationChoice:
    """:func:`choose_estimation_model` over cross-validated models (the app's trained models:
    ``results`` model id → its cross-validation), each error measured on its out-of-fold
    probabilities (:func:`cx_app.estimate.alp.net_score_calibration_error`)."""
    from cx_app.estimate.alp import net_score_calibration_error

    errors = {m: net_score_calibration_error(cv.class_positions(), cv.proba, cv.classes, groups)
              for m, cv in results.items()}
    return choose_estimation_model(errors, names, margin=margin)

