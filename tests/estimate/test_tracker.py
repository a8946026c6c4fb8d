"""The tracker: many waves and segments from one saved model, with intervals that describe
each wave's own realized NPS — checked for coverage on many simulated waves, with and without
drift, overall and per segment; and ``cx-app estimate`` with several files and ``--by``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from cx_app.cli import main
from cx_app.estimate.model_file import save_model
from cx_app.estimate.new_wave import (
    COVERS_SEGMENT,
    COVERS_WAVE,
    estimated_net_score,
    heldout_net_score_error,
)
from cx_app.estimate.tracker import (
    MIN_SEGMENT,
    split_waves,
    track_waves,
    tracker_document,
    tracker_frame,
)
from cx_app.estimate.training import train_model
from cx_app.survey.importing import load_survey
from cx_app.survey.nps import NPS_GROUPS
from cx_app.survey.nps_flags import FLAG_NONE, FLAG_UP
from cx_app.survey.samples import simulate_telecom_waves
from cx_app.survey.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml")
DRIFTS = (0.0, 0.15, -0.15, 0.3, -0.3)


def _wave(waves, per_operator, drift=0.0, seed=2021):
    frame = simulate_telecom_waves(waves, respondents_per_operator=per_operator, seed=seed,
                                   drift=drift)
    return load_survey(frame.to_csv(index=False).encode(), schema=SCHEMA,
                       filename=f"wave{waves[0]}.csv", require_attributes=False, scoring=True)


@pytest.fixture(scope="module")
def model():
    train = load_survey(simulate_telecom_waves([1, 2, 3], respondents_per_operator=300, seed=5)
                        .to_csv(index=False).encode(), schema=SCHEMA, filename="train.csv")
    return train_model(train, "lr", calibration="none", folds=5).model


def test_interval_parts_by_hand():
    # two respondents: p(promoter), p(detractor) = (0.5, 0.2) and (0.1, 0.6); classes 0..10
    proba = np.zeros((2, 11))
    proba[0, 10], proba[0, 0], proba[0, 7] = 0.5, 0.2, 0.3
    proba[1, 9], proba[1, 3], proba[1, 8] = 0.1, 0.6, 0.3
    est = estimated_net_score(proba, range(11), NPS_GROUPS, model_se=2.0)
    assert est.value == pytest.approx(100 * ((0.5 - 0.2) + (0.1 - 0.6)) / 2)
    v = (0.5 + 0.2 - 0.3**2) + (0.1 + 0.6 - 0.5**2)
    assert est.se_outcome == pytest.approx(100 * np.sqrt(v) / 2)
    assert est.se == pytest.approx(np.hypot(100 * np.sqrt(v) / 2, 2.0))
    half = 1.959964 * est.se  # two respondents: clipped to the NPS range
    assert est.ci95 == pytest.approx((max(-100, est.value - half), min(100, est.value + half)))
    assert est.se_sampling == 0.0 and est.covers == COVERS_WAVE


def test_heldout_model_error_by_hand():
    # fold 0: estimated 100·mean(p_P − p_D) = 100·(0.6 − 0.1) = 50, realized 100·(1 + 0)/2 = 50
    # fold 1: estimated 100·(0 − 0.5) = −50, realized 100·(−1 − 1)/2 = −100 → error 50
    proba = np.zeros((4, 11))
    proba[0, 10], proba[0, 7] = 0.6, 0.4      # fold 0, a promoter
    proba[1, 10], proba[1, 0], proba[1, 7] = 0.6, 0.2, 0.2  # fold 0, a passive
    proba[2, 0], proba[2, 7] = 0.5, 0.5       # fold 1, a detractor
    proba[3, 0], proba[3, 7] = 0.5, 0.5       # fold 1, a detractor
    proba[0, 0] = 0.0
    y, fold = np.array([10, 7, 0, 3]), np.array([0, 0, 1, 1])
    error = heldout_net_score_error(y, proba, fold, range(11), NPS_GROUPS).to_dict()
    assert error["fold_estimated"] == pytest.approx([100 * (1.2 - 0.2) / 2, -50.0])
    assert error["fold_realized"] == pytest.approx([50.0, -100.0])
    assert error["bias"] == pytest.approx((0.0 + 50.0) / 2)
    # fewer than 3 folds: the mean squared error itself
    assert error["model_se"] == pytest.approx(np.sqrt((0.0**2 + 50.0**2) / 2))


@pytest.mark.slow  # coverage over many simulated waves (~12 s)
def test_intervals_cover_the_realized_nps_of_many_waves_and_segments(model):
    """≥ 90% of 95% intervals cover the realized NPS, over 25 simulated 1,200-respondent waves
    (latent shifts −0.3..+0.3) and their 75 operator segments; and they are narrower than the
    fresh-sample intervals (what a CX team needs to tell two waves apart)."""
    surveys = [_wave([8 + k], 400, drift=DRIFTS[k % len(DRIFTS)], seed=100 + k)
               for k in range(25)]
    tracked = track_waves(model, surveys, by="operator")
    covered = widths = 0
    segment_hits = segment_total = 0
    for t in tracked:
        est, real = t.estimate.estimated_nps, t.estimate.realized_nps
        covered += est.ci95[0] <= real.value <= est.ci95[1]
        widths += (est.ci95[1] - est.ci95[0]) / 2
        for s in t.segments:
            segment_total += 1
            segment_hits += s.estimated_nps.ci95[0] <= s.realized_nps.value <= \
                s.estimated_nps.ci95[1]
    assert covered >= 0.9 * len(tracked), covered
    assert segment_hits >= 0.9 * segment_total, (segment_hits, segment_total)
    half_width = widths / len(tracked)
    assert half_width < 6.0  # the fresh-sample interval of a 1,200 wave is about ±8–9
    first = tracked[0].estimate.estimated_nps
    segment = tracked[0].segments[0].estimated_nps
    assert segment.se > first.se  # a third of the wave: a wider interval


def test_small_segments_are_said_not_estimated(model):
    frame = simulate_telecom_waves([9], respondents_per_operator=20, seed=2021)
    operator_a = frame.index[frame["Operator"] == "Operator A"]
    frame = frame.drop(operator_a[MIN_SEGMENT + 5:])  # 15 left of Operator A
    frame.loc[operator_a[:3], "Operator"] = "Operator Z"  # 3 respondents, 12 left of A
    survey = load_survey(frame.to_csv(index=False).encode(), schema=SCHEMA, filename="s.csv",
                         scoring=True)
    doc = tracker_document(track_waves(model, [survey], by="operator"))
    by = doc["waves"][0]["by"]
    assert by["Operator Z"]["estimated_nps"] is None and "too few" in by["Operator Z"]["note"]
    assert by["Operator Z"]["respondents"] == 3 and by["Operator A"]["respondents"] == 12
    assert "wide interval" in by["Operator B"]["note"]  # 20 respondents
    assert by["Operator B"]["estimated_nps"]["value"] is not None


def test_cli_estimate_with_several_waves_and_by(model, tmp_path, capsys):
    path = save_model(model, tmp_path / "lr.skops")
    files = []
    for k in (10, 11):
        frame = simulate_telecom_waves([k], respondents_per_operator=100, seed=7,
                                       include_target=False)
        files.append(tmp_path / f"wave{k}.csv")
        files[-1].write_text(frame.to_csv(index=False))
    assert main(["estimate", "--model", str(path), *map(str, files), "--by", "Operator",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [w["file"] for w in doc["waves"]] == ["wave10.csv", "wave11.csv"]
    for w in doc["waves"]:
        assert w["respondents"] == 300 and "realized_nps" not in w
        low, high = w["estimated_nps"]["ci95"]
        assert low < w["estimated_nps"]["value"] < high
        assert set(w["by"]) == {"Operator A", "Operator B", "Operator C"}
        assert sum(s["respondents"] for s in w["by"].values()) == 300
        assert sum(w["shares"].values()) == pytest.approx(1.0)
        for s in w["by"].values():  # each operator's held-out error corrects its estimate
            assert s["estimated_nps"]["covers"] == COVERS_SEGMENT
            assert s["estimated_nps"]["se_segment"] >= 0.0
    assert main(["estimate", "--model", str(path), *map(str, files)]) == 0
    out = capsys.readouterr().out
    assert "wave10.csv: 300 respondents" in out and "the intervals cover" in out
    assert "a segment's interval" not in out
    assert main(["estimate", "--model", str(path), *map(str, files), "--by", "Operator"]) == 0
    assert f"a segment's interval covers {COVERS_SEGMENT}" in capsys.readouterr().out


def test_tracker_flags_a_real_shift_and_not_a_steady_wave(model):
    """Three waves: the same population twice, then a strong upward shift. The tracker marks the
    shift (▲) and not the repeat; each change equals the difference of the two estimates."""
    surveys = [_wave([8], 400, seed=300), _wave([9], 400, seed=301),
               _wave([10], 400, drift=0.6, seed=302)]
    frame = tracker_frame(track_waves(model, surveys, by="operator"))
    overall = frame[frame["series"] == "All respondents"].reset_index(drop=True)
    assert np.isnan(overall.loc[0, "change"])
    assert overall.loc[2, "change"] == pytest.approx(overall.loc[2, "nps"] - overall.loc[1, "nps"])
    se = np.hypot(overall.loc[2, "se"], overall.loc[1, "se"])
    assert overall.loc[2, "p"] == pytest.approx(2 * norm.sf(abs(overall.loc[2, "change"]) / se))
    assert overall["flag"].tolist() == [FLAG_NONE, FLAG_NONE, FLAG_UP]
    # per segment too: every operator line has its own changes
    assert frame.groupby("series")["change"].apply(lambda c: c.notna().sum()).eq(2).all()


def test_one_file_with_a_wave_column_is_tracked_wave_by_wave(model, tmp_path, capsys):
    """Three waves in one file: three tracker lines, every respondent in exactly one, each
    estimate the same as that wave's own file gives."""
    frame = simulate_telecom_waves([10, 11, 12], respondents_per_operator=80, seed=9,
                                   include_target=False)
    path = tmp_path / "three_waves.csv"
    path.write_text(frame.to_csv(index=False))
    survey = load_survey(path, schema=SCHEMA, require_target=False, require_attributes=False,
                         scoring=True)
    parts = split_waves(survey)
    assert [p.source.filename for p in parts] == [f"three_waves.csv · {w}" for w in
                                                 sorted(frame["Wave"].astype(str).unique())]
    assert sum(len(p.X) for p in parts) == len(survey.X) == len(frame)
    one = frame[frame["Wave"].astype(str) == str(sorted(frame["Wave"].astype(str).unique())[1])]
    alone = tmp_path / "one_wave.csv"
    alone.write_text(one.to_csv(index=False))
    single = load_survey(alone, schema=SCHEMA, require_target=False, require_attributes=False,
                         scoring=True)
    assert split_waves(single) == [single]  # one wave: the file as it is
    own = track_waves(model, [single])
    split = track_waves(model, parts)
    assert split[1].estimate.estimated_nps.value == pytest.approx(
        own[0].estimate.estimated_nps.value)
    model_path = save_model(model, tmp_path / "lr.skops")
    assert main(["estimate", "--model", str(model_path), str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [w["respondents"] for w in doc["waves"]] == [len(p.X) for p in parts]
