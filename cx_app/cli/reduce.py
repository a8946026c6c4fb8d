"""``cx-app reduce MATRIX.csv --plan PLAN.yaml [--json]``: reduce a confusion matrix by a plan.

MATRIX.csv: the first row holds the predicted labels, the first column the actual labels, as
``pandas.crosstab(actual, predicted).to_csv()`` writes it (the top-left cell, e.g. ``actual``
or ``row_0``, is ignored, and so is a second row holding only the index name). Cells may be
real-valued (an ALP matrix). Labels that all look like integers are read as integers.
PLAN.yaml: a stand-alone plan file (:func:`cx_app.plan.load_plan_file`); its ``classes``, if
given, must be the matrix's labels.

Output: every level (original, then one per step) with its matrix (IM as an extra row and
column) and metrics; ``--json`` prints ``{"levels": [...], "notes": [...]}``.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

import pandas as pd

from cx_app.binary import BINARY_KEYS
from cx_app.confusion import ConfusionMatrix
from cx_app.errors import AnalysisError
from cx_app.grouping import resolve_plan
from cx_app.levels import Level, reduce_confusion
from cx_app.plan import load_plan_file

_INT = re.compile(r"[+-]?\d+")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reduce",
        help="reduce a confusion matrix (CSV, rows actual) by a plan: M×M+IM levels and metrics",
    )
    p.add_argument("matrix", metavar="MATRIX.csv", help="confusion matrix, rows = actual class")
    p.add_argument("--plan", required=True, metavar="PLAN.yaml", help="reduction plan file")
    p.add_argument("--json", action="store_true", help="print the levels as JSON")
    p.set_defaults(func=run)


def _labels(cells: list[str]) -> tuple:
    cells = [c.strip() for c in cells]
    if cells and all(_INT.fullmatch(c) for c in cells):
        return tuple(int(c) for c in cells)
    return tuple(cells)


def read_matrix_csv(path: str | Path) -> ConfusionMatrix:
    """A confusion matrix from a CSV file (layout in the module docstring)."""
    path = Path(path)
    name = path.name
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise AnalysisError(f"{name}: cannot read the matrix file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise AnalysisError(f"{name}: not a UTF-8 text file") from None
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = [r for r in csv.reader(text.splitlines(), dialect) if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise AnalysisError(f"{name}: expected a header row of predicted labels and data rows")
    header = rows[0]
    while len(header) > 1 and not header[-1].strip():
        header = header[:-1]
    predicted = _labels(header[1:])
    body = rows[1:]
    skipped = 0
    if body and body[0][0].strip() and not any(c.strip() for c in body[0][1:]):
        body, skipped = body[1:], 1  # the index-name row pandas writes under a named columns index
    actual = _labels([r[0] for r in body])
    k = len(predicted)
    if k < 2:
        raise AnalysisError(f"{name}: the header row must hold at least 2 predicted labels")
    values: list[list[str]] = []
    for r, row in enumerate(body):
        cells = [c.strip() for c in row[1:]]
        while len(cells) > k and not cells[-1]:
            cells.pop()
        if len(cells) != k:
            raise AnalysisError(
                f"{name}, row {r + 2 + skipped} (actual {row[0].strip()}): "
                f"{len(cells)} cells, but the header has {k} predicted labels"
            )
        values.append(cells)
    if len(set(actual)) != len(actual) or len(set(predicted)) != len(predicted):
        raise AnalysisError(f"{name}: a label is repeated in the first row or column")
    if set(actual) != set(predicted):
        raise AnalysisError(
            f"{name}: the actual labels (first column: {', '.join(map(str, actual))}) differ "
            f"from the predicted labels (first row: {', '.join(map(str, predicted))})"
        )
    integral = all(_INT.fullmatch(c) for row in values for c in row)
    counts = []
    for r, row in enumerate(values):
        parsed = []
        for j, cell in enumerate(row):
            try:
                v = int(cell) if integral else float(cell)
            except ValueError:
                raise AnalysisError(
                    f"{name}: actual {actual[r]}, predicted {predicted[j]}: "
                    f"{cell!r} is not a number"
                ) from None
            if not (v >= 0 and v != float("inf")):
                raise AnalysisError(
                    f"{name}: actual {actual[r]}, predicted {predicted[j]}: "
                    f"{cell!r} is not a count ≥ 0"
                )
            parsed.append(v)
        counts.append(parsed)
    order = [predicted.index(a) for a in actual]  # columns in the rows' order
    matrix = [[row[j] for j in order] for row in counts]
    return ConfusionMatrix(actual, matrix)


def _metrics_text(level: Level) -> str:
    m = level.metrics
    lines = []
    if level.is_binary:
        width = max(len(k) for k in BINARY_KEYS)
        for k in BINARY_KEYS:
            v = m[k]
            lines.append(f"{k:<{width}}  {v:.4f}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    summary = {
        k: m[k]
        for k in ("accuracy", "precision_macro", "recall_macro", "f1_macro", "f1_of_macro_pr")
        if k in m
    }
    lines.append("  ".join(f"{k} {v:.4f}" for k, v in summary.items()))
    per_class = pd.DataFrame.from_dict(m["per_class"], orient="index")
    per_class.index.name = "class"
    lines.append(per_class.to_string(float_format=lambda v: f"{v:.4f}"))
    undefined = m.get("undefined_per_class", m.get("undefined"))
    if isinstance(undefined, dict):
        said = [f"{k}: {', '.join(map(str, v))}" for k, v in undefined.items() if v]
        if said:
            lines.append("undefined (reported as 0): " + "; ".join(said))
    if level.is_binary and m.get("undefined"):
        lines.append("undefined binary metrics (reported as 0): " + ", ".join(m["undefined"]))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    cm = read_matrix_csv(args.matrix)
    spec = load_plan_file(args.plan)
    plan = resolve_plan(spec, cm.labels if spec.classes is None else None)
    levels = reduce_confusion(cm, plan)
    notes = [lv.note for lv in levels if lv.note]
    if args.json:
        print(json.dumps({"levels": [lv.to_dict() for lv in levels], "notes": notes}, indent=2))
        return 0
    for lv in levels:
        title = f"== {lv.name}: {len(lv.labels)}×{len(lv.labels)}" + (
            "+IM" if lv.im is not None else ""
        )
        if lv.positive is not None:
            title += f", positive group '{lv.positive}'"
        print(title + " ==")
        print(lv.to_frame().to_string())
        print()
        print(_metrics_text(lv))
        if lv.note:
            print(f"note: {lv.note}")
        print()
    return 0
