"""Learned training-time estimates (cx_app.workspace.fits): scaled by hand-computed sizes, the
robust median, the learned growth exponent, and the constants when nothing was measured."""

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
    assert estimate == fits.Estimate(timing.expected_seconds(
        "xgb", rows=5_000, attributes=9, folds=10, settings={"n_estimators": 200},
        calibration="sigmoid", preset="fast"), 0)
    assert not estimate.learned
    # xgb: 10 folds × c × 4.5^b × 0.9 × 2 (200 trees) × 3 × (2/3)^b (sigmoid, 3 folds)
    c, b = timing.COSTS["xgb"].c, timing.COSTS["xgb"].b
    assert estimate.seconds == pytest.approx(10 * c * 4.5 ** b * 0.9 * 2 * 3 * (2 / 3) ** b)


def test_one_fit_scales_linearly_for_a_linear_algorithm(database, monkeypatch):
    monkeypatch.setitem(timing.COSTS, "lr", timing.Cost(1.0, 1.0))  # an exponent of 1
    _record(database, "lr", 2_000, 10, 5, 8.0)  # n_train 1.6k: size 5 × 1.6 = 8, 1 s a unit
    assert _estimate(database, "lr", 4_000, 10, 5) == fits.Estimate(16.0, 1)
    # 10 folds of 4,000: n_train 3.6k, size 10 × 3.6 = 36; 20 attributes: twice
    assert _estimate(database, "lr", 4_000, 20, 10).seconds == pytest.approx(72.0)


def test_one_fit_scales_by_the_constants_growth_for_knn(database):
    _record(database, "knn", 1_000, 9, 4, 6.0)  # n_train 0.75k
    # 4,000 rows, 4 folds: n_train 3k, (3 / 0.75)^b = 4^b times 6 s
    assert _estimate(database, "knn", 4_000, 9, 4).seconds == pytest.approx(
        6.0 * 4 ** timing.COSTS["knn"].b)


def test_the_median_rate_ignores_an_odd_slow_fit(database):
    for seconds in (10.0, 12.0, 100.0):  # the 100 s one ran on a busy machine
        _record(database, "nb", 3_000, 9, 5, seconds)
    assert _estimate(database, "nb", 3_000, 9, 5) == fits.Estimate(12.0, 3)


def test_the_growth_exponent_is_learned_from_fits_of_several_sizes(database):
    def seconds(respondents, folds):  # 2 s per fold × n_train^0.8 (k rows), 10 attributes
        return folds * 2.0 * (respondents * (folds - 1) / folds / 1000) ** 0.8

    for respondents, folds in ((1_000, 5), (2_500, 5), (6_000, 3)):
        _record(database, "nb", respondents, 10, folds, seconds(respondents, folds))
    # nb's constant exponent is about 0.3; these fits grow as 0.8 and the estimate follows them
    assert timing.COSTS["nb"].b < 0.5
    assert _estimate(database, "nb", 20_000, 10, 10).seconds == pytest.approx(
        seconds(20_000, 10))
    assert fits._exponent("nb", fits.recent_fits(database, "nb", "fast")) == pytest.approx(0.8)


def test_a_learned_exponent_is_kept_within_its_range(database):
    for respondents in (1_000, 2_000, 4_000):  # grows as n^3: noise, not an algorithm
        _record(database, "dt", respondents, 10, 2, (respondents / 1000) ** 3)
    assert fits._exponent("dt", fits.recent_fits(database, "dt", "fast")) == 1.5
    # two fits, or sizes too close together: the constants' exponent
    assert fits._exponent("dt", fits.recent_fits(database, "dt", "fast", limit=2)) == 0.3
    close = [fits.MeasuredFit(1_000, 10, 2, 1.0), fits.MeasuredFit(1_500, 10, 2, 3.0),
             fits.MeasuredFit(1_900, 10, 2, 9.0)]
    assert fits._exponent("dt", close) == 0.3


def test_only_the_most_recent_fits_teach(database):
    for _ in range(5):
        _record(database, "rf", 2_000, 10, 2, 100.0)  # an old, slow machine
    for _ in range(fits.RECENT):
        _record(database, "rf", 2_000, 10, 2, 4.0)
    assert _estimate(database, "rf", 2_000, 10, 2) == fits.Estimate(4.0, fits.RECENT)


