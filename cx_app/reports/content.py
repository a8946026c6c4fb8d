"""The report's content, built once from saved results and rendered by both writers.

:func:`build_report` turns the evaluation results (the ``results.json`` that ``cx-app evaluate
--out DIR`` writes) and, optionally, a new-wave estimate (``cx-app estimate --json``) into a
:class:`Report`: sections (one Excel sheet / one HTML section each) made of blocks —
:class:`Paragraph`, :class:`Table`, :class:`MatrixBlock`, :class:`ChartBlock`. The Excel and the
HTML writers only lay these blocks out; every number, label and sentence is decided here.

Missing or optional parts of the results are tolerated: a section says what is absent instead
of failing. Respondent-level values (the offending cell values of excluded rows) are included
only when ``respondent_data=True``.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from cx_app.provenance import library_versions
from cx_app.reports.definitions import (
    BINARY_METRICS,
    DRIVER_DEFINITIONS,
    GROUPING_OPTIONS,
    MULTICLASS_METRICS,
    OTHER_DEFINITIONS,
    PAPERS,
    PER_CLASS_METRICS,
    metric_definition,
)

ColumnKind = Literal["text", "int", "count", "float", "percent", "pvalue", "score"]
"""How a column's numbers are shown: ``int`` whole numbers, ``count`` counts that may be
real-valued (ALP), ``float`` 3 decimals, ``percent`` a rate shown as %, ``pvalue`` 4 decimals,
``score`` a net score (NPS, −100..100) with one decimal."""


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    kind: ColumnKind = "text"


@dataclass(frozen=True)
class NativeChart:
    """A chart a spreadsheet can draw from its table: ``scatter`` (x, y per ``series``) or
    ``bar`` (``x`` the category column, ``y`` the value columns)."""

    kind: Literal["scatter", "bar"]
    title: str
    x: str
    y: tuple[str, ...]
    series: str | None = None
    x_title: str = ""
    y_title: str = ""


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""
    native_chart: NativeChart | None = None

    def column_values(self, key: str) -> list[Any]:
        index = [c.key for c in self.columns].index(key)
        return [row[index] for row in self.rows]


@dataclass(frozen=True)
class MatrixBlock:
    """A confusion matrix: rows = actual, columns = predicted; ``im`` the IM row/column."""

    title: str
    labels: tuple[str, ...]
    counts: tuple[tuple[float, ...], ...]
    im: tuple[float, ...] | None = None
    positive: str | None = None
    real_valued: bool = False
    note: str = ""


@dataclass(frozen=True)
class ChartBlock:
    """An Altair chart as a Vega-Lite spec (data inline): interactive in HTML, an image in
    Excel."""

    title: str
    spec: dict
    note: str = ""


@dataclass(frozen=True)
class Paragraph:
    text: str
    style: Literal["text", "note", "warning", "heading"] = "text"


Block = Paragraph | Table | MatrixBlock | ChartBlock


@dataclass(frozen=True)
class Section:
    key: str
    title: str  # also the Excel sheet name: at most 31 characters
    blocks: tuple[Block, ...]

    def tables(self) -> list[Table]:
        return [b for b in self.blocks if isinstance(b, Table)]


@dataclass(frozen=True)
class Report:
    title: str
    created: str
    sections: tuple[Section, ...]
    meta: dict = field(default_factory=dict)

    def section(self, key: str) -> Section:
        for s in self.sections:
            if s.key == key:
                return s
        raise KeyError(key)


# --------------------------------------------------------------------------- helpers

_SKIP_METRIC_KEYS = {"per_class", "undefined", "undefined_per_class"}
_COUNT_KEYS = {"tp", "fn", "fp", "tn", "imp", "imn"}
_LEVEL_ORDER_FIRST = "original"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number_or_none(value: Any) -> Any:
    """NaN / infinity become None (an empty cell), other values pass."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _metric_kind(key: str, binary: bool) -> ColumnKind:
    if key in _COUNT_KEYS:
        return "count"
    found = metric_definition(key, binary=binary)
    if found is not None:
        return "percent" if found.percent else "float"
    return "float"


def _humanise(key: Any) -> str:
    """``relative_weights`` → "Relative weights"; short keys (model ids such as ``lr``) and
    anything that is not a plain identifier (survey text) are kept as they are."""
    text = str(key)
    if len(text) > 3 and text.replace("_", "").isascii() and text.replace("_", "").isalpha():
        return (text[:1].upper() + text[1:]).replace("_", " ")
    return text


def _infer_kind(key: str, values: Iterable[Any]) -> ColumnKind:
    values = [v for v in values if v is not None]
    if not values or not all(_is_number(v) for v in values):
        return "text"
    lowered = str(key).lower()
    if lowered == "p" or lowered.startswith(("p_", "p-")) or lowered.endswith("_p"):
        return "pvalue"
    if all(isinstance(v, int) for v in values):
        return "int"
    return "float"


def _cell(value: Any) -> Any:
    if value is None or _is_number(value) or isinstance(value, str):
        return _number_or_none(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Sequence) and len(value) == 2 and all(_is_number(v) for v in value):
        return f"{value[0]:.4g} to {value[1]:.4g}"
    if isinstance(value, Mapping | Sequence):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) if isinstance(value, Mapping) \
            else ", ".join(_text(v) for v in value)
    return _text(value)


_COLUMN_TITLES = {"ci_low": "95% low", "ci_high": "95% high", "delta": "δ", "phi": "φ",
                  "p": "p", "se": "SE", "coef": "Coefficient", "tpr": "TPR", "fpr": "FPR",
                  "psi": "PSI", "mean": "Mean", "sd": "SD", "n": "n", "row": "Row", "dof": "df",
                  "t": "t", "df": "df", "a": "Model A", "b": "Model B"}


