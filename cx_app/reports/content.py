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

from cx_app.engine.catalogue import (
    BINARY_METRICS,
    DRIVER_DEFINITIONS,
    MULTICLASS_METRICS,
    OTHER_DEFINITIONS,
    PER_CLASS_METRICS,
    SHORT_METRIC_NAMES,
    metric_definition,
)
from cx_app.provenance import library_versions
from cx_app.reports.definitions import (
    DRIVER_FIELD_LABELS,
    GROUPING_OPTIONS,
    NEW_WAVE_FIELD_LABELS,
    PAPERS,
)

ColumnKind = Literal["text", "int", "count", "float", "percent", "pvalue", "score", "pp"]
"""How a column's numbers are shown: ``int`` whole numbers, ``count`` counts that may be
real-valued (ALP), ``float`` 3 decimals, ``percent`` a rate shown as %, ``pvalue`` 4 decimals,
``score`` a net score (NPS, −100..100) with one decimal, ``pp`` a difference of two rates in
percentage points (the value is already in points: 100 × the difference of the rates), signed,
one decimal."""


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
    cell_kinds: tuple[tuple[ColumnKind | None, ...], ...] = ()
    """Optional per-row overrides of the columns' kinds (None: the column's kind), for a
    column whose rows hold different measures (accuracy as %, MCC as a number)."""

    def column_values(self, key: str) -> list[Any]:
        index = [c.key for c in self.columns].index(key)
        return [row[index] for row in self.rows]

    def kind(self, row: int, column: int) -> ColumnKind:
        """The kind of one cell: its row's override, else its column's kind."""
        if row < len(self.cell_kinds) and column < len(self.cell_kinds[row]):
            override = self.cell_kinds[row][column]
            if override is not None:
                return override
        return self.columns[column].kind


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


