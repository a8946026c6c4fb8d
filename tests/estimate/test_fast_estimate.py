"""The fast route of estimate_from_probabilities (issue 38, point 2) against the slow one it
replaced: the calibrators fitted directly equal scikit-learn's ``CalibratedClassifierCV``
around a frozen pass-through classifier, and the delta method's SE_outcome equals the
parametric bootstrap's within its Monte Carlo error, every metric at every level."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator

from cx_app.engine.grouping import resolve_plan
from cx_app.engine.plan import NPS_PLAN
from cx_app.estimate.from_probabilities import calibrate_probabilities
from cx_app.estimate.metric_intervals import metric_intervals
from cx_app.models.crossval import class_positions


class _Given(ClassifierMixin, BaseEstimator):
    """A pass-through classifier: its input rows are class probabilities (the old route)."""

    def __init__(self, n_classes: int = 2) -> None:
        self.n_classes = n_classes

    def fit(self, X, y=None):
        self.classes_ = np.arange(self.n_classes)
        return self

    def predict_proba(self, X):
        return np.asarray(X, dtype=float)

    def predict(self, X):
        return np.asarray(X).argmax(axis=1)


def _softmax(z):
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("k", [2, 3, 11])
@pytest.mark.parametrize("method", ["temperature", "sigmoid", "isotonic"])
def test_direct_calibrators_equal_calibrated_classifier_cv(k, method):
    rng = np.random.default_rng(k)
    z = rng.normal(size=(1500, k)) + np.linspace(-1, 1, k)
    y = (rng.random(1500)[:, None] > _softmax(z).cumsum(axis=1)).sum(axis=1).clip(max=k - 1)
    given = _softmax(2.5 * z)  # over-confident
    ref, new, y_ref = given[:1000], given[1000:], y[:1000]
    old = CalibratedClassifierCV(FrozenEstimator(_Given(k).fit(ref)), method=method)
    expected = old.fit(ref, y_ref).predict_proba(new)
    got = calibrate_probabilities(method, ref, y_ref, new)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_a_class_absent_from_the_reference_is_calibrated_to_zero():
    """CalibratedClassifierCV refused this (a class the reference never shows); the direct
    one-vs-rest fits give that class 0 and keep the rows summing to 1."""
    rng = np.random.default_rng(3)
    ref = _softmax(rng.normal(size=(300, 3)))
    y = rng.integers(0, 2, size=300)  # class 2 never observed
    out = calibrate_probabilities("isotonic", ref, y, ref[:50])
    assert np.all(out[:, 2] == 0.0)
    np.testing.assert_allclose(out.sum(axis=1), 1.0)


def test_delta_method_equals_the_bootstrap_within_its_monte_carlo_error():
    """2,000 respondents, 11 classes, the NPS plan's levels: the closed-form SD of every
    metric is within 4 Monte Carlo SEs of 2,000 draws' SD (the SD of an SD from B normal
    draws is SD/√(2(B−1)): 1.6 % here), accuracy's equals the Poisson-binomial SD exactly,
    and the centre is the ALP value."""
    rng = np.random.default_rng(11)
    p = _softmax(1.2 * rng.normal(size=(2000, 11)) + np.linspace(-1, 1, 11))
    plan = resolve_plan(NPS_PLAN)
    from cx_app.engine.levels import reduce_confusion
    from cx_app.estimate.alp import alp_confusion_matrix
    from cx_app.estimate.metric_intervals import level_values

    estimates = level_values(reduce_confusion(alp_confusion_matrix(p, tuple(range(11))), plan))
    delta = metric_intervals(p, estimates, resolved_plan=plan, method="delta")
    boot = metric_intervals(p, estimates, resolved_plan=plan, n_draws=2000, seed=2)
    assert delta.n_draws == 0 and boot.n_draws == 2000
    mc = 1 / math.sqrt(2 * 1999)
    checked = 0
    for level, metrics in boot.levels.items():
        for m, b in metrics.items():
            d = delta.levels[level][m]
            assert d.se_outcome == pytest.approx(b.se_outcome, rel=4 * mc), (level, m)
            assert d.centre == d.value == estimates[level][m]
            checked += 1
    assert checked == 16
    pmax = p.max(axis=1)
    poisson_binomial = math.sqrt(float(np.sum(pmax * (1 - pmax)))) / len(p)
    assert delta.levels["original"]["accuracy"].se_outcome == pytest.approx(poisson_binomial,
                                                                            rel=1e-6)


def test_label_index_is_vectorised_and_keeps_plain_matching():
    """1, 1.0 and numpy's 1 are one class; the first unknown label is named with its row."""
    got = class_positions([1, 2.0, np.int64(0), 1], [0, 1, 2], "x")
    assert got.tolist() == [1, 2, 0, 1]
    assert class_positions(np.array(["b", "a"]), ["a", "b"], "x").tolist() == [1, 0]
    from cx_app.errors import AnalysisError

    with pytest.raises(AnalysisError, match=r"reference label 7 \(row 2\)"):
        class_positions(np.array([0, 1, 7, 7]), [0, 1, 2], "reference label")
