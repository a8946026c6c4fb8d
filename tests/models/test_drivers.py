"""Driver importance: relative weights identities, recovery of the sample's true weights, δ/φ."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from cx_app.engine.grouping import resolve_plan
from cx_app.engine.plan import NPS_CLASSES, NPS_PLAN
from cx_app.errors import AnalysisError
from cx_app.models.crossval import cross_validate_model
from cx_app.models.drivers import (
    IMPORTANCE_COLUMNS,
    CoefficientTable,
    DriverAnalysis,
    PermutationImportance,
    RelativeWeights,
    driver_importance,
    importance_frame,
    importance_performance,
    ordinal_coefficients,
    permutation_importance_cv,
    relative_weights,
    target_groups,
    top_box_capability,
)
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import TELECOM_TRUTH, sample_path


@pytest.fixture(scope="module")
def telecom():
    return load_survey(sample_path("telecom_nps"))


def test_relative_weights_sum_to_r2_and_reduce_to_r_squared_when_orthogonal():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    X[:, 1] += 0.7 * X[:, 0]
    y = X @ [1.0, 0.5, 0.2, 0.0] + rng.normal(size=500)
    rw = relative_weights(X, y)
    design = np.column_stack([np.ones(500), X])
    resid = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    r2 = 1 - resid.var() / y.var()
    assert rw.raw.sum() == pytest.approx(r2, rel=1e-9)
    assert rw.percent.sum() == pytest.approx(100)
    # Uncorrelated predictors: each weight is the squared correlation with the score.
    Z = rng.normal(size=(500, 3))
    Q = np.linalg.qr(Z - Z.mean(axis=0))[0]  # centred, orthonormal columns
    yq = Q @ [3.0, 1.0, 0.5] + 0.1 * rng.normal(size=500)
    expected = [np.corrcoef(Q[:, j], yq)[0, 1] ** 2 for j in range(3)]
    np.testing.assert_allclose(relative_weights(Q, yq).raw, expected, atol=1e-3)


def test_drivers_recover_the_sample_surveys_true_weights(telecom):
    truth = TELECOM_TRUTH.weights
    names = list(telecom.X.columns)
    true = [truth[n] for n in names]
    rw = relative_weights(telecom.X, telecom.y)
    assert spearmanr(rw.raw, true).statistic >= 0.8
    coef = ordinal_coefficients(telecom.X, telecom.y)
    assert spearmanr(coef.coef, true).statistic >= 0.8
    assert (coef.ci_low < coef.coef).all() and (coef.coef < coef.ci_high).all()
    cv = cross_validate_model(
        telecom.X, telecom.y, telecom.classes, "lr", folds=3, keep_models=True
    )
    perm = permutation_importance_cv(cv, telecom.X, n_repeats=3)
    assert perm.per_fold.shape == (3, len(names))
    assert spearmanr(perm.mean, true).statistic >= 0.8
    low, high = perm.interval()
    assert (low <= perm.mean).all() and (perm.mean <= high).all()


def test_permutation_importance_needs_kept_models():
    X = np.random.default_rng(0).normal(size=(40, 2))
    cv = cross_validate_model(X, (X[:, 0] > 0).astype(int), (0, 1), "nb", folds=2)
    with pytest.raises(AnalysisError, match="keep_models=True"):
        permutation_importance_cv(cv, X)


def test_top_box_capability_by_hand():
    X = pd.DataFrame({"a": [10, 9, 8, 3, 10, 2], "b": [1, 1, 1, 1, 9, 10]})
    y = np.array([10, 9, 7, 2, 6, 9])
    plan = resolve_plan(NPS_PLAN, NPS_CLASSES)
    targets = target_groups(plan)
    assert targets == {"promoters": (9, 10), "passives_promoters": (7, 8, 9, 10)}
    out = top_box_capability(X, y, targets, attribute_max=10).set_index(["attribute", "target"])
    # a top-2-box = [T, T, F, F, T, F]; promoters = [T, T, F, F, F, T]: tpr 2/3, fpr 1/3.
    row = out.loc[("a", "promoters")]
    assert (row.tpr, row.fpr) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert (row.delta, row.phi) == (pytest.approx(1 / 3), pytest.approx(0.0))
    # not a detractor = [T, T, T, F, F, T]: tpr 2/4, fpr 1/2.
    row = out.loc[("a", "passives_promoters")]
    assert (row.delta, row.phi) == (pytest.approx(0.0), pytest.approx(0.0))
    assert out.loc[("b", "promoters"), "top_box_share"] == pytest.approx(2 / 6)


def test_importance_performance_quadrants():
    """Without sampling noise (constant ratings, fixed importances) every bootstrap interval is
    a point, so each attribute stands apart from the mean of the others on both axes: a vs
    (0.3 + 0.1 + 0.05)/3 = 0.15 and 9 vs (5 + 8 + 4)/3, b 0.3 vs 0.183 and 5 vs 7, ..."""
    X = pd.DataFrame({"a": [9, 9], "b": [5, 5], "c": [8, 8], "d": [4, 4]})
    importance = {"a": 0.4, "b": 0.3, "c": 0.1, "d": 0.05}
    unknown = importance_performance(X, importance)  # no bootstrap: nothing is claimed
    assert set(unknown["quadrant"]) == {"does not stand out"}
    out = importance_performance(X, importance,
                                 importance_on=lambda rows: np.array(list(importance.values())))
    assert out.set_index("attribute")["quadrant"].to_dict() == {
        "a": "keep up the good work",
        "b": "concentrate here",
        "c": "possible overkill",
        "d": "low priority",
    }


def test_driver_importance_bundle(telecom):
    X, y = telecom.X.iloc[:1500], telecom.y[:1500]
    plan = resolve_plan(telecom.schema.plan_spec, telecom.classes)
    result = driver_importance(X, y, telecom.classes, resolved_plan=plan, attribute_max=10)
    d = result.to_dict()
    assert d["ranking"][0] in {"network_data", "tariff_plan"}
    assert set(d) >= {
        "relative_weights",
        "ordinal",
        "permutation",
        "importance_performance",
        "top_box",
    }
    assert len(d["top_box"]) == 2 * X.shape[1]


def test_importance_frame_per_measure_by_hand():
    rw = RelativeWeights(attributes=("a", "b"), raw=np.array([0.3, 0.1]), r_squared=0.4,
                         correlation=np.array([0.5, -0.2]))
    ordinal = CoefficientTable(attributes=("a", "b"), coef=np.array([0.8, -0.4]),
                               se=np.array([0.1, 0.1]), ci_low=np.array([0.6, -0.6]),
                               ci_high=np.array([1.0, -0.2]), p=np.array([0.01, 0.2]),
                               model="ordinal logit")
    drivers = DriverAnalysis(relative_weights=rw, ordinal=ordinal, permutation=(),
                             importance_performance=pd.DataFrame(), capability=None)
    frame, unit = importance_frame(drivers, "relative_weights")
    assert unit == "% of R²" and tuple(frame.columns) == IMPORTANCE_COLUMNS
    assert frame["importance"].tolist() == pytest.approx([75.0, 25.0])  # 0.3/0.4, 0.1/0.4
    assert frame["ci_low"].tolist() == frame["ci_high"].tolist() == frame["importance"].tolist()
    assert frame["direction"].tolist() == [1.0, -1.0]
    frame, unit = importance_frame(drivers, "ordinal")
    assert unit == "coefficient (95% interval)"
    assert frame[["importance", "ci_low", "ci_high", "direction"]].to_numpy().tolist() == [
        [0.8, 0.6, 1.0, 1.0], [-0.4, -0.6, -0.2, -1.0]]
    # two folds: mean (0.1+0.3)/2 = 0.2 and (0.0−0.2)/2 = −0.1; direction from the weights' sign
    perm = PermutationImportance(algorithm_id="lr", attributes=("a", "b"),
                                 per_fold=np.array([[0.1, 0.0], [0.3, -0.2]]), scoring="accuracy",
                                 n_repeats=5)
    frame, unit = importance_frame(drivers, "permutation", perm)
    assert unit == "accuracy drop (95% interval over folds)"
    assert frame["importance"].tolist() == pytest.approx([0.2, -0.1])
    assert frame["direction"].tolist() == [1.0, -1.0]
    with pytest.raises(AnalysisError, match="train it again"):
        importance_frame(drivers, "permutation", None)
    no_ordinal = DriverAnalysis(relative_weights=rw, ordinal=None, permutation=(),
                                importance_performance=pd.DataFrame(), capability=None)
    with pytest.raises(AnalysisError, match="not available"):
        importance_frame(no_ordinal, "ordinal")


def test_drivers_with_gaps_use_answered_scores_only():
    """n/a is not a score: performance is the answered-only mean placed on each attribute's
    own scale, correlations are pairwise-complete, direction is the sign of the link."""
    from cx_app.models.drivers import importance_performance, relative_weights

    rng = np.random.default_rng(3)
    n = 400
    a = rng.integers(1, 11, n).astype(float)          # 1–10, drives the score up
    b = rng.integers(1, 6, n).astype(float)           # 1–5, drives it down
    y = np.clip(np.rint(0.6 * a - 0.8 * b + rng.normal(0, 1, n) + 3), 0, 10).astype(int)
    gaps = rng.random(n) < 0.55                        # 55% "not applicable" on a
    X = pd.DataFrame({"a": np.where(gaps, np.nan, a), "b": b})
    rw = relative_weights(X, y)
    answered = ~gaps
    r_a = np.corrcoef(a[answered], y[answered])[0, 1]  # by hand, over the pairs answered
    assert rw.correlation[0] == pytest.approx(r_a, rel=1e-12)
    assert rw.correlation[1] == pytest.approx(np.corrcoef(b, y)[0, 1], rel=1e-12)
    assert list(rw.direction) == [1.0, -1.0]
    table = importance_performance(X, {"a": 1.0, "b": 2.0}, scales={"a": (1, 10), "b": (1, 5)})
    row = table.set_index("attribute")
    assert row.loc["a", "performance"] == pytest.approx(a[answered].mean(), rel=1e-12)
    assert row.loc["a", "base"] == answered.sum()
    assert row.loc["a", "na_share"] == pytest.approx(gaps.mean())
    assert row.loc["a", "performance_pct"] == pytest.approx(
        100 * (a[answered].mean() - 1) / 9, rel=1e-12)
    assert row.loc["b", "performance_pct"] == pytest.approx(100 * (b.mean() - 1) / 4, rel=1e-12)