def format_value(value: Any, kind: str) -> str:
    """How a table cell is shown as text (the workbook keeps full precision behind its
    number formats)."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if kind == "percent":
        return f"{value:.1%}"
    if kind == "pvalue":
        return f"{value:.4f}"
    if kind == "score":
        return f"{value:.1f}"
    if kind == "pp":
        return f"{value:+.1f} pp"
    if kind in ("int", "count"):
        if float(value).is_integer():
            return f"{value:,.0f}" if kind == "count" else f"{value:.0f}"
        return f"{value:,.2f}"
    if kind == "float":
        return f"{value:.3f}"
    return str(value)


def _fmt(value: Any, kind: ColumnKind = "float") -> str:
    """A number inside a sentence: as in a table cell, but p-values read "< 0.001" and a
    missing value reads "—"."""
    if not _is_number(value):
        return _text(value) or "—"
    if kind == "pvalue":
        return "< 0.001" if value < 0.001 else f"{value:.3f}"
    return format_value(value, kind)


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
    from cx_app.survey.nps import net_score_from_counts

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

    best_rows, best_kinds, reading = [], [], []
    all_picks: dict[str, list[_BestPick]] = {}
    for level_name in _level_names(results):
        picks = _best_models(results, level_name)
        for pick in picks:
            best_rows.append((level_name, pick.metric_name, pick.best, pick.value, pick.runner_up,
                              pick.runner_up_value, pick.p, pick.significant_text))
            best_kinds.append((None, None, None, pick.kind, None, pick.kind, None, None))
        if picks:
            all_picks[level_name] = picks
    reading.append(_models_reading(all_picks))
    if best_rows:
        blocks.append(Table(
            "Best model per level, by each compared metric",
            (Column("level", "Level"), Column("metric", "Metric"), Column("model", "Best model"),
             Column("value", "Value", "float"), Column("runner_up", "Runner-up"),
             Column("runner_up_value", "Runner-up value", "float"),
             Column("p", "p (Holm), best vs runner-up", "pvalue"),
             Column("significant", "Difference significant?")),
            tuple(best_rows), cell_kinds=tuple(best_kinds),
            note="Values are the pooled out-of-fold metrics of the Metrics section. The test is "
                 "the corrected (Nadeau–Bengio) paired t-test over the folds with Holm's "
                 "adjustment over the pairs of the level and metric (Comparisons section).",
        ))
    else:
        blocks.append(Paragraph("The results hold no model metrics.", "note"))

    labels = _attribute_labels(results)
    top = _top_drivers(results.get("drivers"))
    if top:
        drivers = results.get("drivers")
        relative = isinstance(drivers, Mapping) and columnar_records(
            drivers.get("relative_weights")) is not None
        if relative:
            blocks.append(Table(
                "Top drivers",
                (Column("attribute", "Attribute"),
                 Column("share", DRIVER_FIELD_LABELS["percent"], "percent")),
                tuple((labels.get(str(r["attribute"]), str(r["attribute"])),
                       r["importance"] / 100) for r in top),
                note="Johnson's relative weights: each attribute's share of the variance of the "
                     "score that the attributes explain together (see Drivers)."))
        else:
            blocks.append(records_table("Top drivers", [
                {**r, "attribute": labels.get(str(r.get("attribute")), r.get("attribute"))}
                for r in top]))
        reading.append(_drivers_reading(top, labels, relative))
    reading.append(_nps_reading(nps, new_wave))
    reading = [r for r in reading if r]
    if new_wave and new_wave.get("warnings"):
        reading.append(f"The new-wave estimate comes with {len(new_wave['warnings'])} "
                       "warning(s): see the New wave section.")
    if reading:
        blocks.append(Paragraph("Reading", "heading"))
        blocks.append(Paragraph(" ".join(reading)))
    return Section("summary", "Summary", tuple(blocks))


@dataclass(frozen=True)
class _BestPick:
    """The best model of one level by one metric, and how it stands against the runner-up."""

    metric: str
    metric_name: str
    kind: ColumnKind
    best: str
    value: float
    runner_up: str | None
    runner_up_value: float | None
    p: float | None
    significant: bool | None

    @property
    def significant_text(self) -> str:
        if self.runner_up is None:
            return "only one model"
        if self.significant is None:
            return "not tested"
        return "yes" if self.significant else "no"


def _compared_metrics(results: Mapping, level_name: str, binary: bool) -> list[str]:
    """Accuracy, the level's headline metric (macro F1, or MCC on a 2×2+IM level), then any
    other metric the results compare models on at this level."""
    found = ["accuracy", "mcc" if binary else "f1_macro"]
    for c in results.get("comparisons") or []:
        if c.get("level") == level_name and c.get("metric") and str(c["metric"]) not in found:
            found.append(str(c["metric"]))
    return found


def _pair_test(results: Mapping, level: str, metric: str, a: str, b: str
               ) -> tuple[float | None, bool | None]:
    """(Holm-adjusted p, significant?) of the k-fold t-test of models ``a`` and ``b``; the
    corrected or plain p when the results hold no Holm value."""
    for c in results.get("comparisons") or []:
        if (c.get("level") != level or c.get("metric") != metric
                or {str(c.get("a")), str(c.get("b"))} != {a, b}):
            continue
        _, p = _comparison_p(c)
        if p is None:
            continue
        alpha = c.get("alpha") if _is_number(c.get("alpha")) else 0.05
        return float(p), bool(p < alpha)
    return None, None


def _best_models(results: Mapping, level_name: str) -> list[_BestPick]:
    from cx_app.models.comparison import LOWER_IS_BETTER

    levels = {m: v["levels"][level_name] for m, v in _models(results).items()
              if level_name in (v.get("levels") or {})}
    binary = any(_level_is_binary(lv) for lv in levels.values())
    picks = []
    for metric in _compared_metrics(results, level_name, binary):
        scored = [(m, float(lv["metrics"][metric])) for m, lv in levels.items()
                  if _is_number((lv.get("metrics") or {}).get(metric))
                  and math.isfinite(lv["metrics"][metric])]
        if not scored:
            continue
        scored.sort(key=lambda mv: mv[1], reverse=metric not in LOWER_IS_BETTER)
        (best, value), runner = scored[0], (scored[1] if len(scored) > 1 else (None, None))
        p, significant = (_pair_test(results, level_name, metric, best, runner[0])
                          if runner[0] is not None else (None, None))
        picks.append(_BestPick(metric, _metric_display(metric, binary),
                               _metric_kind(metric, binary), best, value, runner[0], runner[1],
                               p, significant))
    return picks


def _short_metric(key: str) -> str:
    return SHORT_METRIC_NAMES.get(key, key)


def _models_reading(picks: Mapping[str, Sequence[_BestPick]]) -> str:
    """Two sentences in plain words: which model is best (per level when it differs) and
    where its lead over the runner-up is significant after Holm's correction."""
    every = [p for level in picks.values() for p in level]
    if not every:
        return ""
    bests = list(dict.fromkeys(p.best for p in every))
    metrics = _join(dict.fromkeys(_short_metric(p.metric) for p in every))
    if len(bests) == 1:
        where = "at every level" if len(picks) > 1 else f"at level {next(iter(picks))}"
        sentences = [f"The best model is {bests[0]} {where}, by {metrics}."]
    else:
        sentences = []
        for level_name, level in picks.items():
            by_model: dict[str, list[str]] = {}
            for p in level:
                by_model.setdefault(p.best, []).append(_short_metric(p.metric))
            sentences.append(f"At level {level_name}, " + _join(
                f"{m}{' is best' if i == 0 else ''} by {_join(ms)}"
                for i, (m, ms) in enumerate(by_model.items())) + ".")
    tested = [(lv, p) for lv, level in picks.items() for p in level if p.significant is not None]
    if tested:
        runners = {p.runner_up for _, p in tested}
        lead = (f"Its lead over {runners.pop()}" if len(bests) == 1 and len(runners) == 1
                else "The best model's lead over the runner-up")

        def places(wanted: bool) -> str:
            by_level: dict[str, list[str]] = {}
            for lv, p in tested:
                if p.significant is wanted:
                    by_level.setdefault(lv, []).append(_short_metric(p.metric))
            return _join(f"{lv} ({', '.join(ms)})" for lv, ms in by_level.items()) \
                if by_level else ""

        yes, no = places(True), places(False)
        if yes and not no:
            sentences.append(f"{lead} is significant after Holm's correction everywhere.")
        elif no and not yes:
            sentences.append(f"{lead} is nowhere significant after Holm's correction: the "
                             "difference could be chance.")
        else:
            sentences.append(f"{lead} is significant after Holm's correction at {yes}; at {no} "
                             "the difference could be chance.")
    return " ".join(sentences)


