"""The readings in plain words: the best model, the drivers, the NPS.

The report's Summary and the app's pages call these, so they say the same sentences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from cx_app.engine.catalogue import compared_metrics, metric_name, short_name
from cx_app.models.analysis import rank_models
from cx_app.models.importance_performance import (
    NO_STANDOUT,
    important_above_others,
    standing_out,
)
from cx_app.models.names import model_display_name
from cx_app.models.results import NetScoreFigure, Results
from cx_app.reports.blocks import ColumnKind
from cx_app.reports.formatting import interval_text, join, metric_kind
from cx_app.survey.vocabulary import ScoreVocabulary, vocabulary_for

NPS_WORDS = vocabulary_for(nps=True)


@dataclass(frozen=True)
class BestPick:
    """The best model of one level by one metric (mean over the folds) against the runner-up,
    by display names."""

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


def best_picks(results: Results, level_name: str) -> list[BestPick]:
    """At one level, the best model by each compared metric, ranked by the one best-model rule."""
    levels = results.levels(level_name)
    binary = any(lv.is_binary for lv in levels.values())
    metrics = list(compared_metrics(binary))
    metrics += [c.metric for c in results.comparisons
                if c.level == level_name and c.metric not in metrics]
    picks = []
    for metric in dict.fromkeys(metrics):
        means = {m: lv.fold_mean(metric) for m, lv in levels.items()}
        ranked = [m for m in rank_models(means, metric) if means[m] is not None]
        if not ranked:
            continue
        best, runner = ranked[0], (ranked[1] if len(ranked) > 1 else None)
        test = results.comparison(level_name, metric, best, runner) if runner else None
        p = None if test is None else test.p_holm
        picks.append(BestPick(metric, metric_name(metric, binary=binary),
                              metric_kind(metric, binary), model_display_name(best), means[best],
                              None if runner is None else model_display_name(runner),
                              means[runner] if runner else None, p,
                              None if test is None else test.significant))
    return picks


def models_reading(picks: Mapping[str, Sequence[BestPick]]) -> str:
    """Which model is best and where its lead is significant after Holm's correction."""
    every = [p for level in picks.values() for p in level]
    if not every:
        return ""
    bests = list(dict.fromkeys(p.best for p in every))
    if len(bests) == 1:
        where = "at every level" if len(picks) > 1 else f"at level {next(iter(picks))}"
        metrics = join(dict.fromkeys(short_name(p.metric) for p in every))
        sentences = [f"The best model is {bests[0]} {where}, by {metrics}."]
    else:
        sentences = []
        for level_name, level in picks.items():
            by_model: dict[str, list[str]] = {}
            for p in level:
                by_model.setdefault(p.best, []).append(short_name(p.metric))
            sentences.append(f"At level {level_name}, " + join(
                f"{m}{' is best' if i == 0 else ''} by {join(ms)}"
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
                    by_level.setdefault(lv, []).append(short_name(p.metric))
            return join(f"{lv} ({', '.join(ms)})" for lv, ms in by_level.items())

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


def drivers_reading(quadrant: pd.DataFrame, *, labels: Mapping[str, str] | None = None,
                    r_squared: float | None = None, target: str | None = None) -> str:
    """The drivers in words, claiming only what the bootstrap supports (``quadrant``: an
    importance–performance table).

    >>> table = pd.DataFrame({"attribute": ["net", "bill", "shop"], "importance": [61.0, 30, 9],
    ...                       "importance_vs_others": ["above", "like the others", "below"],
    ...                       "quadrant": ["concentrate here", "does not stand out",
    ...                                    "does not stand out"]})
    >>> drivers_reading(table, labels={"net": "Network"})
    'The strongest driver, above the others beyond its uncertainty, is Network (61% of the \
explained variance). Important but rated below the others — where improvement should pay most: \
Network.'
    """
    def name(attribute: str) -> str:
        return (labels or {}).get(attribute, attribute)

    sentences = []
    if r_squared is not None and target:
        sentences.append(f"The attributes together explain R² = {r_squared:.2f} of the "
                         f"variance of {target}.")
    if "importance_vs_others" not in quadrant or quadrant["importance_vs_others"].isna().all():
        return " ".join(sentences)  # results without intervals: no claim either way
    share = dict(zip(quadrant["attribute"], quadrant["importance"], strict=True))
    top = important_above_others(quadrant)
    named = [f"{name(a)} ({share[a] / 100:.0%}" + (" of the explained variance)" if i == 0
                                                    else ")") for i, a in enumerate(top)]
    if named:
        sentences.append(f"The strongest driver{'s' if len(named) > 1 else ''}, above the others "
                         f"beyond {'their' if len(named) > 1 else 'its'} uncertainty, "
                         f"{'are' if len(named) > 1 else 'is'} {join(named)}.")
    else:
        sentences.append("No attribute's importance stands out from the others beyond its "
                         "uncertainty.")
    concentrate = standing_out(quadrant, "concentrate here")
    if concentrate:
        sentences.append("Important but rated below the others — where improvement should pay "
                         f"most: {join([name(a) for a in concentrate])}.")
    elif (quadrant["quadrant"] == NO_STANDOUT).all():
        sentences.append("No attribute stands out from the others on both importance and "
                         "performance, so the quadrant labels none.")
    else:
        sentences.append("No attribute is both more important and rated lower than the others "
                         "beyond their uncertainty.")
    return " ".join(sentences)


def nps_reading(nps: NetScoreFigure | None, estimated: NetScoreFigure | None = None, *,
                words: ScoreVocabulary = NPS_WORDS) -> str:
    parts = []
    if nps is not None:
        parts.append(f"The {words.score_name} of the {nps.n:,} analysed respondents is "
                     f"{nps.value:.1f}{interval_text(nps.ci95)}")
    if estimated is not None:
        parts.append(f"the new wave's estimated {words.short_name} is {estimated.value:.1f}"
                     + interval_text(estimated.ci95).replace("95% interval ", ""))
    if not parts:
        return ""
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "."
