"""Survey weights in the models: who is trained with them, and why the others are not.

Issue 37, point 6: every algorithm that can take them is trained with them (scikit-learn's
``sample_weight``), the others say why in plain words.

Weighted: logistic regression, naive Bayes, decision tree, random forest, neural network,
XGBoost, the CNN and the papers' SVM (its Platt scaling, :class:`RareSafeCalibrated`, passes
the weights to the SVC and to the calibrator). Unweighted, with the reason
(:func:`unweighted_reason`): k-NN, the fast SVM (scikit-learn's one-vs-one wrapper), ordinal
regression (statsmodels) and a pipeline calibrated by the ``calibration`` option.
"""

from __future__ import annotations

from typing import Any

from sklearn.pipeline import Pipeline

from cx_app.models.algorithms import RareSafeCalibrated, get_algorithm  # noqa: F401  (doctests)

__all__ = ["fit_weighted", "takes_sample_weight", "unweighted_reason"]


def fit_weighted(model: Any, X: Any, y: Any, sample_weight: Any = None) -> tuple[Any, bool]:
    """Fit ``model`` (a pipeline of :func:`build_algorithm`, maybe calibrated) with survey
    weights when its estimator takes ``sample_weight``; (fitted model, whether weights were
    used). A model :func:`unweighted_reason` names (k-NN, the fast SVM, ordinal regression, a
    calibrated pipeline) is fitted unweighted."""
    if sample_weight is not None and takes_sample_weight(model):
        name = model.steps[-1][0]
        return model.fit(X, y, **{f"{name}__sample_weight": sample_weight}), True
    return model.fit(X, y), False


def takes_sample_weight(model: Any) -> bool:
    """Whether :func:`fit_weighted` trains ``model`` with survey weights."""
    return unweighted_reason(model) is None


def unweighted_reason(model: Any) -> str | None:
    """Why :func:`fit_weighted` trains ``model`` without survey weights, in plain words; None
    when it takes them (every algorithm, uncalibrated, but k-NN, the SVM and ordinal
    regression).

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
