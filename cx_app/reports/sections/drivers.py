"""Drivers: every importance measure of each attribute, and the importance–performance map."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from cx_app.models.importance_performance import NO_STANDOUT
from cx_app.models.names import model_display_name
from cx_app.models.results import (
    Drivers,
    ImportancePerformanceDoc,
    OrdinalDoc,
    PermutationDoc,
    RelativeWeightsDoc,
    Results,
    TopBoxRow,
)
from cx_app.reports.blocks import Block, ChartBlock, Paragraph, Section, Table, TableColumn
from cx_app.reports.charts import importance_bars, quadrant_chart, rhombus_chart
from cx_app.reports.definitions import plain_name
from cx_app.reports.formatting import facts_table

Labels = Mapping[str, str]
ATTRIBUTE = TableColumn("attribute", "Attribute")


def _descending(records: list[dict], key: str) -> list[dict]:
    return sorted(records, key=lambda r: -r[key] if r[key] is not None else math.inf)


def _bars(title: str, names: Sequence[str], records: list[dict], key: str,
          value_title: str, *, interval: bool = True) -> list[Block]:
    frame = pd.DataFrame(records, columns=[key, "ci_low", "ci_high"]).rename(
        columns={key: "importance"}).assign(attribute=list(names))
    if not interval:
        frame = frame.assign(ci_low=frame["importance"], ci_high=frame["importance"])
    frame = frame.dropna(subset=["importance"])
    if frame.empty:
        return []
    return [ChartBlock(title, importance_bars(frame, value_title=value_title).to_dict())]


def _relative_weights(value: RelativeWeightsDoc, labels: Labels) -> list[Block]:
    records = _descending(value.records("percent", "raw"), "percent")
    rows = tuple((labels.get(r["attribute"]) or r["attribute"],
                  None if r["percent"] is None else r["percent"] / 100, r["raw"])
                 for r in records)
    r2 = value.r_squared
    explained = (f"The attributes together explain {r2:.1%} of the variance of the score "
                 f"(R² = {r2:.3f}); " if r2 is not None else "")
    return [
        Table("Relative weights (Johnson 2000): share of the explained variance",
              (ATTRIBUTE, TableColumn("share", "Share of R²", "percent"),
               TableColumn("raw", "Raw weight (variance explained)", "float")), rows,
              note=explained + "each attribute's share splits that explained variance fairly "
                   "between correlated attributes; the shares add up to 100%."),
        facts_table("About the relative weights", [("R² of the linear model", r2, "float"),
                                                   ("Method", value.method, "text")]),
        *_bars("Share of the explained variance by attribute", [r[0] for r in rows], records,
               "percent", "Share of R² (%)", interval=False),
    ]


def _ordinal(value: OrdinalDoc, labels: Labels) -> list[Block]:
    records = _descending(value.records("coef", "se", "ci_low", "ci_high", "p"), "coef")
    rows = tuple((labels.get(r["attribute"]) or r["attribute"], r["coef"],
                  math.exp(r["coef"]) if r["coef"] is not None and r["coef"] < 700 else None,
                  r["se"], r["ci_low"], r["ci_high"], r["p"]) for r in records)
    return [
        Table("Ordinal logistic regression: effect of each attribute on the score",
              (ATTRIBUTE, TableColumn("coef", "Coefficient (log-odds per SD)", "float"),
               TableColumn("odds_ratio", "Odds ratio per SD", "float"), TableColumn("se", "SE", "float"),
               TableColumn("ci_low", "95% low", "float"), TableColumn("ci_high", "95% high", "float"),
               TableColumn("p", "p", "pvalue")), rows,
              note=f"{value.model[:1].upper()}{value.model[1:]}. One standard deviation more "
                   "of the attribute multiplies the odds of a higher score by the odds ratio; "
                   "p below 0.05: unlikely to be chance."),
        *_bars("Ordinal coefficients with their 95% intervals", [r[0] for r in rows], records,
               "coef", "Coefficient (log-odds per SD)"),
    ]


def _permutation(model_id: str, value: PermutationDoc, labels: Labels,
                 folds: int | None) -> list[Block]:
    records = _descending(value.records("mean", "ci_low", "ci_high"), "mean")
    rows = tuple((labels.get(r["attribute"]) or r["attribute"], r["mean"], r["ci_low"], r["ci_high"])
                 for r in records)
    names = [labels.get(a) or a for a in value.attributes]
    blocks: list[Block] = [
        Table(f"Permutation importance ({model_id}): drop in {value.scoring} when the "
              "attribute is shuffled",
              (ATTRIBUTE, TableColumn("mean", "Mean drop", "float"),
               TableColumn("ci_low", "95% low", "float"), TableColumn("ci_high", "95% high", "float")),
              rows,
              note=f"How much the model's {value.scoring} on the held-out folds drops when the "
                   "attribute's values are shuffled; the interval is over the folds. Near zero: "
                   "the model does not rely on the attribute."),
        facts_table(f"About the permutation importance ({model_id})", [
            ("Model", model_display_name(value.algorithm), "text"),
            ("Score that drops when shuffled", value.scoring, "text"),
            ("Shuffles per attribute and fold", value.n_repeats, "int"),
            ("Cross-validation folds", folds, "int")]),
        *_bars(f"Permutation importance ({model_id}) with its 95% interval",
               [r[0] for r in rows], records, "mean", f"Drop in {value.scoring}"),
    ]
    if value.per_fold:
        blocks.append(Table(
            f"Permutation importance per fold ({model_id})",
            (TableColumn("row", "Fold", "int"), *(TableColumn(f"a{i}", n, "float")
                                             for i, n in enumerate(names))),
            tuple((i + 1, *r) for i, r in enumerate(value.per_fold))))
    return blocks


def _importance_performance(value: ImportancePerformanceDoc, labels: Labels) -> list[Block]:
    as_share = "% of r²" in value.importance.lower()
    title = "Share of R²" if as_share else value.importance.capitalize()
    records = sorted(value.rows, key=lambda r: -r.importance if r.importance is not None
                     else math.inf)
    placed = all(r.performance_pct is not None for r in records)
    share, perf = 0.01 if as_share else 1.0, 0.01 if placed else 1.0

    def scaled(v: float | None, factor: float) -> float | None:
        return None if v is None else v * factor

    rows = tuple((labels.get(r.attribute) or r.attribute, scaled(r.importance, share),
                  scaled(r.importance_low, share), scaled(r.importance_high, share),
                  r.importance_vs_others, r.direction, r.performance,
                  scaled(r.performance_pct, 0.01), scaled(r.performance_low, perf),
                  scaled(r.performance_high, perf), r.performance_vs_others,
                  r.base, r.na_share, r.quadrant) for r in records)
    kind = "percent" if as_share else "float"
    perf_kind = "percent" if placed else "float"
    rule = (f"An attribute gets a quadrant label only when it stands apart from the others on "
            f"both axes: {value.method}." if value.method else
            "These results hold no intervals: the quadrant labels are the classic split at the "
            "means, with no check that the attributes really differ.")
    blocks: list[Block] = [Table(
        "Importance–performance: where to act",
        (ATTRIBUTE, TableColumn("importance", title, kind),
         TableColumn("importance_low", "Importance 95% low", kind),
         TableColumn("importance_high", "Importance 95% high", kind),
         TableColumn("importance_vs_others", "Importance vs the others"),
         TableColumn("direction", "Direction", "float"),
         TableColumn("performance", "Performance (mean score)", "float"),
         TableColumn("performance_pct", "Performance (% of its scale)", "percent"),
         TableColumn("performance_low", "Performance 95% low", perf_kind),
         TableColumn("performance_high", "Performance 95% high", perf_kind),
         TableColumn("performance_vs_others", "Performance vs the others"),
         TableColumn("base", "Answered (base)", "int"),
         TableColumn("na_share", "Not answered", "percent"),
         TableColumn("quadrant", "Quadrant")), rows,
        note="Performance is the mean rating over the respondents who answered (n/a answers are "
             "not ratings), placed on the attribute's own scale. " + rule + " 'concentrate "
             "here' = more important and rated lower than the others. Direction +1: higher "
             "ratings go with a higher score.")]
    if value.method and all(r.quadrant == NO_STANDOUT for r in records):
        blocks.append(Paragraph("No attribute stands out: on importance and performance "
                                "together, every attribute is within the uncertainty of the "
                                "others, so none is labelled."))
    frame = value.model_copy(update={"rows": records}).frame()
    frame["attribute"] = [r[0] for r in rows]
    if placed:
        frame["performance"] = frame["performance_pct"]
    shown = ["attribute", "importance", "performance", "quadrant"]
    intervals = [f"{a}_{b}" for a in ("importance", "performance") for b in ("low", "high")]
    frame = frame[shown + (intervals if value.method else [])].dropna(subset=shown)
    if not frame.empty:
        blocks.append(ChartBlock(
            "Importance–performance map",
            quadrant_chart(frame, importance_title=title + (" (%)" if as_share else ""),
                           performance_title="Performance (% of its scale)" if placed
                           else "Mean score",
                           importance_domain=(0, 100) if as_share else None,
                           performance_domain=(0, 100) if placed else None).to_dict(),
            note="Both axes span their full range; bars: 95% intervals. Top left: important "
                 "and weak — act there first."))
    return blocks


def _top_box(rows_in: list[TopBoxRow], labels: Labels) -> list[Block]:
    rows = tuple((labels.get(r.attribute) or r.attribute, plain_name(r.target), r.top_box_share,
                  r.tpr, r.fpr, r.delta, r.phi) for r in rows_in)
    blocks: list[Block] = [Table(
        "Top box as a signal: does a top rating mark the target group?",
        (ATTRIBUTE, TableColumn("target", "Target group"),
         TableColumn("top_box_share", "Top-box share", "percent"),
         TableColumn("tpr", "TPR", "percent"), TableColumn("fpr", "FPR", "percent"),
         TableColumn("delta", "δ", "float"), TableColumn("phi", "φ", "float")), rows,
        note="'Attribute rated in its top box' used as a predictor of the target group: TPR = "
             "share of the group who gave a top rating, FPR = share of everyone else who did; "
             "δ = TPR − FPR (how well it separates), φ = TPR + FPR − 1 (its bias).")]
    for target in dict.fromkeys(r.target for r in rows_in):
        frame = pd.DataFrame([{"series": row[0], "label": plain_name(target), "delta": r.delta, "phi": r.phi}
                              for row, r in zip(rows, rows_in, strict=True)
                              if r.target == target]).dropna(subset=["delta", "phi"])
        if not frame.empty:
            blocks.append(ChartBlock(f"Top box δ/φ — target {plain_name(target)}",
                                     rhombus_chart(frame, colour_title="Attribute").to_dict(),
                                     note="Higher up: the top box separates the group better."))
    return blocks


def section(results: Results) -> Section:
    drivers = results.drivers or Drivers()  # none: the note below
    labels = results.dataset.attribute_labels
    blocks: list[Block] = []
    if drivers.relative_weights is not None:
        blocks += _relative_weights(drivers.relative_weights, labels)
    if drivers.ordinal is not None:
        blocks += _ordinal(drivers.ordinal, labels)
    for model_id, value in drivers.permutation.items():
        blocks += _permutation(model_display_name(model_id), value, labels, results.folds)
    if drivers.importance_performance is not None:
        blocks += _importance_performance(drivers.importance_performance, labels)
    if drivers.top_box:
        blocks += _top_box(drivers.top_box, labels)
    blocks += [Paragraph(note, "note") for note in drivers.notes]
    return Section("drivers", "Drivers", tuple(blocks) or (Paragraph(
        "The results hold no driver analysis.", "note"),))
