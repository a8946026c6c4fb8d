"""Driver models: the whole ``evaluate`` against bare scikit-learn cross-validation.

Baseline: for each algorithm, scikit-learn's ``cross_val_predict(method="predict_proba")``,
sequential, on the *same* estimator (built by our registry, ``build_algorithm``: the papers'
settings, same pipeline, same seed) and the *same* folds (``PredefinedSplit`` of our fold
assignment). The only difference from ours is our extra analysis.

Ours: the steps of ``cx_app.models.analysis.evaluate_survey`` (``evaluate_algorithm`` per algorithm:
cross-validation keeping the fold models, levels, per-fold metrics, ROC; then
``finish_evaluation``: all pairwise tests, drivers incl. permutation importance of the best
model) plus writing results.json and the reports, as ``cx-app evaluate`` does.

Measured interleaved per algorithm (baseline a, ours n_jobs=1 a, ours n_jobs=2 a, baseline b,
...) so that changes in machine load hit both alike. Target: ratio ours(n_jobs=1) / baseline
≤ 1.3; the ratio with n_jobs=2 is reported too.

Growth: 10-fold CV + evaluation (``evaluate_algorithm``) of lr, nb and dt at 2,500, 25,000 and
100,000 respondents (rows resampled with replacement from the sample survey), with the exponent
b of time ∝ n^b fitted by least squares on log-log per algorithm and for their sum.

Environment: ``CX_BENCH_MODELS_ALGORITHMS=lr,nb`` restricts the algorithm list (default: the
8), ``CX_BENCH_MODELS_GROWTH=0`` skips the growth part.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
import warnings

import numpy as np
from sklearn.model_selection import PredefinedSplit, cross_val_predict

from cx_app.engine.grouping import resolve_plan
from cx_app.models.algorithms import DEFAULT_ALGORITHMS, build_algorithm
from cx_app.models.analysis import evaluate_algorithm, finish_evaluation, write_results
from cx_app.models.crossval import class_positions, make_folds
from cx_app.reports import write_reports
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

GROWTH_SIZES = (2_500, 25_000, 100_000)
GROWTH_ALGORITHMS = ("lr", "nb", "dt")
FOLDS, SEED = 10, 0


def _log(message: str) -> None:
    print(f"[bench_models] {message}", flush=True)


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _baseline(algorithm_id: str, X: np.ndarray, codes: np.ndarray, fold: np.ndarray) -> float:
    model = build_algorithm(algorithm_id, seed=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, _ = _timed(
            lambda: cross_val_predict(
                model, X, codes, cv=PredefinedSplit(fold), method="predict_proba"
            )
        )
    return seconds


class _Ours:
    """One ``evaluate`` (n_jobs fixed) built up algorithm by algorithm, as evaluate_survey does."""

    def __init__(self, survey, plan, n_jobs: int):
        self.survey, self.plan, self.n_jobs = survey, plan, n_jobs
        self.evaluations: dict = {}
        self.seconds: dict[str, float] = {}
        self.best_cv, self.best_score = None, -1.0

    def add(self, algorithm_id: str) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds, (cv, evaluation) = _timed(
                lambda: evaluate_algorithm(
                    self.survey,
                    algorithm_id,
                    self.plan,
                    folds=FOLDS,
                    seed=SEED,
                    n_jobs=self.n_jobs,
                )  # fmt: skip
            )
        score = evaluation.mean("original", "accuracy")
        if score > self.best_score:
            self.best_cv, self.best_score = cv, score
        self.evaluations[algorithm_id] = evaluation
        self.seconds[algorithm_id] = seconds
        return seconds

    def finish(self) -> tuple[float, float, dict]:
        """(seconds of tests + drivers, seconds of writing results.json + reports, document)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            analysis, document = _timed(
                lambda: finish_evaluation(
                    self.survey, self.evaluations, self.plan, self.best_cv, seed=SEED
                )
            )
            with tempfile.TemporaryDirectory() as out:
                files, _ = _timed(
                    lambda: (write_results(document, out), write_reports(document, out))
                )
        return analysis, files, document


def _growth(survey, plan) -> dict[str, list[float]]:
    rng = np.random.default_rng(SEED)
    out: dict[str, list[float]] = {a: [] for a in GROWTH_ALGORITHMS}
    for n in GROWTH_SIZES:
        rows = rng.integers(0, len(survey.frame), n)
        sample = dataclasses.replace(survey, frame=survey.frame.iloc[rows].reset_index(drop=True))
        for a in GROWTH_ALGORITHMS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                seconds, _ = _timed(
                    lambda a=a, s=sample: evaluate_algorithm(s, a, plan, folds=FOLDS, seed=SEED)
                )
            out[a].append(seconds)
            _log(f"growth n={n:,} {a}: {seconds:.1f} s")
    return out


