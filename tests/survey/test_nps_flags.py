"""Significance flags of the NPS-by-segment and wave charts: hand-computed differences and p."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from cx_app.survey.nps import nps_summary
from cx_app.survey.nps_flags import (
    FLAG_ABOVE,
    FLAG_BELOW,
    FLAG_DOWN,
    FLAG_NONE,
    FLAG_UP,
    segments_vs_rest,
    wave_trend,
)


def _scores(promoters: int, passives: int, detractors: int) -> list[int]:
    return [10] * promoters + [8] * passives + [3] * detractors


def test_segment_against_the_rest_matches_the_hand_computed_z_test():
    a = _scores(60, 20, 20)        # NPS +40 over 100
    b = _scores(30, 30, 40)        # NPS −10
    c = _scores(35, 30, 35)        # NPS 0
    frame = pd.DataFrame({"nps": a + b + c, "region": ["a"] * 100 + ["b"] * 100 + ["c"] * 100})
    table = segments_vs_rest(frame, "nps", "region").set_index("segment")
    rest_a = nps_summary(b + c)
    seg_a = nps_summary(a)
    assert table.loc["a", "rest_nps"] == pytest.approx(rest_a.value)  # (65−75)/200 → −5
    assert rest_a.value == pytest.approx(-5.0)
    diff = 40.0 - (-5.0)
    z = diff / math.hypot(seg_a.se, rest_a.se)
    assert table.loc["a", "difference"] == pytest.approx(diff)
    assert table.loc["a", "p"] == pytest.approx(2 * norm.sf(z))
    # Holm over three tests: the smallest p times 3
    ps = table["p"].sort_values()
    assert table.loc[ps.index[0], "p_holm"] == pytest.approx(min(1.0, 3 * ps.iloc[0]))
    assert table.loc["a", "flag"] == FLAG_ABOVE
    assert table.loc["b", "flag"] == FLAG_BELOW
    assert table.loc["c", "flag"] == FLAG_NONE


def test_weighted_segments_use_the_weights():
    frame = pd.DataFrame({"nps": _scores(10, 0, 10) * 2, "s": ["x"] * 20 + ["y"] * 20,
                          "w": [3.0] * 10 + [1.0] * 10 + [1.0] * 20})
    table = segments_vs_rest(frame, "nps", "s", weight="w").set_index("segment")
    assert table.loc["x", "nps"] == pytest.approx(50.0)   # (30 − 10) / 40
    assert table.loc["y", "nps"] == pytest.approx(0.0)


def test_single_segment_has_no_rest_and_no_flag():
    frame = pd.DataFrame({"nps": _scores(5, 5, 5), "s": ["only"] * 15})
    row = segments_vs_rest(frame, "nps", "s").iloc[0]
    assert np.isnan(row["p"]) and row["flag"] == FLAG_NONE


def test_wave_trend_tests_each_wave_against_the_previous_one_per_series():
    w1 = _scores(30, 40, 30)   # 0
    w2 = _scores(32, 38, 30)   # +2 (not significant)
    w3 = _scores(70, 20, 10)   # +60 (significant rise)
    frame = pd.DataFrame({"nps": w1 + w2 + w3,
                          "wave": ["2024-1"] * 100 + ["2024-2"] * 100 + ["2024-3"] * 100})
    table = wave_trend(frame, "nps", "wave")
    assert table["wave"].tolist() == ["2024-1", "2024-2", "2024-3"]
    assert np.isnan(table.loc[0, "change"])
    assert table["change"].tolist()[1:] == pytest.approx([2.0, 58.0])
    assert table["flag"].tolist() == [FLAG_NONE, FLAG_NONE, FLAG_UP]
    # Holm over the two changes
    p = table["p"].to_numpy()[1:]
    assert table["p_holm"].to_numpy()[1:].max() == pytest.approx(min(1.0, max(p)))
    split = wave_trend(frame.assign(region=["n", "s"] * 150), "nps", "wave", split="region")
    assert split["series"].unique().tolist() == ["n", "s"]
    assert len(split) == 6


def test_a_fall_is_flagged_down():
    frame = pd.DataFrame({"nps": _scores(70, 20, 10) + _scores(10, 20, 70),
                          "wave": ["a"] * 100 + ["b"] * 100})
    assert wave_trend(frame, "nps", "wave")["flag"].tolist() == [FLAG_NONE, FLAG_DOWN]
