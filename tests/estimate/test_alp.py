"""ALP matrix: identities (MATH.md §8), closed forms vs the engine, and Theorem 1 on data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from cx_app.engine.confusion import multiclass_metrics
from cx_app.errors import AnalysisError
from cx_app.estimate.alp import (
    LARGE_GAP,
    LARGE_NET_ERROR,
    alp_confusion_matrix,
    alp_gap,
    alp_learning_curve,
    compare_alp_cm,
    full_training_alp_check,
    predicted_labels,
)


def closed_forms(p, k):
    """The paper's closed forms (eqs. 35–42) from the maximum probabilities alone: accuracy,
    per-class precision (mean max probability among predicted k), recall and F1."""
    pred = p.argmax(axis=1)
    pmax = p.max(axis=1)
    n_pred = np.bincount(pred, minlength=k)
    pbar = np.bincount(pred, weights=pmax, minlength=k) / np.maximum(n_pred, 1)
    n_est = p.sum(axis=0)
    recall = np.where(n_est > 0, n_pred * pbar / np.where(n_est > 0, n_est, 1.0), 0.0)
    f1 = np.where(n_est + n_pred > 0, 2 * n_pred * pbar / np.maximum(n_est + n_pred, 1e-300), 0.0)
    return pmax.mean(), pbar, recall, f1


@st.composite
def probability_tables(draw):
    k = draw(st.integers(2, 6))
    n = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    raw = rng.gamma(draw(st.sampled_from([0.2, 1.0, 5.0])), size=(n, k))
    raw[raw.sum(axis=1) == 0, 0] = 1.0
    return raw / raw.sum(axis=1, keepdims=True), list(range(10, 10 + k))


@settings(max_examples=60, deadline=None)
@given(probability_tables())
def test_alp_identities(table):
    p, classes = table
    n, k = p.shape
    a = alp_confusion_matrix(p, classes).counts
    pred = p.argmax(axis=1)
    # independent loop-based construction of A[m, k] = Σ_{i: ŷ_i = k} p_im
    loop = np.zeros((k, k))
    for i in range(n):
        loop[:, pred[i]] += p[i]
    np.testing.assert_allclose(a, loop, atol=1e-12)
    assert a.sum() == pytest.approx(n, abs=1e-9)
    np.testing.assert_allclose(a.sum(axis=0), np.bincount(pred, minlength=k), atol=1e-12)
    np.testing.assert_allclose(a.sum(axis=1), p.sum(axis=0), atol=1e-12)
    assert np.trace(a) / n == pytest.approx(p.max(axis=1).mean(), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(probability_tables())
def test_closed_forms_equal_engine_metrics_of_the_matrix(table):
    p, classes = table
    accuracy, precision, recall, f1 = closed_forms(p, len(classes))
    engine = multiclass_metrics(alp_confusion_matrix(p, classes))
    assert accuracy == pytest.approx(engine.accuracy, abs=1e-12)
    np.testing.assert_allclose(precision, engine.precision, atol=1e-12)
    np.testing.assert_allclose(recall, engine.recall, atol=1e-12)
    np.testing.assert_allclose(f1, engine.f1, atol=1e-12)
    assert precision.mean() == pytest.approx(engine.precision_macro, abs=1e-12)
    assert recall.mean() == pytest.approx(engine.recall_macro, abs=1e-12)
    assert f1.mean() == pytest.approx(engine.f1_macro, abs=1e-12)


def test_hand_computed_matrix_and_closed_forms():
    p = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.1, 0.9]])
    cm = alp_confusion_matrix(p, ["a", "b"])
    # predicted a: rows 0, 2 -> column a = (0.8+0.6, 0.2+0.4); predicted b: rows 1, 3
    np.testing.assert_allclose(cm.counts, [[1.4, 0.4], [0.6, 1.6]])
    engine = multiclass_metrics(cm)
    assert engine.accuracy == pytest.approx((0.8 + 0.7 + 0.6 + 0.9) / 4)
    assert tuple(engine.precision) == pytest.approx((0.7, 0.8))
    assert tuple(engine.recall) == pytest.approx((1.4 / 1.8, 1.6 / 2.2))
    assert tuple(engine.f1) == pytest.approx((2 * 1.4 / 3.8, 2 * 1.6 / 4.2))


def test_given_predictions_and_a_class_never_predicted():
    p = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3]])
    a = alp_confusion_matrix(p, [0, 1, 2], y_pred=[1, 1]).counts
    np.testing.assert_allclose(a[:, 1], [0.7, 0.8, 0.5])
    assert a[:, 0].sum() == 0 and a[:, 2].sum() == 0
    assert closed_forms(p, 3)[1][2] == 0.0
    assert multiclass_metrics(alp_confusion_matrix(p, [0, 1, 2])).precision[2] == 0.0
    assert list(predicted_labels(p, [0, 1, 2])) == [0, 1]


def test_bad_probabilities_are_refused_with_a_reason():
    with pytest.raises(AnalysisError, match="do not sum to 1"):
        alp_confusion_matrix(np.array([[0.5, 0.6]]), [0, 1])
    with pytest.raises(AnalysisError, match="one column per class"):
        alp_confusion_matrix(np.array([[0.5, 0.5]]), [0, 1, 2])
    with pytest.raises(AnalysisError, match="not one of the classes"):
        alp_confusion_matrix(np.array([[0.5, 0.5]]), [0, 1], y_pred=[7])


def test_gap_against_labels_by_hand():
    p = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]])
    g = alp_gap([0, 1, 1], p, [0, 1])
    assert g.accuracy_cm == pytest.approx(2 / 3)
    assert g.accuracy_alp == pytest.approx((0.9 + 0.6 + 0.8) / 3)
    # estimated shares (1.7, 1.3)/3 vs actual (1, 2)/3 -> TV = 0.7/3
    assert g.share_gap == pytest.approx(0.7 / 3)
    assert g.score == pytest.approx(max(abs(g.accuracy_gap), g.share_gap) / LARGE_GAP)


def _generative(n, seed):
    """Three classes from a known multinomial logit in two latent drivers; each driver is
    observed five times with small noise, so naive Bayes counts the same evidence five times."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    w = np.array([[0.0, 0.0], [1.5, 0.5], [0.2, 1.6]])
    logits = z @ w.T + np.array([0.0, -0.2, 0.1])
    prob = np.exp(logits)
    prob /= prob.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > prob.cumsum(axis=1)).sum(axis=1)
    x = np.repeat(z, 5, axis=1) + 0.05 * rng.normal(size=(n, 10))
    return x, y


