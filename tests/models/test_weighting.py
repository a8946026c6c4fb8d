"""One weighting (issue 37, point 6): with survey weights, every algorithm that can take them
is trained with them (its fold models equal scikit-learn's fit with ``sample_weight``), the
others are trained without them and say why beside their name; results.json records
``weighted`` per model."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from cx_app.engine.grouping import resolve_plan
from cx_app.engine.plan import PlanSpec
from cx_app.models.algorithms import get_algorithm
from cx_app.models.crossval import cross_validate_model
from cx_app.models.evaluation import evaluate_result
from cx_app.models.names import weighting_note
from cx_app.models.weighting import unweighted_reason
from cx_app.survey.default_plans import default_plan

N = 240


def _data(seed: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.integers(1, 6, size=(N, 3)).astype(float)
    y = np.clip(np.rint(X.mean(axis=1) + rng.normal(0, 0.8, N)), 1, 5).astype(int)
    weights = rng.uniform(0.2, 3.0, N)
    return X, y, weights


@pytest.mark.parametrize(("algorithm", "preset"), [("lr", None), ("dt", None), ("nb", None),
                                                   ("svm", "papers")])
def test_a_weighted_fold_is_scikit_learns_fit_with_sample_weight(algorithm, preset):
    """The papers' SVM too: its Platt scaling passes the weights to the SVC and the
    calibrator (scikit-learn's CalibratedClassifierCV with sample_weight)."""
    X, y, w = _data()
    classes = (1, 2, 3, 4, 5)
    cv = cross_validate_model(X, y, classes, algorithm, folds=3, seed=2, sample_weight=w,
                              keep_models=True, preset=preset)
    assert cv.weighted is True and cv.unweighted_reason is None
    assert cv.summary().weighted is True
    unweighted = cross_validate_model(X, y, classes, algorithm, folds=3, seed=2,
                                      keep_models=True, preset=preset)
    assert unweighted.weighted is None  # no weights given
    template = get_algorithm(algorithm, preset).build(2)
    for f, model in enumerate(cv.models):
        train = cv.fold != f
        codes = cv.class_positions()[train]
        # the oracle: the same pipeline, scikit-learn's own fit with sample_weight
        oracle = clone(template).fit(X[train], codes, model__sample_weight=w[train])
        np.testing.assert_allclose(model.predict_proba(X), oracle.predict_proba(X),
                                   rtol=1e-9, atol=1e-12)
    # the weights changed the model: the unweighted fold models differ somewhere
    assert any(not np.allclose(a.predict_proba(X), b.predict_proba(X))
               for a, b in zip(cv.models, unweighted.models, strict=True))


def test_an_algorithm_that_cannot_take_weights_is_named_with_its_reason():
    X, y, w = _data()
    cv = cross_validate_model(X, y, (1, 2, 3, 4, 5), "knn", folds=3, seed=2, sample_weight=w)
    reason = "k-nearest neighbours has no way to weight respondents"
    assert cv.weighted is False and cv.unweighted_reason == reason
    assert any(reason in w_ for w_ in cv.warnings)
    # its predictions are those of the unweighted fit
    plain = cross_validate_model(X, y, (1, 2, 3, 4, 5), "knn", folds=3, seed=2)
    np.testing.assert_array_equal(cv.proba, plain.proba)
    assert isinstance(get_algorithm("knn").build(0), Pipeline)
    assert unweighted_reason(get_algorithm("ordinal").build(0)).startswith("statsmodels")


def test_results_json_and_the_note_say_which_models_are_weighted():
    X, y, w = _data()
    classes = (1, 2, 3, 4, 5)
    plan = resolve_plan(PlanSpec(classes=classes, plan=tuple(default_plan("csat", (1, 5)))),
                        classes)
    documents = {}
    for algorithm in ("lr", "knn"):
        cv = cross_validate_model(X, y, classes, algorithm, folds=3, seed=2, sample_weight=w)
        documents[algorithm] = evaluate_result(cv, plan).to_dict()
    assert documents["lr"]["weighted"] is True
    assert documents["knn"]["weighted"] is False
    assert documents["knn"]["cross_validation"]["unweighted_reason"].startswith("k-nearest")
    note = weighting_note({m: (d["weighted"], d["cross_validation"]["unweighted_reason"])
                           for m, d in documents.items()})
    assert note == ("Survey weights: Logistic regression trained with them; k-nearest "
                    "neighbours without them (k-nearest neighbours has no way to weight "
                    "respondents). Accuracy and the other metrics count every respondent once "
                    "(not weighted).")
