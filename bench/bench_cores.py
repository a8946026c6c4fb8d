"""Issue 38: `cx-app evaluate` as a whole process, one pool for the whole run, every core by
default: time and peak memory of the process *and its worker processes* (their resident sets
summed, sampled every 0.1 s from /proc), against ``--n-jobs 1`` in the same run.

- the papers' nine algorithms (lr, svm, knn, nb, dt, rf, ann, xgb, cnn) × 10 folds on the
  bundled sample (target: ≤ 40 s and < 1 GB on 2 cores);
- rf, knn, ann × 10 folds on 20,000 respondents resampled from the sample with new ids
  (target: the default ≤ 0.6× ``--n-jobs 1``).

``CX_BENCH_CORES_BEFORE=/path/to/older/checkout`` also runs the nine algorithms with that
checkout's code (``PYTHONPATH``) and its default: the "before" row, alternating with "now".
Results documents of the arms are compared without their wall-clock fields. The 16-core run is ``bench/device/scale16.sh``.
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


def _mean_load(fn, *args):
    """``fn(*args)`` and the mean 1-minute load average while it ran (sampled every second)."""
    loads, done = [], threading.Event()

    def sample() -> None:
        while not done.wait(1.0):
            loads.append(os.getloadavg()[0])

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        return fn(*args), (sum(loads) / len(loads) if loads else os.getloadavg()[0])
    finally:
        done.set()
        watcher.join()


def run() -> str:
    """Each case's arms alternate (a, b, then b, a in a second round...; rounds per case from
    ``CX_BENCH_CORES_ROUNDS``, e.g. ``1,2``), so that both see the same load; the ratio is
    taken per round."""
    rounds = [int(r) for r in os.environ.get("CX_BENCH_CORES_ROUNDS", "1,1").split(",")]
    before = os.environ.get("CX_BENCH_CORES_BEFORE")
    load = [os.getloadavg()]
    rows, same = [], []
    with tempfile.TemporaryDirectory(prefix="cx-bench-cores-") as folder:
        w = Path(folder)
        big = _resampled(20_000, w / "big.csv")
        cases = [("nine algorithms, sample (7,506)", SAMPLE, NINE),
                 ("rf, knn, ann, 20,000 respondents", big, THREE)]
        for (label, data, algorithms), case_rounds in zip(cases, rounds, strict=True):
            common = [str(data), "--schema", str(SCHEMA), "--algorithms", algorithms,
                      "--folds", "10"]
            if algorithms == NINE:  # the target is about the default: before vs now
                arms = [("default (every core)", ROOT, [])]
                if before:
                    arms.insert(0, (f"before (its default, {Path(before).name})", Path(before), []))
            else:
                arms = [("--n-jobs 1", ROOT, ["--n-jobs", "1"]), ("default (every core)", ROOT, [])]
            for r in range(case_rounds):
                results = {}
                for mode, code, extra in (arms if r % 2 == 0 else arms[::-1]):
                    out = w / f"{len(rows)}"
                    (wall, peak), mean = _mean_load(
                        _run, ["evaluate", *common, *extra, "--out", str(out)], code)
                    results[mode] = (wall, peak, _document(out))
                    rows.append(f"| {label} | {mode} | {r + 1} | {wall:.1f} | {peak:.0f} | "
                                f"{mean:.1f} |")
                    print(f"[bench_cores] {rows[-1]}", flush=True)
                if len(arms) == 2:
                    (ma, _, _), (mb, _, _) = arms
                    (a, pa, da), (b, pb, db) = results[ma], results[mb]
                    same.append(f"- {label}, round {r + 1}: {mb} ÷ {ma} time **{b / a:.2f}×**, "
                                f"peak {pb:.0f} vs {pa:.0f} MB; results.json identical: {da == db}")
    load.append(os.getloadavg())
    return "\n".join([
        "## Cores: one pool for the whole run, every core by default (issue 38)",
        "",
        f"`cx-app evaluate` as a whole process, 10 folds, on {os.cpu_count()} cores; peak = the "
        "largest sum of the resident sets of the process and its worker processes (sampled "
        "every 0.1 s). The arms of a case alternate; the last column is the mean 1-minute load "
        "average while the run ran. Load average before "
        + " / ".join(f"{v:.2f}" for v in load[0]) + ", after "
        + " / ".join(f"{v:.2f}" for v in load[1])
        + " (the machine was shared with other jobs: read the ratios).",
        "",
        "| run | mode | round | wall s | peak MB (all processes) | load |",
        "|---|---|---:|---:|---:|---:|",
        *rows,
        "",
        *same,
    ]) + "\n"


if __name__ == "__main__":
    print(run())