def _p_text(p: float | None) -> str:
    if p is None:
        return "not available"
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def _join(parts: Iterable[str]) -> str:
    parts = list(parts)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _drivers_reading(top: Sequence[Mapping], labels: Mapping[str, str], relative: bool) -> str:
    names = []
    for i, r in enumerate(top[:3]):
        name = labels.get(str(r.get("attribute")), str(r.get("attribute")))
        if relative and _is_number(r.get("importance")):
            share = f"{r['importance'] / 100:.0%}"
            name += f" ({share} of the explained variance)" if i == 0 else f" ({share})"
        names.append(name)
    return f"The strongest drivers are {_join(names)}." if names else ""


def _interval_text(figure: Mapping) -> str:
    ci = list(figure.get("ci95") or [])[:2]
    if len(ci) == 2 and all(_is_number(c) for c in ci):
        return f" (95% interval {ci[0]:.1f} to {ci[1]:.1f})"
    return ""


def _nps_reading(nps: Any, new_wave: Mapping | None) -> str:
    parts = []
    if isinstance(nps, Mapping) and _is_number(nps.get("value")):
        n = f" of the {nps['n']:,} analysed respondents" if _is_number(nps.get("n")) else ""
        parts.append(f"The NPS{n} is {nps['value']:.1f}{_interval_text(nps)}")
    est = (new_wave or {}).get("estimated_nps") or {}
    if isinstance(est, Mapping) and _is_number(est.get("value")):
        parts.append(f"the new wave's estimated NPS is {est['value']:.1f}"
                     + _interval_text(est).replace("95% interval ", ""))
    if not parts:
        return ""
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "."


def _metric_display(key: str, binary: bool) -> str:
    found = metric_definition(key, binary=binary)
    return found.name if found else key


