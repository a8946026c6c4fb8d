"""Issue 36 acceptance, tried as a new user would: the bank program's segment alerts over ten
later quarters, through the CLI, against the generator's truth.

The messy bank export (:mod:`cx_app.simulation.bank_export`, seed 7, ``N`` respondents per
quarter; two brands and four regions; the whole satisfaction trends upwards by 0.03 SD per
quarter): the reference survey is 2026-Q1..Q4 in one file, then ten quarters 2027-Q1..2029-Q2,
one file each. Commands, with a scratch workspace database: ``cx-app program create bank
REFERENCE --algorithm lr``, ``program add-wave bank FILE`` ×10, ``program show bank --json``,
``program report bank --out DIR`` (the deck). Truth: a segment-wave *moved* when its E[NPS |
answers] under the true model (:func:`~cx_app.simulation.bank_export.bank_true_probabilities`)
differs from the segment's reference-year value by more than 3 × the SD of its realized NPS at
its size (issue 36's definition). An alert is any ``alert: true`` under
``segments.<segment>.<value>.alerts``; the deck's wave headlines are read back with python-pptx.
"""

from __future__ import annotations

import json
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

from cx_app.simulation.bank_export import (  # noqa: E402
    BRAND_COLUMN,
    REGION_COLUMN,
    bank_true_probabilities,
    simulate_bank_waves,
    write_bank_export,
)

N, REFERENCE_QUARTERS, LATER = 800, 4, 10
SEGMENTS = (("brand", BRAND_COLUMN), ("region", REGION_COLUMN))


def _cli(*args: str) -> tuple[str, float]:
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "cx_app", *args], capture_output=True,
                         text=True, env=env, check=False)
    if out.returncode:
        raise RuntimeError(f"cx-app {' '.join(args)} failed: {out.stderr[-2000:]}")
    return out.stdout, time.perf_counter() - start


def _oracle(frame: pd.DataFrame) -> tuple[float, float]:
    p = bank_true_probabilities(frame)
    promoter, detractor = p[:, 9:].sum(axis=1), p[:, :7].sum(axis=1)
    sd = 100.0 * float(np.sqrt((promoter + detractor - (promoter - detractor) ** 2).sum()))
    return 100.0 * float(np.mean(promoter - detractor)), sd / len(frame)


def run() -> str:
    from pptx import Presentation

    start = time.perf_counter()
    waves = simulate_bank_waves(N, waves=REFERENCE_QUARTERS + LATER, seed=7,
                                drop_in_last_wave=False)
    labels = list(waves)
    reference = pd.concat([waves[k] for k in labels[:REFERENCE_QUARTERS]], ignore_index=True)
    rows, timings = [], {}
    with tempfile.TemporaryDirectory(prefix="bench-bank-") as scratch:
        work = Path(scratch)
        db = ["--db", f"sqlite:///{work}/workspace.db"]
        ref = write_bank_export({k: waves[k] for k in labels[:REFERENCE_QUARTERS]},
                                work / "bank_reference.xlsx")
        _, timings["create"] = _cli("program", "create", "bank", str(ref), "--algorithm", "lr",
                                    *db)
        adds = []
        for label in labels[REFERENCE_QUARTERS:]:
            path = write_bank_export({label: waves[label]}, work / f"bank_{label}.xlsx")
            adds.append(_cli("program", "add-wave", "bank", str(path), *db)[1])
        timings["add-wave (median)"] = float(np.median(adds))
        shown = json.loads(_cli("program", "show", "bank", "--json", *db)[0])
        _cli("program", "report", "bank", "--out", str(work / "report"), *db)
        deck = Presentation(str(work / "report" / "bank.pptx"))
        headlines = [s.shapes.title.text for s in deck.slides if s.shapes.title is not None]
    whole_ref = _oracle(reference)[0]
    for wave in shown["waves"]:
        frame = waves[wave["label"]]
        value, sd = _oracle(frame)
        rows.append({"wave": wave["label"], "segment": "all respondents",
                     "move": value - whole_ref, "three_sd": 3 * sd,
                     "alerts": "(see the deck's headline)"})
        for key, column in SEGMENTS:
            for name in sorted(frame[column].unique()):
                value, sd = _oracle(frame[frame[column] == name])
                level = _oracle(reference[reference[column] == name])[0]
                fired = [f"{a['metric']} {a['direction']} ({a['comparison']})"
                         for a in shown_alerts(wave, key, name) if a["alert"]]
                rows.append({"wave": wave["label"], "segment": f"{key} {name}",
                             "move": value - level, "three_sd": 3 * sd,
                             "alerts": "; ".join(fired)})
    table = pd.DataFrame(rows)
    table["moved"] = table.move.abs() > table.three_sd
    seg = table[table.segment != "all respondents"]
    alerted = seg.alerts != ""
    lines = [
        "## The bank program's segment alerts, tried as a new user would (issue 36)",
        "",
        "`bench/bench_bank_alerts.py` (module docstring): the CLI over the messy bank export, "
        f"reference 2026-Q1..Q4 ({len(reference):,} rows), ten later quarters of {N:,}; truth "
        "from the generator's true model. "
        f"{len(seg)} segment-waves: {int(seg.moved.sum())} moved, {int(alerted.sum())} with "
        f"an alert, **{int((alerted & ~seg.moved).sum())} alerts where the segment did not "
        f"move**, {int((~alerted & seg.moved).sum())} moved segment-waves without an alert. "
        f"create {timings['create']:.0f} s, add-wave {timings['add-wave (median)']:.0f} s "
        f"median; whole section {time.perf_counter() - start:.0f} s (shared machine, load "
        f"average {os.getloadavg()[0]:.1f}).",
        "",
        "| wave | segment | true move | 3 SD | moved | alerts |",
        "|---|---|---:|---:|---|---|",
    ]
    for r in table[((table.alerts != "") & (table.segment != "all respondents"))
                   | table.moved].itertuples():
        lines.append(f"| {r.wave} | {r.segment} | {r.move:+.1f} | {r.three_sd:.1f} | "
                     f"{'yes' if r.moved else 'no'} | {r.alerts} |")
    lines += ["", "The deck's wave headlines:", ""]
    lines += [f"- {h}" for h in headlines if h[:4].isdigit() and ":" in h[:8]]
    return "\n".join(lines) + "\n"


def shown_alerts(wave: dict, key: str, name: str) -> list:
    """The alerts ``program show --json`` keeps under ``segments.<key>.<name>.alerts``."""
    return wave["segments"][key][name]["alerts"]


if __name__ == "__main__":
    print(run())
