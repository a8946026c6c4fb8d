"""Learned training-time estimates (cx_app.workspace.fits): the level learned from fits of known
times gives hand-computed estimates, the robust median, and the constants when nothing was
measured."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import text

from cx_app.errors import WorkspaceError
from cx_app.models import timing
from cx_app.workspace import fits
from cx_app.workspace.database import open_database


@pytest.fixture
def database(tmp_path):
    db = open_database(f"sqlite:///{tmp_path / 'workspace.db'}")
    yield db
    db.dispose()


def _record(database, algorithm, respondents, attributes, folds, seconds, preset="fast"):
    fits.record_fit(database, algorithm=algorithm, preset=preset, respondents=respondents,
                    attributes=attributes, folds=folds, seconds=seconds)


def _estimate(database, algorithm, respondents, attributes, folds, preset="fast", **kwargs):
    return fits.expected_seconds(database, algorithm, preset=preset, respondents=respondents,
                                 attributes=attributes, folds=folds, **kwargs)


def test_without_a_fit_the_estimate_is_the_constants_first_guess(database):
    estimate = _estimate(database, "xgb", 5_000, 9, 10, settings={"n_estimators": 200},
                         calibration="sigmoid")
    assert estimate == fits.Estimate(timing.expected_phases(
        "xgb", rows=5_000, attributes=9, folds=10, settings={"n_estimators": 200},
        calibration="sigmoid", preset="fast"), 0)
    assert not estimate.learned
    # folds: 10 × c × 4.5^b × 0.9 × 2 (200 trees) × 3 × (2/3)^b (sigmoid, 3 folds);
    # importance: 0.9 × (10 × o + r × 5 (thousand rows) × 4.5^g)
    k = timing.COSTS["xgb"]
    assert estimate.phases.folds == pytest.approx(10 * k.c * 4.5 ** k.b * 0.9 * 2 * 3
                                                  * (2 / 3) ** k.b)
    assert estimate.phases.importance == pytest.approx(0.9 * (10 * k.o + k.r * 5 * 4.5 ** k.g))


@pytest.fixture
def simple_lr(monkeypatch):
    """lr's constants made round: 1 s per fold at 1,000 training rows (linear), importance
    0.5 s per fold (no prediction cost), so sizes are easy to compute by hand."""
    monkeypatch.setitem(timing.COSTS, "lr", timing.Cost(1.0, 1.0, o=0.5))


def test_one_fit_teaches_the_level_of_the_constants(database, simple_lr):
    # 2,000 × 10 attributes × 5 folds: 5 × 1.6 + 5 × 0.5 = 10.5 s by the constants;
    # measured 21 s: this machine takes twice their time
    _record(database, "lr", 2_000, 10, 5, 21.0)
    # 4,000 rows, 5 folds: folds 5 × 3.2 = 16 s, importance 2.5 s; twice both
    assert _estimate(database, "lr", 4_000, 10, 5) == fits.Estimate(timing.Phases(32.0, 5.0), 1)
    # 20 attributes, 10 folds: folds 10 × 3.6 × 2 = 72, importance 2 × 10 × 0.5 = 10; twice
    assert _estimate(database, "lr", 4_000, 20, 10).phases == (pytest.approx(144.0),
                                                               pytest.approx(20.0))


def test_the_median_level_ignores_an_odd_slow_fit(database, simple_lr):
    # 3,000 × 10 × 5: 5 × 2.4 + 2.5 = 14.5 s by the constants
    for seconds in (14.5, 29.0, 290.0):  # levels 1, 2 and 20 (a busy moment)
        _record(database, "lr", 3_000, 10, 5, seconds)
    assert _estimate(database, "lr", 3_000, 10, 5) == fits.Estimate(timing.Phases(24.0, 5.0), 3)


def test_only_the_most_recent_fits_teach(database):
    constants = timing.expected_seconds("rf", rows=2_000, attributes=10, folds=2)
    for _ in range(5):
        _record(database, "rf", 2_000, 10, 2, 25 * constants)  # an old, slow machine
    for _ in range(fits.RECENT):
        _record(database, "rf", 2_000, 10, 2, 4.0)
    estimate = _estimate(database, "rf", 2_000, 10, 2)
    assert estimate.fits == fits.RECENT and estimate.seconds == pytest.approx(4.0)


def test_fits_of_another_preset_or_algorithm_do_not_teach(database):
    _record(database, "svm", 2_000, 10, 5, 3.0, preset="fast")
    _record(database, "lr", 2_000, 10, 5, 3.0, preset="papers")
    papers = _estimate(database, "svm", 2_000, 10, 5, preset="papers")
    assert papers == fits.expected_seconds(None, "svm", preset="papers", respondents=2_000,
                                           attributes=10, folds=5)
    assert _estimate(database, "svm", 2_000, 10, 5).fits == 1


def test_settings_and_calibration_scale_a_learned_estimate(database):
    _record(database, "rf", 2_000, 10, 5, 10.0)  # reference seconds: 100 trees, no calibration
    plain = _estimate(database, "rf", 2_000, 10, 5).phases
    assert plain.total == pytest.approx(10.0)
    more = _estimate(database, "rf", 2_000, 10, 5, settings={"n_estimators": 300},
                     calibration="isotonic").phases
    # the fits' phase: 3 times the trees, 3 calibration fits on 2/3 of each training fold
    assert more == (pytest.approx(plain.folds * 3 * 3 * (2 / 3) ** timing.COSTS["rf"].b),
                    pytest.approx(plain.importance))


@pytest.mark.parametrize(("respondents", "folds", "seconds", "says"), [
    (2_000, 5, 0.0, "a positive time"), (2_000, 5, math.nan, "a positive time"),
    (0, 5, 1.0, "at least 1 respondent"), (2_000, 1, 1.0, "2 folds")])
def test_a_fit_that_cannot_be_is_refused_in_a_sentence(database, respondents, folds, seconds,
                                                       says):
    with pytest.raises(WorkspaceError, match=says):
        _record(database, "lr", respondents, 10, folds, seconds)
    assert fits.recent_fits(database, "lr", "fast") == []


def test_the_sentence_says_where_each_estimate_comes_from(database, simple_lr):
    # 5,000 × 9 × 10: folds 10 × 4.5 × 0.9 = 40.5 s, importance 0.9 × 10 × 0.5 = 4.5 s: 45 s
    _record(database, "lr", 5_000, 9, 10, 45.0 / 3)  # levels 1/3 and 1/5: median 4/15
    _record(database, "lr", 5_000, 9, 10, 45.0 / 5)
    times = fits.expected_times(database, {"lr": {}, "xgb": {}}, preset="fast",
                                respondents=5_000, attributes=9, folds=10, load=1.0)
    assert times.estimates["lr"].seconds == pytest.approx(12.0) and times.estimates["lr"].fits == 2
    xgb = timing.expected_phases("xgb", rows=5_000, attributes=9, folds=10, preset="fast")
    assert times.estimates["xgb"] == fits.Estimate(xgb, 0)
    assert times.total == pytest.approx(12.0 + xgb.total)
    assert times.phases == {"lr": times.estimates["lr"].phases, "xgb": xgb}
    assert times.sentence(slow=1.0) == (  # both named: 1 s or more
        f"Expected time: {timing.format_duration(12.0 + xgb.total)} (lr about 10 s, xgb "
        f"{timing.format_duration(xgb.total)}) for 5,000 respondents × 9 attributes × 10 folds; "
        "learned from this machine's fits for lr (2); a first guess for xgb (measured on a "
        "quiet 2-core server, until a training here teaches it). Refined from the folds and "
        "the permutation importance as they finish.")
    alone = fits.expected_times(None, {"lr": {}}, preset="fast", respondents=5_000,
                                attributes=9, folds=10, load=1.0)
    assert alone.estimates["lr"].fits == 0 and "first guess for lr" in alone.sentence()


def test_a_busy_machine_multiplies_the_estimate_by_its_load_per_core(database, simple_lr):
    """Fits are kept at a quiet machine's rate (divided by the load factor when recorded) and
    said times the load factor now: a fit of 135 s recorded at load 6 on 2 cores (factor 3) is
    45 quiet seconds, the constants' (level 1); said at factor 2.5 for twice the respondents
    (10 × 9 × 0.9 + 4.5 = 85.5 s) it is 85.5 × 2.5."""
    record = fits.fit_recorder(database, load=lambda: timing.load_factor(6.0, 2))
    record("lr", "fast", 5_000, 9, 10, 135.0)
    assert fits.recent_fits(database, "lr", "fast")[0].seconds == pytest.approx(45.0)
    times = fits.expected_times(database, {"lr": {}, "xgb": {}}, preset="fast",
                                respondents=10_000, attributes=9, folds=10, load=2.5)
    assert times.estimates["lr"].seconds == pytest.approx(85.5 * 2.5)
    xgb = timing.expected_seconds("xgb", rows=10_000, attributes=9, folds=10, preset="fast")
    assert times.estimates["xgb"].seconds == pytest.approx(2.5 * xgb)  # the constants too
    assert "2.5× a quiet machine's time, as this machine is busy now" in times.sentence()
    quiet = fits.expected_times(database, {"lr": {}}, preset="fast", respondents=10_000,
                                attributes=9, folds=10, load=timing.load_factor(1.5, 2))
    assert quiet.load == 1.0 and "busy" not in quiet.sentence()


def test_the_estimate_reads_the_algorithm_index(database):
    """The page asks on every rerun: one bounded select on the indexed algorithm column."""
    query = fits.recent_query("lr", "fast").compile(database.engine,
                                                    compile_kwargs={"literal_binds": True})
    assert "LIMIT 20" in str(query)
    plan = database.read(lambda s: s.execute(text(f"EXPLAIN QUERY PLAN {query}")).all())
    assert "USING INDEX ix_fits_algorithm" in " ".join(str(row[-1]) for row in plan)