def _exponent(times: list[float]) -> float:
    return float(np.polyfit(np.log(GROWTH_SIZES), np.log(times), 1)[0])


def run() -> str:
    algorithms = tuple(
        a for a in os.environ.get("CX_BENCH_MODELS_ALGORITHMS", ",".join(DEFAULT_ALGORITHMS))
        .split(",") if a
    )  # fmt: skip
    survey = load_survey(sample_path("telecom_nps"))
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    X = survey.X.to_numpy(dtype=float)
    codes = class_positions(survey.y, survey.classes)
    fold = make_folds(codes, FOLDS, SEED)
    base: dict[str, float] = {}
    ours1, ours2 = _Ours(survey, plan, 1), _Ours(survey, plan, 2)
    for a in algorithms:  # interleaved: baseline a, ours(1) a, ours(2) a, baseline b, ...
        base[a] = _baseline(a, X, codes, fold)
        ours1.add(a)
        ours2.add(a)
        _log(
            f"{a}: baseline {base[a]:.1f} s, ours n_jobs=1 {ours1.seconds[a]:.1f} s, "
            f"n_jobs=2 {ours2.seconds[a]:.1f} s"
        )
    drivers1, files1, document = ours1.finish()
    drivers2, files2, _ = ours2.finish()
    tail1, tail2 = drivers1 + files1, drivers2 + files2
    _log(
        f"tests + drivers: {drivers1:.1f} s / {drivers2:.1f} s; files {files1:.1f} / {files2:.1f} s"
    )
    base_total = sum(base.values())
    total1 = sum(ours1.seconds.values()) + tail1
    total2 = sum(ours2.seconds.values()) + tail2
    fits = sum(e.fit_seconds for e in ours1.evaluations.values())
    lines = [
        "## Driver models (`cx-app evaluate`)",
        "",
        f"Sample telecom survey, {len(codes):,} respondents, {FOLDS} folds, algorithms: "
        f"{', '.join(algorithms)}. Baseline: scikit-learn `cross_val_predict(method="
        '"predict_proba")` per algorithm, sequential, on the same estimators (`build_algorithm`, '
        "the papers' settings) and the same folds. Measured interleaved per algorithm (baseline, "
        "ours n_jobs=1, ours n_jobs=2).",
        "",
        "| algorithm | baseline s | ours n_jobs=1 s (CV fit s) | ratio | ours n_jobs=2 s | ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for a in algorithms:
        lines.append(
            f"| {a} | {base[a]:.1f} | {ours1.seconds[a]:.1f} "
            f"({ours1.evaluations[a].fit_seconds:.1f}) | {ours1.seconds[a] / base[a]:.2f} | "
            f"{ours2.seconds[a]:.1f} | {ours2.seconds[a] / base[a]:.2f} |"
        )
    lines += [
        f"| pairwise tests, drivers (permutation importance of "
        f"{document.drivers.permutation_model}) | – | {drivers1:.1f} | | {drivers2:.1f} | |",
        f"| writing results.json, report.xlsx, report.html | – | {files1:.1f} | | {files2:.1f} | |",
        "",
        f"- baseline total: {base_total:.1f} s",
        f"- `evaluate` (n_jobs=1): {total1:.1f} s — **ratio {total1 / base_total:.2f}** "
        f"(target ≤ 1.3); of which cross-validation fits {fits:.1f} s",
        f"- `evaluate` (n_jobs=2): {total2:.1f} s — **ratio {total2 / base_total:.2f}**",
    ]
    if os.environ.get("CX_BENCH_MODELS_GROWTH", "1") != "0":
        growth = _growth(survey, plan)
        total = [sum(growth[a][i] for a in GROWTH_ALGORITHMS) for i in range(len(GROWTH_SIZES))]
        lines += [
            "",
            f"Growth ({', '.join(GROWTH_ALGORITHMS)}: {FOLDS}-fold CV + levels, per-fold "
            "metrics and ROC; rows resampled with replacement), seconds:",
            "",
            "| respondents | " + " | ".join(GROWTH_ALGORITHMS) + " | sum |",
            "|---:|" + "---:|" * (len(GROWTH_ALGORITHMS) + 1),
            *(
                f"| {n:,} | "
                + " | ".join(f"{growth[a][i]:.1f}" for a in GROWTH_ALGORITHMS)
                + f" | {total[i]:.1f} |"
                for i, n in enumerate(GROWTH_SIZES)
            ),
            "| exponent b (time ∝ n^b) | "
            + " | ".join(f"{_exponent(growth[a]):.2f}" for a in GROWTH_ALGORITHMS)
            + f" | {_exponent(total):.2f} |",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
