"""New wave: a wave's estimated net score and performance (ALP) beside the realized values."""

from __future__ import annotations

from collections.abc import Mapping

from cx_app.engine.catalogue import OTHER_DEFINITIONS, metric_name
from cx_app.estimate.document import WaveEstimateDocument
from cx_app.estimate.metric_intervals import MetricComparisonRow
from cx_app.models.names import model_display_name
from cx_app.reports.blocks import (
    Block,
    ColumnKind,
    MatrixBlock,
    Paragraph,
    Section,
    Table,
    TableColumn,
)
from cx_app.reports.formatting import cell, facts_table, metric_kind
from cx_app.reports.sections.confusion import level_matrix
from cx_app.survey.vocabulary import vocabulary_for

_DRIFT_COLUMNS: tuple[tuple[str, str, ColumnKind], ...] = (
    ("present", "In the wave", "text"),
    ("psi", "Shift in the answers (PSI)", "float"),
    ("level", "Change", "text"),
    ("chi2", "Test of the answer shares (χ²)", "float"),
    ("dof", "Degrees of freedom (df)", "int"),
    ("p_value", "p, test of the answer shares", "pvalue"),
    ("n_reference", "Training respondents", "int"),
    ("n_current", "Wave respondents", "int"),
    ("n_missing", "Unanswered", "int"),
    ("unseen_values", "Answers not seen in training", "text"),
    ("out_of_scale_values", "Answers outside the scale", "text"),
)


def _nps_table(wave: WaveEstimateDocument) -> list[Block]:
    rows = [(label, f.value, *f.ci95[:2], f.n) for label, f in (
        ("Estimated (ALP, no labels used)", wave.estimated_nps),
        ("Realized (the wave's own scores)", wave.realized_nps)) if f is not None]
    if not rows:
        return []
    kind = wave.estimated_nps.kind  # an estimate written without a kind was an NPS
    words = vocabulary_for(nps=kind in (None, "nps"), satisfaction=kind == "csat")
    return [Table(
        f"{words.title} of the new wave",
        (TableColumn("figure", "Figure"), TableColumn("nps", words.title, "score"),
         TableColumn("low", "95% low", "score"), TableColumn("high", "95% high", "score"),
         TableColumn("n", "Respondents", "int")), tuple(rows),
        note=f"The estimate sums each respondent's predicted probabilities of being in the "
             f"{words.positive} and the {words.negative} groups; its interval adds the model's "
             "uncertainty to the sampling one.")]


def _matrices(wave: WaveEstimateDocument) -> list[Block]:
    blocks: list[Block] = [MatrixBlock("ALP confusion matrix (estimated)",
                                       tuple(map(str, wave.classes)),
                                       tuple(tuple(row) for row in wave.alp_matrix),
                                       real_valued=True, note=OTHER_DEFINITIONS["alp"].words)]
    # the original level is the ALP matrix itself
    return blocks + [level_matrix(f"Estimated level {name}", level, real_valued=True)
                     for name, level in wave.levels.items() if level.matrix != wave.alp_matrix]


def _comparison(level_name: str, rows: list[MetricComparisonRow], realized: bool) -> list[Block]:
    """One table per kind of metric (counts, rates, others); rates differ in points."""
    binary = any(r.metric == "tpr" for r in rows)
    blocks: list[Block] = []
    for kind, title in (("count", "counts"), ("percent", "rates"), ("float", "other metrics")):
        chosen = [r for r in rows if metric_kind(r.metric, binary) == kind]
        if not chosen:
            continue
        rates = kind == "percent"
        columns = [TableColumn("metric", "Metric"), TableColumn("estimate", "Estimate", kind)]
        intervals = any(r.interval is not None for r in chosen)
        if intervals:
            columns += [TableColumn("ci_low", "95% low", kind), TableColumn("ci_high", "95% high", kind)]
        if realized:
            columns += [TableColumn("realized", "Realized", kind),
                        TableColumn("difference", "Estimate − realized" + (" (pp)" if rates else ""),
                               "pp" if rates else kind)]
        table_rows = []
        for r in chosen:
            row = [metric_name(r.metric, binary=binary), r.estimated]
            if intervals:
                row += list(r.interval.ci95) if r.interval else [None, None]
            if realized:
                diff = (None if r.estimated is None or r.realized is None
                        else (r.estimated - r.realized) * (100 if rates else 1))
                row += [r.realized, diff]
            table_rows.append(tuple(row))
        blocks.append(Table(f"Estimated metrics — level {level_name} ({title})",
                            tuple(columns), tuple(table_rows),
                            note=_INTERVAL_NOTE if intervals else ""))
    return blocks