def records_table(title: str, records: Sequence[Mapping[str, Any]], *, note: str = "",
                  titles: Mapping[str, str] | None = None) -> Table:
    """A table from a list of dicts: columns = the union of keys in first-seen order, kinds
    inferred from the values."""
    keys: list[str] = []
    for record in records:
        keys.extend(k for k in record if k not in keys)
    rows = tuple(tuple(_cell(r.get(k)) for k in keys) for r in records)
    columns = tuple(
        Column(k, {**_COLUMN_TITLES, **(titles or {})}.get(k, _humanise(k)), _infer_kind(k, (row[i] for row in rows)))
        for i, k in enumerate(keys)
    )
    return Table(title, columns, rows, note=note)


def key_value_table(title: str, pairs: Iterable[tuple[str, Any]], *, note: str = "") -> Table:
    rows = tuple((str(k), _cell(v)) for k, v in pairs)
    return Table(title, (Column("item", "Item"), Column("value", "Value")), rows, note=note)


def _as_records(value: Any, key_title: str = "name") -> list[dict] | None:
    """A list of dicts, or a dict of dicts (the key becomes a ``key_title`` column)."""
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return [dict(v) for v in value]
    if isinstance(value, Mapping) and value and all(isinstance(v, Mapping) for v in value.values()):
        return [{key_title: k, **v} for k, v in value.items()]
    return None


def columnar_records(value: Any) -> list[dict] | None:
    """``{"attributes": [a, b], "coef": [x, y], ...}`` → ``[{"attribute": a, "coef": x}, ...]``
    (the driver tables' layout); None when ``value`` is not laid out that way."""
    if not isinstance(value, Mapping):
        return None
    names = value.get("attributes")
    if not isinstance(names, list) or not names:
        return None
    columns = {k: v for k, v in value.items() if k != "attributes" and isinstance(v, list)
               and len(v) == len(names)}
    if not columns:
        return None
    return [{"attribute": name, **{k: v[i] for k, v in columns.items()}}
            for i, name in enumerate(names)]


def _generic_blocks(title: str, value: Any, key_title: str = "name") -> list[Block]:
    """Render an arbitrary JSON value as well as possible: records → table, flat dict →
    key/value table, list of scalars → one line, nested dict → one block per key."""
    records = _as_records(value, key_title)
    if records is not None and not any(
            columnar_records(r) or any(isinstance(v, Mapping) for v in r.values())
            for r in records):
        return [records_table(title, records)]
    columnar = columnar_records(value)
    if columnar is not None:
        rest = {k: v for k, v in value.items() if k != "attributes" and not (
            isinstance(v, list) and len(v) == len(columnar))}
        blocks: list[Block] = [records_table(title, columnar)]
        names = [str(r["attribute"]) for r in columnar]
        for k, v in list(rest.items()):
            if (isinstance(v, list) and v and all(isinstance(r, list) and len(r) == len(names)
                                                  for r in v)):
                # one row per fold (or repeat), one column per attribute
                del rest[k]
                blocks.append(Table(
                    f"{title} — {_humanise(k)}",
                    (Column("row", "Fold" if "fold" in str(k) else "Row", "int"),
                     *(Column(f"a{i}", n, _infer_kind("", [r[i] for r in v]))
                       for i, n in enumerate(names))),
                    tuple((i + 1, *(_number_or_none(x) for x in r)) for i, r in enumerate(v))))
        if rest:
            blocks.extend(_generic_blocks(f"{title} — about", rest, key_title))
        return blocks
    if isinstance(value, Mapping):
        flat = {k: v for k, v in value.items() if not isinstance(v, Mapping | list)
                or (isinstance(v, list) and len(v) == 2 and all(_is_number(x) for x in v))}
        blocks: list[Block] = []
        if flat:
            blocks.append(key_value_table(title, flat.items()))
        for k, v in value.items():
            if k not in flat:
                sub = title if k == "rows" else f"{title} — {_humanise(k)}"
                blocks.extend(_generic_blocks(sub, v, key_title))
        return blocks
    if isinstance(value, list):
        if not value:
            return [Paragraph(f"{title}: none.", "note")]
        if all(isinstance(v, list) for v in value):
            return [Table(title, tuple(Column(f"c{i}", str(i + 1), _infer_kind("", [r[i] for r in value]))
                                       for i in range(max(len(r) for r in value))),
                          tuple(tuple(_cell(x) for x in r) + (None,) * (max(len(q) for q in value) - len(r))
                                for r in value))]
        return [Paragraph(f"{title}: " + ", ".join(_text(v) for v in value))]
    return [Paragraph(f"{title}: {_text(value)}")]


def _level_names(results: Mapping) -> list[str]:
    names: list[str] = []
    for model in (results.get("models") or {}).values():
        for name in (model.get("levels") or {}):
            if name not in names:
                names.append(name)
    if _LEVEL_ORDER_FIRST in names:
        names.remove(_LEVEL_ORDER_FIRST)
        names.insert(0, _LEVEL_ORDER_FIRST)
    return names


def _models(results: Mapping) -> dict[str, dict]:
    return {str(k): v for k, v in (results.get("models") or {}).items()}


def _level_is_binary(level: Mapping) -> bool:
    metrics = level.get("metrics") or {}
    return "tpr" in metrics and "tp" in metrics


