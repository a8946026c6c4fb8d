"""Program open: a program of 24 waves × 5 segments — time to its first chart, database size.

A CX team keeps a two-year monthly tracker as a workspace program (issue 27). Built here in a
temporary SQLite workspace, not timed: the program (a logistic-regression model of 3 folds on
a reference survey of the bundled telecom shape) and its waves added with
:meth:`Workspace.add_waves` (each wave estimated, and every value of every segment).

Measured, in the same run, for the program (24 waves × 5 segments: operator, region and three
seeded ones, channel, age band, tenure) and the baseline (6 waves × 1 segment, operator):

* **open → chart spec**: :meth:`Workspace.open` of the database file (a new engine, the
  schema checked), :meth:`Workspace.show` (every wave's estimate document and segment figures
  parsed), the tracker frame (:func:`cx_app.reports.pptx_deck.tracker_frame_of`: change flags)
  and the Vega-Lite spec of :func:`cx_app.reports.charts.nps_trend_chart` — what a page hands
  the browser, which draws it;
* **open → PNG**: the same, rendered to PNG by :func:`cx_app.reports.charts.chart_png`
  (vl-convert), what the deck and the Excel report draw;
* the database file's size after the program is built (SQLite, WAL checkpointed on close).

Median of :data:`REPEATS` runs each.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cx_app.reports.charts import chart_png, nps_trend_chart  # noqa: E402
from cx_app.reports.pptx_deck import tracker_frame_of  # noqa: E402
from cx_app.survey.samples import simulate_telecom_waves  # noqa: E402
from cx_app.survey.schema import schema_from_mapping  # noqa: E402
from cx_app.workspace.programs import Workspace  # noqa: E402

PER_OPERATOR = 150  # 3 operators → 450 respondents per wave
REPEATS = 5
ATTRIBUTES = ("Tariff plan", "Network - voice", "Network - data", "Shops", "Call center",
              "Website", "Mobile app", "Billing", "Roaming")
EXTRA_SEGMENTS = {"Channel": ("Online", "Shop", "Phone"),
                  "Age band": ("18-34", "35-54", "55+", "Not given"),
                  "Tenure": ("Under 1 year", "1-3 years", "Over 3 years")}
CASES = (("baseline: 6 waves × 1 segment", 6, ("Operator",)),
         ("program: 24 waves × 5 segments", 24, ("Operator", "Region", *EXTRA_SEGMENTS)))


def _log(message: str) -> None:
    print(f"[bench_program_open] {message}", flush=True)


def _wave_csv(wave: int, seed: int) -> bytes:
    """One telecom wave with the three seeded segment columns added."""
    frame = simulate_telecom_waves([wave], respondents_per_operator=PER_OPERATOR, seed=seed)
    rng = np.random.default_rng(seed)
    for column, values in EXTRA_SEGMENTS.items():
        frame[column] = rng.choice(values, size=len(frame))
    return frame.to_csv(index=False).encode()


def _build(url: str, waves: int, segments: tuple[str, ...]) -> float:
    """The program "tracker" at ``url``; the seconds adding its waves took."""
    schema = schema_from_mapping(
        target="Likelihood to recommend (0-10)", scale="0-10", attributes=list(ATTRIBUTES),
        attribute_scale="1-10", segments=list(segments), respondent_id="Respondent ID",
        missing_codes=[99, "Don't know"])
    with Workspace.open(url) as ws:
        ws.create_program("tracker", _wave_csv(1, 7), filename="reference.csv", schema=schema,
                          algorithm="lr", folds=3, calibration="none")
        files = [(_wave_csv(k + 2, 100 + k), f"wave{k + 1:02d}.csv") for k in range(waves)]
        start = time.perf_counter()
        ws.add_waves("tracker", files)
        return time.perf_counter() - start


def _open(url: str) -> dict[str, float]:
    """Seconds of each step from opening the workspace to the first chart (spec, then PNG)."""
    parts = {}
    start = time.perf_counter()
    ws = Workspace.open(url)
    parts["open"] = time.perf_counter() - start
    try:
        view = ws.show("tracker")
    finally:
        ws.close()
    parts["show"] = time.perf_counter() - start - parts["open"]
    frame = tracker_frame_of(view)
    spec = nps_trend_chart(frame[["series", "wave", "nps", "ci_low", "ci_high", "n", "flag"]],
                           score_title="NPS").to_dict()
    parts["spec"] = time.perf_counter() - start
    parts["chart"] = parts["spec"] - parts["open"] - parts["show"]
    chart_png(spec)
    parts["png"] = time.perf_counter() - start
    return parts


def _reading(rows: list) -> str:
    (_, w0, s0, _, p0, size0), (_, w1, s1, _, p1, size1) = rows[0], rows[-1]
    return (
        f"Reading: four times the waves and five times the segments open "
        f"{p1['spec'] / p0['spec']:.2f}× as slowly to the chart spec ({p1['spec']:.2f} s; "
        f"{p1['png']:.2f} s to a PNG): reading the program (`show`, which parses every "
        f"wave's estimate and segment figures) grows with the waves, {p0['show']:.3f} → "
        f"{p1['show']:.3f} s, but building the tracker frame and the chart's spec (change "
        f"flags, Altair: {p0['chart']:.2f} → {p1['chart']:.2f} s) is the larger part. The "
        f"{w1 - w0} more waves, with "
        f"{s1 - s0} more segments each, add "
        f"{(size1 - size0) / 1e6:.2f} MB ({(size1 - size0) / (w1 - w0) / 1e3:.0f} KB a wave) "
        f"to {size0 / 1e6:.2f} MB (the model file, the reference results and 6 waves): "
        "a small file; adding a wave (estimate and segments, once) costs more than opening it."
    )


def run() -> str:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for title, waves, segments in CASES:
            path = Path(tmp) / f"{waves}x{len(segments)}.db"
            url = f"sqlite:///{path}"
            _log(f"building {title}")
            build = _build(url, waves, segments)
            size = sum(p.stat().st_size for p in Path(tmp).glob(f"{path.name}*"))
            _open(url)  # warm: imports, vl-convert's first start
            runs = [_open(url) for _ in range(REPEATS)]
            parts = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            rows.append((title, waves, len(segments), build, parts, size))
            spec, png = parts["spec"], parts["png"]
            _log(f"{title}: spec {spec:.3f} s, PNG {png:.3f} s, {size / 1e6:.2f} MB")
    base = rows[0]
    load = os.getloadavg()[0]
    lines = [
        "## Program open: 24 waves × 5 segments (time to first chart, database size)",
        "",
        f"A workspace program (SQLite file) with a logistic-regression model and waves of "
        f"{3 * PER_OPERATOR} respondents, each wave estimated overall and for every value of "
        "every segment when it was added. Timed: open the workspace, `Workspace.show`, the "
        "tracker frame and its trend chart as a Vega-Lite spec (what a page sends the browser) "
        f"or rendered to PNG by vl-convert (the deck's and Excel's chart). Median of "
        f"{REPEATS} runs; load average {load:.1f} on {os.cpu_count()} cores.",
        "",
        "| program | waves | segments | open → chart spec (s) | × baseline | open → PNG (s) "
        "| × baseline | database (MB) | × baseline | adding the waves (s, once) |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *[f"| {t} | {w} | {s} | {p['spec']:.3f} | {p['spec'] / base[4]['spec']:.2f} | "
          f"{p['png']:.3f} | {p['png'] / base[4]['png']:.2f} | {size / 1e6:.2f} | "
          f"{size / base[5]:.2f} | {build:.1f} |" for t, w, s, build, p, size in rows],
        "",
        "Where the time goes (median seconds): "
        + "; ".join(f"{t.split(':')[0]}: open the workspace {p['open']:.3f}, show "
                    f"{p['show']:.3f}, frame + spec {p['chart']:.3f}, PNG "
                    f"{p['png'] - p['spec']:.3f}" for t, _w, _s, _b, p, _size in rows) + ".",
        "",
        _reading(rows),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
