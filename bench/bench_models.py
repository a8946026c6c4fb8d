"""Driver models: the whole ``evaluate`` (fast preset) against bare scikit-learn cross-validation
with the papers' settings.

Baseline: for each algorithm, scikit-learn's ``cross_val_predict(method="predict_proba")``,
sequential, on the estimator of the *papers* preset (built by our registry,
``build_model(..., preset="papers")``: the papers' settings, same pipeline, same seed) and
the *same* folds (``PredefinedSplit`` of our fold assignment).

Ours: the steps of ``cx_app.models.analysis.evaluate_survey`` with the default (``fast``)
preset (``evaluate_algorithm`` per algorithm: cross-validation keeping the fold models, levels,
per-fold metrics, ROC; then ``finish_evaluation``: all pairwise tests, drivers incl.
permutation importance of the best model) plus writing results.json and the reports, as
``cx-app evaluate --n-jobs N`` does, with N = 1 and N = 2.

Measured interleaved per algorithm (baseline a, ours n_jobs=1 a, ours n_jobs=2 a, baseline b,
...) so that changes in machine load hit both alike; the load average is recorded per
algorithm. Issue 14 target: ours (fast, n_jobs=2) / baseline ≤ 0.25 over the papers' nine
algorithms plus ordinal; the CNN's own evaluation ≤ 30 s. The growth with the number of
respondents is ``bench_growth.py``.

Environment: ``CX_BENCH_MODELS_ALGORITHMS=lr,nb`` restricts the algorithm list (default: the
ten), ``CX_BENCH_MODELS_JOBS=2`` measures ours with n_jobs=2 only.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings

import numpy as np
from sklearn.model_selection import PredefinedSplit, cross_val_predict

from cx_app.engine.grouping import resolve_plan
from cx_app.models.algorithms import DEFAULT_ALGORITHMS
from cx_app.models.analysis import evaluate_algorithm, finish_evaluation, write_results
from cx_app.models.crossval import build_model, class_positions, make_folds
from cx_app.reports import write_reports
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

FOLDS, SEED = 10, 0
ALL_ALGORITHMS = (*DEFAULT_ALGORITHMS, "ordinal", "cnn")


def _log(message: str) -> None:
    print(f"[bench_models] {message}", flush=True)


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _baseline(algorithm_id: str, X: np.ndarray, codes: np.ndarray, fold: np.ndarray) -> float:
    model = build_model(algorithm_id, seed=SEED, preset="papers")
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


def _load() -> str:
    return " / ".join(f"{v:.2f}" for v in os.getloadavg())


def run() -> str:
    algorithms = tuple(
        a for a in os.environ.get("CX_BENCH_MODELS_ALGORITHMS", ",".join(ALL_ALGORITHMS))
        .split(",") if a
    )  # fmt: skip
    jobs = tuple(int(j) for j in os.environ.get("CX_BENCH_MODELS_JOBS", "1,2").split(","))
    survey = load_survey(sample_path("telecom_nps"))
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    X = survey.X.to_numpy(dtype=float)
    codes = class_positions(survey.y, survey.classes)
    fold = make_folds(codes, FOLDS, SEED)
    base: dict[str, float] = {}
    loads: dict[str, str] = {}
    ours = {j: _Ours(survey, plan, j) for j in jobs}
    start_load = _load()
    for a in algorithms:  # interleaved: baseline a, ours(1) a, ours(2) a, baseline b, ...
        base[a] = _baseline(a, X, codes, fold)
        for o in ours.values():
            o.add(a)
        loads[a] = _load()
        _log(f"{a}: baseline {base[a]:.1f} s, " + ", ".join(
            f"ours n_jobs={j} {o.seconds[a]:.1f} s" for j, o in ours.items())
            + f" (load {loads[a]})")
    tails = {j: o.finish() for j, o in ours.items()}
    _log("tests + drivers, files: " + "; ".join(
        f"n_jobs={j}: {d:.1f} s, {f:.1f} s" for j, (d, f, _) in tails.items()))
    document = next(iter(tails.values()))[2]
    base_total = sum(base.values())
    totals = {j: sum(o.seconds.values()) + tails[j][0] + tails[j][1] for j, o in ours.items()}
    head = " | ".join(f"ours n_jobs={j} s (CV fit s) | ratio" for j in jobs)
    lines = [
        "## Driver models (`cx-app evaluate`, fast preset, vs the papers' settings)",
        "",
        f"Sample telecom survey, {len(codes):,} respondents, {FOLDS} folds, algorithms: "
        f"{', '.join(algorithms)}. Baseline: scikit-learn `cross_val_predict(method="
        '"predict_proba")` per algorithm, sequential, on the estimators of the **papers** preset '
        "(`build_model(..., preset=\"papers\")`) and the same folds. Ours: the whole "
        "evaluation (CV keeping the fold models, levels, per-fold metrics, ROC; then tests, "
        "drivers, results.json and reports) with the default **fast** preset "
        "(`bench_presets.py` measures its accuracy). Measured interleaved per algorithm "
        f"(baseline, then ours with n_jobs = {', '.join(map(str, jobs))}); the 1 / 5 / 15-minute "
        f"load average (2 cores shared with other users) after each algorithm; at the start "
        f"{start_load}.",
        "",
        f"| algorithm | baseline s | {head} | load after |",
        "|---|---:|" + "---:|---:|" * len(jobs) + "---|",
    ]
    for a in algorithms:
        cells = " | ".join(
            f"{o.seconds[a]:.1f} ({o.evaluations[a].fit_seconds:.1f}) | "
            f"{o.seconds[a] / base[a]:.2f}" for o in ours.values())
        lines.append(f"| {a} | {base[a]:.1f} | {cells} | {loads[a]} |")
    lines += [
        f"| pairwise tests, drivers (permutation importance of "
        f"{document.drivers.permutation_model}) | – |"
        + "".join(f" {tails[j][0]:.1f} | |" for j in jobs) + " |",
        "| writing results.json, report.xlsx, report.html | – |"
        + "".join(f" {tails[j][1]:.1f} | |" for j in jobs) + " |",
        "",
        f"- baseline total (papers' settings): {base_total:.1f} s",
        *(f"- `evaluate --n-jobs {j}` (fast): {totals[j]:.1f} s — **ratio "
          f"{totals[j] / base_total:.2f}**" + (" (target ≤ 0.25)" if j == 2 else "")
          for j in jobs),
    ]
    if "cnn" in algorithms:
        lines += [f"- CNN alone (fast, n_jobs={j}): {ours[j].seconds['cnn']:.1f} s (target ≤ 30 s)"
                  for j in jobs]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
