"""Expected training time from the data size (cx_app.models.timing)."""

from __future__ import annotations

import math

import pytest

from cx_app.errors import AnalysisError
from cx_app.models.algorithms import ALGORITHMS
from cx_app.models.timing import (
    COSTS,
    Phases,
    expected_phases,
    expected_seconds,
    format_duration,
    remaining_seconds,
)


def test_every_algorithm_has_a_cost():
    assert set(COSTS) == set(ALGORITHMS)


def test_the_estimate_is_the_documented_cost_model():
    """ann on the sample's size: 10 folds of 6,755.4 training rows, 9 attributes; the
    importance: 10 folds' fixed cost plus the predictions of 7,506 rows."""
    k = COSTS["ann"]
    n_train = 7_506 * 9 / 10 / 1000
    phases = expected_phases("ann", rows=7_506, attributes=9, folds=10)
    assert phases.folds == pytest.approx(10 * k.c * n_train ** k.b * 0.9)
    assert phases.importance == pytest.approx(0.9 * (10 * k.o + k.r * 7.506 * n_train ** k.g))
    assert expected_seconds("ann", rows=7_506, attributes=9, folds=10) == pytest.approx(
        phases.folds + phases.importance)


def test_time_grows_with_rows_attributes_folds_and_work():
    k = COSTS["svm"]
    base = expected_phases("svm", rows=2_000, attributes=10, folds=5)
    double = expected_phases("svm", rows=4_000, attributes=10, folds=5)
    assert double.folds == pytest.approx(base.folds * 2 ** k.b)
    # the importance: the same fixed cost per fold, twice the rows predicted
    assert double.importance - 5 * k.o == pytest.approx((base.importance - 5 * k.o)
                                                        * 2 * 2 ** k.g)
    wide = expected_phases("svm", rows=2_000, attributes=20, folds=5)
    assert wide.total == pytest.approx(2 * base.total)
    # 10 folds: twice the fits, each on 9/10 instead of 4/5 of the rows; twice the fixed
    # importance cost per fold, the same rows predicted (by models of more training rows)
    ten = expected_phases("svm", rows=2_000, attributes=10, folds=10)
    assert ten.folds == pytest.approx(2 * base.folds * (0.9 / 0.8) ** k.b)
    assert ten.importance == pytest.approx(10 * k.o + k.r * 2 * 1.8 ** k.g)
    epochs = expected_phases("ann", rows=2_000, attributes=10, settings={"max_iter": 600})
    plain = expected_phases("ann", rows=2_000, attributes=10)
    assert epochs == (pytest.approx(3 * plain.folds), plain.importance)  # max_iter 200 at c
    # a setting that does not change the work changes nothing
    assert expected_seconds("lr", rows=2_000, attributes=10, settings={"C": 0.1}) == (
        expected_seconds("lr", rows=2_000, attributes=10))


def test_calibration_fits_k_models_on_part_of_each_training_fold():
    plain = expected_phases("rf", rows=3_000, attributes=9, folds=10)
    calibrated = expected_phases("rf", rows=3_000, attributes=9, folds=10,
                                 calibration="isotonic", calibration_folds=3)
    assert calibrated.folds / plain.folds == pytest.approx(3 * (2 / 3) ** COSTS["rf"].b)
    assert calibrated.importance == plain.importance
    papers = expected_phases("svm", rows=3_000, attributes=9, folds=10, preset="papers")
    fast = expected_phases("svm", rows=3_000, attributes=9, folds=10)
    assert papers == (pytest.approx(6.25 * fast.folds), fast.importance)


def test_the_slow_models_are_the_slow_ones_on_the_sample():
    """On the sample's size (7,506 × 9, 10 folds) the forest and kNN take longer than naive
    Bayes, the decision tree and the logistic regression, which are dominated by the
    importance's fixed cost per fold."""
    sample = {a: expected_phases(a, rows=7_506, attributes=9, folds=10) for a in COSTS}
    assert min(sample["rf"].total, sample["knn"].total) > 2 * max(
        sample[a].total for a in ("nb", "dt", "lr"))
    assert all(sample[a].importance > sample[a].folds for a in ("nb", "dt", "lr"))


def test_bad_inputs_are_one_sentence():
    with pytest.raises(AnalysisError, match="no time estimate for the algorithm 'foo'"):
        expected_seconds("foo", rows=10, attributes=2)
    with pytest.raises(AnalysisError, match="at least 1 row, 1 attribute and 2 folds"):
        expected_seconds("lr", rows=10, attributes=2, folds=1)


