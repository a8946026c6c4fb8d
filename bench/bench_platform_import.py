"""Import time of a 200,000-row Qualtrics CSV export against the same rows with one header row.

The Qualtrics file has its three header rows (field names, question texts, ImportId JSON),
platform columns and personal data (dropped at import), the NPS question with its derived
``Q1_NPS_GROUP``, a 1–5 matrix and open text; the baseline is the same file without the two
extra header rows, so both go through the same layout stage and the difference is what
recognising the platform costs. Goal (issue 34): within 1.5x. Best of 3 runs each, alternated.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROWS = 200_000


def _files(folder: Path) -> tuple[Path, Path]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "survey"))
    import pandas as pd
    import platform_exports as exports

    truth = exports.answers(ROWS, seed=11)
    qualtrics = exports.qualtrics_csv(truth, folder / "qualtrics.csv")
    table = pd.read_csv(qualtrics, header=None, dtype=str, keep_default_na=False)
    plain = folder / "plain.csv"
    pd.concat([table.iloc[:1], table.iloc[3:]]).to_csv(plain, index=False, header=False,
                                                        encoding="utf-8-sig")
    return qualtrics, plain


def run() -> str:
    import tempfile

    from cx_app.survey.importing import load_survey

    with tempfile.TemporaryDirectory() as tmp:
        qualtrics, plain = _files(Path(tmp))
        best = {"qualtrics": float("inf"), "plain": float("inf")}
        n = {}
        for _ in range(3):
            for key, path in (("qualtrics", qualtrics), ("plain", plain)):
                start = time.perf_counter()
                survey = load_survey(path)
                best[key] = min(best[key], time.perf_counter() - start)
                n[key] = survey.quality.respondents
    ratio = best["qualtrics"] / best["plain"]
    return (
        "## Platform export import (issue 34)\n\n"
        f"{ROWS:,} rows, inferred layout (`load_survey(path)`), best of 3, machine shared with "
        "other jobs (ratios only).\n\n"
        "| file | seconds | respondents |\n|---|---|---|\n"
        f"| Qualtrics CSV, 3 header rows | {best['qualtrics']:.2f} | {n['qualtrics']:,} |\n"
        f"| same rows, one header row (baseline) | {best['plain']:.2f} | {n['plain']:,} |\n\n"
        f"Ratio Qualtrics / one-row header: **{ratio:.2f}x** (goal ≤ 1.5x).\n")
