"""Driver models: the whole ``evaluate`` against bare scikit-learn cross-validation.

Baseline (same run, same folds): for each of the 8 default algorithms, scikit-learn's
``cross_val_predict(method="predict_proba")`` with the papers' settings, sequential. Ours:
``cx_app.analysis.evaluate_survey`` (the same fits, plus levels, per-fold metrics, ROC,
all pairwise tests and drivers incl. permutation importance of the best model). Target: ratio
≤ 1.3. Also: the ratio with ``n_jobs=2``, and time growth from 2,500 to 100,000 respondents
(rows resampled with replacement from the sample survey) for the fast algorithms lr, nb, dt.

Environment: ``CX_BENCH_MODELS_ALGORITHMS=lr,nb`` restricts the algorithm list (default: the
8), ``CX_BENCH_MODELS_GROWTH=0`` skips the growth part.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
from sklearn.model_selection import PredefinedSplit, cross_val_predict

from cx_app.algorithms import DEFAULT_ALGORITHMS, build_algorithm
from cx_app.analysis import evaluate_survey
from cx_app.crossval import class_positions, cross_validate_model, make_folds
from cx_app.evaluation import evaluate_result
from cx_app.grouping import resolve_plan
from cx_app.importing import load_survey
from cx_app.samples import sample_path

GROWTH_SIZES = (2_500, 25_000, 100_000)
GROWTH_ALGORITHMS = ("lr", "nb", "dt")


def _log(message: str) -> None:
    print(f"[bench_models] {message}", flush=True)


def _baseline(X, codes, fold, algorithms) -> dict[str, float]:
    times = {}
    for a in algorithms:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cross_val_predict(build_algorithm(a, seed=0), X, codes, cv=PredefinedSplit(fold),
                              method="predict_proba")  # fmt: skip
        times[a] = time.perf_counter() - start
        _log(f"baseline {a}: {times[a]:.1f} s")
    return times


def _ours(survey, algorithms, n_jobs) -> tuple[float, dict]:
    start = time.perf_counter()
    _, evaluations = evaluate_survey(survey, algorithms, folds=10, seed=0, n_jobs=n_jobs)
    total = time.perf_counter() - start
    _log(f"evaluate n_jobs={n_jobs}: {total:.1f} s")
    return total, evaluations


def _growth(survey) -> list[tuple[int, float]]:
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    X, y = survey.X.to_numpy(), survey.y
    rng = np.random.default_rng(0)
    out = []
    for n in GROWTH_SIZES:
        rows = rng.integers(0, len(y), n)
        start = time.perf_counter()
        for a in GROWTH_ALGORITHMS:
            cv = cross_validate_model(X[rows], y[rows], survey.classes, a, folds=10, seed=0)
            evaluate_result(cv, plan)
        out.append((n, time.perf_counter() - start))
        _log(f"growth n={n}: {out[-1][1]:.1f} s")
    return out


def run() -> str:
    algorithms = tuple(
        a for a in os.environ.get("CX_BENCH_MODELS_ALGORITHMS", ",".join(DEFAULT_ALGORITHMS))
        .split(",") if a
    )  # fmt: skip
    survey = load_survey(sample_path("telecom_nps"))
    X = survey.X.to_numpy(dtype=float)
    codes = class_positions(survey.y, survey.classes)
    fold = make_folds(codes, 10, 0)
    base = _baseline(X, codes, fold, algorithms)
    base_total = sum(base.values())
    ours1, evaluations = _ours(survey, algorithms, 1)
    fits = sum(e.fit_seconds for e in evaluations.values())
    ours2, _ = _ours(survey, algorithms, 2)
    lines = [
        "## Driver models (`cx-app evaluate`)",
        "",
        f"Sample telecom survey, {len(codes):,} respondents, 10 folds, algorithms: "
        f"{', '.join(algorithms)}. Baseline: scikit-learn `cross_val_predict(predict_proba)` per "
        "algorithm, sequential, same folds and settings.",
        "",
        "| algorithm | baseline s | ours: CV fit s |",
        "|---|---:|---:|",
    ]
    for a in algorithms:
        lines.append(f"| {a} | {base[a]:.1f} | {evaluations[a].fit_seconds:.1f} |")
    lines += [
        "",
        f"- baseline total: {base_total:.1f} s",
        f"- `evaluate` (n_jobs=1): {ours1:.1f} s — **ratio {ours1 / base_total:.2f}** (target ≤ 1.3); "
        f"of which cross-validation fits {fits:.1f} s and the derived analysis (levels, per-fold "
        f"metrics, ROC, tests, drivers) {ours1 - fits:.1f} s",
        f"- `evaluate` (n_jobs=2): {ours2:.1f} s — ratio {ours2 / base_total:.2f}",
    ]
    if os.environ.get("CX_BENCH_MODELS_GROWTH", "1") != "0":
        growth = _growth(survey)
        n, t = np.log([g[0] for g in growth]), np.log([g[1] for g in growth])
        exponent = float(np.polyfit(n, t, 1)[0])
        lines += [
            "",
            f"Growth (algorithms {', '.join(GROWTH_ALGORITHMS)}: 10-fold CV + evaluation; rows "
            "resampled with replacement):",
            "",
            "| respondents | seconds |",
            "|---:|---:|",
            *(f"| {k:,} | {s:.1f} |" for k, s in growth),
            "",
            f"Fitted exponent (time ∝ n^b): b = {exponent:.2f}",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