@pytest.mark.parametrize(("seconds", "text"), [
    (0.2, "under 1 s"), (1.4, "about 1 s"), (9.6, "about 10 s"), (14, "about 10 s"),
    (56, "about 60 s"), (61, "about 1 min"), (150, "about 2 min"), (3_600, "about 60 min")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_expected_seconds_is_finite_for_one_row():
    assert math.isfinite(expected_seconds("svm", rows=1, attributes=1, folds=2))


def test_the_time_left_from_finished_steps_of_known_durations():
    """Two models said 10 s (2 s of folds, 8 s of importance) and 30 s (20 + 10). Half of the
    first one's steps done (its folds) after 6 s: 2 s of work done, at a pace of
    (6 + 8) / (2 + 8) = 1.4 (w = 0.2 × 40 = 8), so 38 × 1.4 = 53.2 s left. Counting the folds
    alone (as before) it would have said the first model half done, 5 s of work."""
    said = [Phases(2.0, 8.0), Phases(20.0, 10.0)]
    assert remaining_seconds(said, 0.25, 6.0) == pytest.approx(38 * 1.4)
    # three quarters of the first model's steps: its folds and half its importance (6 s)
    assert remaining_seconds(said, 0.375, 6.0) == pytest.approx((6 + 8) / (6 + 8) * 34)
    # the second model's folds half done after 20 s: 10 + 10 = 20 s of work done
    assert remaining_seconds(said, 0.625, 20.0) == pytest.approx((20 + 8) / (20 + 8) * 20)
    assert remaining_seconds(said, 1.0, 99.0) == 0.0
    assert remaining_seconds([], 0.5, 3.0) == 0.0


@pytest.fixture
def small_survey():
    import numpy as np
    import pandas as pd

    from cx_app.survey.importing import load_survey
    from cx_app.survey.schema import schema_from_mapping

    rng = np.random.default_rng(1)
    X = rng.integers(1, 6, size=(1000, 6))
    y = np.clip(np.rint(X.mean(axis=1) + rng.normal(0, 1, 1000)), 1, 5).astype(int)
    names = [f"A{i}" for i in range(6)]
    frame = pd.DataFrame(X, columns=names)
    frame.insert(0, "Score", y)
    schema = schema_from_mapping(target="Score", scale=(1, 5), attributes=names)
    return load_survey(frame.to_csv(index=False).encode(), schema=schema, filename="s.csv")


def _timed_steps(algorithms, survey, folds=5):
    """Real trainings one after the other, as a Train click runs them (train_lean's steps:
    each fold's fit, then each fold's importance): (share of the steps done, seconds since
    the start) after every step, and the total seconds."""
    import time

    from cx_app.app.session import train_lean

    marks, start = [], time.perf_counter()
    steps = 2 * folds
    for i, (algorithm, settings) in enumerate(algorithms.items()):
        def progress(done, total, _text, i=i):
            assert total == steps
            share = (i * steps + done) / (len(algorithms) * steps)
            if done and (not marks or marks[-1][0] < share):  # the last fold is said twice
                marks.append((share, time.perf_counter() - start))
        train_lean(survey, algorithm, folds=folds, seed=0, settings=settings,
                   calibration="none", progress=progress, n_jobs=1)
    return marks, time.perf_counter() - start


def test_the_refined_time_left_follows_the_real_steps_on_a_busy_machine(small_survey):
    """A busy machine, played by an estimate 4 times too small (and one 4 times too large):
    from a third of the steps on, elapsed + the refined time left is within 2× of the real
    total, where the estimate said before training is not."""
    marks, total = _timed_steps({"rf": {"n_estimators": 20}, "dt": {}}, small_survey)
    assert len(marks) == 20 and marks[-1][0] == 1.0
    # the phases of the two as measured here (as learned fits would give them)
    at = dict(marks)
    rf = Phases(at[0.25], at[0.5] - at[0.25])
    dt = Phases(at[0.75] - at[0.5], total - at[0.75])
    for wrong in (0.25, 4.0):
        said = [rf.times(wrong), dt.times(wrong)]
        assert not 0.5 <= sum(p.total for p in said) / total <= 2.0  # the estimate is off
        checked = 0
        for share, elapsed in marks:
            if share < 1 / 3 or share >= 1:
                continue
            guess = elapsed + remaining_seconds(said, share, elapsed)
            assert 0.5 <= guess / total <= 2.0, (wrong, share, guess, total)
            checked += 1
        assert checked >= 12
