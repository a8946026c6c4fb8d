"""Intervals of the estimated net score of drifting waves and of their segments, against the
known truth of :mod:`cx_app.simulation.drift_waves`: the segment's own held-out error
(:mod:`cx_app.estimate.segment_error`) by hand, the fallback of older model files, and the
coverage of the realized NPS on simulated waves whose segments differ in ways the attributes
do not explain (the default model: logistic regression, calibration chosen on held-out folds)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import binom

from cx_app.estimate.model_metadata import SegmentErrorsDoc
from cx_app.estimate.new_wave import (
    COVERS_SEGMENT,
    COVERS_SEGMENT_SAMPLE,
    estimated_net_score,
    heldout_net_score_error,
    model_reference_se,
)
from cx_app.estimate.segment_error import heldout_segment_errors, segment_correction
from cx_app.estimate.tracker import track_waves
from cx_app.estimate.training import train_model
from cx_app.simulation.drift_waves import (
    SEGMENT_COLUMN,
    TARGET_COLUMN,
    drift_schema_yaml,
    simulate_drift_waves,
)
from cx_app.survey.importing import load_survey
from cx_app.survey.nps import NPS_GROUPS, net_score_from_counts
from cx_app.survey.schema import schema_from_yaml_text

SCHEMA = schema_from_yaml_text(drift_schema_yaml(), name="drift_waves")
SEEDS = (11, 12)
WAVES = 6
NOMINAL_FLOOR = 0.90  # the acceptance rate of 95 % intervals (issue 25)


def _survey(frame, name, scoring=False):
    return load_survey(frame.to_csv(index=False).encode(), schema=SCHEMA, filename=name,
                       require_target=not scoring, require_attributes=not scoring,
                       scoring=scoring)


def test_heldout_segment_errors_by_hand():
    # segment "a": p(P) − p(D) = 0.5 and 0.1 → estimated 30; answers 10 (P) and 3 (D) → 0:
    # error 30; variance 100²·((0.6 + 0.1 − 0.25) + (0.3 + 0.2 − 0.01))/2²
    proba = np.zeros((3, 11))
    proba[0, 10], proba[0, 0], proba[0, 7] = 0.6, 0.1, 0.3
    proba[1, 9], proba[1, 2], proba[1, 8] = 0.3, 0.2, 0.5
    proba[2, 10], proba[2, 7] = 0.5, 0.5          # segment "b": estimated 50, realized 100
    kept = heldout_segment_errors([10, 3, 9], proba, range(11), NPS_GROUPS,
                                  {"bank": ["a", "a", "b"]})["bank"].to_dict()
    assert kept["labels"]["a"]["error"] == pytest.approx(30.0)
    assert kept["labels"]["a"]["variance"] == pytest.approx(1e4 * (0.45 + 0.49) / 4)
    b = kept["labels"]["b"]
    assert {k: b[k] for k in ("n", "error", "variance")} == pytest.approx(
        {"n": 1, "error": -50.0, "variance": 2500.0})
    # the segment's own level and spread for its alert band: estimated 50, outcome +1 (SD 0),
    # top probability 0.5, arg-max 7 (the first of the tie) against the answer 9: accuracy 0
    assert {k: b[k] for k in ("estimated", "outcome_sd", "accuracy_alp", "accuracy")} \
        == pytest.approx({"estimated": 50.0, "outcome_sd": 0.0, "accuracy_alp": 0.5,
                          "accuracy": 0.0})
    # segment "a": outcomes +1, −1: SD 100; top probabilities 0.6 and 0.5, arg-max 10 and 8
    # against 10 and 3: accuracy 0.5
    a = kept["labels"]["a"]
    assert (a["outcome_sd"], a["accuracy_alp"], a["accuracy"]) == pytest.approx((100.0, 0.55,
                                                                                 0.5))
    assert kept["between_sd"] == 0.0  # no segment has 10 respondents: τ is not estimable


def test_segment_correction_by_hand():
    kept = {"bank": SegmentErrorsDoc.from_dict(
        {"between_sd": 4.0, "labels": {"A": {"n": 500, "error": 6.0, "variance": 9.0}}})}
    c = segment_correction(kept, "bank", "A")
    w = 16.0 / (16.0 + 9.0)
    assert c.correction == pytest.approx(w * 6.0)
    assert c.se == pytest.approx(math.sqrt((1 - w) ** 2 * (36.0 - 9.0) + w**2 * 9.0))
    new = segment_correction(kept, "bank", "Z")  # not in the training data
    assert (new.correction, new.se) == (0.0, 4.0) and "not in the training data" in new.note
    old = segment_correction(None, "bank", "A")  # an older model file
    assert old.fresh_sample and "retrain" in old.note
    # applied: the estimate moves by the correction, the SE gains the segment's own part
    proba = np.zeros((4, 11))
    proba[:, 10], proba[:, 7] = 0.5, 0.5
    plain = estimated_net_score(proba, range(11), NPS_GROUPS, model_se=1.0)
    fixed = estimated_net_score(proba, range(11), NPS_GROUPS, model_se=1.0, segment=c)
    assert fixed.value == pytest.approx(plain.value - c.correction)
    assert fixed.se == pytest.approx(math.hypot(plain.se, c.se))
    assert fixed.covers == COVERS_SEGMENT
    wide = estimated_net_score(proba, range(11), NPS_GROUPS, model_se=1.0, segment=old)
    assert wide.value == plain.value and wide.se > plain.se
    assert wide.covers == COVERS_SEGMENT_SAMPLE


def test_reference_se_by_hand_and_for_older_model_files(simulated):
    # two respondents (one fold each): Var(s) = 0.6 + 0.1 − 0.25 and 0.3 + 0.2 − 0.01
    proba = np.zeros((2, 11))
    proba[0, 10], proba[0, 0], proba[0, 7] = 0.6, 0.1, 0.3
    proba[1, 9], proba[1, 2], proba[1, 8] = 0.3, 0.2, 0.5
    error = heldout_net_score_error([10, 3], proba, np.array([0, 1]), range(11),
                                    NPS_GROUPS).to_dict()
    assert error["reference_se"] == pytest.approx(100 * math.sqrt(0.45 + 0.49) / 2)
    # an older file: the adjusted-Wald SE of the training class counts (wider: unconditional)
    _, model, _ = simulated[0]
    kept = model_reference_se(model)
    old = _older(model, "reference_se")
    counts = model.training.class_counts
    groups = [sum(counts[str(c)] for c in range(a, b)) for a, b in ((0, 7), (7, 9), (9, 11))]
    assert model_reference_se(old) == pytest.approx(
        net_score_from_counts(*groups, groups=NPS_GROUPS).se)
    assert kept < model_reference_se(old)
    wave = _survey(simulate_drift_waves(300, 300, waves=1, seed=1).waves[0].unlabeled(),
                   "W01.csv", scoring=True)
    (t,) = track_waves(model, [wave])
    est = t.estimate.estimated_nps
    assert est.se_reference == pytest.approx(kept)
    assert est.se == pytest.approx(math.hypot(est.se_outcome, est.se_model, kept))


def test_generator_oracle_is_the_spread_of_the_realized_nps():
    """The oracle's mean and SD equal those of the realized NPS over redraws of the answers'
    outcomes from the true probabilities (4,000 redraws: SD known to ±3 %)."""
    wave = simulate_drift_waves(600, 600, waves=1, seed=3).waves[0]
    rng = np.random.default_rng(0)
    cum = np.cumsum(wave.true_proba, axis=1)
    draws = (rng.random((4000, len(cum), 1)) > cum[None, :, :]).sum(axis=2)
    nps = 100 * ((draws >= 9).mean(axis=1) - (draws <= 6).mean(axis=1))
    oracle = wave.oracle()
    assert nps.mean() == pytest.approx(oracle.mean, abs=4 * oracle.sd / math.sqrt(4000))
    assert nps.std() == pytest.approx(oracle.sd, rel=0.1)
    # the written target is one such draw
    assert set(np.unique(wave.frame[TARGET_COLUMN])) <= set(range(11))


@pytest.fixture(scope="module")
def simulated():
    """Per seed: the model trained on the reference (default path) and the tracked waves."""
    out = []
    for seed in SEEDS:
        sim = simulate_drift_waves(1500, 900, waves=WAVES, seed=seed)
        model = train_model(_survey(sim.reference.frame, "reference.csv"), "lr",
                            folds=5, seed=seed).model
        waves = [_survey(w.unlabeled(), f"{w.label}.csv", scoring=True) for w in sim.waves]
        out.append((sim, model, track_waves(model, waves, by="bank")))
    return out


def _coverage_floor(trials: int) -> int:
    """Fewest covered out of ``trials`` that intervals covering at the acceptance rate (90 %)
    reach with probability 1 − 1e-4 (binomial spread): below it the intervals are worse."""
    return int(binom.ppf(1e-4, trials, NOMINAL_FLOOR))


def test_segment_intervals_cover_under_segment_effects_and_drift(simulated):
    """36 segment-waves (2 seeds × 6 waves × 3 banks): covered ≥ the binomial floor (24 of
    36; measured: 35). Without the segment's own error (the tracker before it) 21 of 36 were
    covered: each bank's effect the attributes miss biases its estimate."""
    covered = trials = 0
    ratios = []
    for sim, _, tracked in simulated:
        for wave, t in zip(sim.waves, tracked, strict=True):
            for s in t.segments:
                est = s.estimated_nps
                realized = wave.realized(s.label)
                assert s.realized_nps is None  # estimated without labels
                covered += est.ci95[0] <= realized <= est.ci95[1]
                trials += 1
                ratios.append((est.ci95[1] - est.ci95[0]) / 2
                              / wave.oracle(s.label).half_width95)
    assert trials == len(SEEDS) * WAVES * 3
    assert covered >= _coverage_floor(trials), (covered, trials)
    assert np.mean(ratios) <= 1.4, np.mean(ratios)  # bench: 1.2–1.3× on bigger references