def _scalar_metric_keys(levels: Iterable[Mapping], binary: bool) -> list[str]:
    found: list[str] = []
    for level in levels:
        for k, v in (level.get("metrics") or {}).items():
            if k not in _SKIP_METRIC_KEYS and _is_number(v) and k not in found:
                found.append(k)
    order = list(BINARY_METRICS) + list(MULTICLASS_METRICS) if binary else list(MULTICLASS_METRICS)
    return sorted(found, key=lambda k: (order.index(k) if k in order else len(order), k))


def _primary_metric(results: Mapping, level_name: str, binary: bool) -> str:
    for comparison in results.get("comparisons") or []:
        if comparison.get("level") == level_name and comparison.get("metric"):
            return str(comparison["metric"])
    return "mcc" if binary else "f1_macro"


def _fmt(value: Any, kind: ColumnKind = "float") -> str:
    if not _is_number(value):
        return _text(value) or "—"
    if kind == "percent":
        return f"{value:.1%}"
    if kind in ("int", "count"):
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    return f"{value:.3f}"


# --------------------------------------------------------------------------- sections


def _provenance(results: Mapping) -> dict:
    """File name, sheet, fingerprint and plan, from ``provenance`` or ``dataset``."""
    dataset = results.get("dataset") or {}
    prov = results.get("provenance") if isinstance(results.get("provenance"), Mapping) else {}
    return {
        "file": prov.get("file") or dataset.get("filename") or dataset.get("file"),
        "sheet": prov.get("sheet") or dataset.get("sheet"),
        "sha256": prov.get("sha256") or dataset.get("sha256"),
        "schema": prov.get("schema"),
        "plan": prov.get("plan") or results.get("plan"),
        "versions": prov.get("versions") or {},
        "algorithms": prov.get("algorithms") or {},
    }


_POSITIVE_GROUPS = ("promoters", "promoter", "satisfied", "positive")
_NEGATIVE_GROUPS = ("detractors", "detractor", "dissatisfied", "negative")


def net_score_from_levels(results: Mapping) -> dict | None:
    """The data set's net score (NPS) from the actual-class counts of the first level that
    has promoter and detractor groups (row sums incl. IM = every respondent once)."""
    from cx_app.nps import net_score_from_counts

    for model in _models(results).values():
        for name, level in (model.get("levels") or {}).items():
            labels = [str(x).strip().lower() for x in level.get("labels") or []]
            pos = next((labels.index(g) for g in _POSITIVE_GROUPS if g in labels), None)
            neg = next((labels.index(g) for g in _NEGATIVE_GROUPS if g in labels), None)
            if pos is None or neg is None or level.get("matrix") is None:
                continue
            im = level.get("im") or [0] * len(labels)
            actual = [sum(row) + im[i] for i, row in enumerate(level["matrix"])]
            neutral = sum(actual) - actual[pos] - actual[neg]
            try:
                result = net_score_from_counts(actual[neg], neutral, actual[pos])
            except Exception:  # an empty or malformed level: no figure rather than a crash
                return None
            return {"value": result.value, "ci95": list(result.ci95), "n": result.n,
                    "from_level": name, "positive": level["labels"][pos],
                    "negative": level["labels"][neg]}
    return None


