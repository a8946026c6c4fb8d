"""Each algorithm's gap features (issue 25, point 1): what its ``gaps`` step does under each
policy, that the pipelines take data with gaps, and that their model files still load."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.impute import SimpleImputer

from cx_app.estimate.model_file import TrainedModel, load_model, save_model
from cx_app.estimate.model_metadata import HeldOutFigures, TrainingData
from cx_app.models.algorithms import ALGORITHMS
from cx_app.models.crossval import build_model

EXPECTED = {"svm": "indicator", "ordinal": "indicator", "dt": "median", "rf": "median",
            "lr": "median", "knn": "median", "nb": "median", "ann": "median", "xgb": "median",
            "cnn": "median"}


@pytest.fixture(scope="module")
def gappy():
    """Two informative attributes; a quarter of the first and a third of the third missing."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.4).astype(int)
    X[rng.random(150) < 0.25, 0] = np.nan
    X[rng.random(150) < 0.33, 2] = np.nan
    return X, y


def test_every_algorithm_declares_its_gap_handling():
    assert {a: spec.gaps for a, spec in ALGORITHMS.items()} == EXPECTED


@pytest.mark.parametrize("algorithm_id", sorted(ALGORITHMS))
def test_the_gap_step_under_each_policy(gappy, algorithm_id):
    X, y = gappy
    default = build_model(algorithm_id).named_steps["gaps"]
    for policy in ("impute_median", "exclude"):
        step = build_model(algorithm_id, missing_policy=policy).named_steps["gaps"]
        assert isinstance(step, SimpleImputer) and not step.add_indicator
    assert isinstance(default, SimpleImputer) and default.strategy == "median"
    filled = default.fit_transform(X)
    # the training medians fill the gaps; an indicator column per attribute with gaps, or none
    columns = 5 if EXPECTED[algorithm_id] == "indicator" else 3
    assert filled.shape == (len(X), columns)
    np.testing.assert_array_equal(filled[np.isnan(X[:, 0]), 0], np.nanmedian(X[:, 0]))
    if columns == 5:
        np.testing.assert_array_equal(filled[:, 3:], np.isnan(X[:, [0, 2]]).astype(float))


def test_naive_bayes_sees_no_indicator_columns(gappy):
    """GaussianNB on a 0/1 "was missing" column whose variance is ~0 in a class without gaps
    rules that class out for every respondent with a gap: the collapse of issue 25."""
    X, y = gappy
    model = build_model("nb").fit(X, y)
    assert model.named_steps["model"].theta_.shape == (3, 3)  # 3 classes × 3 attributes


@pytest.mark.parametrize("algorithm_id", sorted(ALGORITHMS))
def test_models_fitted_on_gaps_save_and_load(tmp_path, gappy, algorithm_id):
    X, y = gappy
    settings = {"ann": {"max_iter": 20}, "cnn": {"epochs": 3}}.get(algorithm_id, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for calibration in ("none", "sigmoid"):
            estimator = build_model(algorithm_id, settings, calibration=calibration).fit(X, y)
            model = TrainedModel(
                estimator=estimator, classes=(0, 1, 2), attribute_names=("a", "b", "c"),
                schema_yaml="name: x\n", algorithm_id=algorithm_id, settings={},
                calibration=calibration, training=TrainingData(sha256="0" * 64, n=len(X)),
                cv=HeldOutFigures(),
                attribute_distributions={"a": {"1": 3}})
            assert model.fills_gaps
            proba = model.predict_proba(X)
            assert np.isfinite(proba).all()
            np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
            path = save_model(model, tmp_path / f"{algorithm_id}-{calibration}.skops")
            np.testing.assert_allclose(load_model(path).predict_proba(X), proba)
