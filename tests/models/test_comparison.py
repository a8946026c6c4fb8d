"""Model comparison: paired t (= scipy), Nadeau–Bengio and Holm by hand, 5×2cv, verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cx_app.errors import AnalysisError
from cx_app.models.comparison import (
    compare_scores,
    five_by_two_cv,
    five_by_two_statistics,
    holm,
    nadeau_bengio_t_test,
    paired_t_test,
)

A = [0.61, 0.64, 0.60, 0.66, 0.63, 0.62, 0.65, 0.61, 0.64, 0.63]
B = [0.58, 0.60, 0.59, 0.61, 0.60, 0.57, 0.62, 0.60, 0.58, 0.61]
C = [0.60, 0.63, 0.61, 0.64, 0.62, 0.60, 0.63, 0.62, 0.63, 0.62]


def test_paired_t_equals_scipy_ttest_rel():
    t, df, p = paired_t_test(A, B)
    ref = stats.ttest_rel(A, B)
    assert df == 9
    assert t == pytest.approx(ref.statistic, rel=1e-12)
    assert p == pytest.approx(ref.pvalue, rel=1e-10)


def test_nadeau_bengio_by_hand():
    d = np.array(A) - np.array(B)
    k = 10
    mean = d.sum() / k
    s2 = ((d - mean) ** 2).sum() / (k - 1)
    t_hand = mean / math.sqrt((1 / k + 1 / (k - 1)) * s2)
    t, df, p = nadeau_bengio_t_test(A, B)
    assert t == pytest.approx(t_hand, rel=1e-12)
    assert p == pytest.approx(2 * stats.t.sf(abs(t_hand), 9), rel=1e-10)
    # The correction only shrinks t: √(1/k) / √(1/k + 1/(k−1)) = √((k−1)/(2k−1)).
    assert t / paired_t_test(A, B)[0] == pytest.approx(math.sqrt(9 / 19))


def test_holm_by_hand():
    p = [0.01, 0.04, 0.03, 0.20]
    # Sorted: 0.01·4 = 0.04, 0.03·3 = 0.09, 0.04·2 = 0.08 → max so far 0.09, 0.20·1 → 0.20.
    np.testing.assert_allclose(holm(p), [0.04, 0.09, 0.09, 0.20])
    out = holm([0.01, math.nan, 0.02])
    assert math.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2]], [0.02, 0.02])


def test_compare_scores_all_pairs_holm_on_corrected_p_and_verdicts():
    rows = compare_scores({"lr": A, "knn": B, "dt": C}, level="2x2+IM", metric="accuracy")
    assert [(r.a, r.b) for r in rows] == [("lr", "knn"), ("lr", "dt"), ("knn", "dt")]
    np.testing.assert_allclose([r.p_holm for r in rows], holm([r.p_corrected for r in rows]))
    for r in rows:
        assert r.p == pytest.approx(stats.ttest_rel(r_scores(r.a), r_scores(r.b)).pvalue)
        assert r.mean_diff == pytest.approx(np.mean(r_scores(r.a)) - np.mean(r_scores(r.b)))
    first = rows[0]
    assert first.significant
    assert first.verdict.startswith("lr is better than knn on 2x2+IM accuracy: +0.033 on average")
    assert "after Holm correction over 3 pairs" in first.verdict
    flipped = compare_scores({"knn": B, "lr": A}, level="original", metric="accuracy")[0]
    assert flipped.verdict.startswith("lr is better than knn on original accuracy: +0.033")
    # An error rate: lower is better.
    fpr = compare_scores({"lr": A, "knn": B}, level="2x2+IM", metric="fpr")[0]
    assert fpr.verdict.startswith("knn is better than lr")
    noise = compare_scores({"a": [0.5, 0.6, 0.55], "b": [0.6, 0.5, 0.56]}, level="o", metric="f1")
    assert noise[0].verdict.startswith("no evidence of a difference between a and b")


def r_scores(name):
    return {"lr": A, "knn": B, "dt": C}[name]


def test_identical_scores_and_bad_input():
    same = compare_scores({"a": A, "b": A}, level="o", metric="accuracy")[0]
    assert math.isnan(same.t) and math.isnan(same.p_holm)
    assert "score the same" in same.verdict
    assert same.to_dict()["t"] is None
    with pytest.raises(AnalysisError, match="same number"):
        paired_t_test([0.1, 0.2], [0.1, 0.2, 0.3])


def test_five_by_two_statistics_by_hand():
    d = np.array([[0.02, 0.01], [0.03, -0.01], [0.00, 0.02], [0.01, 0.01], [0.04, 0.00]])
    s2 = [(0.02 - 0.015) ** 2 + (0.01 - 0.015) ** 2, 2 * 0.02**2, 2 * 0.01**2, 0.0, 2 * 0.02**2]
    t, t_p, f, f_p = five_by_two_statistics(d)
    assert t == pytest.approx(0.02 / math.sqrt(sum(s2) / 5))
    assert t_p == pytest.approx(2 * stats.t.sf(abs(t), 5))
    assert f == pytest.approx((d**2).sum() / (2 * sum(s2)))
    assert f_p == pytest.approx(stats.f.sf(f, 10, 5))


def test_five_by_two_cv_runs_both_models_on_the_same_halves():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)
    res = five_by_two_cv(X, y, (0, 1), "lr", "nb", seed=0)
    assert len(res.differences) == 5 and all(len(r) == 2 for r in res.differences)
    t, t_p, f, f_p = five_by_two_statistics(np.array(res.differences))
    assert (res.t, res.f) == (pytest.approx(t), pytest.approx(f))
    same = five_by_two_cv(X, y, (0, 1), "lr", "lr", seed=0)
    assert all(v == 0 for row in same.differences for v in row)