def _summary_section(results: Mapping, new_wave: Mapping | None) -> Section:
    dataset = results.get("dataset") or {}
    prov = _provenance(results)
    blocks: list[Block] = []
    pairs = [
        ("File", prov["file"]),
        ("Sheet", prov["sheet"]),
        ("Rows used", dataset.get("rows_used")),
        ("Rows read", dataset.get("rows_read")),
        ("Classes", dataset.get("classes")),
        ("Cross-validation folds", results.get("folds")),
        ("Seed", results.get("seed")),
    ]
    blocks.append(key_value_table("Data set", [(k, v) for k, v in pairs if v is not None]))

    nps = dataset.get("nps") or results.get("nps") or net_score_from_levels(results)
    if isinstance(nps, Mapping) and _is_number(nps.get("value")):
        ci = nps.get("ci95") or [None, None]
        source = (f" Counted from the actual classes at level {nps['from_level']}: "
                  f"{nps['positive']} minus {nps['negative']}." if nps.get("from_level") else "")
        blocks.append(Table(
            "Net score (NPS) of the analysed respondents",
            (Column("nps", "Net score", "score"), Column("low", "95% low", "score"),
             Column("high", "95% high", "score"),
             Column("n", "Respondents", "int")),
            ((float(nps["value"]), *(_number_or_none(c) for c in ci[:2]), nps.get("n")),),
            note="Adjusted Wald interval (Rocks 2016)." + source,
        ))
    else:
        blocks.append(Paragraph("The results hold no NPS figure for the data set.", "note"))

    models = _models(results)
    best_rows = []
    reading: list[str] = []
    for level_name in _level_names(results):
        levels = {m: v["levels"][level_name] for m, v in models.items()
                  if level_name in (v.get("levels") or {})}
        binary = any(_level_is_binary(lv) for lv in levels.values())
        metric = _primary_metric(results, level_name, binary)
        scored = [(m, lv["metrics"].get(metric)) for m, lv in levels.items()
                  if _is_number((lv.get("metrics") or {}).get(metric))]
        if not scored:
            continue
        best, value = max(scored, key=lambda mv: mv[1])
        metrics = levels[best]["metrics"]
        auc = ((models[best].get("roc") or {}).get(level_name) or {}).get("auc")
        verdict = _verdict_against_best(results, level_name, metric, best)
        best_rows.append((level_name, metric, best, value, metrics.get("accuracy"),
                          metrics.get("tpr"), metrics.get("tnr"), _number_or_none(auc), verdict))
        kind = _metric_kind(metric, binary)
        accuracy = ("" if metric == "accuracy" else
                    f" and an accuracy of {_fmt(metrics.get('accuracy'), 'percent')}")
        reading.append(
            f"At level {level_name}, {best} has the best {_metric_display(metric, binary)} "
            f"({_fmt(value, kind)}){accuracy}." + (f" Against {verdict[3:]}." if verdict else ""))
    if best_rows:
        kinds = {_metric_kind(row[1], row[5] is not None) for row in best_rows}
        value_kind: ColumnKind = kinds.pop() if len(kinds) == 1 else "float"
        blocks.append(Table(
            "Best model per level",
            (Column("level", "Level"), Column("metric", "Ranked by"), Column("model", "Best model"),
             Column("value", "Value", value_kind), Column("accuracy", "Accuracy", "percent"),
             Column("tpr", "TPR (recall)", "percent"), Column("tnr", "TNR", "percent"),
             Column("auc", "AUC", "float"), Column("verdict", "t-test verdict")),
            tuple(best_rows),
            note="The verdict uses the corrected (Nadeau–Bengio) test with Holm's adjustment "
                 "when the results hold it.",
        ))
    else:
        blocks.append(Paragraph("The results hold no model metrics.", "note"))

    top = _top_drivers(results.get("drivers"))
    if top:
        drivers = results.get("drivers")
        relative = isinstance(drivers, Mapping) and columnar_records(
            drivers.get("relative_weights")) is not None
        blocks.append(records_table(
            "Top drivers", top,
            titles={"importance": "Relative weight (% of R²)"} if relative else None,
            note="Johnson's relative weights: each attribute's share of the explained variance "
                 "of the score." if relative else ""))
        reading.append("The strongest drivers are " + ", ".join(
            str(r.get("attribute")) for r in top[:3]) + ".")
    if new_wave:
        est = new_wave.get("estimated_nps") or {}
        if _is_number(est.get("value")):
            ci = est.get("ci95") or []
            reading.append(
                f"The new wave's estimated NPS is {est['value']:.1f}"
                + (f" (95% interval {ci[0]:.1f} to {ci[1]:.1f})" if len(ci) == 2
                   and all(_is_number(c) for c in ci) else "") + ".")
        if new_wave.get("warnings"):
            reading.append(f"The new-wave estimate comes with {len(new_wave['warnings'])} "
                           "warning(s): see the New wave section.")
    if reading:
        blocks.append(Paragraph("Reading", "heading"))
        blocks.extend(Paragraph(r) for r in reading)
    return Section("summary", "Summary", tuple(blocks))


def _metric_display(key: str, binary: bool) -> str:
    found = metric_definition(key, binary=binary)
    return found.name if found else key


def _comparison_p(c: Mapping) -> tuple[str, Any]:
    for key, name in (("p_holm", "Holm-adjusted"), ("p_corrected", "corrected"), ("p", "plain")):
        if _is_number(c.get(key)):
            return name, c[key]
    return "", None


def _verdict_against_best(results: Mapping, level: str, metric: str, best: str) -> str:
    parts = []
    for c in results.get("comparisons") or []:
        if c.get("level") != level or c.get("metric") != metric:
            continue
        if best not in (str(c.get("a")), str(c.get("b"))):
            continue
        other = str(c.get("b")) if str(c.get("a")) == best else str(c.get("a"))
        name, p = _comparison_p(c)
        if c.get("verdict"):
            parts.append(f"vs {other}: {c['verdict']}")
        elif p is not None:
            parts.append(f"vs {other}: {'differs' if p < 0.05 else 'no significant difference'}"
                         f" ({name} p = {p:.3f})")
    return "; ".join(parts)


def _importance_records(drivers: Any) -> list[dict] | None:
    """Driver records with at least ``attribute`` and ``importance``, wherever they sit."""
    if not isinstance(drivers, Mapping):
        return _as_records(drivers, "attribute")
    weights = columnar_records(drivers.get("relative_weights"))
    if weights and all("percent" in r for r in weights):
        return [{"attribute": r["attribute"], "importance": r["percent"]} for r in weights]
    for key in ("importance", "importances", "drivers", "attributes"):
        records = _as_records(drivers.get(key), "attribute")
        if records and all("importance" in r for r in records):
            return records
    records = _as_records(drivers, "attribute")
    if records and all("importance" in r for r in records):
        return records
    return None


def _top_drivers(drivers: Any, n: int = 5) -> list[dict]:
    records = _importance_records(drivers)
    if not records:
        return []
    ranked = sorted((r for r in records if _is_number(r.get("importance"))),
                    key=lambda r: -r["importance"])
    keep = ("attribute", "label", "importance", "ci_low", "ci_high")
    return [{k: r[k] for k in keep if k in r} for r in ranked[:n]]