def _comparison_p(c: Mapping) -> tuple[str, Any]:
    for key, name in (("p_holm", "Holm-adjusted"), ("p_corrected", "corrected"), ("p", "plain")):
        if _is_number(c.get(key)):
            return name, c[key]
    return "", None


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

            from cx_app.reports.charts import rhombus_chart
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

    from cx_app.reports.charts import auc_bars, roc_chart

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


def _attribute_labels(results: Mapping) -> dict[str, str]:
    """Survey column → human label of the attributes, where the results carry them
    (``dataset.attribute_labels`` or ``drivers.attribute_labels``); empty otherwise."""
    for part in (results.get("dataset"), results.get("drivers")):
        labels = part.get("attribute_labels") if isinstance(part, Mapping) else None
        if isinstance(labels, Mapping):
            return {str(k): str(v) for k, v in labels.items() if v not in (None, "")}
    return {}


def _attribute_columns(labels: Mapping[str, str]) -> tuple[Column, ...]:
    """The attribute column(s) of a driver table: the label, and the survey column when the
    results carry labels."""
    if labels:
        return Column("attribute", "Attribute"), Column("column", "Survey column")
    return (Column("attribute", "Attribute"),)


def _attribute_cells(name: Any, labels: Mapping[str, str]) -> tuple[Any, ...]:
    name = _text(name)
    return (labels.get(name, name), name) if labels else (name,)


def _facts_table(title: str, facts: Iterable[tuple[str, Any, ColumnKind]]) -> Table:
    """Item / value rows, each value in its own format (R² as a number, a method as text)."""
    facts = [(k, _cell(v), kind) for k, v, kind in facts if v is not None and v != ""]
    return Table(title, (Column("item", "Item"), Column("value", "Value")),
                 tuple((k, v) for k, v, _ in facts),
                 cell_kinds=tuple((None, kind if _is_number(v) else "text")
                                  for _, v, kind in facts))


def _bar_chart(title: str, names: Sequence[str], values: Sequence[Any],
               lows: Sequence[Any] | None, highs: Sequence[Any] | None, value_title: str,
               note: str = "") -> ChartBlock | None:
    import pandas as pd

    from cx_app.reports.charts import importance_bars

    frame = pd.DataFrame({"attribute": list(names), "importance": list(values),
                          "ci_low": list(lows) if lows else list(values),
                          "ci_high": list(highs) if highs else list(values)})
    frame = frame.dropna(subset=["importance"])
    if frame.empty:
        return None
    return ChartBlock(title, importance_bars(frame, value_title=value_title).to_dict(), note=note)


def _relative_weight_blocks(value: Mapping, labels: Mapping[str, str]) -> list[Block]:
    records = columnar_records(value) or []
    r2 = value.get("r_squared")
    for r in records:
        if _is_number(r.get("percent")):
            r["share"] = r["percent"] / 100
        elif _is_number(r.get("raw")) and _is_number(r2) and r2 > 0:
            r["share"] = r["raw"] / r2
        else:
            r["share"] = None
    records.sort(key=lambda r: -r["share"] if _is_number(r["share"]) else math.inf)
    title = "Relative weights (Johnson 2000): share of the explained variance"
    columns = (*_attribute_columns(labels),
               Column("share", DRIVER_FIELD_LABELS["percent"], "percent"),
               Column("raw", DRIVER_FIELD_LABELS["raw"], "float"))
    rows = tuple((*_attribute_cells(r["attribute"], labels), _number_or_none(r["share"]),
                  _number_or_none(r.get("raw"))) for r in records)
    explained = (f"The attributes together explain {r2:.1%} of the variance of the score "
                 f"(R² = {r2:.3f}); " if _is_number(r2) else "")
    blocks: list[Block] = [Table(
        title, columns, rows,
        note=explained + "each attribute's share splits that explained variance fairly "
             "between correlated attributes; the shares add up to 100%.")]
    blocks.append(_facts_table("About the relative weights", [
        (DRIVER_FIELD_LABELS["r_squared"], r2, "float"),
        (DRIVER_FIELD_LABELS["method"], value.get("method"), "text")]))
    chart = _bar_chart("Share of the explained variance by attribute", [row[0] for row in rows],
                       [None if r["share"] is None else 100 * r["share"] for r in records],
                       None, None, "Share of R² (%)")
    return [*blocks, *([chart] if chart else [])]


