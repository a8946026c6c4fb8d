"""The PowerPoint deck of a CX program: one message per slide, each title stating it.

Titles are worded by typed facts (:mod:`cx_app.reports.headlines`); survey text is made plain
and cut to a label's length. The program's view is a protocol (:mod:`cx_app.reports.program_tracker`): the workspace is a
layer above.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

from cx_app.engine.catalogue import short_name
from cx_app.models.analysis import BEST_MODEL_RULE
from cx_app.models.importance_performance import METHOD, important_above_others
from cx_app.models.names import model_display_name
from cx_app.models.results import Results
from cx_app.reports.blocks import Table, TableColumn
from cx_app.reports.charts import importance_bars, nps_bars, nps_trend_chart
from cx_app.reports.deck_reference import FLAG_WORDS, reference_slides
from cx_app.reports.deck_slide import DeckSlide
from cx_app.reports.deck_slide import capital as _capital
from cx_app.reports.deck_slide import interval as _interval
from cx_app.reports.deck_slide import label as _label
from cx_app.reports.deck_slide import score as _score
from cx_app.reports.deck_slide import segment_title as _segment_title
from cx_app.reports.deck_slide import segment_value as _segment_value
from cx_app.reports.formatting import format_value
from cx_app.reports.headlines import (
    BestModelFact,
    ChangeFact,
    DriversFact,
    FirstWaveFact,
    SegmentMovesFact,
)
from cx_app.reports.pptx_render import deck_bytes
from cx_app.reports.program_tracker import (
    ALL_RESPONDENTS,
    ProgramView,
    WaveView,
    merged_waves,
    program_tracker_frame,
    tracker_rows,
)
from cx_app.reports.prose import best_picks, drivers_reading, models_reading
from cx_app.reports.sections.baseline import below_sentences
from cx_app.safe_text import plain_text
from cx_app.survey.nps import change_test
from cx_app.survey.nps_flags import FLAG_DOWN, FLAG_NONE, FLAG_UP, flag_changes
from cx_app.survey.vocabulary import ScoreVocabulary

if TYPE_CHECKING:
    from cx_app.estimate.alerts import Alert

__all__ = ["DeckSlide", "deck_bytes", "deck_filename", "program_slides", "tracker_frame_of"]


CHANGE_TEST = (
    "Change test: the difference between two waves' estimates divided by its standard error "
    "(the two estimates' standard errors combined as independent), a two-sided z test; the "
    "p-values of the changes shown together are adjusted with Holm's method, and a change is "
    "called significant (beyond the uncertainty) below 5%.")
ESTIMATED_SERIES = "Estimated"
REALIZED_SERIES = "Realized (the wave's own scores)"
MAX_BULLETS = 9


def tracker_frame_of(view: ProgramView) -> pd.DataFrame:
    """The estimated series (:func:`program_tracker_frame`'s rows) and the realized one, in
    wave order, the waves' labels as a slide shows them; NaN where there is no figure."""
    numbers = ["nps", "ci_low", "ci_high", "se"]
    estimated = program_tracker_frame(view)
    estimated = estimated.assign(series=ESTIMATED_SERIES, wave=estimated["wave"].map(_label),
                                 **{c: estimated[c].astype(float) for c in numbers})
    realized = [{"series": REALIZED_SERIES, "wave": _label(w.label), "n": w.respondents,
                 "nps": r.value, "ci_low": r.ci95[0], "ci_high": r.ci95[1], "se": math.nan,
                 "flag": FLAG_NONE}
                for w, twin in merged_waves(view.waves) if (r := (twin or w).realized_nps)]
    return pd.concat([estimated, pd.DataFrame(realized)], ignore_index=True) if realized \
        else estimated


def _tracker_slide(view: ProgramView, words: ScoreVocabulary) -> DeckSlide:
    if not view.waves:
        return DeckSlide(f"The program has no wave yet, so there is no {words.short_name} to "
                         "track", ("Add waves with cx-app program add-wave.",))
    frame = tracker_frame_of(view)
    estimated = frame[frame["series"] == ESTIMATED_SERIES]
    labels, latest = estimated["wave"].tolist(), estimated.iloc[-1]
    if len(labels) == 1:
        fact: FirstWaveFact | ChangeFact = FirstWaveFact(
            score_name=words.short_name, wave=labels[-1], score=_score(latest["nps"]))
    else:
        fact = ChangeFact(score_name=words.short_name, since=labels[-2],
                          change=float(latest["change"]), significant=latest["flag"] != FLAG_NONE)
    title = fact.headline()
    table = Table("Tracker", (TableColumn("wave", "Wave"), TableColumn("n", "Respondents", "int"),
                              TableColumn("nps", f"Estimated {words.short_name}", "score"),
                              TableColumn("ci", "95% interval"),
                              TableColumn("realized", "Realized", "score")),
                  tuple((r.wave, r.n, r.nps, _interval([r.ci_low, r.ci_high]),
                         None if pd.isna(r.realized) else r.realized)
                        for r in estimated.itertuples()))
    spec = nps_trend_chart(frame[["series", "wave", "nps", "ci_low", "ci_high", "n", "flag"]],
                           score_title=words.title).to_dict()
    notes = (f"{len(labels)} waves from {labels[0]} to {labels[-1]}, in wave "
             "order (by date, then label). Estimated: the driver model's estimate from each "
             "wave's attribute answers, without its scores; the band is its 95% interval. "
             "Realized: the wave's own scores, for waves that have them. ▲ / ▼ mark a "
             f"significant rise or fall since the previous wave. {CHANGE_TEST}")
    return DeckSlide(title, table=table, chart=spec, notes=notes)


def _segment_changes(view: ProgramView, by: str) -> pd.DataFrame:
    """Every value of ``by`` in the latest wave (:func:`tracker_rows`), its change since the
    previous wave flagged (Holm over the values of ``by``: the changes the slide shows)."""
    rows = tracker_rows(view, by)
    labels = list(dict.fromkeys(rows["wave"]))[-2:]
    rows = rows[rows["wave"].isin(labels) & (rows["series"] != ALL_RESPONDENTS)]
    rows = rows.assign(**{c: rows[c].astype(float) for c in ("nps", "ci_low", "ci_high", "se")})
    frame = flag_changes(rows.rename(columns={"n": "respondents"}))
    return frame[frame["wave"] == labels[-1]].reset_index(drop=True)


def _highest_beyond_uncertainty(shown: pd.DataFrame) -> str | None:
    """The value of ``shown`` (sorted by ``nps``, highest first) whose estimate is above the
    runner-up's beyond the uncertainty (the change test of the deck, 5%), else None."""
    if len(shown) < 2:
        return shown["group"].iloc[0] if len(shown) else None
    first, second = shown.iloc[0], shown.iloc[1]
    _, p = change_test(float(first.nps - second.nps), math.hypot(first.se, second.se))
    return first.group if p < 0.05 else None


def _segment_slide(view: ProgramView, by: str, words: ScoreVocabulary,
                   titles: Mapping[str, str]) -> DeckSlide:
    order = [w for w, _ in merged_waves(view.waves)]
    latest, previous = order[-1], order[-2] if len(order) > 1 else None
    name = _segment_title(by, titles)
    changes = _segment_changes(view, by)
    changes = changes.assign(group=changes["series"].map(_label))
    rises = changes.loc[changes["flag"] == FLAG_UP, "group"].tolist()
    falls = changes.loc[changes["flag"] == FLAG_DOWN, "group"].tolist()
    shown = changes.dropna(subset=["nps"]).sort_values("nps", ascending=False)
    title = SegmentMovesFact(
        head=f"{name} in {_label(latest.label)}",
        since=None if previous is None else _label(previous.label),
        rises=tuple(rises), falls=tuple(falls), score_name=words.short_name,
        highest=_highest_beyond_uncertainty(shown), estimated=len(shown)).headline()
    since = f"Since {_label(previous.label)}" if previous is not None else "Change"
    table = Table(name, (TableColumn("value", name), TableColumn("n", "Respondents", "int"),
                         TableColumn("nps", f"Estimated {words.short_name}", "score"),
                         TableColumn("ci", "95% interval"), TableColumn("change", since),
                         TableColumn("flag", "Beyond the uncertainty?")),
                  tuple((r.group, r.respondents, None if math.isnan(r.nps) else r.nps,
                         "—" if math.isnan(r.nps) else f"{r.ci_low:.1f} to {r.ci_high:.1f}",
                         "—" if math.isnan(r.change) else f"{r.change:+.1f}",
                         (r.note or "too few respondents") if math.isnan(r.nps) else
                         FLAG_WORDS.get(r.flag, "no"))
                        for r in changes.itertuples()))
    bars = changes.dropna(subset=["nps"]).rename(columns={"respondents": "n"})
    spec = nps_bars(bars[["group", "nps", "ci_low", "ci_high", "n", "flag"]], group_title=name,
                    score_title=words.title, flag_title=since).to_dict() if len(bars) else None
    notes = (f"Each value of {name} in the wave {_label(latest.label)}: the estimated "
             f"{words.short_name} with its 95% interval (bars and whiskers). Green: a "
             "significant rise, red: a significant fall since the previous wave, each value "
             f"compared with itself in that wave. {CHANGE_TEST} Values with fewer than 10 respondents "
             "get no estimate.")
    return DeckSlide(title, table=table, chart=spec, notes=notes)


def _alert_words(alert: Alert, words: ScoreVocabulary) -> str:
    accuracy = alert.metric == "accuracy"

    def shown(x: float | None) -> str:
        if x is None:
            return "none"
        return f"{x:.0%}" if accuracy else f"{x:.1f}"

    head = f"estimated {'accuracy' if accuracy else words.short_name} {shown(alert.value)}"
    limits = f"{shown(alert.lower)} to {shown(alert.upper)}"
    if alert.comparison == "previous wave":
        moved = "fell" if alert.direction == "below" else "rose"
        return f"{head} {moved} since the previous wave (outside {limits})"
    where = {"analyst": "the limits set", "own reference": "its own usual range"}.get(
        alert.comparison, "its usual range")
    return f"{head} is {alert.direction or 'outside'} {where} ({limits})"


def _wave_slide(wave: WaveView, words: ScoreVocabulary, titles: Mapping[str, str]) -> DeckSlide:
    label, est = _label(wave.label), wave.estimated_nps
    raised = [_alert_words(a, words) for a in wave.estimate.alerts if a.alert]
    raised += [f"{_segment_value(by, value, titles)}: {_alert_words(a, words)}"
               for by, values in wave.segments.items() for value, figure in values.items()
               for a in figure.alerts if a.alert]
    if raised:
        more = f", and {len(raised) - 1} more alert{'s' if len(raised) > 2 else ''}" \
            if len(raised) > 1 else ""
        title = f"{label}: {raised[0]}{more}"
    else:
        title = (f"{label}: estimated {words.short_name} {_score(est.value)} "
                 f"({_interval(est.ci95)}), no alert")
    bullets = [f"Estimated {words.short_name}: {_score(est.value)}, 95% interval "
               f"{_interval(est.ci95)}, from {wave.respondents:,} respondents' attribute "
               "answers."]
    if (real := wave.realized_nps) is not None:
        bullets.append(f"Realized {words.short_name} (the wave's own scores): "
                       f"{_score(real.value)}, 95% interval {_interval(real.ci95)}.")
    accuracy = wave.estimate.estimated.get("accuracy")
    if accuracy is not None:
        bullets.append(f"The model's estimated accuracy on this wave: {accuracy:.0%}.")
    bullets += [f"Alert: {_capital(text)}." for text in raised]
    if len(bullets) > MAX_BULLETS:
        bullets = [*bullets[:MAX_BULLETS - 1], f"… and {len(bullets) - MAX_BULLETS + 1} more "
                   "alerts (see the Excel report)."]
    if not raised:
        bullets.append("No alert: the estimated accuracy and score are within the range usual "
                       "for the model's training data.")
    notes = [f"File: {_label(wave.filename or 'not recorded')}."]
    notes += [plain_text(a.source) for a in wave.estimate.alerts if a.source][:2]
    notes += [f"Warning: {plain_text(w)}" for w in wave.estimate.warnings]
    return DeckSlide(title, tuple(bullets), notes="\n".join(notes))


def _drivers_slide(results: Results, words: ScoreVocabulary) -> DeckSlide:
    drivers = results.drivers
    quadrant = None if drivers is None else drivers.importance_performance
    if quadrant is None or not quadrant.rows:
        return DeckSlide(DriversFact(score_name=words.short_name, analysed=False).headline(),
                         ("Train the program again with a driver analysis to see what moves "
                          f"the {words.short_name}.",))
    labels = {a: _label(t) for a, t in results.dataset.attribute_labels.items()}
    table = quadrant.frame()
    top = [labels.get(a, _label(a)) for a in important_above_others(table)]
    title = DriversFact(score_name=words.short_name, top=tuple(top)).headline()
    bullets = [drivers_reading(table, labels=labels)]
    frame = pd.DataFrame({"attribute": [labels.get(a, _label(a)) for a in table["attribute"]],
                          "importance": table["importance"],
                          "ci_low": table["importance_low"].fillna(table["importance"]),
                          "ci_high": table["importance_high"].fillna(table["importance"]),
                          "direction": table["direction"]}).dropna(subset=["importance"])
    spec = (importance_bars(frame, value_title="Importance (% of the explained variance)")
            .to_dict() if len(frame) else None)
    notes = ("Importance: each attribute's share of the score's variance that the attributes "
             "explain together (Johnson's relative weights), with its 95% interval. An "
             "attribute is named a top driver only when it stands above the others beyond its "
             f"uncertainty: {METHOD}.")
    return DeckSlide(title, tuple(bullets), chart=spec, notes=notes)


def _level_name(level: str) -> str:
    return "the original scale" if level == "original" else _label(level)


def best_model_fact(results: Results) -> BestModelFact:
    """The best model at each level by the best-model rule's metric, by full name."""
    best = tuple((_level_name(level), p.best) for level in results.level_names()
                 for p in best_picks(results, level) if p.metric == BEST_MODEL_RULE[1])
    return BestModelFact(models=len(results.models), best_by_level=best)


def _models_slide(results: Results) -> DeckSlide:
    picks = {_level_name(level): [dataclasses.replace(
        p, best=_label(p.best), runner_up=None if p.runner_up is None else _label(p.runner_up))
        for p in best_picks(results, level)] for level in results.level_names()}
    picks = {level: p for level, p in picks.items() if p}
    names = [_label(model_display_name(m)) for m in results.models]
    title = best_model_fact(results).headline()
    if not picks:
        return DeckSlide(title)
    table = Table("Best model per level", (
        TableColumn("level", "Level"), TableColumn("metric", "Measure"),
        TableColumn("model", "Best model"), TableColumn("value", "Value"),
        TableColumn("runner", "Runner-up"), TableColumn("lead", "Lead beyond chance?")),
        tuple((level, _capital(short_name(p.metric)), p.best, format_value(p.value, p.kind),
               p.runner_up or "—", p.significant_text) for level, ps in picks.items()
              for p in ps))
    notes = ("Values are means over the cross-validation folds. The lead of the best model over "
             "the runner-up is tested with the corrected (Nadeau–Bengio) paired t-test over the "
             "folds, Holm-adjusted.")
    reading = (f"{names[0]}'s measures at each level, as the cross-validation found them; a "
               "comparison needs a second model." if len(names) == 1 else models_reading(picks))
    return DeckSlide(title, (reading, *below_sentences(results)), table=table, notes=notes)


def _definitions_slide(words: ScoreVocabulary) -> DeckSlide:
    if words.is_nps:
        score = (f"{words.title}: the share of promoters (9–10) minus the share of detractors "
                 "(0–6), in points from −100 to 100.")
    else:
        score = (f"{words.title}: the share of the {words.positive} group minus the share of "
                 f"the {words.negative} group, in points from −100 to 100.")
    return DeckSlide("What the words in this deck mean", (
        score,
        "Estimated: what the driver model infers from a wave's answers to the attribute "
        "questions, without the wave's own scores.",
        "Realized: the score computed from a wave's own answers, for waves that have them.",
        "95% interval: the range the true value lies in with 95% confidence; an estimate's "
        "interval includes the model's own error.",
        "Beyond the uncertainty (significant): a change larger than chance would explain, "
        "tested at 5% with an adjustment when several changes are tested together.",
        "Alert: an estimated accuracy or score outside the range usual for the model's "
        "training data at the wave's size.",
        "Driver: an attribute whose ratings explain a large share of the score's variation.",
        "Best model: the one with the best average over the cross-validation folds (parts of "
        "the training survey held out in turn)."))


def program_slides(view: ProgramView, results: Results, *,
                   segment_titles: Mapping[str, str] | None = None,
                   created: str = "") -> list[DeckSlide]:
    """``segment_titles``: a segment's header by its name (the mapping's ``column``)."""
    titles = dict(segment_titles or {})
    words = results.dataset.vocabulary
    waves = view.waves
    span = (f"{len(waves)} wave{'s' if len(waves) != 1 else ''}, {_label(waves[0].label)} to "
            f"{_label(waves[-1].label)}" if waves else "no wave yet")
    slides = [DeckSlide(f"{_label(view.name)}: the customer experience program",
                        subtitle=f"{words.title} tracker: {span}"
                                 + (f" · made {created}" if created else ""),
                        notes=f"Reference survey: {_label(view.survey.filename or '')}.")]
    slides += reference_slides(results)  # the measured survey before any estimated wave
    slides.append(_tracker_slide(view, words))
    if waves:
        latest = merged_waves(waves)[-1][0]
        slides += [_segment_slide(view, by, words, titles) for by in latest.segments
                   if latest.segments[by]]
    slides += [_wave_slide(w, words, titles) for w in waves]
    slides += [_drivers_slide(results, words), _models_slide(results),
               _definitions_slide(words)]
    return slides


def deck_filename(program: str) -> str:
    """``NAME.pptx``, the characters a file name cannot hold as ``-``.

    >>> deck_filename("bank/nps: 2026")
    'bank-nps- 2026.pptx'
    """
    stem = re.sub(r"[^\w .()+-]+", "-", plain_text(program)).strip(" .")[:120]
    return f"{stem or 'program'}.pptx"