def _metrics_section(results: Mapping) -> Section:
    models = _models(results)
    blocks: list[Block] = []
    for level_name in _level_names(results):
        levels = {m: v["levels"][level_name] for m, v in models.items()
                  if level_name in (v.get("levels") or {})}
        binary = any(_level_is_binary(lv) for lv in levels.values())
        keys = _scalar_metric_keys(levels.values(), binary)
        columns = (Column("model", "Model"),
                   *(Column(k, _metric_display(k, binary), _metric_kind(k, binary)) for k in keys))
        rows = tuple((m, *(_number_or_none(lv["metrics"].get(k)) for k in keys))
                     for m, lv in levels.items())
        positive = next((lv.get("positive") for lv in levels.values() if lv.get("positive")), None)
        note = f"Positive group: {positive}." if positive else ""
        blocks.append(Table(f"Level {level_name}", columns, rows, note=note))
        per_class_rows = []
        for m, lv in levels.items():
            for label, values in ((lv.get("metrics") or {}).get("per_class") or {}).items():
                per_class_rows.append((m, str(label), values.get("precision"),
                                       values.get("recall"), values.get("f1"),
                                       values.get("support"), values.get("im")))
        if per_class_rows and not binary:
            blocks.append(Table(
                f"Per-class metrics — level {level_name}",
                (Column("model", "Model"), Column("class", "Class"),
                 Column("precision", "Precision", "percent"), Column("recall", "Recall", "percent"),
                 Column("f1", "F1", "percent"), Column("support", "Support (actual)", "count"),
                 Column("im", "IM", "count")),
                tuple(per_class_rows)))
    if not blocks:
        blocks.append(Paragraph("The results hold no model metrics.", "note"))
    return Section("metrics", "Metrics", tuple(blocks))


def _confusion_section(results: Mapping) -> Section:
    blocks: list[Block] = [Paragraph(
        "Rows are the actual class, columns the predicted class. Reduced levels carry the "
        "intragroup mismatch (IM) as an extra row and column (the column repeats the row).",
        "note")]
    models = _models(results)
    for level_name in _level_names(results):
        for model_id, model in models.items():
            level = (model.get("levels") or {}).get(level_name)
            if not level or level.get("matrix") is None:
                continue
            counts = tuple(tuple(_number_or_none(x) for x in row) for row in level["matrix"])
            im = level.get("im")
            real = any(isinstance(x, float) and not float(x).is_integer()
                       for row in counts for x in row if x is not None)
            blocks.append(MatrixBlock(
                f"{model_id} — level {level_name}",
                tuple(str(x) for x in level.get("labels") or range(len(counts))),
                counts, None if im is None else tuple(im), level.get("positive"), real))
    return Section("confusion", "Confusion matrices", tuple(blocks))


def _per_fold_section(results: Mapping) -> Section:
    blocks: list[Block] = []
    models = _models(results)
    k = results.get("folds")
    for level_name in _level_names(results):
        rows = []
        binary = False
        rhombus = []
        for model_id, model in models.items():
            level = (model.get("levels") or {}).get(level_name) or {}
            binary = binary or _level_is_binary(level)
            per_fold = level.get("per_fold") or {}
            for metric, values in per_fold.items():
                values = [_number_or_none(v) for v in values or []]
                rows.append((model_id, _metric_display(metric, binary), *values))
            deltas, phis = per_fold.get("delta"), per_fold.get("phi")
            if deltas and phis:
                rhombus.extend({"series": model_id, "label": f"fold {i + 1}", "delta": d, "phi": p}
                               for i, (d, p) in enumerate(zip(deltas, phis, strict=False))
                               if _is_number(d) and _is_number(p))
        if not rows:
            continue
        width = max(len(r) - 2 for r in rows)
        columns = (Column("model", "Model"), Column("metric", "Metric"),
                   *(Column(f"fold_{i + 1}", f"Fold {i + 1}", "float") for i in range(width)))
        rows = [r + (None,) * (width + 2 - len(r)) for r in rows]
        blocks.append(Table(f"Level {level_name}", columns, tuple(rows),
                            note=f"One value per cross-validation fold ({k or width} folds)."))
        if rhombus:
            import pandas as pd

            from cx_app.charts import rhombus_chart
            blocks.append(ChartBlock(f"δ/φ per fold — level {level_name}",
                                     rhombus_chart(pd.DataFrame(rhombus)).to_dict(),
                                     note="One point per model and fold: spread shows variance, "
                                          "position shows bias (|δ| + |φ| ≤ 1)."))
    if not blocks:
        blocks.append(Paragraph("The results hold no per-fold values.", "note"))
    return Section("per_fold", "Per-fold values", tuple(blocks))


_COMPARISON_TITLES = {"level": "Level", "metric": "Metric", "a": "Model A", "b": "Model B",
                      "t": "t (plain)", "df": "df", "p": "p (plain)",
                      "t_corrected": "t (corrected)", "p_corrected": "p (corrected)",
                      "p_holm": "p (Holm)", "mean_difference": "Mean A − B",
                      "mean_diff": "Mean A − B", "mean_a": "Mean A", "mean_b": "Mean B",
                      "verdict": "Verdict"}


def _comparisons_section(results: Mapping) -> Section:
    comparisons = results.get("comparisons") or []
    if not comparisons:
        return Section("comparisons", "Comparisons", (Paragraph(
            "No t-tests in these results (fewer than two models, or comparisons not run).",
            "note"),))
    table = records_table("Paired t-tests over the cross-validation folds", comparisons,
                          titles=_COMPARISON_TITLES,
                          note="Plain t-test (too liberal: training sets overlap), Nadeau–Bengio "
                               "corrected t-test, and Holm's adjustment over all pairs.")
    return Section("comparisons", "Comparisons", (table, Paragraph(
        OTHER_DEFINITIONS["t_test"].words, "note")))


def thin_curve(points: Sequence[tuple[str, float, float]], step: float = 0.002
               ) -> list[tuple[str, float, float]]:
    """The (series, x, y) points of curves without those closer than ``step`` (in x and in y)
    to the last point kept of their series; each series' first and last point are kept.

    A reduced ROC has one point per distinct score (thousands, many repeated): the chart needs
    only enough of them to draw the same line — within ``step`` of it, far below a pixel. The
    ROC points table keeps every point.
    """
    kept: list[tuple[str, float, float]] = []
    last: dict[str, tuple[float, float]] = {}
    for i, (series, x, y) in enumerate(points):
        is_last = i + 1 == len(points) or points[i + 1][0] != series
        previous = last.get(series)
        if (previous is None or is_last or abs(x - previous[0]) >= step
                or abs(y - previous[1]) >= step):
            kept.append((series, x, y))
            last[series] = (x, y)
    return kept


