"""The program deck (``cx_app/reports/pptx_deck.py``): a small program in a temporary SQLite
workspace (the workspace tests' surveys and mapping), its deck written and opened again with
python-pptx: every wave and segment on it, the tracker's numbers the program's, the segment
flags a hand-made z test with Holm's adjustment (statsmodels), real PNG charts, plain words
("NPS" only for a recommend question), and hostile labels that still give a valid deck."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import pandas as pd
import pytest
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests
from workspace.conftest import survey_files  # noqa: F401  (the workspace tests' surveys)
from workspace.workspace_helpers import telecom_mapping

from cx_app.estimate.alerts import Alert
from cx_app.reports.pptx_deck import deck_bytes, program_slides
from cx_app.survey.schema import with_recommend
from cx_app.workspace.programs import Workspace

TARGET = "Likelihood to recommend (0-10)"
WAVES = ("W10", "W01", "W02", "W03")
SNAKE_CASE = re.compile(r"\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def program(tmp_path_factory, survey_files):  # noqa: F811
    """The telecom program (an NPS) with four waves added out of order, W03 labelled."""
    url = f"sqlite:///{tmp_path_factory.mktemp('deck') / 'workspace.db'}"
    with Workspace.open(url) as ws:
        ws.create_program("telecom", survey_files["reference"], schema=telecom_mapping(),
                          algorithm="lr", calibration="none", folds=5, seed=0)
        ws.add_waves("telecom", [survey_files[w] for w in WAVES])
        view, results = ws.show("telecom"), ws.results("telecom")
        titles = {s.name: s.column for s in ws.program_model("telecom").schema.segments}
        # the same surveys, the target read as a 0–10 rating that is not a recommend question
        ws.create_program("rating", survey_files["reference"],
                          schema=with_recommend(telecom_mapping(), False), algorithm="lr",
                          calibration="none", folds=5, seed=0)
        ws.add_waves("rating", [survey_files[w] for w in WAVES[:2]])
        rating = SimpleNamespace(view=ws.show("rating"), results=ws.results("rating"))
    return SimpleNamespace(view=view, results=results, titles=titles, rating=rating)


def _open(data_or_path):
    import io

    return Presentation(io.BytesIO(data_or_path) if isinstance(data_or_path, bytes)
                        else data_or_path)


@pytest.fixture(scope="module")
def deck(program):
    return _open(deck_bytes(program_slides(program.view, program.results,
                                           segment_titles=program.titles)))


def titles_of(prs) -> list[str]:
    return [slide.shapes.title.text for slide in prs.slides]


def shown_text(slide) -> str:
    """Every text a person sees on the slide (title, text boxes, table cells)."""
    parts = []
    for shape in slide.shapes:
        if shape.has_text_frame:
            parts.append(shape.text_frame.text)
        if shape.has_table:
            parts += [cell.text for row in shape.table.rows for cell in row.cells]
    return "\n".join(parts)


def table_rows(slide) -> list[list[str]]:
    table = next(s for s in slide.shapes if s.has_table).table
    return [[cell.text for cell in row.cells] for row in table.rows]


def slide_titled(prs, start: str):
    return next(s for s in prs.slides if s.shapes.title.text.startswith(start))


def test_every_wave_and_segment_appears(program, deck):
    text = "\n".join(shown_text(s) for s in deck.slides)
    assert [w.label for w in program.view.waves] == ["W01", "W02", "W03", "W10"]
    for wave in program.view.waves:
        assert wave.label in text
        for values in wave.segments.values():
            for value in values:
                assert value in text
    assert "Operator" in text and "Region" in text
    # one slide per wave, in wave order
    per_wave = [t for t in titles_of(deck) if re.match(r"W\d\d:", t)]
    assert [t.split(":")[0] for t in per_wave] == ["W01", "W02", "W03", "W10"]
    # a wave's title says "no alert" exactly when neither it nor a segment raised one
    for title, wave in zip(per_wave, program.view.waves, strict=True):
        raised = [a for a in wave.estimate.alerts if a.alert] + [
            a for values in wave.segments.values() for f in values.values()
            for a in f.alerts if a.alert]
        assert title.endswith("no alert") == (not raised)
        assert title.startswith(f"{wave.label}: estimated NPS {wave.estimated_nps.value:.1f}") \
            if not raised else any(w in title for w in ("usual range", "previous wave"))


def test_tracker_numbers_are_the_programs(program, deck):
    waves = program.view.waves
    tracker = slide_titled(deck, "The estimated NPS ")
    rows = table_rows(tracker)
    assert rows[0] == ["Wave", "Respondents", "Estimated NPS", "95% interval", "Realized"]
    for row, wave in zip(rows[1:], waves, strict=True):
        est = wave.estimated_nps
        realized = "" if wave.realized_nps is None else f"{wave.realized_nps.value:.1f}"
        assert row == [wave.label, str(wave.respondents), f"{est.value:.1f}",
                       f"{est.ci95[0]:.1f} to {est.ci95[1]:.1f}", realized]
    assert [r[4] != "" for r in rows[1:]] == [False, False, True, False]  # W03 is labelled
    # the title: the last change, and whether it is beyond the uncertainty (z test, Holm
    # over the three changes), computed here by hand
    values = [w.estimated_nps.value for w in waves]
    ses = [w.estimated_nps.se for w in waves]
    p = [2 * norm.sf(abs(values[i] - values[i - 1]) / math.hypot(ses[i], ses[i - 1]))
         for i in range(1, len(waves))]
    beyond = multipletests(p, method="holm")[1][-1] < 0.05
    delta = values[-1] - values[-2]
    verb = "rose" if delta > 0 else "fell"
    assert tracker.shapes.title.text == (
        f"The estimated NPS {verb} {abs(delta):.1f} points since W03, "
        f"{'beyond' if beyond else 'within'} its uncertainty")
    assert "two-sided z test" in tracker.notes_slide.notes_text_frame.text


def test_the_reference_survey_comes_first_with_its_nps_by_segment(program, deck,
                                                                 survey_files):  # noqa: F811
    """The measured NPS of the reference survey, overall and by each segment, right after the
    title slide, equal to pandas on the survey file, each value flagged against the other
    respondents by a hand-made z test with Holm's adjustment."""
    frame = pd.read_csv(survey_files["reference"])
    score = pd.to_numeric(frame[TARGET], errors="coerce")
    frame = frame.assign(score=score)[score.between(0, 10)]

    def nps(s: pd.Series) -> float:
        return 100 * ((s >= 9).mean() - (s <= 6).mean())

    overall = nps(frame["score"])
    assert deck.slides[1].shapes.title.text.startswith(
        f"The reference survey's NPS is {overall:+.1f} (95% interval ")
    for by in ("Operator", "Region"):
        slide = slide_titled(deck, f"{by} in the reference survey")
        rows = table_rows(slide)
        assert rows[0][:3] == [by, "Respondents", "NPS"]
        groups = dict(list(frame.groupby(by)["score"]))
        assert sorted(r[0] for r in rows[1:]) == sorted(map(str, groups))
        p, differences = [], []
        for row in rows[1:]:
            part = groups[row[0]]
            rest = frame.loc[frame[by].astype(str) != row[0], "score"]
            assert row[1] == f"{len(part):,}" and row[2] == f"{nps(part):.1f}"
            differences.append(nps(part) - nps(rest))
            assert row[4] == f"{differences[-1]:.1f}"
            p.append(_wald_p(part, rest))
        flagged = multipletests(p, method="holm")[0]
        for row, flag, diff in zip(rows[1:], flagged, differences, strict=True):
            assert row[5] == ("no" if not flag else "yes, above the rest" if diff > 0
                              else "yes, below the rest")
        assert slide_index(deck, slide) < slide_index(deck, slide_titled(deck, "The estimated NPS "))