_INTERVAL_NOTE = ("95% interval of this wave's realized value: the spread of its respondents' "
                  "answers drawn from the model's probabilities plus the model's error on "
                  "held-out data.")


def _alerts(wave: WaveEstimateDocument) -> list[Block]:
    if not wave.alerts:
        return []
    return [Table(
        "Alerts on the estimates",
        (TableColumn("metric", "Metric"), TableColumn("value", "Estimate", "float"),
         TableColumn("lower", "Lower limit", "float"), TableColumn("upper", "Upper limit", "float"),
         TableColumn("alert", "Alert"), TableColumn("source", "Limits from")),
        tuple((a.metric.replace("_", " "), a.value, a.lower, a.upper,
               f"ALERT ({a.direction})" if a.alert else "no", a.source) for a in wave.alerts),
        note="An alert: the estimate is outside the limits (by default the reference's "
             "3-sigma band at this wave's size, as NannyML's CBPE); net score in points.",
        cell_kinds=tuple((None, *(("percent" if a.metric == "accuracy" else "score"),) * 3,
                          None, None) for a in wave.alerts))]


def _class_counts(counts: dict[str, float]) -> Table:
    total = sum(counts.values())
    return Table("Estimated class counts",
                 (TableColumn("class", "Class"),
                  # real-valued (ALP) counts: one decimal, the writers' "score" format
                  TableColumn("count", "Estimated respondents", "score"),
                  TableColumn("share", "Estimated share", "percent")),
                 tuple((k, v, v / total if total else None) for k, v in counts.items()),
                 note="The sum of the respondents' predicted probabilities of each class "
                      "(ALP): real-valued, so shown with one decimal.")


def _model(wave: WaveEstimateDocument) -> list[Block]:
    model = wave.model
    blocks: list[Block] = [facts_table("Model", [
        ("Model", model_display_name(model.algorithm), "text"),
        ("Probability calibration", model.calibration, "text"),
        ("Training data SHA-256", model.training_sha256, "text"),
        ("Training respondents", model.training_n, "int")])]
    gap = model.heldout_alp_gap
    if gap is not None:
        blocks.append(facts_table("Model — Held-out check of the ALP estimate", [
            ("Held-out respondents", gap.n, "int"), ("Accuracy (real, held-out)", gap.accuracy_cm, "percent"),
            ("Accuracy (ALP estimate, held-out)", gap.accuracy_alp, "percent"),
            ("Accuracy gap (ALP − real)", None if gap.accuracy_gap is None else 100 * gap.accuracy_gap,
             "pp"),
            ("Class-share gap (total variation)", gap.share_gap, "percent"),
            ("Net score gap, estimated − actual (score points)", gap.net_gap, "score"),
            ("Net score calibration error (score points)", gap.net_calibration_error, "score"),
            ("Gap score (1 or less: no warning)", gap.score, "float")],
            note="The ALP estimate against the real values on held-out training data: gaps as "
                 "percentage points or points of net score; a gap score of 1 or less raises no "
                 "warning."))
    return blocks


def section(wave: WaveEstimateDocument,
            labels: Mapping[str, str] | None = None) -> Section:
    blocks: list[Block] = [facts_table("New wave", [("File", wave.filename, "text"),
                                                    ("Respondents", wave.n, "int")])]
    blocks += _nps_table(wave)
    blocks += _alerts(wave)
    blocks += [Paragraph(f"Warning: {w}", "warning") for w in wave.warnings]
    blocks += _matrices(wave)
    by_level: dict[str, list[MetricComparisonRow]] = {}
    for row in wave.metric_comparison:
        by_level.setdefault(row.level, []).append(row)
    for level_name, rows in by_level.items():
        blocks += _comparison(level_name, rows, wave.realized_nps is not None)
    if wave.estimated_class_counts:
        blocks.append(_class_counts(wave.estimated_class_counts))
    if wave.drift:
        blocks.append(Table(
            "Drift",
            (TableColumn("attribute", "Attribute"),
             *(TableColumn(k, header, kind) for k, header, kind in _DRIFT_COLUMNS)),
            tuple(((labels or {}).get(name) or name,
                   *(cell(getattr(d, k)) for k, _, _ in _DRIFT_COLUMNS))
                  for name, d in wave.drift.items())))
    blocks += _model(wave)
    return Section("new_wave", "New wave", tuple(blocks))

