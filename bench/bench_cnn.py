"""The CNN against the MLP and logistic regression: 10-fold evaluation of the sample survey.

Issue 14 asks that the CNN (``cnn``, the papers' Table A5/A6 settings) be within 0.02 accuracy
of the MLP (``ann``) on the 7,506-respondent telecom sample and that its whole 10-fold
evaluation (``evaluate_algorithm``: cross-validation keeping the fold models, levels, per-fold
metrics, ROC) take at most 30 s. Runs ``lr``, ``cnn`` and ``ann`` in one process, same folds
and seed, and prints per algorithm: wall and CPU seconds (the CNN's include importing Keras/JAX
and compiling its training loop, once), mean per-fold accuracy and the pooled accuracy at the
original level, and the warnings. ``python bench/bench_cnn.py [ALGORITHM ...]``. Every
algorithm runs under the preset ``CX_BENCH_CNN_PRESET`` (default ``papers``, the settings this
comparison is about; ``fast`` is measured by ``bench_models.py`` and ``bench_presets.py``).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from cx_app.engine.grouping import resolve_plan
from cx_app.estimate.alp import alp_gap
from cx_app.models.analysis import evaluate_algorithm
from cx_app.survey.importing import load_survey
from cx_app.survey.nps import groups_for_schema
from cx_app.survey.samples import sample_path
from cx_app.survey.schema import load_schema

ROOT = Path(__file__).resolve().parents[1]
FOLDS, SEED = 10, 0
PRESET = os.environ.get("CX_BENCH_CNN_PRESET", "papers")


def run(algorithms=("lr", "cnn", "ann"), n_jobs: int = int(os.environ.get("CX_BENCH_CNN_JOBS",
                                                                         "1"))) -> str:
    survey = load_survey(sample_path("telecom_nps"),
                         schema=load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml"))
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    lines = [f"Sample telecom survey, {len(survey.y):,} respondents, {survey.X.shape[1]} "
             f"attributes, {FOLDS} folds, seed {SEED}, n_jobs {n_jobs}, {PRESET} preset; load "
             f"average {os.getloadavg()[0]:.1f}. Held-out ALP gap (no calibration): over the "
             "out-of-fold probabilities, as the Models page shows it — ALP accuracy − real "
             "accuracy, class-share distance, estimated − actual NPS, and the net-score "
             "calibration error (points).", "",
             "| algorithm | wall s | CPU s | cv fit s | mean fold accuracy | pooled accuracy | "
             "ALP gap | share gap | NPS gap | NPS calibration error |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    groups = groups_for_schema(survey.schema)
    notes = []
    for algorithm_id in algorithms:
        wall, cpu = time.perf_counter(), time.process_time()
        cv, evaluation = evaluate_algorithm(survey, algorithm_id, plan, folds=FOLDS, seed=SEED,
                                            preset=PRESET, n_jobs=n_jobs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        pooled = float((cv.y_pred == cv.y_true).mean())
        gap = alp_gap(cv.y_true, cv.proba, cv.classes, groups=groups)
        lines.append(f"| {algorithm_id} | {wall:.1f} | {cpu:.1f} | {cv.fit_seconds:.1f} | "
                     f"{evaluation.mean('original', 'accuracy'):.4f} | {pooled:.4f} | "
                     f"{gap.accuracy_gap:+.4f} | {gap.share_gap:.4f} | {gap.net_gap:+.1f} | "
                     f"{gap.net_calibration_error:.1f} |")
        notes += [f"- {w}" for w in cv.warnings]
        print(lines[-1], flush=True)
    return "\n".join(["## CNN against the MLP and logistic regression", "", *lines]
                     + ([""] + notes if notes else []))


if __name__ == "__main__":
    print(run(tuple(sys.argv[1:]) or ("lr", "cnn", "ann")))
