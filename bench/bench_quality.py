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

from quality_reference import (  # noqa: E402
    FOLDS,
    SURVEYS,
    load_quality_survey,
    quality_row,
    reference_tolerance,
)

from cx_app.models.algorithms import ALGORITHMS  # noqa: E402

MEDIAN_SLACK = 0.01


def _log(message: str) -> None:
    print(f"[bench_quality] {message}", flush=True)


def measure() -> list:
    """One :class:`QualityRow` per (survey, algorithm)."""
    algorithms = os.environ.get("CX_BENCH_QUALITY_ALGORITHMS", ",".join(ALGORITHMS)).split(",")
    surveys = os.environ.get("CX_BENCH_QUALITY_SURVEYS", ",".join(SURVEYS)).split(",")
    rows = []
    for name in surveys:
        survey = load_quality_survey(name)
        for a in algorithms:
            row = quality_row(a, survey)
            rows.append(row)
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
        "tolerance max(0.01, 2 SE). Δ = default − median.",
        "",
        "| survey | algorithm | n | acc | F1 | median acc | Δ | ref acc ± SE | ref F1 ± SE "
        "| majority | s | verdict |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.survey} | {r.algorithm_id} | {r.n:,} | {r.accuracy:.4f} | {r.macro_f1:.4f} "
            f"| {r.median_accuracy:.4f} | {r.accuracy - r.median_accuracy:+.4f} "
            f"| {r.reference.accuracy:.4f} ± {r.reference.accuracy_se:.4f} "
            f"| {r.reference.macro_f1:.4f} ± {r.reference.macro_f1_se:.4f} "
            f"| {r.majority_rate:.4f} | {r.seconds:.1f} | {_verdict(r)} |")
    lines += ["", f"(bench_quality took {seconds:.0f} s; load average at the end "
                  f"{' / '.join(f'{v:.2f}' for v in os.getloadavg())})"]
    return "\n".join(lines)


def run() -> str:
    start = time.perf_counter()
    rows = measure()
    return section(rows, time.perf_counter() - start)


if __name__ == "__main__":
    print(run())
