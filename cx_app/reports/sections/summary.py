"""Summary: the data set, its net score, the best model per level, the top drivers, a reading."""

from __future__ import annotations

from cx_app.estimate.document import WaveEstimateDocument
from cx_app.models.results import Results
from cx_app.reports.blocks import Block, Paragraph, Section, Table, TableColumn
from cx_app.reports.formatting import facts_table
from cx_app.reports.prose import BestPick, best_picks, drivers_reading, models_reading, nps_reading
from cx_app.reports.sections import baseline


def section(results: Results, new_wave: WaveEstimateDocument | None) -> Section:
    dataset = results.dataset
    blocks: list[Block] = []
    blocks.append(facts_table("Data set", [
        ("File", results.provenance.file, "text"), ("Sheet", results.provenance.sheet, "text"),
        ("Rows used", dataset.rows_used, "int"), ("Rows read", dataset.rows_read, "int"),
        ("Classes", dataset.classes, "text"), ("Cross-validation folds", results.folds, "int"),
        ("Seed", results.seed, "int")]))
    nps, words = dataset.nps, dataset.vocabulary
    blocks.append(Table(
        f"{words.title} of the analysed respondents",
        (TableColumn("nps", words.title, "score"), TableColumn("low", "95% low", "score"),
         TableColumn("high", "95% high", "score"), TableColumn("n", "Respondents", "int")),
        ((nps.value, *nps.ci95[:2], nps.n),), note="Adjusted Wald interval (Rocks 2016)."))

    picks = {name: best_picks(results, name) for name in results.level_names()}
    picks = {name: p for name, p in picks.items() if p}
    blocks.append(_best_table(picks) if picks
                  else Paragraph("The results hold no model metrics.", "note"))
    blocks += baseline.blocks(results)

    reading = [models_reading(picks)]
    labels = dataset.attribute_labels
    weights = results.drivers.relative_weights if results.drivers else None
    if weights is not None:
        top = sorted(weights.records("percent"), key=lambda r: -(r["percent"] or 0.0))[:5]
        blocks.append(Table(
            "Top drivers",
            (TableColumn("attribute", "Attribute"),
             TableColumn("share", "Share of R²", "percent")),
            tuple((labels.get(r["attribute"], r["attribute"]),
                   None if r["percent"] is None else r["percent"] / 100) for r in top),
            note="Johnson's relative weights: each attribute's share of the variance of the "
                 "score that the attributes explain together (see Drivers)."))
    quadrant = results.drivers.importance_performance if results.drivers else None
    if quadrant is not None:
        reading.append(drivers_reading(quadrant.frame(), labels=labels))
    reading.append(nps_reading(nps, new_wave.estimated_nps if new_wave else None, words=words))
    if new_wave and new_wave.warnings:
        reading.append(f"The new-wave estimate comes with {len(new_wave.warnings)} warning(s): "
                       "see the New wave section.")
    reading = [r for r in reading if r]
    if reading:
        blocks += [Paragraph("Reading", "heading"), Paragraph(" ".join(reading))]
    return Section("summary", "Summary", tuple(blocks))


def _best_table(picks: dict[str, list[BestPick]]) -> Table:
    rows, kinds = [], []
    for level_name, level in picks.items():
        for p in level:
            rows.append((level_name, p.metric_name, p.best, p.value, p.runner_up,
                         p.runner_up_value, p.p, p.significant_text))
            kinds.append((None, None, None, p.kind, None, p.kind, None, None))
    return Table(
        "Best model per level, by each compared metric",
        (TableColumn("level", "Level"), TableColumn("metric", "Metric"), TableColumn("model", "Best model"),
         TableColumn("value", "Value", "float"), TableColumn("runner_up", "Runner-up"),
         TableColumn("runner_up_value", "Runner-up value", "float"),
         TableColumn("p", "p (Holm), best vs runner-up", "pvalue"),
         TableColumn("significant", "Difference significant?")),
        tuple(rows), cell_kinds=tuple(kinds),
        note="Values are the means over the cross-validation folds (the values the paired "
             "tests compare; the best model is chosen by this rule everywhere). The test is the "
             "corrected (Nadeau–Bengio) paired t-test over the folds with Holm's adjustment "
             "over the pairs of the level and metric (Comparisons section).")