def _ordinal_blocks(value: Mapping, labels: Mapping[str, str]) -> list[Block]:
    records = columnar_records(value) or []
    records.sort(key=lambda r: -r["coef"] if _is_number(r.get("coef")) else math.inf)
    title = "Ordinal logistic regression: effect of each attribute on the score"
    keys = [k for k in ("coef", "se", "ci_low", "ci_high", "p") if any(k in r for r in records)]
    columns = (*_attribute_columns(labels),
               *(Column(k, DRIVER_FIELD_LABELS.get(k, _COLUMN_TITLES.get(k, k)),
                        "pvalue" if k == "p" else "float") for k in keys[:1]),
               Column("odds_ratio", DRIVER_FIELD_LABELS["odds_ratio"], "float"),
               *(Column(k, _COLUMN_TITLES.get(k, k), "pvalue" if k == "p" else "float")
                 for k in keys[1:]))
    rows = tuple((*_attribute_cells(r["attribute"], labels),
                  *(_number_or_none(r.get(k)) for k in keys[:1]),
                  math.exp(r["coef"]) if _is_number(r.get("coef")) and r["coef"] < 700 else None,
                  *(_number_or_none(r.get(k)) for k in keys[1:])) for r in records)
    model = f"{_text(value.get('model'))[:1].upper()}{_text(value.get('model'))[1:]}. " \
        if value.get("model") else ""
    blocks: list[Block] = [Table(
        title, columns, rows,
        note=model + "One standard deviation more of the attribute multiplies the odds of a "
             "higher score by the odds ratio; p below 0.05: unlikely to be chance.")]
    if "coef" in keys:
        chart = _bar_chart("Ordinal coefficients with their 95% intervals",
                           [row[0] for row in rows], [r.get("coef") for r in records],
                           [r.get("ci_low") for r in records] if "ci_low" in keys else None,
                           [r.get("ci_high") for r in records] if "ci_high" in keys else None,
                           DRIVER_FIELD_LABELS["coef"])
        blocks += [chart] if chart else []
    return blocks


def _permutation_blocks(model_id: str, value: Mapping, labels: Mapping[str, str],
                        folds: Any) -> list[Block]:
    records = columnar_records(value) or []
    scoring = _text(value.get("scoring")) or "score"
    title = f"Permutation importance ({model_id}): drop in {scoring} when the attribute is " \
            "shuffled"
    order = sorted(range(len(records)), key=lambda i: -records[i]["mean"]
                   if _is_number(records[i].get("mean")) else math.inf)
    keys = [k for k in ("mean", "ci_low", "ci_high") if any(k in r for r in records)]
    columns = (*_attribute_columns(labels),
               *(Column(k, DRIVER_FIELD_LABELS.get(k) if k == "mean" else _COLUMN_TITLES[k],
                        "float") for k in keys))
    rows = tuple((*_attribute_cells(records[i]["attribute"], labels),
                  *(_number_or_none(records[i].get(k)) for k in keys)) for i in order)
    blocks: list[Block] = [Table(
        title, columns, rows,
        note=f"How much the model's {scoring} on the held-out folds drops when the attribute's "
             "values are shuffled; the interval is over the folds. Near zero: the model does "
             "not rely on the attribute.")]
    blocks.append(_facts_table(f"About the permutation importance ({model_id})", [
        (DRIVER_FIELD_LABELS["algorithm"], value.get("algorithm") or model_id, "text"),
        (DRIVER_FIELD_LABELS["scoring"], value.get("scoring"), "text"),
        (DRIVER_FIELD_LABELS["n_repeats"], value.get("n_repeats"), "int"),
        ("Cross-validation folds", folds, "int")]))
    if "mean" in keys:
        chart = _bar_chart(f"Permutation importance ({model_id}) with its 95% interval",
                           [row[0] for row in rows],
                           [records[i].get("mean") for i in order],
                           [records[i].get("ci_low") for i in order] if "ci_low" in keys else None,
                           [records[i].get("ci_high") for i in order] if "ci_high" in keys
                           else None, f"Drop in {scoring}")
        blocks += [chart] if chart else []
    per_fold = value.get("per_fold")
    names = [_attribute_cells(r["attribute"], labels)[0] for r in records]
    if isinstance(per_fold, list) and per_fold and all(
            isinstance(r, list) and len(r) == len(names) for r in per_fold):
        blocks.append(Table(
            f"Permutation importance per fold ({model_id})",
            (Column("row", "Fold", "int"),
             *(Column(f"a{i}", n, "float") for i, n in enumerate(names))),
            tuple((i + 1, *(_number_or_none(x) for x in r)) for i, r in enumerate(per_fold))))
    return blocks