def _roc_section(results: Mapping) -> Section:
    import pandas as pd

    from cx_app.charts import auc_bars, roc_chart

    blocks: list[Block] = []
    models = _models(results)
    roc_levels: list[str] = []
    for model in models.values():
        roc_levels.extend(n for n in (model.get("roc") or {}) if n not in roc_levels)
    for level_name in roc_levels:
        points, auc_rows, random_lines = [], [], []
        for model_id, model in models.items():
            roc = (model.get("roc") or {}).get(level_name)
            if not roc:
                continue
            for x, y in zip(roc.get("fpr") or [], roc.get("tpr") or [], strict=False):
                points.append((model_id, x, y))
            auc_rows.append((model_id, _number_or_none(roc.get("auc")),
                             _number_or_none(roc.get("random_auc"))))
            tpr_end = (roc.get("tpr") or [None])[-1]
            if _is_number(tpr_end):
                random_lines.extend([{"model": model_id, "fpr": 0.0, "tpr": 0.0},
                                     {"model": model_id, "fpr": 1.0, "tpr": tpr_end}])
        if not auc_rows:
            continue
        blocks.append(Table(
            f"AUC — level {level_name}",
            (Column("model", "Model"), Column("auc", "AUC", "float"),
             Column("random_auc", "Random-selection area", "float")),
            tuple(auc_rows),
            native_chart=NativeChart("bar", f"AUC — level {level_name}", "model",
                                     ("auc", "random_auc"), y_title="Area"),
        ))
        if points:
            frame = pd.DataFrame(thin_curve(points), columns=["model", "fpr", "tpr"])
            blocks.append(ChartBlock(
                f"ROC — level {level_name}",
                roc_chart(frame, pd.DataFrame(random_lines)).to_dict(),
                note="Dashed: the random-selection line, which ends below 1 when the positive "
                     "group has intragroup mismatch."))
            blocks.append(ChartBlock(
                f"AUC — level {level_name}",
                auc_bars(pd.DataFrame(auc_rows, columns=["model", "auc", "random_auc"])
                         .fillna(0.0)).to_dict()))
            blocks.append(Table(
                f"ROC points — level {level_name}",
                (Column("model", "Model"), Column("fpr", "FPR", "float"),
                 Column("tpr", "TPR", "float")),
                tuple(points),
                native_chart=NativeChart("scatter", f"ROC — level {level_name}", "fpr", ("tpr",),
                                         series="model", x_title="False positive rate",
                                         y_title="True positive rate")))
    if not blocks:
        blocks.append(Paragraph("The results hold no ROC curves.", "note"))
    return Section("roc", "ROC", tuple(blocks))


def _drivers_section(results: Mapping) -> Section:
    import pandas as pd

    from cx_app.charts import importance_bars, quadrant_chart, rhombus_chart

    drivers = results.get("drivers")
    if not drivers:
        return Section("drivers", "Drivers", (Paragraph(
            "The results hold no driver analysis.", "note"),))
    blocks: list[Block] = _generic_blocks("Drivers", drivers, "attribute")
    value_titles = {"importance": "Importance", "mean": "Permutation importance",
                    "percent": "Relative weight (% of R²)", "coef": "Coefficient (log-odds per SD)"}
    out: list[Block] = []
    for block in blocks:
        out.append(block)
        if not isinstance(block, Table) or "attribute" not in (keys := {c.key for c in block.columns}):
            continue
        frame = pd.DataFrame(list(block.rows), columns=[c.key for c in block.columns])
        value = next((k for k in value_titles if k in keys), None)
        if value is not None and "performance" in keys:
            numeric = frame.dropna(subset=[value, "performance"]).rename(
                columns={value: "importance"})
            out.append(ChartBlock(f"{block.title}: importance–performance",
                                     quadrant_chart(numeric).to_dict(),
                                     note="Top left: important and weak — act there first."))
        if value is not None and ("performance" not in keys or {"ci_low", "ci_high"} <= keys):
            numeric = frame.dropna(subset=[value]).rename(columns={value: "importance"})
            if "ci_low" not in keys or "ci_high" not in keys:
                numeric = numeric.assign(ci_low=numeric["importance"],
                                         ci_high=numeric["importance"])
            out.append(ChartBlock(f"{block.title}: {value_titles[value].lower()}",
                                     importance_bars(numeric, value_title=value_titles[value])
                                     .to_dict()))
        if {"delta", "phi"} <= keys:
            out.append(ChartBlock(f"{block.title}: δ/φ",
                                     rhombus_chart(frame.rename(columns={"attribute": "series"})
                                                   .dropna(subset=["delta", "phi"]),
                                                   colour_title="Attribute").to_dict(),
                                     note="Each attribute's top box against the positive group: "
                                          "δ = TPR − FPR, φ = TPR + FPR − 1."))
    return Section("drivers", "Drivers", tuple(out))


