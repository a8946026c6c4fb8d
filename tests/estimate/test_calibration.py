"""Calibration metrics against independent computations, and the choice rule."""

from __future__ import annotations

import numpy as np
import pytest

from cx_app.estimate.alp import AlpGap
from cx_app.estimate.calibration import (
    CalibrationReport,
    brier_score,
    choose_calibration,
    expected_calibration_error,
    gap_advice,
)

P = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.25, 0.5, 0.25], [0.9, 0.05, 0.05]])
Y = [5, 9, 5, 5]
CLASSES = [5, 7, 9]


def test_brier_by_hand():
    onehot = np.array([[1, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0, 0]])
    assert brier_score(Y, P, CLASSES) == pytest.approx(((P - onehot) ** 2).sum(axis=1).mean())
    # column order follows `classes`, not sorted order
    order = [2, 0, 1]
    assert brier_score(Y, P[:, order], [CLASSES[i] for i in order]) == pytest.approx(
        brier_score(Y, P, CLASSES))


def test_ece_by_hand():
    # confidences 0.7, 0.6, 0.5, 0.9 in bins 7, 6, 5, 9 (10 bins); correct: T, T, F, T
    ece = expected_calibration_error(Y, P, CLASSES)
    assert ece == pytest.approx((abs(1 - 0.7) + abs(1 - 0.6) + abs(0 - 0.5) + abs(1 - 0.9)) / 4)
    two_bins = expected_calibration_error(Y, P, CLASSES, n_bins=2)
    # bin (0, .5]: {0.5 wrong}; bin (.5, 1]: {0.7, 0.6, 0.9 all right}
    assert two_bins == pytest.approx(0.25 * 0.5 + 0.75 * abs(1 - (0.7 + 0.6 + 0.9) / 3))


def _report(method, acc_gap, share_gap):
    return CalibrationReport(method=method,
                             gap=AlpGap(n=100, accuracy_cm=0.5, accuracy_alp=0.5 + acc_gap,
                                        accuracy_gap=acc_gap, share_gap=share_gap,
                                        score=abs(acc_gap) + share_gap),
                             brier=0.0, ece=0.0)


def test_choice_is_smallest_gap_and_ties_go_to_the_simpler_method():
    choice = choose_calibration([_report("none", 0.08, 0.01), _report("sigmoid", -0.01, 0.005),
                                 _report("isotonic", 0.02, 0.0)])
    assert choice.chosen == "sigmoid" and choice.warnings == ()
    tie = choose_calibration([_report("isotonic", 0.01, 0.0), _report("none", -0.01, 0.0)])
    assert tie.chosen == "none"
    bad = choose_calibration([_report("none", 0.2, 0.0)], algorithm_name="Naive Bayes")
    assert "Naive Bayes" in bad.warnings[0] and "over-confident" in bad.warnings[0]
    assert gap_advice(_report("none", 0.0, 0.05).gap) is not None


def _net_report(method, acc_gap, share_gap, net_error):
    return CalibrationReport(method=method,
                             gap=AlpGap(n=100, accuracy_cm=0.5, accuracy_alp=0.5 + acc_gap,
                                        accuracy_gap=acc_gap, share_gap=share_gap,
                                        score=abs(acc_gap) + share_gap + net_error / 100,
                                        net_gap=0.0, net_calibration_error=net_error),
                             brier=0.0, ece=0.0)


def test_the_nps_error_decides_between_methods_with_equal_accuracy_gaps():
    # naive Bayes on the telecom sample: sigmoid fits accuracy and shares slightly better,
    # isotonic the net score much better; the net-score term picks isotonic
    choice = choose_calibration([_net_report("sigmoid", 0.001, 0.016, 14.0),
                                 _net_report("isotonic", 0.012, 0.011, 1.7)])
    assert choice.chosen == "isotonic" and choice.warnings == ()
    # a large net-score error alone is warned about, with the figure
    bad = choose_calibration([_net_report("none", 0.0, 0.0, 6.5)], algorithm_name="RF")
    assert "6.5 points" in bad.warnings[0] and "RF" in bad.warnings[0]


def test_calibration_is_not_advised_when_the_calibrations_compared_left_the_gap():
    """`--calibration auto` compares the methods and keeps the best; when even the best leaves
    a large gap, advising to calibrate would send the analyst to what was already tried: the
    advice keeps the other remedies and says which calibrations were compared."""
    alone = choose_calibration([_report("none", 0.2, 0.0)], algorithm_name="Logistic regression")
    assert alone.warnings[0].endswith(
        "To reduce it: calibrate (temperature or sigmoid) or train on more respondents.")
    compared = choose_calibration(
        [_report("none", 0.2, 0.0), _report("temperature", 0.25, 0.0),
         _report("sigmoid", 0.3, 0.0), _report("isotonic", 0.22, 0.0)],
        algorithm_name="Logistic regression")
    assert compared.chosen == "none"
    assert "calibrate (" not in compared.warnings[0]
    assert compared.warnings[0].endswith(
        "To reduce it: train on more respondents (the calibrations compared: as trained, "
        "temperature, sigmoid, isotonic; none brings it within bounds).")


def test_knn_gets_the_coarse_probability_warning_whatever_its_gap():
    from cx_app.estimate.calibration import coarse_probability_advice

    choice = choose_calibration([_report("isotonic", 0.0, 0.0)],
                                algorithm_name="k-nearest neighbours", algorithm_id="knn")
    assert len(choice.warnings) == 1 and "coarse probabilities" in choice.warnings[0]
    assert "logistic regression" in choice.warnings[0]
    assert coarse_probability_advice("lr") is None
    assert choose_calibration([_report("none", 0.0, 0.0)], algorithm_id="lr").warnings == ()


def test_gap_advice_names_only_the_large_parts_and_fits_the_model():
    # a net-score error alone: no talk of an accuracy gap, and the numbers are the real ones
    only_net = _net_report("none", 0.0, 0.0, 4.2).gap
    text = gap_advice(only_net, "Logistic regression (lr)", "none")
    assert "off by 4.2 points (RMS)" in text and "accuracy" not in text
    # logistic regression is never told to use logistic regression
    assert "use logistic regression" not in text and "calibrate" in text
    forest = gap_advice(_report("none", 0.06, 0.0).gap, "Random forest (rf)", "none")
    assert "over-confident" in forest and "shallower trees" in forest
    assert "class shares" not in forest
    # small gaps: no warning at all
    assert gap_advice(_net_report("none", 0.0, 0.0, 0.0).gap, "XGBoost") is None
    assert gap_advice(_report("none", 0.02, 0.02).gap, "XGBoost") is None
