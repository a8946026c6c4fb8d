"""Survey weights in the models: who is trained with them, and why the others are not.

Every algorithm that takes scikit-learn's ``sample_weight`` is trained with them (the papers'
SVM too: :class:`RareSafeCalibrated` passes them on); k-NN, the fast SVM (one-vs-one),
ordinal regression and a pipeline calibrated by the ``calibration`` option say why not
(:func:`unweighted_reason`).
"""

from __future__ import annotations

from typing import Any

from sklearn.pipeline import Pipeline

from cx_app.models.algorithms import RareSafeCalibrated, get_algorithm  # noqa: F401  (doctests)

__all__ = ["fit_weighted", "unweighted_reason"]


def fit_weighted(model: Any, X: Any, y: Any, sample_weight: Any = None) -> tuple[Any, bool]:
    """Fit ``model`` (a pipeline, maybe calibrated) with survey weights unless
    :func:`unweighted_reason` names it; (fitted model, whether weights were used)."""
    if sample_weight is not None and unweighted_reason(model) is None:
        name = model.steps[-1][0]
        return model.fit(X, y, **{f"{name}__sample_weight": sample_weight}), True
    return model.fit(X, y), False


def unweighted_reason(model: Any) -> str | None:
    """Why :func:`fit_weighted` trains ``model`` without survey weights; None when it takes them.

    >>> unweighted_reason(get_algorithm("knn").build(0))
    'k-nearest neighbours has no way to weight respondents'
    >>> unweighted_reason(get_algorithm("lr").build(0)) is None
    True
    """
    from sklearn.utils.validation import has_fit_parameter

    if not isinstance(model, Pipeline):
        return ("a calibrated model is trained without weights (its calibration step cannot "
                "pass them on): choose calibration none to train it weighted")
    estimator = model.steps[-1][1]
    if isinstance(estimator, RareSafeCalibrated):
        estimator = estimator.estimator
    if has_fit_parameter(estimator, "sample_weight"):
        return None
    return _NO_WEIGHTS.get(type(estimator).__name__,
                           f"{type(estimator).__name__} takes no respondent weights")


_NO_WEIGHTS = {
    "KNeighborsClassifier": "k-nearest neighbours has no way to weight respondents",
    "OrdinalLogisticClassifier": "statsmodels' ordinal regression takes no respondent weights",
    "OneVsOneClassifier": "scikit-learn's one-vs-one support vector machine takes no "
                          "respondent weights",
}
