"""Presets: is each algorithm's ``fast`` preset as accurate as the papers' settings?

For every algorithm (the papers' nine and ordinal) and two surveys, 10-fold cross-validation
(``cross_validate_model``, same folds and seed for both presets, ``n_jobs=2``) with the
``papers`` and the ``fast`` preset; reported: pooled out-of-fold accuracy and macro-F1 of
each, their differences (fast − papers) and the cross-validation seconds of each (a ratio in
the same run). Issue 14: a fast preset whose accuracy differs by more than 0.01 on either
survey must not be its algorithm's default (``PAPERS_BY_DEFAULT`` in
``cx_app/models/algorithms.py``); the verdict is printed per algorithm.

Surveys: the bundled sample (``sample_surveys/telecom_nps.xlsx``, 7,506 respondents, no gaps)
and a generated one of another shape: two waves of the messy bank tracker
(``cx_app.simulation.bank_export``, seed 11, 2,500 respondents per wave; 25 % "not applicable"
on one attribute, "don't know" answers, survey weights), written as an Excel export and read
back without a schema, as a new user would.

The machine's load average (``os.getloadavg``) is recorded before and after each survey.
Environment: ``CX_BENCH_PRESETS_ALGORITHMS=svm,ann`` restricts the algorithms,
``CX_BENCH_PRESETS_SURVEYS=sample`` the surveys (``sample``, ``bank``).
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import accuracy_score, f1_score

from cx_app.models.algorithms import ALGORITHMS
from cx_app.models.crossval import class_positions, cross_validate_model, make_folds
from cx_app.simulation.bank_export import simulate_bank_waves, write_bank_export
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

FOLDS, SEED, N_JOBS = 10, 0, 2
TOLERANCE = 0.01
ALGORITHM_ORDER = ("lr", "nb", "dt", "knn", "rf", "xgb", "svm", "ann", "ordinal", "cnn")


def _log(message: str) -> None:
    print(f"[bench_presets] {message}", flush=True)


def _load() -> str:
    return " / ".join(f"{v:.2f}" for v in os.getloadavg())


def _surveys(tmp: Path):
    chosen = os.environ.get("CX_BENCH_PRESETS_SURVEYS", "sample,bank").split(",")
    if "sample" in chosen:
        yield "sample (telecom_nps.xlsx)", load_survey(sample_path("telecom_nps"))
    if "bank" in chosen:
        path = write_bank_export(simulate_bank_waves(2_500, waves=2, seed=11,
                                                     drop_in_last_wave=False),
                                 tmp / "bank_seed11.xlsx")
        yield "generated bank tracker (seed 11)", load_survey(path)


def _one(survey, algorithm_id: str, preset: str, fold: np.ndarray):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = cross_validate_model(survey.X, survey.y, survey.classes, algorithm_id, folds=FOLDS,
                                  seed=SEED, n_jobs=N_JOBS, fold=fold, preset=preset,
                                  missing_policy=survey.schema.missing_attributes,
                                  sample_weight=survey.model_weights)
    y_true, y_pred = cv.class_positions(), cv.class_positions(cv.y_pred)
    return (accuracy_score(y_true, y_pred),
            f1_score(y_true, y_pred, average="macro", labels=range(len(cv.classes)),
                     zero_division=0),
            cv.fit_seconds)


def measure() -> list[dict]:
    """One row per (survey, algorithm): accuracy, macro-F1 and seconds of both presets."""
    wanted = os.environ.get("CX_BENCH_PRESETS_ALGORITHMS", ",".join(ALGORITHM_ORDER)).split(",")
    algorithms = [a for a in ALGORITHM_ORDER if a in wanted and a in ALGORITHMS]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, survey in _surveys(Path(tmp)):
            codes = class_positions(survey.y, survey.classes)
            fold = make_folds(codes, FOLDS, SEED)
            _one(survey, "nb", "papers", fold)  # warm-up: starts the worker processes
            load_before = _load()
            for a in algorithms:
                p_acc, p_f1, p_s = _one(survey, a, "papers", fold)
                f_acc, f_f1, f_s = _one(survey, a, "fast", fold)
                row = {"survey": name, "n": len(codes), "algorithm": a, "papers_acc": p_acc,
                       "fast_acc": f_acc, "papers_f1": p_f1, "fast_f1": f_f1,
                       "papers_s": p_s, "fast_s": f_s, "load_before": load_before}
                rows.append(row)
                _log(f"{name} {a}: papers acc {p_acc:.4f} f1 {p_f1:.4f} {p_s:.1f} s; fast acc "
                     f"{f_acc:.4f} f1 {f_f1:.4f} {f_s:.1f} s (load {_load()})")
            for row in rows:
                if row["survey"] == name:
                    row["load_after"] = _load()
    return rows


def run() -> str:
    start = time.perf_counter()
    rows = measure()
    return section(rows, time.perf_counter() - start)


def section(rows: list[dict], seconds: float, notes: tuple[str, ...] = ()) -> str:
    """The Markdown section of ``rows`` (:func:`measure`)."""
    algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
    surveys = list(dict.fromkeys((r["survey"], r["n"], r["load_before"], r["load_after"])
                                 for r in rows))
    lines = [
        "## Presets: fast vs papers (accuracy equivalence)",
        "",
        f"{FOLDS}-fold cross-validation (`cross_validate_model`, n_jobs={N_JOBS}, seed {SEED}, "
        "the same folds for both presets) of each algorithm with its `papers` preset (the "
        "papers' settings) and its `fast` preset; pooled out-of-fold accuracy and macro-F1 at the "
        "original level, Δ = fast − papers, and the seconds of the cross-validation (ratio "
        f"fast / papers in the same run). Rule (issue 14): |Δ accuracy| ≤ {TOLERANCE} on every "
        "survey, or the algorithm's default preset is `papers`.",
        "",
        "Surveys and machine load (1 / 5 / 15-minute load average, 2 cores shared):",
        "",
        *(f"- {s}: {n:,} respondents; load before {b}, after {a}" for s, n, b, a in surveys),
        "",
        "| survey | algorithm | acc papers | acc fast | Δ acc | F1 papers | F1 fast | Δ F1 "
        "| s papers | s fast | ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['survey'].split(' ')[0]} | {r['algorithm']} | {r['papers_acc']:.4f} | "
            f"{r['fast_acc']:.4f} | {r['fast_acc'] - r['papers_acc']:+.4f} | "
            f"{r['papers_f1']:.4f} | {r['fast_f1']:.4f} | {r['fast_f1'] - r['papers_f1']:+.4f} | "
            f"{r['papers_s']:.1f} | {r['fast_s']:.1f} | {r['fast_s'] / r['papers_s']:.2f} |"
        )
    lines += ["", "Verdict per algorithm (largest |Δ accuracy| over the surveys):", ""]
    for a in algorithms:
        worst = max(abs(r["fast_acc"] - r["papers_acc"]) for r in rows if r["algorithm"] == a)
        ok = worst <= TOLERANCE
        lines.append(f"- {a}: {worst:.4f} — " + ("fast is the default" if ok else
                                                  "**papers is the default** (fast differs)"))
    lines += [*(["", *notes] if notes else []), "", f"(bench_presets took {seconds:.0f} s)"]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