def _new_wave_section(new_wave: Mapping) -> Section:
    blocks: list[Block] = []
    source = new_wave.get("source") if isinstance(new_wave.get("source"), Mapping) else {}
    facts = [("File", source.get("filename")), ("Respondents", new_wave.get("n"))]
    blocks.append(key_value_table("New wave", [(k, v) for k, v in facts if v is not None]))
    nps_rows = []
    for label, key in (("Estimated (ALP, no labels used)", "estimated_nps"),
                       ("Realized (the wave's own scores)", "realized_nps")):
        figure = new_wave.get(key)
        if _is_number(figure):
            figure = {"value": figure}
        if isinstance(figure, Mapping) and _is_number(figure.get("value")):
            ci = list(figure.get("ci95") or [])[:2]
            ci = ci if len(ci) == 2 and all(_is_number(c) for c in ci) else [None, None]
            nps_rows.append((label, float(figure["value"]), *ci, figure.get("n")))
    if nps_rows:
        blocks.append(Table(
            "Net score (NPS) of the new wave",
            (Column("figure", "Figure"), Column("nps", "Net score", "score"),
             Column("low", "95% low", "score"), Column("high", "95% high", "score"),
             Column("n", "Respondents", "int")),
            tuple(nps_rows),
            note="The estimate sums each respondent's predicted promoter and detractor "
                 "probabilities; its interval adds the model's uncertainty to the sampling one."))
    for warning in new_wave.get("warnings") or []:
        blocks.append(Paragraph(f"Warning: {_text(warning)}", "warning"))
    alp = new_wave.get("alp_matrix")
    if isinstance(alp, Mapping) and alp.get("matrix") is not None:
        counts = tuple(tuple(_number_or_none(x) for x in row) for row in alp["matrix"])
        blocks.append(MatrixBlock("ALP confusion matrix (estimated)",
                                  tuple(str(x) for x in alp.get("labels") or range(len(counts))),
                                  counts, real_valued=True,
                                  note=OTHER_DEFINITIONS["alp"].words))
    elif isinstance(alp, list):
        counts = tuple(tuple(_number_or_none(x) for x in row) for row in alp)
        labels = new_wave.get("classes") or range(len(counts))
        blocks.append(MatrixBlock("ALP confusion matrix (estimated)",
                                  tuple(str(x) for x in labels), counts, real_valued=True,
                                  note=OTHER_DEFINITIONS["alp"].words))
    alp_counts = alp.get("matrix") if isinstance(alp, Mapping) else alp
    for level_name, level in (new_wave.get("levels") or {}).items():
        if isinstance(level, Mapping) and level.get("matrix") is not None:
            if level["matrix"] != alp_counts:  # the original level is the ALP matrix itself
                blocks.append(MatrixBlock(
                    f"Estimated level {level_name}",
                    tuple(str(x) for x in level.get("labels") or range(len(level["matrix"]))),
                    tuple(tuple(_number_or_none(x) for x in row) for row in level["matrix"]),
                    None if level.get("im") is None else tuple(level["im"]),
                    level.get("positive"), real_valued=True))
            blocks.extend(_estimate_vs_realized(level_name, level.get("metrics") or {},
                                                (new_wave.get("realized_levels") or {})
                                                .get(level_name)))
    if not new_wave.get("levels") and isinstance(new_wave.get("estimated"), Mapping):
        blocks.extend(_estimate_vs_realized("original", new_wave["estimated"],
                                            new_wave.get("realized")))
    for key in ("estimated_class_counts", "drift", "model"):
        if new_wave.get(key):
            blocks.extend(_generic_blocks(_humanise(key), new_wave[key],
                                          "attribute" if key == "drift" else "name"))
    return Section("new_wave", "New wave", tuple(blocks))


def _estimate_vs_realized(level_name: str, estimated: Mapping,
                          realized: Mapping | None) -> list[Block]:
    """One table per level: each metric's ALP estimate beside its realized value (when the
    wave carries its scores); rates as percentages, counts as counts."""
    realized = realized if isinstance(realized, Mapping) else {}
    keys = [k for k in estimated if k not in _SKIP_METRIC_KEYS and _is_number(estimated[k])]
    keys += [k for k in realized if k not in keys and k not in _SKIP_METRIC_KEYS
             and _is_number(realized[k])]
    if not keys:
        return []
    binary = "tpr" in keys
    groups: dict[ColumnKind, list[str]] = {}
    for k in keys:
        groups.setdefault(_metric_kind(k, binary), []).append(k)
    blocks: list[Block] = []
    for kind, title in (("count", "counts"), ("percent", "rates"), ("float", "other metrics")):
        chosen = groups.get(kind) or []
        if not chosen:
            continue
        columns = [Column("metric", "Metric"), Column("estimate", "Estimate", kind)]
        if realized:
            columns += [Column("realized", "Realized", kind),
                        Column("difference", "Estimate − realized"
                               + (" (points)" if kind == "percent" else ""), kind)]
        rows = []
        for k in chosen:
            est, real = _number_or_none(estimated.get(k)), _number_or_none(realized.get(k))
            row = [_metric_display(k, binary), est]
            if realized:
                row += [real, est - real if _is_number(est) and _is_number(real) else None]
            rows.append(tuple(row))
        blocks.append(Table(f"Estimated metrics — level {level_name} ({title})",
                            tuple(columns), tuple(rows)))
    return blocks