def test_theorem_1_calibrated_lr_close_naive_bayes_far_until_calibrated():
    x, y = _generative(20000, 0)
    tr, te = slice(0, 14000), slice(14000, None)
    classes = [0, 1, 2]

    def heldout_gap(est):
        est.fit(x[tr], y[tr])
        return alp_gap(y[te], est.predict_proba(x[te]), classes)

    lr = heldout_gap(LogisticRegression(max_iter=500))
    nb = heldout_gap(GaussianNB())
    nb_cal = heldout_gap(CalibratedClassifierCV(GaussianNB(), method="isotonic", cv=5))
    assert abs(lr.accuracy_gap) < 0.01
    assert nb.accuracy_gap > 0.05  # over-confident, as the paper found for NB
    assert abs(nb_cal.accuracy_gap) < 0.015


def test_compare_regular_and_alp_on_labelled_rows():
    x, y = _generative(3000, 1)
    model = LogisticRegression(max_iter=500).fit(x[:2000], y[:2000])
    p = model.predict_proba(x[2000:])
    comp = compare_alp_cm(y[2000:], p, [0, 1, 2])
    acc = comp["original"]["accuracy"]
    assert acc["cm"] == pytest.approx(np.mean(p.argmax(axis=1) == y[2000:]))
    assert acc["alp"] == pytest.approx(p.max(axis=1).mean())
    assert acc["gap"] == pytest.approx(acc["alp"] - acc["cm"])
    assert set(comp) == {"original"}
    assert set(comp["original"]) == {"accuracy", "precision_macro", "recall_macro", "f1_macro"}