def _wald_p(a: pd.Series, b: pd.Series) -> float:
    """Two-sided p of the difference of two net scores, by hand: the difference of the plain
    scores over the adjusted-Wald standard errors (Rocks 2016: 3/4 added to the top and
    bottom counts, 3 to n) combined as independent."""
    def se(s: pd.Series) -> float:
        n = len(s) + 3
        top, bottom = ((s >= 9).sum() + 0.75) / n, ((s <= 6).sum() + 0.75) / n
        return math.sqrt((top + bottom - (top - bottom) ** 2) / n)

    delta = ((a >= 9).mean() - (a <= 6).mean()) - ((b >= 9).mean() - (b <= 6).mean())
    return 2 * norm.sf(abs(delta) / math.hypot(se(a), se(b)))


def slide_index(prs, slide) -> int:
    return list(prs.slides).index(slide)


def test_segment_flags_are_a_z_test_with_holm(program, deck):
    latest, previous = program.view.waves[-1], program.view.waves[-2]
    slide = slide_titled(deck, "Region in W10")
    rows = {r[0]: r for r in table_rows(slide)[1:]}
    values = list(latest.segments["region"])
    p, changes = [], []
    for value in values:
        now, before = (latest.segments["region"][value].estimated_nps,
                       previous.segments["region"][value].estimated_nps)
        changes.append(now.value - before.value)
        p.append(2 * norm.sf(abs(changes[-1]) / math.hypot(now.se, before.se)))
    significant = multipletests(p, method="holm")[0]
    for value, change, flagged in zip(values, changes, significant, strict=True):
        row = rows[value]
        assert row[4] == f"{change:+.1f}"
        assert row[5] == ("no" if not flagged else "yes, a rise" if change > 0
                          else "yes, a fall")
    rising = [v for v, c, f in zip(values, changes, significant, strict=True) if f and c > 0]
    if rising:
        assert f"{rising[0]}" in slide.shapes.title.text and "rose" in slide.shapes.title.text
    else:
        assert "no value moved beyond its uncertainty" in slide.shapes.title.text
    assert "Holm" in slide.notes_slide.notes_text_frame.text