def _data_quality_section(results: Mapping, respondent_data: bool) -> Section:
    dataset = results.get("dataset") or {}
    quality = (results.get("quality") or dataset.get("quality") or dataset.get("data_quality")
               or dataset)
    blocks: list[Block] = []
    facts = [(label, quality.get(key)) for key, label in (
        ("rows_read", "Rows read"), ("rows_used", "Rows used"),
        ("rows_excluded", "Rows excluded"), ("blank_rows", "Blank rows skipped"))]
    facts = [(k, v) for k, v in facts if v is not None]
    if facts:
        blocks.append(key_value_table("Rows", facts))
    by_reason = quality.get("counts_by_reason") or {}
    if by_reason:
        blocks.append(Table("Excluded rows by reason",
                            (Column("reason", "Reason"), Column("rows", "Rows", "int")),
                            tuple((str(k), v) for k, v in by_reason.items())))
    excluded = quality.get("excluded") or []
    if excluded:
        keys = ("row", "column", "reason", "value") if respondent_data else ("row", "column", "reason")
        blocks.append(records_table(
            "Excluded rows", [{k: e.get(k) for k in keys} for e in excluded if isinstance(e, Mapping)],
            note="" if respondent_data else
            "The offending values are left out of this report (respondent-level data)."))
    imputed = {k: v for k, v in (quality.get("imputed") or {}).items() if v}
    if imputed:
        blocks.append(Table("Imputed cells (median)",
                            (Column("attribute", "Attribute"), Column("cells", "Cells", "int")),
                            tuple((str(k), v) for k, v in imputed.items())))
    for note in quality.get("notes") or []:
        blocks.append(Paragraph(_text(note), "note"))
    if not blocks:
        blocks.append(Paragraph("The results hold no data-quality summary.", "note"))
    return Section("data_quality", "Data quality", tuple(blocks))


def _definition_rows(definitions: Iterable) -> tuple[tuple[str, ...], ...]:
    return tuple((d.key, d.name, d.words, d.formula, d.source) for d in definitions)


def _definitions_section() -> Section:
    columns = (Column("key", "Key"), Column("name", "Metric"), Column("words", "Meaning"),
               Column("formula", "Formula"), Column("source", "Source"))
    return Section("definitions", "Definitions", (
        Paragraph("Confusion matrices: rows = actual class, columns = predicted class.", "note"),
        Table("Multiclass metrics (original and M×M+IM levels)", columns,
              _definition_rows(MULTICLASS_METRICS.values())),
        Table("2×2+IM metrics", columns, _definition_rows(BINARY_METRICS.values())),
        Table("Per-class values (multiclass levels)", columns,
              _definition_rows(PER_CLASS_METRICS.values())),
        Table("Other figures", columns, _definition_rows(OTHER_DEFINITIONS.values())),
        Table("Drivers and drift", columns, _definition_rows(DRIVER_DEFINITIONS.values())),
        Table("Grouping options", (Column("code", "Option"), Column("name", "Name"),
                                   Column("words", "Meaning")),
              tuple((o.code, o.name, o.words) for o in GROUPING_OPTIONS.values())),
        Table("Papers cited", (Column("citation", "Paper"), Column("used_for", "Used for")),
              tuple((p.citation, p.used_for) for p in PAPERS)),
    ))


def _about_section(results: Mapping, new_wave: Mapping | None, created: str,
                   source_name: str | None) -> Section:
    prov = _provenance(results)
    plan = prov["plan"]
    if isinstance(plan, Mapping) and plan.get("steps"):
        plan = "; ".join(
            f"{step.get('name')}: " + ", ".join(
                f"{g.get('name')} {g.get('members')} ({g.get('option')})"
                for g in step.get("groups") or [])
            + (f", positive {step['positive']}" if step.get("positive") else "")
            for step in plan["steps"])
    facts = [
        ("Report created", created),
        ("Input file", prov["file"]),
        ("Input sheet", prov["sheet"]),
        ("Input SHA-256", prov["sha256"]),
        ("Survey schema", prov["schema"]),
        ("Results file", source_name),
        ("Folds", results.get("folds")),
        ("Seed", results.get("seed")),
        ("Calibration", results.get("calibration")),
        ("Plan", plan),
        ("Comparison method", results.get("comparison_method")),
        ("New wave analysed", "yes" if new_wave else "no"),
    ]
    blocks: list[Block] = [key_value_table("Provenance", [(k, v) for k, v in facts
                                                           if v is not None])]
    settings = []
    for m, model in _models(results).items():
        chosen = model.get("settings") or prov["algorithms"].get(m) or "defaults"
        settings.append((m, f"{model.get('algorithm') or m}: {_cell(chosen)}",
                         _number_or_none(model.get("fit_seconds"))))
    if settings:
        blocks.append(Table("Models and settings",
                            (Column("model", "Model"), Column("settings", "Algorithm and settings"),
                             Column("fit_seconds", "Fit seconds", "float")), tuple(settings)))
    versions = dict(library_versions())
    versions.update({str(k): str(v) for k, v in prov["versions"].items()})
    blocks.append(key_value_table("Versions (of this report; the results' own where recorded)",
                                  versions.items()))
    return Section("about", "About", tuple(blocks))


def build_report(results: Mapping, new_wave: Mapping | None = None, *,
                 respondent_data: bool = False, source_name: str | None = None,
                 created: str | None = None) -> Report:
    """The report's content from evaluation ``results`` (and an optional new-wave estimate).

    ``respondent_data``: include respondent-level values (the excluded cells' contents).
    ``source_name``: the results file the report was made from, for the About section.
    """
    created = created or _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    sections = [
        _summary_section(results, new_wave),
        _metrics_section(results),
        _confusion_section(results),
        _per_fold_section(results),
        _comparisons_section(results),
        _roc_section(results),
        _drivers_section(results),
    ]
    if new_wave:
        sections.append(_new_wave_section(new_wave))
    sections += [_data_quality_section(results, respondent_data), _definitions_section(),
                 _about_section(results, new_wave, created, source_name)]
    name = _provenance(results)["file"]
    title = f"CX driver analysis — {name}" if name else "CX driver analysis"
    return Report(title, created, tuple(sections),
                  meta={"respondent_data": respondent_data})