def test_fits_of_another_preset_or_algorithm_do_not_teach(database):
    _record(database, "svm", 2_000, 10, 5, 3.0, preset="fast")
    _record(database, "lr", 2_000, 10, 5, 3.0, preset="papers")
    papers = _estimate(database, "svm", 2_000, 10, 5, preset="papers")
    assert papers == fits.first_guess("svm", preset="papers", respondents=2_000,
                                      attributes=10, folds=5)
    assert _estimate(database, "svm", 2_000, 10, 5).fits == 1


def test_settings_and_calibration_scale_a_learned_estimate(database):
    _record(database, "rf", 2_000, 10, 5, 10.0)  # reference seconds: 100 trees, no calibration
    plain = _estimate(database, "rf", 2_000, 10, 5).seconds
    assert plain == pytest.approx(10.0)
    more = _estimate(database, "rf", 2_000, 10, 5, settings={"n_estimators": 300},
                     calibration="isotonic").seconds
    assert more == pytest.approx(10.0 * 3 * 3 * (2 / 3) ** timing.COSTS["rf"].b)


@pytest.mark.parametrize(("respondents", "folds", "seconds", "says"), [
    (2_000, 5, 0.0, "a positive time"), (2_000, 5, math.nan, "a positive time"),
    (0, 5, 1.0, "at least 1 respondent"), (2_000, 1, 1.0, "2 folds")])
def test_a_fit_that_cannot_be_is_refused_in_a_sentence(database, respondents, folds, seconds,
                                                       says):
    with pytest.raises(WorkspaceError, match=says):
        _record(database, "lr", respondents, 10, folds, seconds)
    assert fits.recent_fits(database, "lr", "fast") == []


def test_the_sentence_says_where_each_estimate_comes_from(database):
    _record(database, "lr", 5_000, 9, 10, 3.0)
    _record(database, "lr", 5_000, 9, 10, 5.0)
    times = fits.expected_times(database, {"lr": {}, "xgb": {}}, preset="fast",
                                respondents=5_000, attributes=9, folds=10, load=1.0)
    assert times.estimates["lr"] == fits.Estimate(4.0, 2)  # the median of 3 and 5
    xgb = timing.expected_seconds("xgb", rows=5_000, attributes=9, folds=10, preset="fast")
    assert times.estimates["xgb"] == fits.Estimate(xgb, 0)
    assert times.total == pytest.approx(4.0 + xgb)
    assert times.sentence() == (
        f"Expected time: {timing.format_duration(4.0 + xgb)} (xgb "
        f"{timing.format_duration(xgb)}) for 5,000 respondents × 9 attributes × 10 folds; "
        "learned from this machine's fits for lr (2); a first guess for xgb (measured on a "
        "quiet 2-core server, until a training here teaches it). Refined from the folds as "
        "they finish.")
    alone = fits.expected_times(None, {"lr": {}}, preset="fast", respondents=5_000,
                                attributes=9, folds=10, load=1.0)
    assert alone.estimates["lr"].fits == 0 and "first guess for lr" in alone.sentence()


def test_a_busy_machine_multiplies_the_estimate_by_its_load_per_core(database):
    """Fits are kept at a quiet machine's rate (divided by the load factor when recorded) and
    said times the load factor now: a fit of 12 s recorded at load 6 on 2 cores (factor 3) is
    4 quiet seconds; said at factor 2.5 for twice the respondents (lr's growth b) it is
    4 × 2 ** b × 2.5."""
    record = fits.fit_recorder(database, load=lambda: timing.load_factor(6.0, 2))
    record("lr", "fast", 5_000, 9, 10, 12.0)
    assert fits.recent_fits(database, "lr", "fast")[0].seconds == pytest.approx(4.0)
    times = fits.expected_times(database, {"lr": {}, "xgb": {}}, preset="fast",
                                respondents=10_000, attributes=9, folds=10, load=2.5)
    b = timing.COSTS["lr"].b
    assert times.estimates["lr"] == fits.Estimate(pytest.approx(4.0 * 2 ** b * 2.5), 1)
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
