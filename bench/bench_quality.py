"""Model quality: every algorithm on four surveys with gaps, against a plain-library reference.

The full table behind ``tests/quality/`` (the same surveys, folds and reference, from
``tests/quality/quality_reference.py``): for each algorithm (default preset) and survey, the
out-of-fold accuracy and macro-F1 of our default pipeline (the survey's inferred policy,
``impute_indicator``: each algorithm's own gap handling), the accuracy of our pipeline under
``impute_median`` on the same folds, the reference (the same estimator family written from
scikit-learn / statsmodels / Keras alone, median imputation, the same folds) with its
across-fold standard error, and the majority-class rate. The rules checked in CI:

- default accuracy ≥ ``impute_median`` accuracy − 0.01 and ≥ the majority-class rate;
- default accuracy and macro-F1 ≥ the reference's − max(0.01, 2 × its across-fold SE).

The alternatives behind each algorithm's gap handling (``AlgorithmSpec.gaps``) are measured on
the same folds: our pipeline with the median fill and "was missing" indicators
(``add_indicator=True``) in its ``gaps`` step, and, for the tree models (dt, rf, xgb), with no
filling at all (the libraries' own NaN handling, ``"passthrough"``).

Environment: ``CX_BENCH_QUALITY_ALGORITHMS=nb,lr`` restricts the algorithms,
``CX_BENCH_QUALITY_SURVEYS=sample,bank`` the surveys.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "quality"))

import numpy as np  # noqa: E402
from quality_reference import (  # noqa: E402
    FOLDS,
    HEAVY_ROWS,
    SEED,
    SURVEYS,
    load_quality_survey,
    quality_row,
    reference_tolerance,
)
from sklearn.base import clone  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402

from cx_app.models.algorithms import ALGORITHMS  # noqa: E402
from cx_app.models.crossval import aligned_proba, build_model, make_folds  # noqa: E402
from cx_app.models.weighting import fit_weighted  # noqa: E402

MEDIAN_SLACK = 0.01
NATIVE = ("dt", "rf", "xgb")


def _alternative(algorithm_id: str, survey, gaps) -> float:
    """Out-of-fold accuracy of our default pipeline with its ``gaps`` step replaced, on the
    folds of :func:`quality_row` (same seed, same respondents)."""
    import warnings

    survey = survey.subset(HEAVY_ROWS.get(algorithm_id, len(survey.y)))
    X, y = survey.X.to_numpy(dtype=float), survey.positions()
    fold = make_folds(y, FOLDS, SEED)
    template = build_model(algorithm_id, seed=SEED).set_params(gaps=gaps)
    pred = np.empty_like(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in range(FOLDS):
            train, test = fold != f, fold == f
            weights = None if survey.weights is None else survey.weights[train]
            model, _ = fit_weighted(clone(template), X[train], y[train], weights)
            pred[test] = aligned_proba(model, X[test], range(len(survey.classes))).argmax(1)
    return float(np.mean(pred == y))


def _log(message: str) -> None:
    print(f"[bench_quality] {message}", flush=True)


def measure() -> list:
    """One (:class:`QualityRow`, accuracy of the alternatives) per (survey, algorithm)."""
    algorithms = os.environ.get("CX_BENCH_QUALITY_ALGORITHMS", ",".join(ALGORITHMS)).split(",")
    surveys = os.environ.get("CX_BENCH_QUALITY_SURVEYS", ",".join(SURVEYS)).split(",")
    rows = []
    for name in surveys:
        survey = load_quality_survey(name)
        for a in algorithms:
            row = quality_row(a, survey)
            indicator = SimpleImputer(strategy="median", add_indicator=True,
                                      keep_empty_features=True)
            alternatives = {"indicators": _alternative(a, survey, indicator)}
            if a in NATIVE:
                alternatives["native"] = _alternative(a, survey, "passthrough")
            rows.append((row, alternatives))
            _log(f"{name} {a}: acc {row.accuracy:.4f} (median {row.median_accuracy:.4f}, "
                 f"reference {row.reference.accuracy:.4f}) {row.seconds:.1f} s")
    return rows


def _verdict(row) -> str:
    problems = []
    if row.accuracy < row.median_accuracy - MEDIAN_SLACK:
        problems.append("below impute_median")
    if row.accuracy < row.majority_rate:
        problems.append("below majority")
    if row.accuracy < row.reference.accuracy - reference_tolerance(row.reference.accuracy_se):
        problems.append("accuracy below reference")
    if row.macro_f1 < row.reference.macro_f1 - reference_tolerance(row.reference.macro_f1_se):
        problems.append("F1 below reference")
    return "; ".join(problems) or "ok"


def section(rows: list, seconds: float) -> str:
    lines = [
        "## Model quality: every algorithm × four surveys with gaps, against a plain-library "
        "reference",
        "",
        f"{FOLDS}-fold cross-validation, seed 0, default preset; surveys read without a schema "
        "(inferred layout, default policy `impute_indicator`): `sample` (2,500 respondents "
        "drawn from the bundled telecom sample), `bank` (the messy bank export, 2 waves × 800, "
        "weights), `skewed_six` (1–6 skewed, blanks) and `signed` (−2..2, \"n/a\" on half of "
        "one statement), see `tests/quality/quality_reference.py`. acc / F1: ours by default; "
        "median: ours with `impute_median` on the same folds; ref: the same estimator family "
        "from the libraries alone (median imputation, same folds) ± its across-fold SE; "
        "tolerance max(0.01, 2 SE). Δ = default − median. svm and ordinal on a fixed random "
        "subset of 1,200 respondents of each survey. The last two columns: our default "
        "pipeline with \"was missing\" indicators added to its gap step, and (tree models) "
        "with the gaps left to the library's own NaN handling; each algorithm's `gaps` is the "
        "variant that never costs more than 0.01 accuracy against the median fill. "
        "Naive Bayes with indicators (`acc with indicators`) is its default before issue 25: "
        "with it the suite fails (sample, bank and skewed_six, both rules).",
        "",
        "| survey | algorithm | gaps | n | acc | F1 | median acc | Δ | ref acc ± SE | ref F1 ± SE "
        "| majority | s | verdict | acc with indicators | acc with native gaps |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r, alternatives in rows:
        native = alternatives.get("native")
        lines.append(
            f"| {r.survey} | {r.algorithm_id} | {ALGORITHMS[r.algorithm_id].gaps} | {r.n:,} "
            f"| {r.accuracy:.4f} | {r.macro_f1:.4f} "
            f"| {r.median_accuracy:.4f} | {r.accuracy - r.median_accuracy:+.4f} "
            f"| {r.reference.accuracy:.4f} ± {r.reference.accuracy_se:.4f} "
            f"| {r.reference.macro_f1:.4f} ± {r.reference.macro_f1_se:.4f} "
            f"| {r.majority_rate:.4f} | {r.seconds:.1f} | {_verdict(r)} "
            f"| {alternatives['indicators']:.4f} | {'' if native is None else f'{native:.4f}'} |")
    lines += ["", f"(bench_quality took {seconds:.0f} s; load average at the end "
                  f"{' / '.join(f'{v:.2f}' for v in os.getloadavg())})"]
    return "\n".join(lines)


def run() -> str:
    start = time.perf_counter()
    rows = measure()
    return section(rows, time.perf_counter() - start)


if __name__ == "__main__":
    print(run())
