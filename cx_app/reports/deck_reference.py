"""The deck's reference-survey slides: the measured score overall, by each segment, by wave.

The Net score page's numbers, right after the title slide.
"""

from __future__ import annotations

import pandas as pd

from cx_app.models.results import ReferenceSplit, Results
from cx_app.reports.blocks import Table, TableColumn
from cx_app.reports.charts import nps_bars, nps_trend_chart
from cx_app.reports.deck_slide import DeckSlide, interval, label, score
from cx_app.reports.headlines import (
    ReferenceOverallFact,
    ReferenceSegmentFact,
    ReferenceWavesFact,
)
from cx_app.reports.sections.reference import TEST_NOTE, split_table
from cx_app.result import Estimate
from cx_app.survey.nps_flags import FLAG_ABOVE, FLAG_BELOW, FLAG_DOWN, FLAG_UP
from cx_app.survey.vocabulary import ScoreVocabulary

__all__ = ["reference_slides"]

FLAG_WORDS = {FLAG_ABOVE: "yes, above the rest", FLAG_BELOW: "yes, below the rest",
              FLAG_UP: "yes, a rise", FLAG_DOWN: "yes, a fall"}


def _split_slide(split: ReferenceSplit, words: ScoreVocabulary) -> DeckSlide:
    title_of = label(split.title)
    values = [(label(r.value), r.flag) for r in split.rows]
    if split.kind == "wave":
        fact = ReferenceWavesFact(
            score_name=words.short_name, first=values[0][0], last=values[-1][0],
            rises=tuple(v for v, f in values if f == FLAG_UP),
            falls=tuple(v for v, f in values if f == FLAG_DOWN))
    else:
        fact = ReferenceSegmentFact(
            segment=title_of, score_name=words.short_name,
            above=tuple(v for v, f in values if f == FLAG_ABOVE),
            below=tuple(v for v, f in values if f == FLAG_BELOW))
    full = split_table(split, words)
    value, n, shown, versus = (full.columns[i] for i in (0, 1, 2, 5))
    table = Table(full.title, (value, n, shown, TableColumn("ci", "95% interval"), versus,
                               TableColumn("flag", "Significant?")),
                  tuple((label(r.value), r.n, r.score, interval([r.ci_low, r.ci_high]),
                         r.difference, FLAG_WORDS.get(r.flag, "no")) for r in split.rows))
    frame = pd.DataFrame([{"group": label(r.value), "wave": label(r.value), "nps": r.score,
                           "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n, "flag": r.flag}
                          for r in split.rows if r.score is not None])
    chart = None
    if len(frame):
        chart = (nps_trend_chart(frame[["wave", "nps", "ci_low", "ci_high", "n", "flag"]],
                                 wave_title=title_of, score_title=words.title)
                 if split.kind == "wave" else
                 nps_bars(frame[["group", "nps", "ci_low", "ci_high", "n", "flag"]],
                          group_title=title_of, score_title=words.title)).to_dict()
    notes = (f"Measured from the reference survey's own scores (not estimated). "
             f"{TEST_NOTE.get(split.kind, '')} Intervals: adjusted Wald (Rocks 2016).")
    return DeckSlide(fact.headline(), table=table, chart=chart, notes=notes)


def reference_slides(results: Results) -> list[DeckSlide]:
    """The overall slide, then one per segment and one for the waves (when the results hold them)."""
    dataset = results.dataset
    words, nps = dataset.vocabulary, dataset.nps
    fact = ReferenceOverallFact(score_name=words.short_name, respondents=nps.n,
                                score=Estimate(value=nps.value, ci95=tuple(nps.ci95)))
    reference = dataset.reference
    bullets = [f"{words.title}: {score(nps.value)}, 95% interval {interval(nps.ci95)}, from "
               f"{nps.n:,.0f} respondents' own scores."]
    if reference is None:
        bullets.append("The results were written before the scores by segment were kept: "
                       "train the program again to see them here.")
    else:
        for split in reference.splits:
            flagged = [r for r in split.rows if r.flag in FLAG_WORDS]
            bullets.append(f"By {label(split.title)}: {len(split.rows)} values, "
                           f"{len(flagged)} flagged beyond the uncertainty.")
    slides = [DeckSlide(fact.headline(), tuple(bullets),
                        notes="The reference survey is the labelled survey the models were "
                              "trained on; its scores are measured, not estimated.")]
    if reference is not None:
        slides += [_split_slide(split, words) for split in reference.splits if split.rows]
    return slides
