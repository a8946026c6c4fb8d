"""Growth of every algorithm's evaluation with the number of respondents (fast preset).

For each algorithm (the papers' nine and ordinal) with its default ``fast`` preset: 10-fold
cross-validation (``cross_validate_model``, n_jobs=2, fold models not kept) and the evaluation
derived from it (``evaluate_result``: levels, per-fold metrics, ROC) at 2,500, 25,000 and
100,000 respondents, rows resampled with replacement from the sample survey (the same rows for
every algorithm). Reported: seconds per size, the exponent b of time ∝ n^b fitted by least
squares on log-log, and the machine's load average after each measurement (2 cores shared
with other users, so single times are noisy). Sizes run smallest first for all algorithms, so
that a slow algorithm at 100,000 does not hide the others; every measurement is also appended
to ``cx_bench_growth_partial.jsonl`` in the temporary folder as it finishes.

Baseline in the same run: the 2,500-respondent time of each algorithm (the exponent is a ratio
of times measured here). Environment: ``CX_BENCH_GROWTH_ALGORITHMS=lr,svm``,
``CX_BENCH_GROWTH_SIZES=2500,25000``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from cx_app.engine.grouping import resolve_plan
from cx_app.models.crossval import cross_validate_model
from cx_app.models.evaluation import evaluate_result
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

PARTIAL = Path(tempfile.gettempdir()) / "cx_bench_growth_partial.jsonl"
SIZES = (2_500, 25_000, 100_000)
ALGORITHMS = ("lr", "nb", "dt", "knn", "rf", "xgb", "svm", "ann", "ordinal", "cnn")
FOLDS, SEED, N_JOBS = 10, 0, 2


def _log(message: str) -> None:
    print(f"[bench_growth] {message}", flush=True)


def _load() -> str:
    return " / ".join(f"{v:.2f}" for v in os.getloadavg())


def _exponent(sizes, times) -> float:
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def run() -> str:
    algorithms = os.environ.get("CX_BENCH_GROWTH_ALGORITHMS", ",".join(ALGORITHMS)).split(",")
    sizes = tuple(int(n) for n in os.environ.get("CX_BENCH_GROWTH_SIZES",
                                                 ",".join(map(str, SIZES))).split(","))
    survey = load_survey(sample_path("telecom_nps"))
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    rng = np.random.default_rng(SEED)
    times: dict[str, dict[int, float]] = {a: {} for a in algorithms}
    loads: dict[int, list[str]] = {}
    presets: dict[str, str] = {}
    for n in sizes:
        rows = rng.integers(0, len(survey.frame), n)
        X, y = survey.X.iloc[rows].reset_index(drop=True), np.asarray(survey.y)[rows]
        loads[n] = [_load()]
        for a in algorithms:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cv = cross_validate_model(X, y, survey.classes, a, folds=FOLDS, seed=SEED,
                                          n_jobs=N_JOBS,
                                          missing_policy=survey.schema.missing_attributes)
                evaluate_result(cv, plan)
            seconds = time.perf_counter() - start
            times[a][n] = seconds
            presets[a] = cv.preset
            load = _load()
            accuracy = float((cv.y_pred == cv.y_true).mean())
            _log(f"n={n:,} {a} ({cv.preset}): {seconds:.1f} s, accuracy {accuracy:.4f} "
                 f"(load {load})")
            with PARTIAL.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"n": n, "algorithm": a, "preset": cv.preset,
                                      "seconds": seconds, "accuracy": accuracy, "load": load,
                                      "at": time.strftime("%H:%M:%S")}) + "\n")
            del cv
        loads[n].append(_load())
    return section(algorithms, sizes, times, presets, loads)


def section(algorithms, sizes, times, presets, loads) -> str:
    """The Markdown section: seconds per size, exponents, load averages."""
    last = sizes[-2:]
    lines = [
        "## Growth with the number of respondents (every algorithm, fast preset)",
        "",
        f"{FOLDS}-fold cross-validation (n_jobs={N_JOBS}) + levels, per-fold metrics and ROC "
        "(`cross_validate_model` + `evaluate_result`, fold models not kept) of each algorithm "
        "with its default preset, on rows resampled with replacement from the sample survey. "
        "Seconds; the exponent b of time ∝ n^b is fitted on log-log over all sizes, and between "
        f"the two largest ({last[0]:,} → {last[1]:,}), which the fixed costs of the smallest "
        "size (starting the worker processes for the first algorithm, lr; importing Keras/JAX "
        "and compiling in them for the CNN) do not bend. Load average (1 / 5 / 15 min, 2 cores "
        "shared with other users) before and after each size: "
        + "; ".join(f"{n:,}: {v[0]} → {v[-1]}" for n, v in loads.items()) + ".",
        "",
        "| algorithm | preset | " + " | ".join(f"{n:,}" for n in sizes)
        + " | b (all sizes) | b (two largest) |",
        "|---|---|" + "---:|" * (len(sizes) + 2),
    ]
    total = [sum(times[a][n] for a in algorithms) for n in sizes]
    for a, secs, preset in [*((a, [times[a][n] for n in sizes], presets[a]) for a in algorithms),
                            ("all", total, "")]:
        lines.append(f"| {a} | {preset} | " + " | ".join(f"{s:.1f}" for s in secs)
                     + f" | {_exponent(sizes, secs):.2f} | {_exponent(last, secs[-2:]):.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