def test_charts_are_real_pngs(deck):
    pictures = [shape for slide in deck.slides for shape in slide.shapes
                if shape.shape_type == MSO_SHAPE_TYPE.PICTURE]
    # the reference survey by operator and by region, the tracker, the latest wave's two
    # segments and the drivers
    assert len(pictures) == 6
    for picture in pictures:
        blob = picture.image.blob
        assert blob[:8] == PNG_MAGIC and len(blob) > 10_000
        width, height = int.from_bytes(blob[16:20], "big"), int.from_bytes(blob[20:24], "big")
        assert width > 400 and height > 200


def test_titles_in_plain_words_and_the_scores_words(program, deck):
    titles = titles_of(deck)
    assert not [t for t in titles if SNAKE_CASE.search(t)]
    assert "NPS" in titles[1]
    assert "promoters" in shown_text(deck.slides[-1])
    # a program whose target is not a recommend question: a net score, no NPS words
    rating = program.rating
    assert not rating.results.dataset.vocabulary.is_nps
    prs = _open(deck_bytes(program_slides(rating.view, rating.results,
                                          segment_titles=program.titles)))
    words = "\n".join(shown_text(s) + s.notes_slide.notes_text_frame.text for s in prs.slides)
    assert not re.search(r"NPS|promoter|detractor", words, re.IGNORECASE)
    assert prs.slides[1].shapes.title.text.startswith("The reference survey's net score is ")
    assert table_rows(slide_titled(prs, "The estimated net score "))[0][2] == "Estimated net score"
    assert "the share of the high group minus the share of the low group" in words
    assert not [t for t in titles_of(prs) if SNAKE_CASE.search(t)]


def test_a_raised_alert_titles_its_wave(program):
    wave = program.view.waves[0]
    alert = Alert(metric="accuracy", value=0.5, lower=0.6, upper=0.8, alert=True,
                  source="held-out accuracy ± 3 SD")
    alerted = wave.model_copy(update={"estimate": wave.estimate.model_copy(
        update={"alerts": [alert]}), "segments": {}})
    view = program.view.model_copy(update={"waves": (alerted,)})
    slides = program_slides(view, program.results)
    wave_slide = next(s for s in slides if s.title.startswith("W01"))
    assert wave_slide.title == "W01: estimated accuracy 50% is below its usual range (60% to 80%)"
    assert "Alert: Estimated accuracy 50% is below its usual range (60% to 80%)." in \
        wave_slide.bullets


def test_hostile_labels_give_a_valid_deck(program):
    hostile = ["W\x0001 **bold** [link](http://x) <b>", "# " + "x" * 10_000, "W\x1b[31m03"]
    waves = []
    for wave, label in zip(program.view.waves, [*hostile, "W10"], strict=True):
        segments = {by: {f"{value}\x00 _*{'y' * 10_000}": figure
                         for value, figure in values.items()}
                    for by, values in wave.segments.items()}
        waves.append(wave.model_copy(update={"label": label, "segments": segments}))
    view = program.view.model_copy(update={"name": "tel\x00ecom **x**", "waves": tuple(waves)})
    prs = _open(deck_bytes(program_slides(view, program.results, segment_titles=program.titles)))
    text = "\n".join(shown_text(s) for s in prs.slides)
    assert "\x00" not in text and "\x1b" not in text
    assert "W01 **bold** [link](http://x) <b>" in text  # shown as it is, without the NUL
    assert "x" * 10_000 not in text and "# " + "x" * 90 in text  # cut to a label's length
    assert max(len(t) for t in titles_of(prs)) < 400
    assert len(prs.slides) == len(program_slides(program.view, program.results))
    pictures = [shape for slide in prs.slides for shape in slide.shapes
                if shape.shape_type == MSO_SHAPE_TYPE.PICTURE]
    assert len(pictures) == 6 and all(p.image.blob[:8] == PNG_MAGIC for p in pictures)


