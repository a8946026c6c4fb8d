"""Tracker: 12 unlabeled waves × 5 region segments from a saved model — time to first chart.

A CX team opens the New wave page (or runs ``cx-app estimate --model M W1 … W12 --by
region``) with a year of monthly waves. Measured here, in one process, from files on disk:

* **ours** — what the page does before its first chart: load the model file (skops, trusted
  types), read the 12 wave files with ``load_survey(..., scoring=True)`` (schema from the
  model), :func:`track_waves` with ``by="region"`` (estimate, intervals, 5 segments each),
  :func:`tracker_frame` (significance flags) and the Vega-Lite spec of the trend chart;
* **baseline** (same run) — the bare minimum any tool does: ``pandas.read_csv`` of the 12
  files and the fitted estimator's ``predict_proba`` on their attribute columns (median-filled).

Also the CLI's wall time for the same command (a fresh Python process: imports included).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cx_app.estimate.model_file import load_model, save_model  # noqa: E402
from cx_app.estimate.tracker import track_waves, tracker_frame  # noqa: E402
from cx_app.estimate.training import train_model  # noqa: E402
from cx_app.reports.charts import nps_trend_chart  # noqa: E402
from cx_app.survey.importing import load_survey  # noqa: E402
from cx_app.survey.samples import simulate_telecom_waves  # noqa: E402
from cx_app.survey.schema import load_schema  # noqa: E402

WAVES = 12
PER_OPERATOR = 400  # 3 operators → 1,200 respondents per wave; 5 regions = the segments
BY = "region"
REPEATS = 3
DRIFTS = (0.0, 0.05, 0.1, 0.0, -0.05, -0.1, 0.15, 0.2, 0.1, 0.0, -0.1, 0.05)


def _ours(model_path: Path, files: list[Path]) -> tuple[float, dict[str, float], int]:
    parts: dict[str, float] = {}
    start = time.perf_counter()
    model = load_model(model_path)
    parts["model file"] = time.perf_counter() - start
    t = time.perf_counter()
    surveys = [load_survey(f.read_bytes(), schema=model.schema, filename=f.name,
                           require_target=False, require_attributes=False, scoring=True)
               for f in files]
    parts["read 12 waves"] = time.perf_counter() - t
    t = time.perf_counter()
    tracked = track_waves(model, surveys, by=BY)
    parts["estimate + segments"] = time.perf_counter() - t
    t = time.perf_counter()
    frame = tracker_frame(tracked)
    nps_trend_chart(frame.dropna(subset=["nps"]), wave_title="Wave").to_dict()
    parts["table + chart"] = time.perf_counter() - t
    return time.perf_counter() - start, parts, len(frame)


def _baseline(model_path: Path, files: list[Path], columns: list[str]) -> float:
    model = load_model(model_path)  # not timed: the baseline gets its estimator for free
    estimator = model.estimator
    start = time.perf_counter()
    for f in files:
        frame = pd.read_csv(f)
        X = frame[columns].apply(pd.to_numeric, errors="coerce")
        estimator.predict_proba(X.fillna(X.median()).to_numpy(dtype=float))
    return time.perf_counter() - start


def run() -> str:
    schema = load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        train = load_survey(simulate_telecom_waves([1, 2, 3], respondents_per_operator=300,
                                                   seed=5).to_csv(index=False).encode(),
                            schema=schema, filename="train.csv")
        trained = train_model(train, "lr", calibration="none", folds=5)
        model_path = save_model(trained.model, tmp_path / "lr.skops")
        files = []
        for k in range(WAVES):
            frame = simulate_telecom_waves([10 + k], respondents_per_operator=PER_OPERATOR,
                                           seed=400 + k, drift=DRIFTS[k])
            frame = frame.drop(columns=[schema.target.column])  # unlabeled waves
            path = tmp_path / f"wave{k + 1:02d}.csv"
            frame.to_csv(path, index=False)
            files.append(path)
        columns = [a.column for a in schema.attributes]
        ours, bases, parts_all, rows = [], [], [], 0
        for _ in range(REPEATS):
            total, parts, rows = _ours(model_path, files)
            ours.append(total)
            parts_all.append(parts)
            bases.append(_baseline(model_path, files, columns))
        cli = []
        for _ in range(2):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "cx_app", "estimate", "--model", str(model_path),
                 *map(str, files), "--by", BY, "--json"],
                capture_output=True, text=True, cwd=ROOT, check=False)
            cli.append(time.perf_counter() - start)
            if done.returncode != 0:
                raise RuntimeError(done.stderr[-2000:])
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import cx_app.cli"], check=True, cwd=ROOT)
        cli_import = time.perf_counter() - start
    ours_s, base_s = float(np.median(ours)), float(np.median(bases))
    median_parts = {k: float(np.median([p[k] for p in parts_all])) for k in parts_all[0]}
    load = os.getloadavg()[0]
    lines = [
        "## Tracker: 12 waves × 5 segments from a saved model (time to first chart)",
        "",
        f"{WAVES} unlabeled telecom waves of {3 * PER_OPERATOR:,} respondents (CSV files on "
        "disk), a saved logistic-regression model, one estimate per wave and per region (5) "
        f"({rows} tracker rows with intervals and change flags). Median of {REPEATS} runs; "
        f"load average {load:.1f} on {os.cpu_count()} cores.",
        "",
        "| measure | seconds | × baseline |",
        "|---|---|---|",
        f"| baseline: pandas read_csv + predict_proba of the 12 files | {base_s:.2f} | 1.00 |",
        f"| **time to first chart** (model file → chart spec) | {ours_s:.2f} | "
        f"{ours_s / base_s:.2f} |",
        *[f"| — {k} | {v:.2f} | {v / base_s:.2f} |" for k, v in median_parts.items()],
        f"| CLI `cx-app estimate --model M W1 … W12 --by region --json` (new process) | "
        f"{float(np.median(cli)):.2f} | {float(np.median(cli)) / base_s:.2f} |",
        f"| — of which Python start + `import cx_app.cli` | {cli_import:.2f} | "
        f"{cli_import / base_s:.2f} |",
        "",
        "Target (issue 13): measured, no fixed target; the page shows its first chart after "
        "the time above plus rendering.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