def test_learning_curve_shape_and_convergence():
    x, y = _generative(4000, 2)
    curve = alp_learning_curve(x, y, [0, 1, 2], LogisticRegression(max_iter=300),
                               train_shares=(0.03, 0.78), seed=0)
    assert list(curve.train_share) == [0.03, 0.78]
    assert list(curve.n_train) == [120, 3120] and set(curve.n_test) == {800}
    big = curve.iloc[-1]
    # with 78 % of the data LR neither over-fits nor mis-estimates: all four agree closely
    assert abs(big.cm_train - big.cm_test) < 0.04
    assert abs(big.alp_test - big.cm_test) < 0.04
    small = curve.iloc[0]
    assert small.cm_train >= small.alp_train - 0.05  # over-fit small sample: CM ≥ ALP on train


def test_full_training_check_reports_both_routes():
    x, y = _generative(3000, 3)
    from sklearn.model_selection import cross_val_predict

    est = LogisticRegression(max_iter=300)
    held = cross_val_predict(est, x, y, cv=5, method="predict_proba")
    full = LogisticRegression(max_iter=300).fit(x, y)
    check = full_training_alp_check(x, y, [0, 1, 2], full, heldout_y_true=y, heldout_proba=held)
    assert check.heldout_cm == pytest.approx(np.mean(held.argmax(axis=1) == y))
    assert check.full_train_alp == pytest.approx(full.predict_proba(x).max(axis=1).mean())
    assert check.notes == []


def test_net_score_error_catches_errors_that_cancel_in_the_pooled_nps():
    """Two bins of ten: estimates −0.5 and +0.5 (net score p2 − p0); actual means −0.3 and
    +0.3. The pooled NPS is right (0 = 0), each bin is off by 0.2."""
    from cx_app.estimate.alp import net_score_calibration_error
    from cx_app.survey.nps import NetScoreGroups

    groups = NetScoreGroups((0, 1, 2), frozenset({2}), frozenset({0}))
    p = np.array([[0.5, 0.5, 0.0]] * 10 + [[0.0, 0.5, 0.5]] * 10)
    y = [0] * 3 + [1] * 7 + [2] * 3 + [1] * 7
    gap = alp_gap(y, p, [0, 1, 2], groups=groups)
    assert gap.net_gap == pytest.approx(0.0, abs=1e-12)
    # per bin: d² = 0.04; sample variance of s = (3·0.7² + 7·0.3²)/9 = 2.1/9, over n_b = 10
    expected = 100 * math.sqrt(0.04 - 2.1 / 9 / 10)
    err = net_score_calibration_error(np.array(y), p, [0, 1, 2], groups, n_bins=2)
    assert err == pytest.approx(expected)
    # alp_gap uses the default ten bins
    assert gap.net_calibration_error == pytest.approx(
        net_score_calibration_error(np.array(y), p, [0, 1, 2], groups))
    assert gap.score == pytest.approx(max(abs(gap.accuracy_gap) / LARGE_GAP,
                                          gap.share_gap / LARGE_GAP,
                                          gap.net_calibration_error / LARGE_NET_ERROR))
    # the pooled net gap, estimated − actual NPS in points: estimated 0 against all
    # passives (0) and against all promoters (+100)
    assert alp_gap([1] * 20, p, [0, 1, 2], groups=groups).net_gap == pytest.approx(0.0, abs=1e-12)
    assert alp_gap([2] * 20, p, [0, 1, 2], groups=groups).net_gap == pytest.approx(-100.0)
    assert alp_gap(y, p, [0, 1, 2]).net_gap is None  # no groups: no NPS term


def test_net_score_error_is_small_for_calibrated_probabilities():
    from cx_app.estimate.alp import net_score_calibration_error
    from cx_app.survey.nps import NetScoreGroups

    rng = np.random.default_rng(7)
    raw = rng.gamma(1.0, size=(20000, 3))
    p = raw / raw.sum(axis=1, keepdims=True)
    y = (rng.random(20000)[:, None] > p.cumsum(axis=1)).sum(axis=1)  # drawn from p itself
    groups = NetScoreGroups((0, 1, 2), frozenset({2}), frozenset({0}))
    assert net_score_calibration_error(y, p, [0, 1, 2], groups) < 1.5
    # over-confident in the net score: the same outcomes, estimates pushed to the extremes
    sharp = p ** 3 / (p ** 3).sum(axis=1, keepdims=True)
    assert net_score_calibration_error(y, sharp, [0, 1, 2], groups) > 5
