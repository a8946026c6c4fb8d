"""Evaluation from cached predictions: pooled and per-fold levels, strict step, ROC, δ/φ."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

from cx_app.engine.grouping import resolve_plan
from cx_app.engine.plan import NPS_CLASSES, NPS_PLAN
from cx_app.engine.roc import reduced_roc, thin_curve
from cx_app.models.crossval import cross_validate_model
from cx_app.models.evaluation import MAX_STORED_POINTS, RocSummary, evaluate_result


@pytest.fixture(scope="module")
def evaluated():
    rng = np.random.default_rng(11)
    n = 600
    X = rng.integers(1, 11, (n, 4)).astype(float)
    latent = X @ [0.5, 0.3, 0.15, 0.05] + rng.normal(0, 1.3, n)
    y = np.clip(np.round(latent * 1.1 - 1), 0, 10).astype(int)
    cv = cross_validate_model(X, y, NPS_CLASSES, "lr", folds=4, seed=2)
    plan = resolve_plan(NPS_PLAN, NPS_CLASSES)
    return cv, plan, evaluate_result(cv, plan)


def test_level_names_and_pooled_matrix(evaluated):
    cv, _, ev = evaluated
    assert [lvl.name for lvl in ev.levels] == ["original", "3x3+IM", "2x2+IM"]
    original = ev.level("original")
    assert original.matrix.sum() == cv.n
    assert original.metrics["accuracy"] == pytest.approx(accuracy_score(cv.y_true, cv.y_pred))
    # Rows actual, columns predicted.
    assert original.matrix[3, 5] == np.sum((cv.y_true == 3) & (cv.y_pred == 5))


def test_per_fold_metrics_are_each_folds_own(evaluated):
    cv, _, ev = evaluated
    for f in range(cv.folds):
        test = cv.fold == f
        assert ev.per_fold_values("original", "accuracy")[f] == pytest.approx(
            accuracy_score(cv.y_true[test], cv.y_pred[test])
        )
        assert ev.per_fold_values("original", "f1_macro")[f] == pytest.approx(
            f1_score(cv.y_true[test], cv.y_pred[test], labels=list(NPS_CLASSES),
                     average="macro", zero_division=0)
        )  # fmt: skip
        group = lambda v: np.digitize(v, [7, 9])  # noqa: E731
        assert ev.per_fold_values("3x3+IM", "accuracy")[f] == pytest.approx(
            np.mean(group(cv.y_true[test]) == group(cv.y_pred[test]))
        )
    # Fold counts at the 2×2 level add up to the fold sizes.
    counts = sum(ev.per_fold_values("2x2+IM", k) for k in ("tp", "fn", "fp", "tn", "imp", "imn"))
    np.testing.assert_array_equal(counts, ev.fold_sizes)


def test_strict_step_keeps_accuracy_fold_by_fold(evaluated):
    _, _, ev = evaluated
    np.testing.assert_allclose(
        ev.per_fold_values("2x2+IM", "accuracy"), ev.per_fold_values("3x3+IM", "accuracy")
    )
    assert ev.level("2x2+IM").metrics["accuracy"] == pytest.approx(
        ev.level("3x3+IM").metrics["accuracy"]
    )


def test_per_fold_delta_phi_of_the_2x2(evaluated):
    _, _, ev = evaluated
    tpr, fpr = ev.per_fold_values("2x2+IM", "tpr"), ev.per_fold_values("2x2+IM", "fpr")
    np.testing.assert_allclose(ev.per_fold_values("2x2+IM", "delta"), tpr - fpr)
    np.testing.assert_allclose(ev.per_fold_values("2x2+IM", "phi"), tpr + fpr - 1)


def test_roc_original_is_ovr_macro_and_2x2_is_reduced(evaluated):
    cv, _, ev = evaluated
    present = [k for k, c in enumerate(NPS_CLASSES) if 0 < (cv.y_true == c).sum() < cv.n]
    expected = np.mean(
        [roc_auc_score(cv.y_true == NPS_CLASSES[k], cv.proba[:, k]) for k in present]
    )
    assert ev.roc["original"].auc == pytest.approx(expected)
    assert ev.roc["original"].tpr[-1] == pytest.approx(1.0)
    assert set(ev.roc) == {"original", "2x2+IM"}
    red = ev.roc["2x2+IM"]
    assert red.fpr[-1] == pytest.approx(1.0)
    assert 0 < red.random_auc < 0.5 + 1e-12  # the random line ends below (1, 1) when IM > 0


def test_regrouping_needs_no_refit_and_json_shape(evaluated):
    cv, _, ev = evaluated
    relaxed = NPS_PLAN.model_copy(update={"plan": NPS_PLAN.plan[:1]})
    ev2 = evaluate_result(cv, resolve_plan(relaxed, NPS_CLASSES))
    assert [lvl.name for lvl in ev2.levels] == ["original", "3x3+IM"]
    np.testing.assert_array_equal(ev2.level("3x3+IM").matrix, ev.level("3x3+IM").matrix)
    d = json.loads(json.dumps(ev.to_dict()))
    lvl = d["levels"]["2x2+IM"]
    assert {"labels", "matrix", "im", "metrics", "per_fold"} <= set(lvl)
    assert len(lvl["per_fold"]["mcc"]) == 4
    assert {"fpr", "tpr", "auc", "random_auc"} <= set(d["roc"]["2x2+IM"])


def test_thin_curve_keeps_vertices_and_endpoints_by_hand():
    # (0,0) → (.25,.25) → (.5,.5) is one straight run; (.5,.5) repeats; then up, then right.
    fpr = [0.0, 0.25, 0.5, 0.5, 0.5, 0.75, 1.0]
    tpr = [0.0, 0.25, 0.5, 0.5, 0.8, 0.8, 0.8]
    x, y = thin_curve(np.array(fpr), np.array(tpr))
    np.testing.assert_array_equal(x, [0.0, 0.5, 0.5, 1.0])
    np.testing.assert_array_equal(y, [0.0, 0.5, 0.8, 0.8])
    assert np.trapezoid(y, x) == pytest.approx(np.trapezoid(tpr, fpr), abs=1e-15)
    # A curve that turns back is kept as it is.
    x, y = thin_curve(np.array([0.0, 0.5, 0.25]), np.array([0.0, 0.5, 0.25]))
    np.testing.assert_array_equal(x, [0.0, 0.5, 0.25])


def test_stored_reduced_roc_is_thinned_and_keeps_its_area():
    """A 7,500-respondent 2×2+IM ROC (one point per distinct score) stored in ≤ 1,000 points
    whose trapezoidal area is within 1e-3 of the full curve's AUC."""
    rng = np.random.default_rng(5)
    n = 7_500
    y = rng.integers(0, 11, n)
    logits = -0.5 * (np.arange(11)[None, :] - (y[:, None] + rng.normal(0, 2.5, (n, 1)))) ** 2 / 4
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    plan = resolve_plan(NPS_PLAN, NPS_CLASSES)
    curve = reduced_roc(y, proba, plan, classes=NPS_CLASSES)
    assert len(curve.fpr) > 5_000
    full = RocSummary(fpr=curve.fpr, tpr=curve.tpr, auc=curve.auc, random_auc=curve.random_auc,
                      kind="reduced 2x2+IM")
    d = json.loads(json.dumps(full.to_dict()))
    assert 2 <= len(d["fpr"]) == len(d["tpr"]) <= MAX_STORED_POINTS
    assert d["points"] == len(curve.fpr)
    assert (d["fpr"][0], d["tpr"][0]) == (curve.fpr[0], curve.tpr[0])
    assert (d["fpr"][-1], d["tpr"][-1]) == pytest.approx((curve.fpr[-1], curve.tpr[-1]), abs=1e-6)
    assert d["auc"] == curve.auc
    assert np.trapezoid(d["tpr"], d["fpr"]) == pytest.approx(curve.auc, abs=1e-3)