def test_every_report_and_deck_table_declares_true_headers(program):
    """Issue 37 point 3 on the exports: every table of the Excel/HTML report (one content
    model renders both) made from a program's real results and its latest wave, of the
    program's tracker sheet, and of the deck: no duplicate header, no raw identifier, no
    header over another kind of value, no "None" (``tests/table_headers.py``)."""
    from table_headers import header_problems

    from cx_app.reports import build_report
    from cx_app.reports.blocks import Table
    from cx_app.workspace.reporting import tracker_table

    report = build_report(program.results, program.view.waves[-1].estimate)
    tables = [b for s in report.sections for b in s.blocks if isinstance(b, Table)]
    tables.append(tracker_table(program.view))
    tables += [s.table for s in program_slides(program.view, program.results,
                                               segment_titles=program.titles) if s.table]
    assert len(tables) > 30
    problems = [p for t in tables for p in header_problems(
        t.title, [(c.key, c.title, t.column_values(c.key)) for c in t.columns])]
    assert problems == []


@pytest.fixture(scope="module")
def doubled(tmp_path_factory, survey_files):  # noqa: F811
    """A program whose wave W03 was added twice: with its scores (``survey_files["W03"]``) and,
    under the same label, the same respondents without them (scores not yet arrived)."""
    from cx_app.survey.samples import simulate_telecom_waves

    folder = tmp_path_factory.mktemp("doubled")
    unscored = folder / "telecom_W03_unscored.csv"
    simulate_telecom_waves([5], respondents_per_operator=60, seed=11,  # as the fixture's W03
                           include_target=False).to_csv(unscored, index=False)
    with Workspace.open(f"sqlite:///{folder / 'workspace.db'}") as ws:
        ws.create_program("telecom", survey_files["reference"], schema=telecom_mapping(),
                          algorithm="lr", calibration="none", folds=3, seed=0)
        ws.add_waves("telecom", [survey_files[w] for w in ("W01", "W02", "W03")])
        ws.add_waves("telecom", [unscored], label="W03")
        titles = {s.name: s.column for s in ws.program_model("telecom").schema.segments}
        return SimpleNamespace(view=ws.show("telecom"), results=ws.results("telecom"),
                               titles=titles)


def test_the_deck_tracks_a_doubled_wave_as_program_show_does(doubled):
    """The deck's tracker rows and segment changes are ``program_tracker_frame``'s (what
    ``cx-app program show``, the app and the Excel/HTML tracker show): a wave added twice is
    one wave, the unscored copy's estimate with the scored copy's realized score."""
    from cx_app.reports.pptx_deck import tracker_frame_of
    from cx_app.reports.program_tracker import program_tracker_frame

    waves = doubled.view.waves
    assert [w.label for w in waves].count("W03") == 2
    scored = next(w for w in waves if w.label == "W03" and w.realized_nps is not None)
    unscored = next(w for w in waves if w.label == "W03" and w.realized_nps is None)
    w02 = next(w for w in waves if w.label == "W02")
    shown = program_tracker_frame(doubled.view)
    assert shown["wave"].tolist() == ["W01", "W02", "W03"]
    last = shown.iloc[-1]
    assert last["nps"] == unscored.estimated_nps.value
    assert last["realized"] == scored.realized_nps.value
    assert last["change"] == pytest.approx(unscored.estimated_nps.value
                                           - w02.estimated_nps.value)

    deck = tracker_frame_of(doubled.view)
    estimated = deck[deck["series"] == "Estimated"].reset_index(drop=True)
    columns = ["wave", "n", "nps", "ci_low", "ci_high", "se", "change", "p_holm", "flag"]
    pd.testing.assert_frame_equal(estimated[columns], shown[columns].astype(
        {c: float for c in ("nps", "ci_low", "ci_high", "se")}), check_dtype=False)
    realized = deck[deck["series"] != "Estimated"]
    assert realized["wave"].tolist() == ["W03"]
    assert realized["nps"].tolist() == [scored.realized_nps.value]

    prs = _open(deck_bytes(program_slides(doubled.view, doubled.results,
                                          segment_titles=doubled.titles)))
    tracker = slide_titled(prs, "The estimated NPS ")
    assert "since W02" in tracker.shapes.title.text
    rows = table_rows(tracker)[1:]
    assert [r[0] for r in rows] == ["W01", "W02", "W03"]
    assert rows[-1][2] == f"{unscored.estimated_nps.value:.1f}"
    assert rows[-1][4] == f"{scored.realized_nps.value:.1f}"
    by_operator = program_tracker_frame(doubled.view, "operator")
    changes = by_operator[(by_operator["wave"] == "W03")
                          & (by_operator["series"] != "All respondents")]
    operator = slide_titled(prs, "Operator in W03")
    assert [r[4] for r in table_rows(operator)[1:]] == [f"{c:+.1f}" for c in changes["change"]]
    assert changes["change"].abs().min() > 0.05  # against W02, not W03's own copy