def _importance_performance_blocks(value: Mapping, labels: Mapping[str, str]) -> list[Block]:
    import pandas as pd

    from cx_app.reports.charts import quadrant_chart

    records = _as_records(value.get("rows"), "attribute") or []
    as_share = "% of r²" in _text(value.get("importance")).lower()
    scale = 0.01 if as_share else 1.0
    importance_title = (DRIVER_FIELD_LABELS["percent"] if as_share
                        else _text(value.get("importance")).capitalize() or "Importance")
    records.sort(key=lambda r: -r["importance"] if _is_number(r.get("importance")) else math.inf)
    columns = (*_attribute_columns(labels),
               Column("importance", importance_title, "percent" if as_share else "float"),
               Column("performance", DRIVER_FIELD_LABELS["performance"], "float"),
               Column("quadrant", DRIVER_FIELD_LABELS["quadrant"]))
    rows = tuple((*_attribute_cells(r.get("attribute"), labels),
                  r["importance"] * scale if _is_number(r.get("importance")) else None,
                  _number_or_none(r.get("performance")), _cell(r.get("quadrant")))
                 for r in records)
    title = "Importance–performance: where to act"
    blocks: list[Block] = [Table(
        title, columns, rows,
        note="Importance against the attribute's mean rating, split at the means: 'concentrate "
             "here' = important and rated below average.")]
    frame = pd.DataFrame({"attribute": [row[0] for row in rows],
                          "importance": [r.get("importance") for r in records],
                          "performance": [r.get("performance") for r in records]}).dropna()
    if not frame.empty:
        blocks.append(ChartBlock(
            "Importance–performance map",
            quadrant_chart(frame, importance_title=importance_title
                           + (" (%)" if as_share else "")).to_dict(),
            note="Top left: important and weak — act there first."))
    return blocks


def _top_box_blocks(value: Any, labels: Mapping[str, str]) -> list[Block]:
    import pandas as pd

    from cx_app.reports.charts import rhombus_chart

    records = _as_records(value, "attribute") or []
    title = "Top box as a signal: does a top rating mark the target group?"
    columns = (*_attribute_columns(labels), Column("target", DRIVER_FIELD_LABELS["target"]),
               Column("top_box_share", DRIVER_FIELD_LABELS["top_box_share"], "percent"),
               Column("tpr", "TPR", "percent"), Column("fpr", "FPR", "percent"),
               Column("delta", "δ", "float"), Column("phi", "φ", "float"))
    rows = tuple((*_attribute_cells(r.get("attribute"), labels), _cell(r.get("target")),
                  *(_number_or_none(r.get(k)) for k in ("top_box_share", "tpr", "fpr", "delta",
                                                        "phi"))) for r in records)
    blocks: list[Block] = [Table(
        title, columns, rows,
        note="'Attribute rated in its top box' used as a predictor of the target group: TPR = "
             "share of the group who gave a top rating, FPR = share of everyone else who did; "
             "δ = TPR − FPR (how well it separates), φ = TPR + FPR − 1 (its bias).")]
    targets = list(dict.fromkeys(_text(r.get("target")) for r in records))
    for target in targets:
        points = [{"series": row[0], "label": _text(target), "delta": r.get("delta"),
                   "phi": r.get("phi")} for row, r in zip(rows, records, strict=True)
                  if _text(r.get("target")) == target]
        frame = pd.DataFrame(points).dropna(subset=["delta", "phi"])
        if not frame.empty:
            blocks.append(ChartBlock(
                "Top box δ/φ" + (f" — target {target}" if target else ""),
                rhombus_chart(frame, colour_title="Attribute").to_dict(),
                note="Higher up: the top box separates the group better."))
    return blocks


