"""NPS / CSAT net scores, intervals and changes (MATH.md §11) against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cx_app.engine.plan import NPS_PLAN, parse_plan
from cx_app.errors import AnalysisError, PlanError
from cx_app.survey.nps import (
    CSAT_GROUPS,
    NPS_GROUPS,
    Z95,
    NetScoreGroups,
    csat_summary,
    groups_from_plan,
    net_score_from_counts,
    nps_by,
    nps_by_results,
    nps_change,
    nps_changes,
    nps_summary,
)


def scores(promoters: int, passives: int, detractors: int) -> list[int]:
    return [10] * (promoters // 2) + [9] * (promoters - promoters // 2) + [8] * passives \
        + [0, 3, 6] * (detractors // 3) + [5] * (detractors % 3)


def test_nps_interval_is_the_adjusted_wald_of_rocks_2016_by_hand():
    # 50 promoters, 30 passives, 20 detractors: NPS = 100 * (50 - 20) / 100 = 30.
    # Adjusted Wald: n' = 103, p_P = 50.75/103, p_D = 20.75/103, centre = 30/103 = 0.291262;
    # Var = (71.5/103 - (30/103)^2) / 103 = (0.694175 - 0.084834) / 103 = 0.005915933;
    # SE = 0.0769151; interval = 100 * (0.291262 -/+ 1.959964 * 0.0769151) = (14.051, 44.201).
    r = nps_summary(scores(50, 30, 20))
    assert r.value == 30.0
    assert r.n == 100
    assert r.counts == {"detractors": 20, "passives": 30, "promoters": 50}
    assert r.shares == {"detractors": 0.2, "passives": 0.3, "promoters": 0.5}
    var = (71.5 / 103 - (30 / 103) ** 2) / 103
    assert r.se == pytest.approx(100 * math.sqrt(var), rel=1e-12)
    assert r.se == pytest.approx(7.69151, abs=1e-5)
    assert r.ci95 == pytest.approx((14.051, 44.201), abs=1e-3)
    # The interval is centred on the adjusted estimate 29.126, not on the plain 30.
    assert sum(r.ci95) / 2 == pytest.approx(100 * 30 / 103, abs=1e-9)


def test_small_wave_interval_is_clipped_to_the_scale():
    # 5 promoters only: p_P = 5.75/8 = 0.71875, p_D = 0.75/8 = 0.09375, centre 0.625;
    # Var = (0.8125 - 0.390625)/8 = 0.052734375, SE = 0.229640; upper 62.5 + 45.01 > 100.
    r = nps_summary([9, 10, 10, 9, 10])
    assert r.value == 100.0
    assert r.se == pytest.approx(100 * math.sqrt(0.052734375), rel=1e-12)
    assert r.ci95[1] == 100.0
    assert r.ci95[0] == pytest.approx(62.5 - Z95 * 22.9640, abs=1e-3)


def test_change_between_two_waves_by_hand():
    # A: 30/40/30 (NPS 0): Var_A = (61.5/103 - 0) / 103 = 0.00579696, se_A = 7.61378 points.
    # B: 45/30/25 (NPS 20): Var_B = (71.5/103 - (20/103)^2) / 103 = 0.00637351, se_B = 7.98343.
    # SE = sqrt(7.61378^2 + 7.98343^2) = 11.0320; z = 20 / 11.0320 = 1.8129; p = 0.0698.
    a = nps_summary(scores(30, 40, 30), label="2021-01")
    b = nps_summary(scores(45, 30, 25), label="2021-02")
    change = nps_change(a, b)
    assert (change.a_label, change.b_label) == ("2021-01", "2021-02")
    assert change.delta == 20.0
    assert a.se == pytest.approx(7.61378, abs=1e-5)
    assert b.se == pytest.approx(7.98343, abs=1e-5)
    assert change.se == pytest.approx(11.0320, abs=1e-4)
    assert change.z == pytest.approx(1.8129, abs=1e-4)
    assert change.p == pytest.approx(0.0698, abs=1e-4)
    assert change.ci95 == pytest.approx((20 - Z95 * 11.0320, 20 + Z95 * 11.0320), abs=1e-3)
    assert not change.significant()
    assert nps_change(b, a).delta == -20.0
    assert nps_change(b, a).p == pytest.approx(change.p)


def test_large_waves_make_the_same_change_significant():
    a = nps_summary(scores(300, 400, 300))
    b = nps_summary(scores(450, 300, 250))
    change = nps_change(a, b)
    assert change.delta == 20.0
    assert change.p < 1e-6 and change.significant()
    assert change.to_frame().loc[0, "ci_low"] > 0


def test_nps_by_segment_with_missing_segment_and_total():
    frame = pd.DataFrame({
        "nps": [10, 9, 0, 8, 10, 6, 6, 7, 9],
        "operator": ["A", "A", "A", "A", "B", "B", "B", None, "B"],
    })
    table = nps_by(frame, "nps", "operator", total=True)
    assert table["operator"].tolist() == ["A", "B", "(missing)", "All"]
    assert table["n"].tolist() == [4, 4, 1, 9]
    # A: 2 promoters, 1 passive, 1 detractor -> 25; B: 2 and 2 detractors -> 0;
    # missing: one passive -> 0; all: 4 promoters, 3 detractors of 9 -> 11.11
    assert table["nps"].tolist() == pytest.approx([25.0, 0.0, 0.0, 100 / 9])
    assert table[["detractors", "passives", "promoters"]].iloc[0].tolist() == [1, 1, 2]
    assert (table["ci_low"] < table["nps"]).all() and (table["nps"] < table["ci_high"]).all()


def test_nps_by_two_columns_and_consecutive_changes():
    frame = pd.DataFrame({
        "nps": [10, 0, 10, 10, 0, 0, 9, 9],
        "wave": ["w1", "w1", "w2", "w2", "w1", "w1", "w2", "w2"],
        "brand": ["X", "X", "X", "X", "Y", "Y", "Y", "Y"],
    })
    table = nps_by(frame, "nps", ["wave", "brand"])
    assert table["wave / brand"].tolist() == ["w1 / X", "w1 / Y", "w2 / X", "w2 / Y"]
    assert table["nps"].tolist() == [0.0, -100.0, 100.0, 100.0]
    waves = nps_by_results(frame, "nps", "wave")
    changes = nps_changes(waves)
    assert changes[["a_label", "b_label"]].values.tolist() == [["w1", "w2"]]
    assert changes.loc[0, "delta"] == pytest.approx(100 - (-50))
    assert nps_changes(waves[:1]).empty


def test_nps_by_names_unknown_columns():
    with pytest.raises(AnalysisError, match=r"\['region'\] not in the data"):
        nps_by(pd.DataFrame({"nps": [1]}), "nps", "region")


def test_scores_outside_the_scale_or_not_numbers_are_errors_and_nan_is_counted():
    with pytest.raises(AnalysisError, match=r"outside the scale 0–10: 11, 99"):
        nps_summary([10, 11, 99])
    with pytest.raises(AnalysisError, match=r"must be numbers; found \['ten'\]"):
        nps_summary([10, "ten"])
    r = nps_summary([10, np.nan, 0, None])
    assert (r.n, r.missing, r.value) == (2, 2, 0.0)
    with pytest.raises(AnalysisError, match="no respondents with a score in segment 'B'"):
        net_score_from_counts(0, 0, 0, label="B")


def test_custom_promoters_and_detractors():
    groups = NetScoreGroups(tuple(range(11)), frozenset({8, 9, 10}), frozenset(range(8)))
    r = nps_summary([10, 9, 8, 7, 6], groups=groups)
    assert r.counts == {"detractors": 2, "passives": 0, "promoters": 3}
    assert r.value == pytest.approx(20.0)


def test_groups_from_the_nps_plan_and_a_csat_plan():
    assert groups_from_plan(NPS_PLAN) == NPS_GROUPS
    csat_plan = parse_plan({"classes": [1, 2, 3, 4, 5], "plan": [
        {"name": "3x3", "groups": [
            {"name": "dissatisfied", "members": [1, 2]},
            {"name": "neutral", "members": [3]},
            {"name": "satisfied", "members": [4, 5]}]},
        {"name": "2x2", "positive": "satisfied", "groups": [
            {"name": "dissatisfied_neutral", "members": ["dissatisfied", "neutral"]},
            {"name": "satisfied", "members": ["satisfied"]}]}]})
    assert groups_from_plan(csat_plan) == CSAT_GROUPS


def test_groups_from_a_plan_with_only_a_positive_group_and_expanded_members():
    plan = parse_plan({"classes": list(range(1, 8)), "plan": [
        {"name": "three", "groups": [
            {"name": "first", "members": [1, 2, 3]},
            {"name": "mid", "members": [4, 5]},
            {"name": "last", "members": [6, 7]}]},
        {"name": "two", "positive": "top", "groups": [
            {"name": "rest", "members": ["first", "mid"]},
            {"name": "top", "members": ["last"]}]}]})
    groups = groups_from_plan(plan)
    assert groups.positive == {6, 7} and groups.negative == {1, 2, 3, 4, 5}
    assert groups.neutral == frozenset()
    assert (groups.positive_name, groups.negative_name) == ("top", "rest")


def test_plan_without_net_groups_is_a_plan_error():
    plan = parse_plan({"classes": [1, 2, 3], "plan": [
        {"name": "s", "groups": [{"name": "a", "members": [1]}, {"name": "b", "members": [2, 3]}]}]})
    with pytest.raises(PlanError, match="names no promoters/detractors groups"):
        groups_from_plan(plan)


def test_csat_top_box_wilson_and_net_score_by_hand():
    # 3 satisfied of 5: Wilson centre (0.6 + z²/10)/(1 + z²/5) = 0.556552, half width
    # z·sqrt(0.6·0.4/5 + z²/100)/(1 + z²/5) = 0.325827 -> (0.230724, 0.882379).
    r = csat_summary([5, 4, 4, 3, 1], label="Piraeus")
    z2 = Z95**2
    centre = (0.6 + z2 / 10) / (1 + z2 / 5)
    half = Z95 * math.sqrt(0.6 * 0.4 / 5 + z2 / 100) / (1 + z2 / 5)
    assert r.top_box.value == 0.6 and r.n == 5
    assert r.top_box.ci95 == pytest.approx((centre - half, centre + half), abs=1e-9)
    assert r.top_box.ci95 == pytest.approx((0.2307, 0.8824), abs=1e-4)
    assert r.to_dict()["top_box"] == 0.6 and r.to_dict()["top_box_ci95"] == list(r.top_box.ci95)
    assert r.net.value == pytest.approx(40.0)
    assert r.net.counts == {"dissatisfied": 1, "neutral": 1, "satisfied": 3}
    frame = r.to_frame()
    assert frame.loc[0, "label"] == "Piraeus" and frame.loc[0, "net"] == pytest.approx(40.0)


def test_real_valued_counts_for_estimated_waves():
    r = net_score_from_counts(20.5, 30.25, 49.25)
    assert r.n == pytest.approx(100.0)
    assert r.value == pytest.approx(28.75)
    assert r.counts["passives"] == pytest.approx(30.25)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 60))
def test_counts_and_scores_agree_and_interval_is_inside_the_scale(pro, pas, det):
    if pro + pas + det == 0:
        return
    r = nps_summary(scores(pro, pas, det))
    assert r == net_score_from_counts(det, pas, pro)
    assert -100 <= r.ci95[0] <= r.ci95[1] <= 100
    assert r.value == pytest.approx(100 * (pro - det) / (pro + pas + det))


def test_interval_covers_the_true_nps_about_95_percent_of_the_time():
    # 4,000 simulated waves of 60 respondents with p_P = 0.35, p_D = 0.40 (true NPS = -5).
    rng = np.random.default_rng(7)
    counts = rng.multinomial(60, [0.40, 0.25, 0.35], size=4000)
    covered = [
        r.ci95[0] <= -5 <= r.ci95[1]
        for r in (net_score_from_counts(*row) for row in counts)
    ]
    assert 0.93 <= np.mean(covered) <= 0.97


def test_results_serialise():
    r = nps_summary(scores(5, 3, 2), label="A")
    d = r.to_dict()
    assert d["label"] == "A" and d["value"] == 30.0 and d["counts"]["promoters"] == 5
    assert list(r.to_frame().columns) == [
        "label", "n", "detractors", "passives", "promoters", "share_detractors",
        "share_passives", "share_promoters", "value", "ci_low", "ci_high", "se"]
    change = nps_change(r, r)
    assert change.to_dict()["delta"] == 0.0 and change.p == 1.0


def test_default_plans_of_other_scales_give_top_minus_bottom_box():
    """The default plans name their boxes so that the net score is top box − bottom box (the
    middle is neutral), on 1–7 (low/high) and on any other scale (bottom_box/top_box)."""
    from cx_app.engine.plan import PlanSpec
    from cx_app.survey.default_plans import default_plan

    for scale, positive, negative in (((1, 7), {5, 6, 7}, {1, 2, 3}),
                                      ((1, 10), {7, 8, 9, 10}, {1, 2, 3, 4}),
                                      ((-2, 2), {1, 2}, {-2, -1}),
                                      ((1, 3), {3}, {1})):
        classes = list(range(scale[0], scale[1] + 1))
        plan = PlanSpec(classes=classes, plan=default_plan("custom", scale))
        groups = groups_from_plan(plan)
        assert (groups.positive, groups.negative) == (positive, negative), scale
        assert groups.neutral == frozenset(classes) - positive - negative


def test_score_distribution_and_attribute_profiles_by_hand():
    from cx_app.survey.nps import CSAT_GROUPS, attribute_profiles, score_distribution

    scores = [5, 5, 4, 1, 3]  # satisfied: 5, 5, 4; neutral: 3; dissatisfied: 1; nobody gave 2
    dist = score_distribution(scores, CSAT_GROUPS)
    assert dist.to_dict(orient="list") == {
        "score": [1, 2, 3, 4, 5], "count": [1, 0, 1, 1, 2],
        "category": ["dissatisfied", "dissatisfied", "neutral", "satisfied", "satisfied"],
        "share": [0.2, 0.0, 0.2, 0.2, 0.4]}
    answers = pd.DataFrame({"price": [4.0, 2.0, np.nan, 1.0, 3.0],
                            "speed": [5.0, 5.0, 3.0, 2.0, np.nan]})
    profile = attribute_profiles(answers, scores, CSAT_GROUPS)
    assert list(profile.columns) == ["dissatisfied", "neutral", "satisfied"]
    # satisfied price: (4 + 2) / 2, the n/a answer left out; neutral speed: no answer → NaN
    assert profile.loc["price"].tolist() == [1.0, 3.0, 3.0]
    assert profile.loc["speed"].tolist()[::2] == [2.0, 13 / 3]
    assert math.isnan(profile.loc["speed", "neutral"])
    only_satisfied = attribute_profiles(answers.iloc[:3], scores[:3], CSAT_GROUPS)
    assert list(only_satisfied.columns) == ["satisfied"]  # groups nobody is in are left out
