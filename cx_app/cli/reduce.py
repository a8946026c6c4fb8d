"""``cx-app reduce MATRIX.csv --plan PLAN.yaml [--json]``: reduce a confusion matrix by a plan.

MATRIX.csv as ``pandas.crosstab(actual, predicted).to_csv()`` writes it, real-valued cells
allowed; absent classes, empty cells and margins: docs/engine.md ("CLI").
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from cx_app.engine.binary import BINARY_KEYS
from cx_app.engine.catalogue import MULTICLASS_SUMMARY, metric_name, short_name
from cx_app.engine.confusion import ConfusionMatrix, LabelLookup, format_labels, normalize_labels
from cx_app.engine.grouping import resolve_plan
from cx_app.engine.levels import Level, reduce_confusion
from cx_app.engine.plan import load_plan_file
from cx_app.errors import AnalysisError
from cx_app.reports.definitions import PLAIN_NAMES

_INT = re.compile(r"[+-]?\d+")
_INTEGRAL_FLOAT = re.compile(r"[+-]?\d+\.0*")


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
    """Ints when every one looks like an integer (``7`` or ``7.0``, as pandas writes them)."""
    cells = [c.strip() for c in cells]
    if cells and all(_INT.fullmatch(c) or _INTEGRAL_FLOAT.fullmatch(c) for c in cells):
        return tuple(int(float(c)) if "." in c else int(c) for c in cells)
    return tuple(cells)


def _show_labels(labels) -> str:
    return ", ".join(map(str, labels))


def _matrix_and_notes(
    path: str | Path, classes: Sequence | None = None
) -> tuple[ConfusionMatrix, list[str]]:
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
    body = rows[1:]
    k = len(header) - 1
    if k < 1:
        raise AnalysisError(f"{name}: the header row must hold the predicted labels")
    header_cells = [c.strip() for c in header[1:]]
    known = LabelLookup(header_cells if classes is None else [*header_cells, *classes])
    skipped = 0
    if (
        body
        and body[0][0].strip()
        and not any(c.strip() for c in body[0][1:])
        and known.find(body[0][0].strip()) is None
    ):
        body, skipped = body[1:], 1  # the index-name row older pandas writes under the header
    if not body:
        raise AnalysisError(f"{name}: expected data rows under the header row")
    both = _labels(header_cells + [r[0] for r in body])
    predicted, actual = both[:k], both[k:]
    for what, labels in (("first row (predicted)", predicted), ("first column (actual)", actual)):
        repeated = sorted({str(v) for v in labels if labels.count(v) > 1})
        if repeated:
            raise AnalysisError(f"{name}: {what}: label {', '.join(repeated)} is repeated")
    if "All" in predicted and "All" in actual and (classes is None or "All" not in classes):
        raise AnalysisError(
            f"{name}: a row and a column named 'All' look like crosstab margins; "
            "write the matrix without margins=True"
        )
    values: list[list[str]] = []
    for r, row in enumerate(body):
        line = [c.strip() for c in row[1:]]
        while len(line) > k and not line[-1]:
            line.pop()
        if len(line) < k and len(row) == 1:
            line = [""] * k
        if len(line) != k:
            raise AnalysisError(
                f"{name}, row {r + 2 + skipped} (actual {row[0].strip()}): "
                f"{len(line)} cells, but the header has {k} predicted labels"
            )
        values.append(line)
    cells = np.array(values, dtype=object).reshape(len(values), k)
    empty = cells == ""  # pandas writes an empty cell for NaN (crosstab with aggfunc)
    integral = all(_INT.fullmatch(c) for c in cells[~empty])
    numbers = pd.to_numeric(pd.Series(np.where(empty, "0", cells).ravel()),
                            errors="coerce").to_numpy(dtype=float).reshape(cells.shape)
    for r, j in np.argwhere(~(numbers >= 0) | np.isinf(numbers))[:1]:
        problem = "is not a number" if np.isnan(numbers[r, j]) else "is not a count ≥ 0"
        raise AnalysisError(f"{name}: actual {actual[r]}, predicted {predicted[j]}: "
                            f"{cells[r, j]!r} {problem}")

    if classes is not None:
        labels = normalize_labels(classes)
        find = LabelLookup(labels).find
        for what, found in (
            ("first column (actual)", actual),
            ("first row (predicted)", predicted),
        ):
            unknown = [v for v in found if find(v) is None]
            if unknown:
                raise AnalysisError(
                    f"{name}: {what}: {_show_labels(unknown)} not among the plan's classes "
                    f"({format_labels(labels)})"
                )
    else:
        union = list(dict.fromkeys([*actual, *predicted]))
        if all(type(v) is int for v in union):
            union.sort()
        labels = tuple(union)
        find = {v: i for i, v in enumerate(labels)}.get
    row_pos = [find(v) for v in actual]
    col_pos = [find(v) for v in predicted]
    size = len(labels)
    matrix = np.zeros((size, size), dtype=np.int64 if integral else float)
    matrix[np.ix_(row_pos, col_pos)] = numbers
    notes = []
    for line, found, never in (("row", row_pos, "actual"), ("column", col_pos, "predicted")):
        if absent := [labels[i] for i in sorted(set(range(size)) - set(found))]:
            notes.append(f"{name}: no {line} for class {_show_labels(absent)} (never {never}): "
                         "counted as 0")
    if n_empty := int(empty.sum()):
        notes.append(f"{name}: {n_empty} empty cell{'s' if n_empty > 1 else ''} read as 0")
    return ConfusionMatrix(labels, matrix), notes


def read_matrix_csv(path: str | Path, *, classes: Sequence | None = None) -> ConfusionMatrix:
    """A confusion matrix from a CSV file (layout in the module docstring)."""
    return _matrix_and_notes(path, classes)[0]


def _group(label: object) -> object:
    """A default plan's group code in words (``passives_promoters`` → "passives and promoters")."""
    return PLAIN_NAMES.get(label, label) if isinstance(label, str) else label


