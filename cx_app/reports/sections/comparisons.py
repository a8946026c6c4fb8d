"""Comparisons: the paired t-tests over the folds (and the 5×2cv tests when run)."""

from __future__ import annotations

from cx_app.engine.catalogue import OTHER_DEFINITIONS
from cx_app.models.names import model_display_name, names_in_text
from cx_app.models.results import Results
from cx_app.reports.blocks import Block, Paragraph, Section, Table, TableColumn
from cx_app.reports.definitions import plain_name


def section(results: Results) -> Section:
    if not results.comparisons and not results.comparisons_5x2cv:
        return Section("comparisons", "Comparisons", (Paragraph(
            "No t-tests in these results (fewer than two models, or comparisons not run).",
            "note"),))
    blocks: list[Block] = []
    if results.comparisons:
        blocks.append(Table(
            "Paired t-tests over the cross-validation folds",
            (TableColumn("level", "Level"), TableColumn("metric", "Metric"), TableColumn("a", "Model A"),
             TableColumn("b", "Model B"), TableColumn("folds", "Folds", "int"),
             TableColumn("mean_a", "Mean A", "float"), TableColumn("mean_b", "Mean B", "float"),
             TableColumn("mean_diff", "Mean A − B", "float"), TableColumn("t", "t (plain)", "float"),
             TableColumn("df", "df", "int"), TableColumn("p", "p (plain)", "pvalue"),
             TableColumn("t_corrected", "t (corrected)", "float"),
             TableColumn("p_corrected", "p (corrected)", "pvalue"),
             TableColumn("p_holm", "p (Holm)", "pvalue"), TableColumn("alpha", "α", "float"),
             TableColumn("verdict", "Verdict")),
            tuple((c.level, plain_name(c.metric), model_display_name(c.a),
                   model_display_name(c.b), c.folds, c.mean_a, c.mean_b, c.mean_diff, c.t, c.df, c.p, c.t_corrected, c.p_corrected, c.p_holm, c.alpha,
                   names_in_text(c.verdict, (c.a, c.b)))
                  for c in results.comparisons),
            note="Plain t-test (too liberal: training sets overlap), Nadeau–Bengio corrected "
                 "t-test, and Holm's adjustment over all pairs."))
    if results.comparisons_5x2cv:
        blocks.append(Table(
            "5×2cv tests (Dietterich's t, Alpaydin's combined F)",
            (TableColumn("level", "Level"), TableColumn("metric", "Metric"), TableColumn("a", "Model A"),
             TableColumn("b", "Model B"), TableColumn("t", "t (5 df)", "float"),
             TableColumn("t_p", "p of t", "pvalue"), TableColumn("f", "F (10, 5 df)", "float"),
             TableColumn("f_p", "p of F", "pvalue")),
            tuple((c.level, plain_name(c.metric), model_display_name(c.a),
                   model_display_name(c.b), c.t, c.t_p, c.f, c.f_p)
                  for c in results.comparisons_5x2cv),
            note="Five replications of a stratified 2-fold split, both models on the same "
                 "halves (20 fits per pair)."))
    blocks.append(Paragraph(OTHER_DEFINITIONS["t_test"].words, "note"))
    return Section("comparisons", "Comparisons", tuple(blocks))
