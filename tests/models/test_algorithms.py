"""The algorithm registry: the papers' settings, overrides, validation, probabilities."""

from __future__ import annotations

import numpy as np
import pytest

from cx_app.errors import AnalysisError
from cx_app.models.algorithms import ALGORITHMS, DEFAULT_ALGORITHMS, get_algorithm
from cx_app.models.crossval import build_model


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(1)
    X = rng.integers(1, 11, (240, 4)).astype(float)
    y = np.clip(np.round(X[:, 0] * 0.6 + X[:, 1] * 0.4 + rng.normal(0, 1, 240)), 2, 9).astype(int)
    return X, y


def test_registry_has_the_papers_eight_ordinal_and_cnn():
    assert DEFAULT_ALGORITHMS == ("lr", "svm", "knn", "nb", "dt", "rf", "ann", "xgb")
    assert set(ALGORITHMS) == {*DEFAULT_ALGORITHMS, "ordinal", "cnn"}
    for spec in ALGORITHMS.values():
        assert spec.description and spec.name


def test_the_papers_preset_is_the_papers_settings():
    dt = build_model("dt", preset="papers")["model"]
    assert (dt.criterion, dt.max_depth) == ("entropy", 3)
    knn = build_model("knn", preset="papers")["model"]
    assert (knn.n_neighbors, knn.metric, knn.weights) == (5, "minkowski", "uniform")
    rf = build_model("rf", preset="papers")["model"]
    assert (rf.n_estimators, rf.criterion) == (100, "gini")
    ann = build_model("ann", preset="papers")["model"]
    assert ann.hidden_layer_sizes == (6,) and ann.activation == "relu"
    assert (ann.solver, ann.batch_size, ann.max_iter) == ("adam", 10, 100)
    xgb = build_model("xgb", preset="papers")["model"].estimator
    assert (xgb.learning_rate, xgb.max_depth, xgb.subsample) == (0.3, 3, 1.0)
    svc = build_model("svm", preset="papers")["model"].estimator
    assert svc.kernel == "linear"
    lr = build_model("lr", preset="papers")["model"]
    assert lr.solver == "lbfgs" and lr.class_weight is None


def test_scaling_lives_inside_the_pipeline_for_scale_sensitive_algorithms():
    for algorithm_id in ("lr", "svm", "knn", "ann", "ordinal", "cnn"):
        assert "scale" in build_model(algorithm_id).named_steps
    for algorithm_id in ("nb", "dt", "rf", "xgb"):
        assert "scale" not in build_model(algorithm_id).named_steps


def test_override_and_seed():
    model = build_model("dt", {"max_depth": 5}, seed=7)["model"]
    assert model.max_depth == 5 and model.random_state == 7
    assert get_algorithm("dt").settings({"max_depth": 5})["criterion"] == "entropy"


def test_unknown_setting_and_algorithm_are_clear_errors():
    with pytest.raises(AnalysisError, match=r"'dt' \(Decision tree\) has no setting 'depth'"):
        build_model("dt", {"depth": 4})
    with pytest.raises(AnalysisError, match="unknown algorithm 'lstm'"):
        get_algorithm("lstm")
    with pytest.raises(AnalysisError, match="'dt'.*max_depth"):
        build_model("dt", {"max_depth": -1})


@pytest.mark.parametrize("algorithm_id", sorted(ALGORITHMS))
def test_every_algorithm_gives_probabilities_over_its_classes(small, algorithm_id):
    X, y = small
    settings = {"ann": {"max_iter": 20}, "cnn": {"epochs": 5}}.get(algorithm_id, {})
    model = build_model(algorithm_id, settings).fit(X, y)
    proba = model.predict_proba(X[:50])
    assert proba.shape == (50, len(model.classes_))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    assert (proba >= 0).all()
    # Labels 2..9 are not contiguous from 0: XGBoost's wrapper must keep them.
    np.testing.assert_array_equal(model.classes_, np.unique(y))