def _matrix_text(level: Level) -> str:
    frame = level.to_frame().rename(index=_group, columns=_group)
    if all(str(t) == "Int64" for t in frame.dtypes):  # <NA> ignores na_rep
        frame = frame.astype(object).where(frame.notna(), "")
    return frame.to_string(na_rep="")


def _metrics_text(level: Level) -> str:
    m = level.metrics
    lines = []
    if level.is_binary:
        names = {k: metric_name(k, binary=True) for k in BINARY_KEYS}
        width = max(map(len, names.values()))
        for k, name in names.items():
            v = m[k]
            lines.append(f"{name:<{width}}  {v:.4f}" if isinstance(v, float)
                         else f"{name:<{width}}  {v}")
    summary = {k: m[k] for k in MULTICLASS_SUMMARY if k in m}
    lines.append("  ".join(f"{short_name(k)} {v:.4f}" for k, v in summary.items()))
    per_class = pd.DataFrame.from_dict(m["per_class"], orient="index").rename(index=_group)
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
    spec = load_plan_file(args.plan)
    cm, file_notes = _matrix_and_notes(args.matrix, spec.classes)
    plan = resolve_plan(spec, cm.labels if spec.classes is None else None)
    levels = reduce_confusion(cm, plan)
    if args.json:
        notes = file_notes + [lv.note for lv in levels if lv.note]
        document = {"levels": [lv.to_dict() for lv in levels], "notes": notes}
        print(json.dumps(document, indent=2, allow_nan=False))  # JSON has no NaN: never write one
        return 0
    for note in file_notes:
        print(f"note: {note}")
    if file_notes:
        print()
    for lv in levels:
        title = f"== {lv.name}: {len(lv.labels)}×{len(lv.labels)}" + (
            "+IM" if lv.im is not None else ""
        )
        if lv.positive is not None:
            title += f", positive group '{_group(lv.positive)}'"
        print(title + " ==")
        print(_matrix_text(lv))
        print()
        print(_metrics_text(lv))
        if lv.note:
            print(f"note: {lv.note}")
        print()
    return 0
