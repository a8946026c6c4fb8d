"""Comparing algorithms on the same folds (MATH.md §10; evaluation notes, "Model comparison").

For two models scored on the same k folds, d_i = score_A,i − score_B,i:

- **10-fold CV paired t-test** (the notes, with √k in place of their misprinted 1/√k):
  t = mean(d) / (sd(d)/√k), df = k − 1, two-sided p. Identical to ``scipy.stats.ttest_rel``.
- **Nadeau–Bengio corrected resampled t-test** (Nadeau & Bengio 2003): the training sets of
  k-fold CV overlap, so the plain test is too liberal; the variance is inflated to
  (1/k + n_test/n_train)·s², with n_test/n_train = 1/(k − 1) for k-fold.
- **Holm** over all pairs of one (level, metric) comparison, applied to the *Nadeau–Bengio*
  p-values: ``p_holm`` is what the verdict uses.
- **5×2cv** (:func:`five_by_two_cv`, its own 5×2 fits): Dietterich's (1998) t with 5 df and
  Alpaydin's (1999) combined F with (10, 5) df.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
from scipy import stats

from cx_app.engine.catalogue import lower_is_better, short_name
from cx_app.errors import AnalysisError
from cx_app.models.crossval import assign_folds, class_positions, cross_validate_model
from cx_app.models.results import ComparisonDocument, FiveByTwo, finite
from cx_app.multiple_testing import holm


def paired_t_test(scores_a: Sequence[float], scores_b: Sequence[float]) -> tuple[float, int, float]:
    """The k-fold CV paired t-test: (t, df, two-sided p); equals ``scipy.stats.ttest_rel``."""
    d = _differences(scores_a, scores_b)
    k = len(d)
    sd = d.std(ddof=1)
    t = _ratio(d.mean(), sd / math.sqrt(k))
    return t, k - 1, _two_sided_p(t, k - 1)


def nadeau_bengio_t_test(
    scores_a: Sequence[float], scores_b: Sequence[float], test_train_ratio: float | None = None
) -> tuple[float, int, float]:
    """Corrected resampled t-test: t = mean(d) / √((1/k + n_test/n_train)·s²), df = k − 1;
    ``test_train_ratio`` defaults to 1/(k − 1), the k-fold value (MATH.md §10)."""
    d = _differences(scores_a, scores_b)
    k = len(d)
    ratio = 1.0 / (k - 1) if test_train_ratio is None else test_train_ratio
    t = _ratio(d.mean(), math.sqrt((1.0 / k + ratio) * d.var(ddof=1)))
    return t, k - 1, _two_sided_p(t, k - 1)


def _differences(scores_a, scores_b) -> np.ndarray:
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or len(a) < 2:
        raise AnalysisError(
            f"paired tests need the same number (≥ 2) of per-fold scores, got {a.shape} and {b.shape}"
        )
    return a - b


def _ratio(num: float, den: float) -> float:
    if den == 0:
        return math.nan if num == 0 else math.copysign(math.inf, num)
    return float(num / den)


def _two_sided_p(t: float, df: int) -> float:
    return math.nan if math.isnan(t) else float(2 * stats.t.sf(abs(t), df))


def format_p(p: float) -> str:
    if math.isnan(p):
        return "p undefined"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _verdict(level, metric, a, b, k, diff, p_holm, alpha, pairs) -> str:
    where = f"{level} {short_name(metric)}"
    if math.isnan(p_holm):
        if diff == 0:
            return f"{a} and {b} score the same on {where} in every one of the {k} folds"
        return f"{a} vs {b} on {where}: the test is undefined (a metric undefined in some fold?)"
    better_a = diff < 0 if lower_is_better(metric) else diff > 0
    correction = f"after Holm correction over {pairs} pairs" if pairs > 1 else "(a single pair)"
    if p_holm < alpha:
        winner, loser = (a, b) if better_a else (b, a)
        signed = diff if winner == a else -diff
        return (
            f"{winner} is better than {loser} on {where}: {signed:+.3f} on average over {k} folds, "
            f"{format_p(p_holm)} {correction} (Nadeau–Bengio corrected t-test)"
        )
    return (
        f"no evidence of a difference between {a} and {b} on {where} ({diff:+.3f} on average "
        f"over {k} folds, {format_p(p_holm)} {correction})"
    )


def compare_scores(
    per_fold: Mapping[str, Sequence[float]],
    *,
    level: str,
    metric: str,
    test_train_ratio: float | None = None,
    alpha: float = 0.05,
) -> list[ComparisonDocument]:
    """Every pair of models (in the given order) from their per-fold scores on the same folds."""
    rows = []
    for a, b in combinations(per_fold, 2):
        sa, sb = np.asarray(per_fold[a], float), np.asarray(per_fold[b], float)
        t, df, p = paired_t_test(sa, sb)
        tc, _, pc = nadeau_bengio_t_test(sa, sb, test_train_ratio)
        rows.append((a, b, sa, sb, t, df, p, tc, pc))
    adjusted = holm([r[8] for r in rows])
    out = []
    for (a, b, sa, sb, t, df, p, tc, pc), ph in zip(rows, adjusted, strict=True):
        diff = float((sa - sb).mean())
        out.append(
            ComparisonDocument(
                level=level, metric=metric, a=a, b=b, folds=len(sa),
                mean_a=float(sa.mean()), mean_b=float(sb.mean()), mean_diff=diff,
                t=t, df=df, p=p, t_corrected=tc, p_corrected=pc, p_holm=float(ph), alpha=alpha,
                verdict=_verdict(level, metric, a, b, len(sa), diff, ph, alpha, len(rows)),
            )
        )  # fmt: skip
    return out


def compare_models(evals: Any, level: str, metric: str, *, alpha: float = 0.05,
                   ) -> list[ComparisonDocument]:
    """Pairwise tests of models cross-validated on the same folds (``{id: ModelEvaluation}``
    or a sequence of them)."""
    if isinstance(evals, Mapping):
        items = list(evals.items())
    else:
        items = [(e.algorithm_id, e) for e in evals]
    if len(items) < 2:
        return []
    first = items[0][1]
    for name, ev in items[1:]:
        if not np.array_equal(ev.fold, first.fold):
            raise AnalysisError(
                f"{name} and {items[0][0]} were cross-validated on different folds: paired tests "
                "need the same folds (same data, number of folds and seed)"
            )
    per_fold = {name: ev.per_fold_values(level, metric) for name, ev in items}
    return compare_scores(per_fold, level=level, metric=metric, alpha=alpha)


def five_by_two_statistics(differences: np.ndarray) -> tuple[float, float, float, float]:
    """(t, p_t, F, p_F) from a 5×2 array of score differences (Dietterich 1998; Alpaydin 1999)."""
    d = np.asarray(differences, dtype=float)
    if d.shape != (5, 2):
        raise AnalysisError(f"5×2cv needs a 5×2 array of differences, got {d.shape}")
    s2 = ((d - d.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    t = _ratio(d[0, 0], math.sqrt(s2.mean()))
    f = _ratio((d**2).sum(), 2 * s2.sum())
    f_p = math.nan if math.isnan(f) else float(stats.f.sf(f, 10, 5))
    return t, _two_sided_p(t, 5), f, f_p


def five_by_two_cv(
    X: Any,
    y: Sequence | np.ndarray,
    classes: Sequence,
    a: str,
    b: str,
    seed: int = 0,
    *,
    n_jobs: int = 1,
    missing_policy: str = "impute_indicator",
    sample_weight: np.ndarray | None = None,
    preset: str | None = None,
) -> FiveByTwo:
    """Five replications of stratified 2-fold CV (seeds ``seed``..``seed+4``), both algorithms on
    the same halves, compared on accuracy at the original level. Fits 20 models."""
    y = np.asarray(y)
    codes = class_positions(y, tuple(classes))
    diffs = np.empty((5, 2))
    for i in range(5):
        fold = assign_folds(codes, 2, seed + i).fold
        results = [
            cross_validate_model(
                X, y, classes, alg, fold=fold, seed=seed, n_jobs=n_jobs,
                missing_policy=missing_policy, sample_weight=sample_weight, preset=preset,
            )
            for alg in (a, b)
        ]
        for j in range(2):
            test = fold == j
            ra, rb = (float(np.mean(y[test] == r.y_pred[test])) for r in results)
            diffs[i, j] = ra - rb
    t, t_p, f, f_p = map(finite, five_by_two_statistics(diffs))
    return FiveByTwo(level="original", metric="accuracy", a=a, b=b, differences=diffs.tolist(),
                     t=t, t_p=t_p, f=f, f_p=f_p, t_df=5, f_df=[10, 5])
