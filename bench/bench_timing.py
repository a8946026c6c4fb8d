"""Training-time estimates (``cx_app.models.timing``): the constants, and how close they come.

For each algorithm, 2-fold cross-validation as the app runs it (``cross_validate_model`` keeping
the fold models, then the permutation importance, as ``cx_app.app.session.train_lean``) on
rows resampled from the sample survey (9 attributes), at two training sizes. The cost model of
``cx_app.models.timing`` (seconds per fold = c × (n_train / 1000)^b × attributes / 10) is
fitted on them: b from the two sizes, c from the larger. Baseline: the same run measured at a
third size (3 folds on 6,000 rows, n_train 4,000), predicted with the fitted constants and with
the constants stored in ``timing.py``; the ratios predicted / measured are reported.

The fits run in a child process with the app server's environment (one BLAS thread,
``cx_app.cli.app.SERVER_THREADS``), the ``papers`` preset (``timing.FAST_FACTOR`` scales the
``fast`` one). The constants to store are a least-squares fit of log seconds per fold on log
training rows over the three runs (b at least 0.3).

Environment: ``CX_BENCH_TIMING_ALGORITHMS=lr,nb`` restricts the list (default: every algorithm
but the CNN, which needs Keras; add ``cnn`` to measure it).
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from cx_app.models.crossval import cross_validate_model
from cx_app.models.drivers import permutation_importance_cv
from cx_app.models.timing import COSTS, expected_seconds
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server_env import in_server_environment  # noqa: E402

SIZES = (2_000, 6_000)  # 2 folds: 1,000 and 3,000 training rows per fold
CHECK = (6_000, 3)  # rows, folds: 4,000 training rows per fold
DEFAULT = ("lr", "svm", "knn", "nb", "dt", "rf", "ann", "xgb", "ordinal")


def _log(message: str) -> None:
    print(f"[bench_timing] {message}", file=sys.stderr, flush=True)


def _measure(algorithm_id: str, X: np.ndarray, y: np.ndarray, classes: tuple, folds: int,
             ) -> float:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = cross_validate_model(X, y, classes, algorithm_id, folds=folds, seed=0,
                                  keep_models=True, preset="papers")
        permutation_importance_cv(cv, X)
    return time.perf_counter() - start


def _least_squares(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(c, b) of seconds per fold = c × n_train^b × … over (n_train in thousands, seconds per
    fold per 10 attributes) points: log-linear least squares, b at least 0.3."""
    x = np.log([n for n, _ in points])
    y = np.log([max(s, 1e-3) for _, s in points])
    b = max(0.3, float(np.polyfit(x, y, 1)[0]))
    c = float(np.exp(np.mean(y - b * x)))
    return c, b


def run() -> str:
    """The bench, in a child process with the app server's environment (one BLAS thread)."""
    return in_server_environment(__file__, _run_here, "timing")


def _run_here() -> str:
    chosen = os.environ.get("CX_BENCH_TIMING_ALGORITHMS")
    algorithms = tuple(chosen.split(",")) if chosen else DEFAULT
    survey = load_survey(sample_path("telecom_nps"))
    X_all, y_all = np.asarray(survey.X, dtype=float), np.asarray(survey.y)
    classes = tuple(survey.classes)
    p = X_all.shape[1]
    rng = np.random.default_rng(0)
    rows = []
    for algorithm_id in algorithms:
        seconds = []
        for n in (*SIZES, CHECK[0]):
            pick = rng.choice(len(y_all), size=n, replace=True)
            folds = 2 if len(seconds) < 2 else CHECK[1]
            seconds.append(_measure(algorithm_id, X_all[pick], y_all[pick], classes, folds))
            _log(f"{algorithm_id}: {n} rows, {folds} folds: {seconds[-1]:.2f} s")
        small, large, check = seconds
        runs = ((SIZES[0], 2), (SIZES[1], 2), CHECK)
        least = _least_squares([(n * (k - 1) / k / 1000, t / k / (p / 10))
                                for (n, k), t in zip(runs, seconds, strict=True)])
        n_small, n_large = (n / 2 / 1000 for n in SIZES)
        b = max(0.3, math.log(max(large, 1e-3) / max(small, 1e-3)) / math.log(n_large / n_small))
        c = large / 2 / n_large ** b / (p / 10)
        n_check = CHECK[0] * (CHECK[1] - 1) / CHECK[1] / 1000
        fitted = CHECK[1] * c * n_check ** b * p / 10
        stored = expected_seconds(algorithm_id, rows=CHECK[0], attributes=p, folds=CHECK[1])
        rows.append((algorithm_id, small, large, b, c, check, fitted / check, stored / check,
                     COSTS[algorithm_id], least))
    lines = [
        "## Training-time estimates (`cx_app.models.timing`)",
        "",
        f"Rows resampled from the sample survey ({p} attributes), cross-validation keeping the "
        "fold models plus the permutation importance, as the app's Train button runs it. "
        f"Fitted: seconds per fold = c × (n_train / 1000)^b × attributes / 10, from 2 folds on "
        f"{SIZES[0]:,} and {SIZES[1]:,} rows. Baseline: {CHECK[1]} folds on {CHECK[0]:,} rows, "
        "measured in the same run; ratios predicted / measured (1.0 = exact) with the fitted "
        "constants and with those stored in `timing.py`.",
        "",
        f"| algorithm | {SIZES[0]:,} rows s | {SIZES[1]:,} rows s | b | c | check s | "
        "ratio (fitted) | ratio (stored) | stored (c, b) | least squares, 3 runs (c, b) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for a, s, l_, b, c, chk, rf, rs, st, (lc, lb) in rows:
        lines.append(f"| {a} | {s:.2f} | {l_:.2f} | {b:.2f} | {c:.4f} | {chk:.2f} | {rf:.2f} | "
                     f"{rs:.2f} | ({st.c}, {st.b}) | ({lc:.3g}, {lb:.2f}) |")
    lines += ["", f"- load average (1 min) at the end: {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores; one BLAS thread (the app server's environment)."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