_DRIVER_PARTS = ("relative_weights", "ordinal", "permutation", "importance_performance",
                 "top_box")


def _drivers_section(results: Mapping) -> Section:
    drivers = results.get("drivers")
    if not drivers:
        return Section("drivers", "Drivers", (Paragraph(
            "The results hold no driver analysis.", "note"),))
    if not isinstance(drivers, Mapping):
        return Section("drivers", "Drivers", tuple(_generic_blocks("Drivers", drivers,
                                                                   "attribute")))
    labels = _attribute_labels(results)
    blocks: list[Block] = []
    handled = {"ranking", "permutation_model", "notes", "attribute_labels"}  # shown elsewhere
    relative = drivers.get("relative_weights")
    if isinstance(relative, Mapping) and columnar_records(relative):
        blocks += _relative_weight_blocks(relative, labels)
        handled.add("relative_weights")
    ordinal = drivers.get("ordinal")
    if isinstance(ordinal, Mapping) and columnar_records(ordinal):
        blocks += _ordinal_blocks(ordinal, labels)
        handled.add("ordinal")
    permutation = drivers.get("permutation")
    if isinstance(permutation, Mapping) and permutation and all(
            isinstance(v, Mapping) and columnar_records(v) for v in permutation.values()):
        for model_id, value in permutation.items():
            blocks += _permutation_blocks(str(model_id), value, labels, results.get("folds"))
        handled.add("permutation")
    ipa = drivers.get("importance_performance")
    if isinstance(ipa, Mapping) and _as_records(ipa.get("rows"), "attribute"):
        blocks += _importance_performance_blocks(ipa, labels)
        handled.add("importance_performance")
    if _as_records(drivers.get("top_box"), "attribute"):
        blocks += _top_box_blocks(drivers["top_box"], labels)
        handled.add("top_box")
    for key, value in drivers.items():  # anything else, as well as it can be laid out
        if key not in handled and value not in (None, [], {}):
            blocks += _generic_blocks(DRIVER_FIELD_LABELS.get(key, _humanise(key)), value,
                                      "attribute")
    for note in drivers.get("notes") or []:
        blocks.append(Paragraph(_text(note), "note"))
    return Section("drivers", "Drivers", tuple(blocks) or (Paragraph(
        "The results hold no driver analysis.", "note"),))


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
    counts = new_wave.get("estimated_class_counts")
    if isinstance(counts, Mapping) and counts:
        blocks.append(_estimated_class_counts_table(counts))
    elif counts:
        blocks.extend(_generic_blocks("Estimated class counts", counts))
    drift = new_wave.get("drift")
    if drift:
        records = _as_records(drift, "attribute")
        blocks.append(records_table("Drift", records, titles=_NEW_WAVE_TITLES) if records
                      is not None else Paragraph(f"Drift: {_cell(drift)}"))
    model = new_wave.get("model")
    if isinstance(model, Mapping) and model:
        blocks.extend(_new_wave_model_blocks(model))
    elif model:
        blocks.extend(_generic_blocks("Model", model))
    return Section("new_wave", "New wave", tuple(blocks))


_NEW_WAVE_TITLES = {**NEW_WAVE_FIELD_LABELS,
                    "attribute": "Attribute"}

# Real-valued (ALP) counts are shown with one decimal: the "score" kind is the writers' one-
# decimal number format ("count" shows whole counts, real-valued ones with two decimals).
_ESTIMATED_COUNT_KIND: ColumnKind = "score"

