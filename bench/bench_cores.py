"""Issue 38: `cx-app evaluate` as a whole process, one pool for the whole run, every core by
default: time and peak memory of the process *and its worker processes* (their resident sets
summed, sampled every 0.1 s from /proc), against ``--n-jobs 1`` in the same run.

- the papers' nine algorithms (lr, svm, knn, nb, dt, rf, ann, xgb, cnn) × 10 folds on the
  bundled sample (target: ≤ 40 s and < 1 GB on 2 cores);
- rf, knn, ann × 10 folds on 20,000 respondents resampled from the sample with new ids
  (target: the default ≤ 0.6× ``--n-jobs 1``).

``CX_BENCH_CORES_BEFORE=/path/to/older/checkout`` also runs the nine algorithms with that
checkout's code (``PYTHONPATH``) and its default: the "before" row. Results documents of the
modes are compared without their wall-clock fields. The 16-core run is ``bench/device/scale16.sh``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_surveys" / "telecom_nps.xlsx"
SCHEMA = ROOT / "survey_schemas" / "telecom_nps.yaml"
NINE = "lr,svm,knn,nb,dt,rf,ann,xgb,cnn"
THREE = "rf,knn,ann"


def _tree_rss_kb(root: int) -> int:
    """Resident KiB of ``root`` and every process below it, now."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, IndexError, ValueError):
            continue
    mine, grew = {root}, True
    while grew:
        more = {p for p, parent in parents.items() if parent in mine} - mine
        grew, mine = bool(more), mine | more
    return sum(rss.get(p, 0) for p in mine)


def _run(args: list[str], pythonpath: Path = ROOT) -> tuple[float, float]:
    """(wall s, peak MB of the process tree) of ``python -m cx_app ARGS``."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "cx_app", *args], env=env, cwd=pythonpath,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    done.set()
    watcher.join()
    if proc.returncode != 0:
        raise RuntimeError(f"cx-app {' '.join(args)} failed: {err.decode()[-2000:]}")
    return wall, peak[0] / 1024


def _resampled(n: int, path: Path) -> Path:
    from cx_app.survey.importing import load_survey

    raw = load_survey(SAMPLE).frame
    rows = raw.iloc[np.random.default_rng(0).integers(0, len(raw), n)].reset_index(drop=True)
    rows["respondent_id"] = np.arange(1, n + 1)  # new respondents, not duplicates
    rows.to_csv(path, index=False)
    return path


def _document(out: Path) -> dict:
    from cx_app.provenance import without_wall_clock

    return without_wall_clock(json.loads((out / "results.json").read_text()))


def run() -> str:
    load = [os.getloadavg()]
    rows, same = [], []
    with tempfile.TemporaryDirectory(prefix="cx-bench-cores-") as folder:
        w = Path(folder)
        big = _resampled(20_000, w / "big.csv")
        cases = [("nine algorithms, sample (7,506)", SAMPLE, NINE),
                 ("rf, knn, ann, 20,000 respondents", big, THREE)]
        for label, data, algorithms in cases:
            common = [str(data), "--schema", str(SCHEMA), "--algorithms", algorithms,
                      "--folds", "10"]
            results = {}
            for mode, extra in (("--n-jobs 1", ["--n-jobs", "1"]), ("default (every core)", [])):
                out = w / f"{len(rows)}"
                wall, peak = _run(["evaluate", *common, *extra, "--out", str(out)])
                results[mode] = (wall, peak, _document(out))
                rows.append(f"| {label} | {mode} | {wall:.1f} | {peak:.0f} |")
            (a, pa, da), (b, pb, db) = results.values()
            same.append(f"- {label}: default ÷ `--n-jobs 1` time **{b / a:.2f}×**, peak "
                        f"{pb / pa:.2f}×; results.json identical: {da == db}")
            before = os.environ.get("CX_BENCH_CORES_BEFORE")
            if before and algorithms == NINE:
                out = w / "before"
                wall, peak = _run(["evaluate", *common, "--out", str(out)], Path(before))
                rows.append(f"| {label} | before (its default, {Path(before).name}) | "
                            f"{wall:.1f} | {peak:.0f} |")
                same.append(f"- {label}: before → now (defaults) time {wall:.1f} → {b:.1f} s, "
                            f"peak {peak:.0f} → {pb:.0f} MB; results.json identical: "
                            f"{_document(out) == db}")
    load.append(os.getloadavg())
    return "\n".join([
        "## Cores: one pool for the whole run, every core by default (issue 38)",
        "",
        f"`cx-app evaluate` as a whole process, 10 folds, on {os.cpu_count()} cores; peak = the "
        "largest sum of the resident sets of the process and its worker processes (sampled "
        "every 0.1 s). Load average before "
        + " / ".join(f"{v:.2f}" for v in load[0]) + ", after "
        + " / ".join(f"{v:.2f}" for v in load[1])
        + " (the machine was shared with other jobs: read the ratios).",
        "",
        "| run | mode | wall s | peak MB (all processes) |",
        "|---|---|---:|---:|",
        *rows,
        "",
        *same,
    ]) + "\n"


if __name__ == "__main__":
    print(run())
