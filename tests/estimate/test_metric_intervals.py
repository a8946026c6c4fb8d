"""Intervals of the estimated (ALP) metrics: the stacked metrics against the engine, the draws
against the ALP matrix and the closed-form accuracy variance, the model-error formulas by hand,
and coverage of realized metrics on simulated waves with known P(y|x)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cx_app.engine.confusion import ConfusionMatrix
from cx_app.engine.grouping import ResolvedPlan, resolve_plan
from cx_app.engine.levels import reduce_confusion
from cx_app.engine.plan import NPS_PLAN
from cx_app.estimate.alp import alp_confusion_matrix
from cx_app.estimate.metric_intervals import (
    draw_realized_matrices,
    errors_from_pooled_gaps,
    heldout_metric_errors,
    level_values,
    metric_intervals,
    stacked_level_metrics,
)

NPS = tuple(range(11))
PLAN = resolve_plan(NPS_PLAN)


def _proba(rng, n, k=11, sharp=1.0):
    z = rng.normal(size=(n, k)) * sharp
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("real_valued", [False, True])
def test_stacked_metrics_equal_the_engine_matrix_by_matrix(real_valued):
    rng = np.random.default_rng(1)
    stack = rng.integers(0, 9, size=(6, 11, 11)).astype(float)
    stack[0, 3, :] = 0  # a class never actual
    stack[1, :, 5] = 0  # a class never predicted
    if real_valued:
        stack = stack * rng.random(stack.shape)
    got = stacked_level_metrics(stack, PLAN)
    for b in range(len(stack)):
        levels = reduce_confusion(ConfusionMatrix(NPS, stack[b]), PLAN)
        assert set(got) == {lv.name for lv in levels}
        for lv in levels:
            for metric, values in got[lv.name].items():
                assert values[b] == pytest.approx(lv.metrics[metric], abs=1e-12), (lv.name, metric)
    # the 2x2+IM level carries the binary wave metrics, the others the macro ones
    assert set(got["2x2+IM"]) == {"accuracy", "precision_macro", "recall_macro", "f1_macro",
                                  "tpr", "tnr", "ppv", "f1"}
    assert set(got["original"]) == {"accuracy", "precision_macro", "recall_macro", "f1_macro"}


def test_draws_average_to_the_alp_matrix_and_keep_the_predicted_counts():
    rng = np.random.default_rng(2)
    p = _proba(rng, 150, k=4)
    pred = p.argmax(axis=1)
    draws = draw_realized_matrices(p, pred, n_draws=3000, seed=5)
    np.testing.assert_array_equal(draws.sum(axis=1), np.tile(np.bincount(pred, minlength=4),
                                                             (3000, 1)))
    alp = np.asarray(alp_confusion_matrix(p, [0, 1, 2, 3]).counts)
    # each cell is a Poisson-binomial count: mean = the ALP cell, SE of the mean ≤ √(n/4/B)
    np.testing.assert_allclose(draws.mean(axis=0), alp, atol=5 * math.sqrt(150 / 4 / 3000))
    again = draw_realized_matrices(p, pred, n_draws=3000, seed=5)
    np.testing.assert_array_equal(draws, again)  # fixed seed: the same draws


def test_accuracy_outcome_se_is_the_poisson_binomial_one():
    rng = np.random.default_rng(3)
    p = _proba(rng, 400, k=5, sharp=1.5)
    pmax = p.max(axis=1)
    closed = math.sqrt(float(np.sum(pmax * (1 - pmax)))) / len(p)
    iv = metric_intervals(p, {"original": {"accuracy": float(pmax.mean())}})
    a = iv.levels["original"]["accuracy"]
    # 400 draws: the SD is within ±7 % (95 %) of the true SD; 12 % is > 3 of its SEs
    assert a.se_outcome == pytest.approx(closed, rel=0.12)
    assert a.se_model == 0.0 and a.se == a.se_outcome
    # centred on the draws' mean realized accuracy, whose expectation is the ALP accuracy
    assert a.centre == pytest.approx(pmax.mean(), abs=4 * closed / math.sqrt(400))
    assert a.ci95 == pytest.approx((a.centre - 1.959964 * a.se, a.centre + 1.959964 * a.se))


def test_model_error_adds_in_quadrature_and_the_interval_is_clipped():
    p = np.array([[0.99, 0.01]] * 30)
    iv = metric_intervals(p, {"original": {"accuracy": 0.99}},
                          model_error={"original": {"accuracy": 0.03}})
    a = iv.levels["original"]["accuracy"]
    assert a.se == pytest.approx(math.hypot(a.se_outcome, 0.03))
    assert a.ci95[1] == 1.0 and a.ci95[0] == pytest.approx(a.centre - 1.959964 * a.se)
    assert iv.ci95() == {"accuracy": [a.ci95[0], a.ci95[1]]}


def test_pooled_gap_error_by_hand():
    out = errors_from_pooled_gaps({"original": {"accuracy": 0.05, "f1_macro": 0.001}},
                                  {"original": {"accuracy": 0.02, "f1_macro": 0.02},
                                   "2x2+IM": {"tpr": 0.04}},
                                  n_wave=100, n_heldout=400)
    assert out["original"]["accuracy"] == pytest.approx(0.05)  # the gap itself
    # a gap within its own noise: the noise of the check, 0.02·√(100/400), stays
    assert out["original"]["f1_macro"] == pytest.approx(0.01)
    assert out["2x2+IM"]["tpr"] == pytest.approx(0.02)  # no gap kept: the check's noise alone


def test_heldout_error_is_small_for_calibrated_and_the_bias_for_overconfident_probabilities():
    rng = np.random.default_rng(4)
    n = 3000
    z = rng.normal(size=(n, 5)) * 1.2
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > p.cumsum(axis=1)).sum(axis=1)  # drawn from p: calibrated
    fold = np.arange(n) % 5
    calibrated = heldout_metric_errors(y, p, fold)["original"]
    sharp = np.exp(3 * z) / np.exp(3 * z).sum(axis=1, keepdims=True)  # over-confident
    over = heldout_metric_errors(y, sharp, fold)["original"]
    bias = sharp.max(axis=1).mean() - np.mean(sharp.argmax(axis=1) == y)
    assert bias > 0.15
    # calibrated: only the check's own noise, √(Σ p(1−p))/n for the pooled accuracy
    pmax = p.max(axis=1)
    noise = math.sqrt(float(np.sum(pmax * (1 - pmax)))) / n
    assert calibrated["accuracy"] < 2.5 * noise
    assert over["accuracy"] == pytest.approx(bias, rel=0.1)


def _wave(rng, n, shift):
    """A generator with known P(y|x): x ~ N(shift, 1) in 2-D, P(y|x) a fixed softmax of
    linear scores over 5 classes; the model's probabilities are the true ones."""
    x = rng.normal(loc=shift, size=(n, 2))
    z = x @ np.array([[-2.0, -1.0, 0.0, 1.0, 2.0], [1.0, -0.5, 0.0, -0.5, 1.0]])
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > p.cumsum(axis=1)).sum(axis=1).clip(max=4)
    return p, y


def test_intervals_cover_realized_metrics_on_simulated_waves():
    """100 waves of 300 with a covariate drift, calibrated probabilities: the 95 % intervals
    of accuracy and macro F1 cover the realized values in ≥ 88 % of waves (nominal 95 %; a
    binomial SD of 2.2 points at 100 waves)."""
    rng = np.random.default_rng(7)
    classes = tuple(range(5))
    covered = {"accuracy": 0, "f1_macro": 0, "recall_macro": 0}
    waves = 100
    for w in range(waves):
        p, y = _wave(rng, 300, shift=(w % 5) * 0.2)
        pred = p.argmax(axis=1)
        estimates = level_values(reduce_confusion(alp_confusion_matrix(p, classes),
                                                  ResolvedPlan(classes, ())))
        iv = metric_intervals(p, estimates, n_draws=200, seed=w).levels["original"]
        real = stacked_level_metrics(np.bincount(y * 5 + pred, minlength=25).reshape(1, 5, 5))
        for m in covered:
            lo, hi = iv[m].ci95
            covered[m] += lo <= real["original"][m][0] <= hi
    assert min(covered.values()) >= 0.88 * waves, covered