_MODEL_FIELD_KINDS: dict[str, ColumnKind] = {
    "algorithm": "text", "calibration": "text", "training_sha256": "text", "training_n": "int",
}
_ALP_GAP_FIELD_KINDS: dict[str, ColumnKind] = {
    "n": "int", "accuracy_cm": "percent", "accuracy_alp": "percent", "accuracy_gap": "pp",
    "share_gap": "percent", "net_gap": "score", "net_calibration_error": "score",
    "score": "float",
}


def _estimated_class_counts_table(counts: Mapping) -> Table:
    """Each class's estimated number of respondents (one decimal) and its share of the wave."""
    values = {str(k): _number_or_none(v) for k, v in counts.items()}
    total = sum(v for v in values.values() if _is_number(v))
    rows = tuple((k, v, v / total if total and _is_number(v) else None)
                 for k, v in values.items())
    return Table("Estimated class counts",
                 (Column("class", NEW_WAVE_FIELD_LABELS["class"]),
                  Column("count", NEW_WAVE_FIELD_LABELS["estimated_count"],
                         _ESTIMATED_COUNT_KIND),
                  Column("share", NEW_WAVE_FIELD_LABELS["estimated_share"], "percent")),
                 rows,
                 note="The sum of the respondents' predicted probabilities of each class "
                      "(ALP): real-valued, so shown with one decimal.")


def _labelled_facts(title: str, value: Mapping, kinds: Mapping[str, ColumnKind], *,
                    note: str = "") -> Table:
    """An Item/Value table of a flat dict: keys named by ``NEW_WAVE_FIELD_LABELS``, each value
    in its own format (``kinds``; inferred for keys not listed). A ``pp`` value is a
    difference of two rates, shown in percentage points."""
    rows, cell_kinds = [], []
    for key, raw in value.items():
        cell = _cell(raw)
        kind = kinds.get(key) or _infer_kind(key, [cell])
        if kind == "pp" and _is_number(cell):
            cell = 100 * cell
        rows.append((NEW_WAVE_FIELD_LABELS.get(key, _humanise(key)), cell))
        cell_kinds.append((None, None if kind == "text" else kind))
    return Table(title, (Column("item", "Item"), Column("value", "Value")), tuple(rows),
                 note=note, cell_kinds=tuple(cell_kinds))


def _new_wave_model_blocks(model: Mapping) -> list[Block]:
    """The model the wave was estimated with, and its held-out check of the ALP estimate."""
    flat = {k: v for k, v in model.items() if not isinstance(v, Mapping)}
    blocks: list[Block] = [_labelled_facts("Model", flat, _MODEL_FIELD_KINDS)] if flat else []
    for key, value in model.items():
        if key not in flat and key == "heldout_alp_gap":
            blocks.append(_labelled_facts(
                f"Model — {NEW_WAVE_FIELD_LABELS[key]}",
                {k: value[k] for k in sorted(value, key=lambda k: (
                    list(_ALP_GAP_FIELD_KINDS).index(k) if k in _ALP_GAP_FIELD_KINDS
                    else len(_ALP_GAP_FIELD_KINDS))) if value[k] is not None},
                _ALP_GAP_FIELD_KINDS,
                note="The ALP estimate against the real values on held-out training data: "
                     "gaps as percentage points or points of net score; a gap score of 1 or "
                     "less raises no warning."))
        elif key not in flat:
            blocks.extend(_generic_blocks(f"Model — {_humanise(key)}", value))
    return blocks


def _estimate_vs_realized(level_name: str, estimated: Mapping,
                          realized: Mapping | None) -> list[Block]:
    """One table per level: each metric's ALP estimate beside its realized value (when the
    wave carries its scores); rates as percentages and their differences in percentage points
    (pp), counts as counts."""
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
        rates = kind == "percent"  # a difference of two rates is in percentage points
        if realized:
            columns += [Column("realized", "Realized", kind),
                        Column("difference", "Estimate − realized" + (" (pp)" if rates else ""),
                               "pp" if rates else kind)]
        rows = []
        for k in chosen:
            est, real = _number_or_none(estimated.get(k)), _number_or_none(realized.get(k))
            row = [_metric_display(k, binary), est]
            if realized:
                difference = est - real if _is_number(est) and _is_number(real) else None
                row += [real, 100 * difference if rates and difference is not None
                        else difference]
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
