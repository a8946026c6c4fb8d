"""Import speed: ``load_survey`` against calamine's raw parse and ``pandas.read_excel`` with the
calamine engine, in one run, on the same workbooks.

Writes two 200,000-respondent workbooks in the telecom layout (openpyxl write-only mode): the
usual one (5% code 99, 1% "Don't know" in the attributes) and a messy variant (also blanks,
code variants in any case, decimals, out-of-scale scores, decimal-comma and stray text, blank
and coded targets, repeated ids). Then, each reader in a fresh subprocess, best of
``BENCH_IMPORT_REPEATS`` runs (default 5, interleaved):

(a) calamine's raw parse: ``CalamineWorkbook.from_path(...).get_sheet_by_name(...).to_python()``;
(b) ``pandas.read_excel(path, engine="calamine")`` (no cleaning at all);
(c) ``load_survey(path)`` without a schema: layout inference and the full quality report;
(d) ``load_survey`` with the bundled ``survey_schemas/telecom_nps.yaml``.

Each child times the call apart from its imports (the verdict uses the call; the table gives
both). Targets (issue 12): (c) ≤ 1.5× (a); peak memory ≤ 2× pandas' (VmHWM of each child, see
``_rss.py``). A last child profiles (c) (cProfile) to say where its time goes.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rss import PEAK_KB_SOURCE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
N_RESPONDENTS = int(os.environ.get("BENCH_IMPORT_ROWS", "200000"))
REPEATS = int(os.environ.get("BENCH_IMPORT_REPEATS", "5"))
SHEET = "Responses"
SCHEMA = ROOT / "survey_schemas" / "telecom_nps.yaml"
ATTRIBUTES = ["Tariff plan", "Network - voice", "Network - data", "Shops", "Call center",
              "Website", "Mobile app", "Billing", "Roaming"]
HEADER = ["Respondent ID", "Operator", "Wave", "Interview date", "Region",
          "Likelihood to recommend (0-10)", *ATTRIBUTES]

_REPORT = """
t, c = time.perf_counter(), time.process_time()
result = read()
seconds, cpu, peak = time.perf_counter() - t, time.process_time() - c, peak_kb()
t = time.perf_counter()
read()  # again in the same process: the app's case from its second file on
print(json.dumps({"seconds": seconds, "warm": time.perf_counter() - t, "imports": t - t0 - seconds,
                  "cpu": cpu, "maxrss_kb": peak, **result}))
"""
RAW = PEAK_KB_SOURCE + """
import sys, time, json
t0 = time.perf_counter()
import python_calamine
def read():
    rows = python_calamine.CalamineWorkbook.from_path(sys.argv[1]).get_sheet_by_name(
        sys.argv[2]).to_python()
    return {"rows": len(rows) - 1}
""" + _REPORT
PANDAS = PEAK_KB_SOURCE + """
import sys, time, json
t0 = time.perf_counter()
import pandas as pd
import python_calamine
def read():
    return {"rows": len(pd.read_excel(sys.argv[1], sheet_name=sys.argv[2], engine="calamine"))}
""" + _REPORT
OURS = PEAK_KB_SOURCE + """
import sys, time, json
t0 = time.perf_counter()
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import load_schema
def read():
    schema = load_schema(sys.argv[3]) if len(sys.argv) > 3 else None
    q = load_survey(sys.argv[1], schema=schema).quality
    return {"rows": q.rows_read, "respondents": q.respondents, "rows_used": q.rows_used,
            "excluded": len(q.excluded)}
""" + _REPORT
PHASES = """
import cProfile, json, pstats, sys
from cx_app.survey.importing import load_survey
profile = cProfile.Profile()
profile.runcall(load_survey, sys.argv[1])
stats = pstats.Stats(profile).stats
def cumulative(name, where=""):
    return sum(v[3] for (f, _, fn), v in stats.items() if fn == name and where in f)
def builtin(name):  # calamine's methods: cProfile names them "<method 'to_python' of ...>"
    return sum(v[3] for (f, _, fn), v in stats.items() if f == "~" and f"{name}" in fn)
