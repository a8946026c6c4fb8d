"""Assumption checks: PSI by hand, chi-square against scipy's own statistic, warnings."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

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
    assert by_name["b"].unseen_values == ["9"] and by_name["b"].out_of_scale_values == ["9"]
    text = " ".join(report.warnings)
    assert "'a' has shifted" in text and "never seen in training: 9" in text
    assert "outside its scale 1–5: 9" in text
    labelled = attribute_drift(ref, shifted, scales={"a": (1, 5), "b": (1, 5)},
                               labels={"a": "Branch staff (1-5)", "b": "App (1-5)"})
    text = " ".join(labelled.warnings)  # the analyst's labels, never the column identifiers
    assert "'Branch staff (1-5)' has shifted since training (major change" in text
    assert "'App (1-5)' has value(s) never seen" in text and "'a'" not in text


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
    # listed here, warned about once by estimate_wave (which fills it), not twice
    assert not any("gone" in w for w in report.warnings)
    assert report.to_dict()["gone"]["present"] is False


def test_na_share_change_is_its_own_signal_and_gaps_are_not_scores():
    # training: 1000 respondents, 100 did not answer (10%); the answered scores 1..5 evenly
    reference = {"a": {str(v): 180 for v in range(1, 6)}}
    # the wave: the same answered distribution, but 40% n/a
    answered = np.repeat(np.arange(1, 6), 60).astype(float)  # 300 answers, 60 each
    wave = pd.DataFrame({"a": np.concatenate([answered, np.full(200, np.nan)])})
    report = attribute_drift(reference, wave, reference_gaps={"a": 100}, reference_n=1000)
    a = report.attributes[0]
    assert a.psi == pytest.approx(0.0, abs=1e-12)  # the answered scores have not moved
    assert a.level == "stable" and a.n_missing == 200
    assert a.na_share_reference == 0.1 and a.na_share_current == 0.4
    # two-proportion z test, by hand: pooled p = 300/1500
    pooled = 300 / 1500
    z = (0.1 - 0.4) / np.sqrt(pooled * (1 - pooled) * (1 / 1000 + 1 / 500))
    assert a.na_share_p == pytest.approx(2 * norm.sf(abs(z)), rel=1e-9)
    assert a.na_share_changed
    assert len(report.warnings) == 1 and "40% of this wave did not answer it" in report.warnings[0]
    assert "+30 points" in report.warnings[0]
    # the same n/a share: no signal
    same = pd.DataFrame({"a": np.concatenate([answered, np.full(33, np.nan)])})
    quiet = attribute_drift(reference, same, reference_gaps={"a": 100}, reference_n=1000)
    assert not quiet.attributes[0].na_share_changed and quiet.warnings == ()


def test_na_share_signal_is_holm_adjusted_over_the_attributes():
    """A +5-point n/a change at raw p = 0.0045 warns when it is the only attribute tested and
    not among four (Holm: 4 × 0.0045 = 0.018 ≥ 0.01), as statsmodels' Holm says."""
    from statsmodels.stats.multitest import multipletests

    answered = np.repeat(np.arange(1, 6), 85).astype(float)  # 425 answers
    moved = np.concatenate([answered, np.full(75, np.nan)])  # 15% n/a (training: 10%)
    steady = np.concatenate([np.repeat(np.arange(1, 6), 90).astype(float),
                             np.full(50, np.nan)])  # 10% n/a, as in training
    reference = {"a": {str(v): 180 for v in range(1, 6)}}
    alone = attribute_drift(reference, pd.DataFrame({"a": moved}),
                            reference_gaps={"a": 100}, reference_n=1000)
    raw = alone.attributes[0].na_share_p
    assert 0.001 < raw < 0.01 and alone.attributes[0].na_share_p_holm == pytest.approx(raw)
    assert alone.attributes[0].na_share_changed and "+5 points" in alone.warnings[0]
    assert "Holm" not in alone.warnings[0]  # one attribute: nothing to adjust for
    names = ["a", "b", "c", "d"]
    wave = pd.DataFrame({"a": moved, **{n: steady for n in names[1:]}})
    four = attribute_drift({n: reference["a"] for n in names}, wave,
                           reference_gaps=dict.fromkeys(names, 100), reference_n=1000)
    raw_all = [a.na_share_p for a in four.attributes]
    expected = multipletests(raw_all, method="holm")[1]
    assert [a.na_share_p_holm for a in four.attributes] == pytest.approx(expected, rel=1e-12)
    assert four.attributes[0].na_share_p == pytest.approx(raw)
    assert not any(a.na_share_changed for a in four.attributes) and four.warnings == ()