def test_wave_intervals_cover(simulated):
    covered = trials = 0
    for sim, _, tracked in simulated:
        for wave, t in zip(sim.waves, tracked, strict=True):
            est = t.estimate.estimated_nps
            covered += est.ci95[0] <= wave.realized() <= est.ci95[1]
            trials += 1
    assert covered >= _coverage_floor(trials), (covered, trials)


def _older(model, key):
    """The model as a file written before ``net_score_error[key]`` was kept."""
    error = model.cv.net_score_error.model_copy(update={key: None})
    return dataclasses.replace(model, cv=model.cv.model_copy(update={"net_score_error": error}))


def test_older_model_file_falls_back_to_a_wider_segment_interval(simulated):
    sim, model, tracked = simulated[0]
    old = _older(model, "segments")
    wave = _survey(sim.waves[0].unlabeled(), "W01.csv", scoring=True)
    (again,) = track_waves(old, [wave], by="bank")
    for new_seg, old_seg in zip(tracked[0].segments, again.segments, strict=True):
        assert old_seg.estimated_nps.covers == COVERS_SEGMENT_SAMPLE
        # the same answers', model's and reference's parts, plus the fresh-sample part
        old, new = old_seg.estimated_nps, new_seg.estimated_nps
        assert old.se > math.sqrt(new.se**2 - new.se_segment**2)
        assert "retrain" in old_seg.note
        assert new_seg.estimated_nps.covers == COVERS_SEGMENT
    assert set(sim.reference.frame[SEGMENT_COLUMN]) == {s.label for s in again.segments}