phases = {
    "archive safety scan (xml_safety.check_workbook_archive)":
        cumulative("check_workbook_archive", "xml_safety"),
    "calamine parse (open; shards cut, copied, parsed in threads, to_python)":
        builtin("from_filelike") + cumulative("parse_in_shards", "sheet_shards")
        + cumulative("_parse_whole", "reading"),
    "grid to frame + blank masks (_frame_from_grid)": cumulative("_frame_from_grid"),
    "layout inference (infer_schema)": cumulative("infer_schema", "schema"),
    "cleaning + quality report (_clean)": cumulative("_clean", "importing"),
}
total = cumulative("load_survey", "importing")
phases["other (file read, sha256, header matching, ...)"] = total - sum(phases.values())
print(json.dumps({"total": total, "phases": phases}))
"""


def write_workbook(path: Path, n: int, seed: int = 0, messy: bool = False) -> None:
    from openpyxl import Workbook

    rng = np.random.default_rng(seed)
    k = len(ATTRIBUTES)
    attrs = rng.integers(1, 11, size=(n, k)).astype(object)
    attrs[rng.random((n, k)) < 0.05] = 99
    attrs[rng.random((n, k)) < 0.01] = "Don't know"
    nps = rng.integers(0, 11, size=n).astype(object)
    ids = np.array([f"T{i + 1:06d}" for i in range(n)], dtype=object)
    if messy:
        for share, cell in ((0.03, None), (0.003, " don't KNOW "), (0.002, "N/A"),
                            (0.002, 7.5), (0.002, 11), (0.001, "7,5"), (0.001, "good")):
            attrs[rng.random((n, k)) < share] = cell
        nps[rng.random(n) < 0.005] = None
        nps[rng.random(n) < 0.002] = 99
        repeated = rng.random(n) < 0.001
        ids[repeated] = ids[rng.integers(0, n, size=int(repeated.sum()))]
    operators = rng.integers(0, 3, size=n)
    waves = rng.integers(1, 7, size=n)
    regions = ["North", "South", "East", "West", "Centre"]
    region = rng.integers(0, len(regions), size=n)
    day0 = dt.datetime(2021, 1, 1)
    wb = Workbook(write_only=True)
    ws = wb.create_sheet(SHEET)
    ws.append(HEADER)
    for i in range(n):
        target = nps[i] if nps[i] is None or isinstance(nps[i], str) else int(nps[i])
        ws.append([ids[i], f"Operator {'ABC'[operators[i]]}", f"2021-{waves[i]:02d}",
                   day0 + dt.timedelta(days=int(30 * (waves[i] - 1) + i % 28)),
                   regions[region[i]], target, *attrs[i].tolist()])
    wb.save(path)


def _measure(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


READERS = {
    "raw": ("calamine raw parse (`get_sheet_by_name().to_python()`)", RAW),
    "pandas": ("`pandas.read_excel(engine=\"calamine\")` (no cleaning)", PANDAS),
    "infer": ("`load_survey(path)`: inference + full quality report", OURS),
    "schema": ("`load_survey(path, schema=telecom_nps.yaml)`", OURS),
}


def _bench_file(path: Path) -> dict[str, dict]:
    best: dict[str, dict] = {}
    for _ in range(REPEATS):  # interleaved, so that a busy moment hits every reader alike
        for key, (_, code) in READERS.items():
            args = [str(path), SHEET] + ([str(SCHEMA)] if key == "schema" else [])
            run = _measure(code, *args)
            warm = min(run["warm"], best.get(key, {}).get("warm", run["warm"]))
            if key not in best or run["seconds"] < best[key]["seconds"]:
                peak = max(run["maxrss_kb"], best.get(key, {}).get("maxrss_kb", 0))
                best[key] = {**run, "maxrss_kb": peak}
            else:
                best[key]["maxrss_kb"] = max(best[key]["maxrss_kb"], run["maxrss_kb"])
            best[key]["warm"] = warm
    return best


def _table(results: dict[str, dict]) -> str:
    raw, pandas = results["raw"], results["pandas"]
    raw_total = raw["seconds"] + raw["imports"]
    lines = ["| reader | time (s) | × raw parse | with imports (s) | × raw parse | "
             "warm (s) | × raw parse | CPU (s) | peak RSS (MB) | × pandas peak | rows |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for key, (label, _) in READERS.items():
        r = results[key]
        rows = (f"{r['rows_used']:,} in the model base, {r['respondents']:,} in the survey "
                f"base of {r['rows']:,}" if "rows_used" in r else f"{r['rows']:,}")
        total = r["seconds"] + r["imports"]
        lines.append(f"| {label} | {r['seconds']:.2f} | {r['seconds'] / raw['seconds']:.2f} | "
                     f"{total:.2f} | {total / raw_total:.2f} | {r['warm']:.2f} | "
                     f"{r['warm'] / raw['warm']:.2f} | {r['cpu']:.2f} | "
                     f"{r['maxrss_kb'] / 1024:.0f} | {r['maxrss_kb'] / pandas['maxrss_kb']:.2f} "
                     f"| {rows} |")
    return "\n".join(lines) + "\n"


def _verdict(results: dict[str, dict]) -> str:
    raw, pandas, ours = results["raw"], results["pandas"], results["infer"]
    ratio = ours["seconds"] / raw["seconds"]
    with_imports = (ours["seconds"] + ours["imports"]) / (raw["seconds"] + raw["imports"])
    memory = ours["maxrss_kb"] / pandas["maxrss_kb"]
    warm = ours["warm"] / raw["warm"]
    return (f"`load_survey` without a schema: **{ratio:.2f}× the raw parse** in a fresh process "
            f"(target ≤ 1.5×: {'met' if ratio <= 1.5 else 'NOT met'}); **{warm:.2f}× warm** "
            f"({'within' if warm <= 1.5 else 'above'} the target); {with_imports:.2f}× counting each "
            f"process's imports; {ours['seconds'] / pandas['seconds']:.2f}× pandas + calamine; "
            f"peak memory **{memory:.2f}× pandas'** (target ≤ 2×: "
            f"{'met' if memory <= 2 else 'NOT met'}).")


def run() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, messy in (("telecom", False), ("messy", True)):
            path = Path(tmp) / f"{name}_{N_RESPONDENTS}.xlsx"
            t = time.perf_counter()
            write_workbook(path, N_RESPONDENTS, messy=messy)
            files[name] = (path, time.perf_counter() - t, path.stat().st_size / 1e6)
        results = {name: _bench_file(path) for name, (path, _, _) in files.items()}
        profile = json.loads(subprocess.run(
            [sys.executable, "-c", PHASES, str(files["telecom"][0])], capture_output=True,
            text=True, check=True, cwd=ROOT).stdout.strip().splitlines()[-1])
    telecom, messy = files["telecom"], files["messy"]
    shares = "\n".join(
        f"| {phase} | {seconds:.2f} | {seconds / profile['total']:.0%} |"
        for phase, seconds in profile["phases"].items())
    return (
        "## Import: load_survey vs calamine's raw parse and pandas + calamine\n\n"
        f"Workbooks: {N_RESPONDENTS:,} respondents × {len(HEADER)} columns, telecom layout, "
        "written by openpyxl (write-only). *Telecom*: 5% code 99 and 1% \"Don't know\" in the "
        f"attributes ({telecom[2]:.1f} MB, written in {telecom[1]:.0f} s). *Messy*: also 3% "
        "blank attribute cells, code variants (\" don't KNOW \", \"N/A\"), decimals, "
        "out-of-scale scores, \"7,5\" and stray text, blank and coded targets, 0.1% repeated "
        f"ids ({messy[2]:.1f} MB, written in {messy[1]:.0f} s). Each reader runs in a fresh "
        f"process; best of {REPEATS} interleaved runs; peak RSS is the child's VmHWM (largest "
        "of the runs). *Time* is the first call (reading a workbook), timed after the "
        "process has imported its libraries; *with imports* adds them (pandas, numpy, "
        "pydantic: what a fresh `cx-app` command pays once, the app never); *warm* is a "
        "second call in the same process (the app from its second file on: no first-touch "
        "memory or first-use costs; best of the runs). CPU (of the first call) above wall "
        "time means more than one core worked. The openpyxl reader is no longer measured (85 "
        "s for the telecom file in an earlier run).\n\n"
        "### Telecom workbook\n\n" + _table(results["telecom"]) + "\n" + _verdict(
            results["telecom"]) + "\n\n"
        "### Messy workbook\n\n" + _table(results["messy"]) + "\n" + _verdict(
            results["messy"]) + "\n\n"
        "### Where `load_survey` (no schema, telecom workbook) spends its time\n\n"
        "cProfile of one call in a fresh process (wall time of the main thread; profiling "
        "inflates Python-heavy phases a little):\n\n"
        "| phase | seconds | share |\n|---|---:|---:|\n" + shares + "\n\n"
        "How it keeps up with the raw parse, which does much less (no safety scan, no "
        "cleaning, one core): (1) the archive safety scan (`xml_safety`) reads the sheet's "
        "cell positions as calamine does, in numpy on 1 MB pieces scanned two at a time in "
        "threads while the main thread inflates the next ones, and keeps the sheet's XML; "
        "(2) calamine parses that XML in shards, twice as many as cores, each a stored copy "
        "of the workbook cut before a `<row r=\"…\">` tag, in one thread per core "
        "(python-calamine releases the GIL), each shard's rows and its block of the cell "
        "array made while the others parse, with the garbage collector paused (`sheet_shards`; the grid is identical to one "
        "parse, property-tested); (3) everything after calamine reads each cell's type once "
        "over the whole grid in memory order, cleans floats in numpy, plain strings as one "
        "pandas string array, and runs the cell-by-cell reference only once per distinct "
        "text; (4) while it reads, freed memory stays in the process for reuse (`heap`: glibc's "
        "thresholds raised by `mallopt`, `malloc_trim` after), where by default glibc gave "
        "every large freed block back and the next one faulted its pages in again (450,000 "
        "page faults and over a second of system time per call before; about 180,000 now, "
        "for a higher peak: still within 2× pandas'). The raw parse spends most of its time "
        "in calamine's single-threaded parse, which the shards split across the cores.\n"
    )


if __name__ == "__main__":
    print(run())
