"""Peak memory on hostile files (issue 7): each file of ``tests/data/bad/`` is loaded in its own
subprocess, which reports its peak RSS (VmHWM, see ``_rss.py``), its reader child's and the outcome; the baseline is the
same subprocess loading the clean bundled sample (telecom_nps.xlsx) in the same run, and an
interpreter that only imports the library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _rss import PEAK_KB_SOURCE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"

CHILD = PEAK_KB_SOURCE + """
import json, sys, time
from cx_app.errors import CxAppError
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import load_schema
schema = load_schema(sys.argv[2]) if sys.argv[2] != "-" else None
t = time.perf_counter()
outcome = "imported only"
if sys.argv[1] != "-":
    try:
        data = load_survey(sys.argv[1], schema=schema)
        outcome = f"accepted: {data.quality.rows_used} of {data.quality.rows_read} rows used"
    except CxAppError as exc:
        outcome = type(exc).__name__
import resource
reader_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the workbook reader's child
print(json.dumps({"rss_mb": peak_kb() / 1024, "reader_mb": reader_kb / 1024,
                  "seconds": time.perf_counter() - t, "outcome": outcome}))
"""


def _measure(path: str, schema: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, path, schema], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    if out.returncode != 0:
        return {"rss_mb": float("nan"), "reader_mb": float("nan"), "seconds": float("nan"),
                "outcome": f"CRASHED (exit {out.returncode})"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run() -> str:
    idle = _measure("-", "-")
    sample = ROOT / "sample_surveys" / "telecom_nps.xlsx"
    base = _measure(str(sample), str(ROOT / "survey_schemas" / "telecom_nps.yaml"))
    schema = str(BAD / "schema.yaml")
    rows = []
    for path in sorted(BAD.glob("*")):
        if path.suffix not in (".xlsx", ".csv"):
            continue
        m = _measure(str(path), schema)
        rows.append(f"| {path.name} | {path.stat().st_size:,} | {m['outcome']} | "
                    f"{m['rss_mb']:.0f} | {m['rss_mb'] / base['rss_mb']:.2f} | "
                    f"{m['reader_mb']:.0f} | {m['seconds']:.3f} |")
    worst = max(float(r.split("|")[5]) for r in rows)
    return (
        "## Hostile files: peak memory (bench_hostile)\n\n"
        f"Baselines in the same run: interpreter with the library imported "
        f"{idle['rss_mb']:.0f} MB; loading the clean sample telecom_nps.xlsx "
        f"({base['outcome']}) {base['rss_mb']:.0f} MB in {base['seconds']:.2f} s "
        f"(its workbook reader's child: {base['reader_mb']:.0f} MB). "
        f"Worst hostile file: {worst:.2f}× the clean-sample peak of the importing process. "
        "The reader's child (`survey/sheet_reader.py`, its own memory and CPU limits) is "
        "measured apart: its peak counts the pages of the process it was started from, so it "
        "is an upper bound; 0 where no child was started (CSV, or refused before).\n\n"
        "| file | bytes | outcome | peak RSS (MB) | × clean sample | reader child (MB) | "
        "load (s) |\n"
        "|---|---:|---|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n"
    )


if __name__ == "__main__":
    print(run())
