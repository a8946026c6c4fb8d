"""Reference survey: its measured net score overall, by each segment and by wave."""

from __future__ import annotations

from cx_app.models.results import ReferenceSplit, Results
from cx_app.reports.blocks import Block, Paragraph, Section, Table, TableColumn
from cx_app.survey.vocabulary import ScoreVocabulary

TEST_NOTE = {
    "segment": "Flag: each value against all other respondents (two-sided z test of the "
               "difference, Holm-adjusted over the values, 5%).",
    "wave": "Flag: each wave against the previous one (two-sided z test of the change, "
            "Holm-adjusted over the changes, 5%).",
}


def split_table(split: ReferenceSplit, words: ScoreVocabulary) -> Table:
    versus = "Difference from the rest" if split.kind == "segment" else "Change from the previous wave"
    return Table(
        f"{words.title} by {split.title}" if split.kind == "segment"
        else f"{words.title} by wave ({split.title})",
        (TableColumn("value", split.title), TableColumn("n", "Respondents", "count"),
         TableColumn("score", words.title, "score"), TableColumn("low", "95% low", "score"),
         TableColumn("high", "95% high", "score"), TableColumn("difference", versus, "score"),
         TableColumn("p", "p (Holm)", "pvalue"), TableColumn("flag", "Significant?")),
        tuple((r.value, r.n, r.score, r.ci_low, r.ci_high, r.difference, r.p_holm, r.flag)
              for r in split.rows),
        note=TEST_NOTE.get(split.kind, "") + " Intervals: adjusted Wald (Rocks 2016).")


def section(results: Results) -> Section:
    dataset = results.dataset
    words, nps = dataset.vocabulary, dataset.nps
    blocks: list[Block] = [Table(
        f"{words.title} of the reference survey (measured)",
        (TableColumn("figure", "Base"), TableColumn("score", words.title, "score"),
         TableColumn("low", "95% low", "score"), TableColumn("high", "95% high", "score"),
         TableColumn("n", "Respondents", "count")),
        (("Everyone with a valid score", nps.value, *nps.ci95[:2], nps.n),),
        note="Measured from the survey's own scores (not estimated); adjusted Wald interval.")]
    reference = dataset.reference
    if reference is None:
        blocks.append(Paragraph("These results were written before the reference survey's "
                                "scores by segment were kept: evaluate again to see them.",
                                "note"))
    else:
        blocks += [split_table(split, words) for split in reference.splits]
        if not reference.splits:
            blocks.append(Paragraph("The survey has no segment or wave column.", "note"))
    return Section("reference", "Reference survey", tuple(blocks))
