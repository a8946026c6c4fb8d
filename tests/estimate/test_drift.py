"""Assumption checks: PSI by hand, chi-square against scipy's own statistic, warnings."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cx_app.estimate.drift import (
    attribute_drift,
    population_stability_index,
    value_counts_by_attribute,
)


def test_psi_by_hand_with_smoothing():
    ref = {"1": 99.5, "2": 49.5}  # + 0.5 each -> 100, 50
    cur = {"1": 49.5, "2": 99.5}
    r = np.array([100, 50]) / 150
    q = np.array([50, 100]) / 150
    expected = float(np.sum((q - r) * np.log(q / r)))
    assert population_stability_index(ref, cur) == pytest.approx(expected)
    assert population_stability_index(ref, ref) == 0.0


def test_value_counts_merge_float_and_int_scores():
    frame = pd.DataFrame({"a": [7.0, 7, 8, np.nan]})
    assert value_counts_by_attribute(frame) == {"a": {"7": 2, "8": 1}}


def test_stable_wave_gives_no_warning_and_shift_is_warned():
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"a": rng.integers(1, 6, 5000), "b": rng.integers(1, 6, 5000)})
    ref = value_counts_by_attribute(train)
    same = pd.DataFrame({"a": rng.integers(1, 6, 1000), "b": rng.integers(1, 6, 1000)})
    report = attribute_drift(ref, same, scales={"a": (1, 5), "b": (1, 5)})
    assert report.warnings == ()
    assert all(a.level == "stable" for a in report.attributes)

    shifted = pd.DataFrame({"a": rng.choice([4, 5], 1000), "b": rng.integers(1, 6, 1000)})
    shifted.loc[0, "b"] = 9
    report = attribute_drift(ref, shifted, scales={"a": (1, 5), "b": (1, 5)})
    by_name = {a.name: a for a in report.attributes}
    assert by_name["a"].level == "major"
    assert by_name["a"].p_value < 1e-10
    assert by_name["b"].unseen_values == ("9",) and by_name["b"].out_of_scale_values == ("9",)
    text = " ".join(report.warnings)
    assert "'a' has shifted" in text and "never seen in training: 9" in text
    assert "outside its scale 1–5: 9" in text


def test_chi_square_matches_hand_computation():
    ref = {"1": 30, "2": 70}
    cur = pd.DataFrame({"a": [1] * 50 + [2] * 50})
    item = attribute_drift({"a": ref}, cur).attributes[0]
    table = np.array([[30, 70], [50, 50]], dtype=float)
    expected = np.outer(table.sum(1), table.sum(0)) / table.sum()
    chi2 = float(((table - expected) ** 2 / expected).sum())
    assert item.chi2 == pytest.approx(chi2)
    assert item.dof == 1
    assert item.p_value == pytest.approx(math.erfc(math.sqrt(chi2 / 2)))


def test_missing_attribute_is_a_warning_not_a_crash():
    report = attribute_drift({"a": {"1": 5}, "gone": {"1": 5}}, pd.DataFrame({"a": [1, 1]}))
    gone = [a for a in report.attributes if a.name == "gone"][0]
    assert not gone.present and gone.level == "missing"
    assert any("'gone' is missing from the new wave" in w for w in report.warnings)
    assert report.to_dict()["gone"]["present"] is False
