"""Hostile text in survey files and results (issue 24, cases 2, 7, 9): control characters,
Markdown and HTML, a 100,000-character label, a line over 128 KB.

Before: a NUL in a header (a CSV ``\\x00``, an xlsx ``_x0000_``) reached the chart renderer
(vl-convert), whose panic aborted the process (CLI exit 134, the app down for every session); a
100,000-character label made the Excel report run for minutes at 1.7 GiB and fail. Everything
that may call vl-convert on such text runs here in a child process, so that a regression fails
the test instead of killing the test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest

from cx_app import safe_text
from cx_app.reports.blocks import ChartBlock
from cx_app.reports.content import build_report
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import load_schema, parse_schema
from tests.security.peak_memory import Measured, run_measured

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
CLI = [sys.executable, "-m", "cx_app"]
sys.path.insert(0, str(ROOT / "tests"))

from report_fixtures import (  # noqa: E402
    HOSTILE_ATTRIBUTE,
    HOSTILE_CLASSES,
    HOSTILE_GROUP,
    HOSTILE_MODEL,
    make_results,
)

pytestmark = pytest.mark.slow  # hostile labels through the CLI, charts and reports (~40 s)

LONG = "Network coverage " + "x" * 100_000
"""A 100,000-character attribute label (case 7)."""
RENAMED = {
    HOSTILE_MODEL: "l\x00r ![p](http://host/a.png)",
    HOSTILE_GROUP: "pass\x00ives [x](http://host/b)",
    HOSTILE_CLASSES[3]: "cl\x00ass <img src=http://host/c.png>",
    HOSTILE_ATTRIBUTE: "\x00" + LONG,
}


def _renamed(value):
    """The fixture's results with NUL, Markdown and the long label in model, group, class and
    attribute names (keys and values)."""
    if isinstance(value, str):
        return RENAMED.get(value, value)
    if isinstance(value, dict):
        return {_renamed(k): _renamed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v) for v in value]
    return value


def _run(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _one_sentence(process: subprocess.CompletedProcess | Measured) -> None:
    """Exit 0, or an error status with one line of error: never a crash (134 = abort), never
    a traceback."""
    assert process.returncode in (0, 1, 2), (process.returncode, process.stderr[-2000:])
    assert "Traceback" not in process.stderr and "panicked" not in process.stderr
    if process.returncode:
        assert len(process.stderr.strip().splitlines()) == 1, process.stderr


# --------------------------------------------------------------------------- the rules


def test_plain_text_removes_control_characters_and_nothing_else():
    assert safe_text.plain_text("Pri\x00ce") == "Price"
    assert safe_text.plain_text("a\x01b\x08c\x0bd\x0ce\x1bf\x1fg\x7fh\x85i\x9fj") == "abcdefghij"
    assert safe_text.plain_text("lone \ud800 surrogate \ufffe\uffff") == "lone  surrogate "
    assert safe_text.plain_text("tab\tnew\nline\r\nold\rmac") == "tab\tnew\nline\nold\nmac"
    kept = "Région Île-de-France — «€» 日本 😀 ![p](http://x) <b>"
    assert safe_text.plain_text(kept) is kept  # nothing to remove: the same object
    assert safe_text.control_characters("\x00a\x00\x1b\x7f") == {"NUL": 2, "U+001B": 1, "U+007F": 1}
    assert safe_text.describe_removed(safe_text.control_characters("\x00a\x00\x1b")) == (
        "3 control characters (NUL ×2, U+001B)")


def test_labels_are_capped_and_stay_distinct():
    assert safe_text.short_label("x" * safe_text.LABEL_LIMIT) == "x" * safe_text.LABEL_LIMIT
    assert safe_text.short_label("x" * (safe_text.LABEL_LIMIT + 1)) == "x" * (safe_text.LABEL_LIMIT - 1) + "…"
    long_a, long_b = "a" * 150 + "1", "a" * 150 + "2"
    labels = safe_text.short_labels([long_a, "b", long_b, long_a])
    assert labels[0] == labels[3] != labels[2] and labels[1] == "b"
    assert all(len(label) <= safe_text.LABEL_LIMIT for label in labels)
    assert labels[2].endswith("… (2)")


def test_plain_spec_cleans_every_string_of_a_spec():
    spec = {"title": "T\x00", "da\x00ta": {"values": [{"a\x1b": "x\x00y"}, 3, None, True]},
            "long": "z" * 10_000}
    out = safe_text.plain_spec(spec)
    assert out == {"title": "T", "data": {"values": [{"a": "xy"}, 3, None, True]},
                   "long": "z" * 499 + "…"}
    assert spec["title"] == "T\x00"  # a copy: the caller's spec is unchanged


def test_schema_and_plan_names_are_plain_text():
    schema = parse_schema({
        "name": "sur\x00vey", "description": "d\x1be",
        "target": {"name": "nps", "column": "N\x00PS", "kind": "nps",
                   "scale": {"min": 0, "max": 10}},
        "attributes": [{"name": "price", "column": "Price", "label": "Pri\x00ce ![p](u)",
                        "aliases": ["Co\x00st"], "scale": {"min": 1, "max": 5}}],
        "plan": [{"name": "3x3\x00", "positive": "pro\x00moters", "groups": [
            {"name": "detr\x00actors", "members": list(range(7))},
            {"name": "pas\x00sives", "members": [7, 8]},
            {"name": "promoters", "members": [9, 10]}]}],
    })
    assert (schema.name, schema.description, schema.target.column) == ("survey", "de", "NPS")
    attribute = schema.attributes[0]
    assert (attribute.label, attribute.aliases) == ("Price ![p](u)", ("Cost",))
    step = schema.plan[0]
    assert (step.name, step.positive) == ("3x3", "promoters")
    assert [g.name for g in step.groups] == ["detractors", "passives", "promoters"]


# --------------------------------------------------------------------------- import


def test_segment_and_id_values_lose_their_control_characters_with_a_note(tmp_path):
    rows = ["ID,NPS,Price,Store\x00 name,Comment"] + [  # few control bytes: not binary
        f"{'R' + chr(1) if i < 3 else 'R'}{i},{i % 11},{i % 5 + 1},"
        f"{'Sto' + chr(27) + 're' if i % 2 else 'Shop'},{'a text column' * 3}"
        for i in range(12)]
    path = tmp_path / "segments.csv"
    path.write_text("\n".join(rows) + "\n")
    data = load_survey(path)
    store = data.schema.segments[0]
    assert store.column == "Store name"
    assert data.frame[store.name].tolist() == ["Shop", "Store"] * 6
    assert data.frame[data.schema.respondent_id.name].tolist() == [f"R{i}" for i in range(12)]
    notes = data.quality.notes
    assert "column D: its header held 1 control character (NUL), removed (read as " \
           "'Store name')" in notes
    assert f"{store.name}: the values held 6 control characters (U+001B ×6), removed" in notes
    assert "id: the values held 3 control characters (U+0001 ×3), removed" in notes


# --------------------------------------------------------------------------- reports and CLI


@pytest.fixture(scope="module")
def hostile_results(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "results.json"
    path.write_text(json.dumps(_renamed(make_results())), encoding="utf-8")
    return path


def test_charts_cap_the_long_label_and_the_reports_keep_it(hostile_results, tmp_path):
    """Case 7: the Excel report of results with a 100,000-character attribute label (and NUL,
    Markdown and HTML in model, group and class names) is written in seconds, not minutes,
    every chart an image; the charts show the label cut to 100 characters, the data sheet and
    the HTML tables hold it whole (Excel: up to its cell limit of 32,767 characters)."""
    report = build_report(json.loads(hostile_results.read_text()))
    charts = [b for s in report.sections for b in s.blocks if isinstance(b, ChartBlock)]
    data_texts = [v for c in charts for rows in c.spec.get("datasets", {}).values()
                  for row in rows for v in row.values() if isinstance(v, str)]
    assert any(t.startswith("Network coverage xxx") and t.endswith("…") for t in data_texts)
    assert max(map(len, data_texts)) <= safe_text.LABEL_LIMIT

    xlsx, html = tmp_path / "report.xlsx", tmp_path / "report.html"
    excel = run_measured([*CLI, "report", str(hostile_results), "--out", str(xlsx)],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    _one_sentence(excel)
    assert excel.returncode == 0
    assert excel.seconds < 60  # was 4–5 minutes; about 5 s on two busy cores
    assert excel.peak_mb < 1024  # under 1 GB (was 1.7 GiB)
    with zipfile.ZipFile(xlsx) as archive:
        images = [n for n in archive.namelist() if n.startswith("xl/media/")]
    assert len(images) == len(charts)
    book = openpyxl.load_workbook(xlsx)
    cells = [c.value for ws in book for row in ws.iter_rows() for c in row
             if isinstance(c.value, str)]
    assert not any("chart not rendered" in c for c in cells)
    assert LONG[:32_767] in cells  # the NUL removed, cut only by Excel's own cell limit
    assert not any("\x00" in c for c in cells)

    _one_sentence(_run([*CLI, "report", str(hostile_results), "--out", str(html)], tmp_path))
    page = html.read_text(encoding="utf-8")
    assert LONG in page  # whole, in the report's tables
    assert "<img src=http://host/c.png>" not in page and "&lt;img src=http://host/c.png&gt;" \
        in page


def test_vl_convert_renders_hostile_specs_in_a_child_process(tmp_path):
    """Every builder's chart with NUL, ESC, Markdown, HTML and a 100,000-character label in
    its labels and titles: PNG and SVG made through the report's renderer (the spec made plain
    first); the same spec given raw to vl-convert still aborts the process (the reason the
    renderer cleans it), also run in a child."""
    script = tmp_path / "render.py"
    script.write_text(RENDER_SCRIPT)
    process = _run([sys.executable, str(script)], tmp_path)
    assert process.returncode == 0, process.stderr[-2000:]
    result = json.loads(process.stdout.splitlines()[-1])
    assert result["png"] == result["charts"] == 5 and result["svg"] == 5
    raw = _run([sys.executable, str(script), "--raw"], tmp_path)
    assert raw.returncode == -6 or raw.returncode == 134, raw.returncode  # SIGABRT: the panic
    assert "NonXmlChar" in raw.stderr


RENDER_SCRIPT = '''
import json, sys
import pandas as pd
import vl_convert
from cx_app.reports import charts
from cx_app.reports.charts import chart_png
from cx_app.safe_text import plain_spec

bad = ["Pri\\x00ce", "Sto\\x1bre ![p](http://host/a.png)", "<img src=x onerror=alert(1)>",
       ":red[alarm] **b**", "x" * 100_000]
specs = [
    charts.nps_bars(pd.DataFrame({"group": bad, "nps": [1.0, -3, 5, 7, 9],
                                  "ci_low": [-5.0] * 5, "ci_high": [12.0] * 5, "n": [9] * 5}),
                    group_title="Se\\x00gment"),
    charts.importance_bars(pd.DataFrame({"attribute": bad, "importance": [.1, .2, .3, .4, .5],
                                         "ci_low": [0.0] * 5, "ci_high": [.6] * 5})),
    charts.confusion_heatmap(pd.DataFrame([[1, 2], [3, 4]], index=bad[:2], columns=bad[:2])),
    charts.roc_chart(pd.DataFrame({"model": [bad[0]] * 3 + [bad[4]] * 3,
                                   "fpr": [0, .5, 1] * 2, "tpr": [0, .7, 1] * 2})),
    charts.quadrant_chart(pd.DataFrame({"attribute": bad, "importance": [.1, .2, .3, .4, .5],
                                        "performance": [3.0, 3.5, 4, 2, 1]})),
]
if "--raw" in sys.argv:
    vl_convert.vegalite_to_png(specs[0].to_dict())
png = sum(chart_png(s.to_dict(), 1.0).startswith(b"\\x89PNG") for s in specs)
svg = sum(vl_convert.vegalite_to_svg(plain_spec(s.to_dict())).startswith("<svg") for s in specs)
print(json.dumps({"charts": len(specs), "png": png, "svg": svg}))
'''


def _nul_survey(tmp_path: Path) -> Path:
    """60 respondents; NUL in an attribute and a segment header, ESC in segment values."""
    rows = ["ID,NPS,Pri\x00ce,Speed,Sto\x00re"] + [
        f"R{i},{(i * 7) % 11},{i % 5 + 1},{(i * 3) % 5 + 1},"
        f"{'S' + (chr(27) if i < 3 else '') + str(i % 3)}" for i in range(60)]
    path = tmp_path / "nul_survey.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def _cli(args: list[str], capsys) -> tuple[int, str, str]:
    """``cx-app ARGS`` in this process (for commands that draw no chart), and its output."""
    from cx_app.cli import main

    code = main(args)
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_the_cli_on_nul_headers_exits_normally(tmp_path, capsys):
    """Case 2 in the CLI: ``evaluate`` (which writes both reports, charts included; in a child
    process) and ``nps`` on files with a NUL in a header: exit 0, never 134."""
    survey = _nul_survey(tmp_path)
    out = tmp_path / "out"
    evaluate = _run([*CLI, "evaluate", str(survey), "--algorithms", "lr", "--folds", "3",
                     "--out", str(out)], tmp_path)
    _one_sentence(evaluate)
    assert evaluate.returncode == 0
    assert (out / "report.xlsx").stat().st_size > 0 and (out / "report.html").stat().st_size > 0
    results = (out / "results.json").read_text()
    assert json.loads(results)["dataset"]["attributes"] == ["price", "speed"]
    assert "\\u0000" not in results and "Price" in results
    for name in ("nul_header.csv", "nul_header.xlsx"):
        code, text, _ = _cli(["nps", str(BAD / name), "--schema", str(BAD / "schema.yaml")],
                             capsys)
        assert code == 0 and "NPS" in text
    code, text, _ = _cli(["nps", str(survey), "--by", "Store"], capsys)
    assert code == 0 and "S0" in text and "\x1b" not in text


def test_a_line_over_128_kb_is_read_or_refused_in_one_sentence(capsys):
    """Case 9 (CSV half): the delimiter sniffer met a line over 128 KB as one field and raised
    the csv module's "field larger than field limit" as a traceback."""
    schema = ["--schema", str(BAD / "schema.yaml")]
    code, text, _ = _cli(["validate", str(BAD / "long_line.csv"), *schema], capsys)
    assert code == 0 and "rows read: 3" in text
    code, _, error = _cli(["validate", str(BAD / "long_cell.csv"), *schema], capsys)
    assert code == 2 and error == (
        "error: long_cell.csv: line 3 has a cell of more than 131,072 characters, more than a "
        "survey answer can hold; refused\n")


def test_the_hostile_corpus_files_load_with_the_schema():
    schema = load_schema(BAD / "schema.yaml")
    for name in ("nul_header.csv", "nul_header.xlsx", "markdown_header.csv", "long_line.csv"):
        data = load_survey(BAD / name, schema=schema)
        assert data.X.columns.tolist() == ["price", "speed"] and len(data.X) == 3
