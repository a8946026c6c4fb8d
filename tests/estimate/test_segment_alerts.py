"""Segment alerts against the segment's own reference band and its previous wave (issue 36):
the empirical-Bayes bands by hand, the change test, the wording of each comparison, older
model files (no segment alerts, a note), and precision/recall on waves with planted events
(:mod:`cx_app.simulation.alert_events`)."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from cx_app.estimate.alert_bands import NO_SEGMENT_BANDS, segment_bands
from cx_app.estimate.alerts import Alert, change_alert, series_changes
from cx_app.estimate.model_metadata import SegmentErrorsDoc
from cx_app.estimate.tracker import SegmentEstimate
from cx_app.workspace.views import with_change_alerts

KEPT = {"bank": SegmentErrorsDoc.from_dict({"between_sd": 0.0, "labels": {
    "A": {"n": 400, "error": 0.0, "variance": 16.0, "estimated": -40.0, "outcome_sd": 80.0,
          "accuracy_alp": 0.40, "accuracy": 0.50},
    "B": {"n": 100, "error": 0.0, "variance": 81.0, "estimated": 10.0, "outcome_sd": 90.0,
          "accuracy_alp": 0.45, "accuracy": 0.40}}})}


def test_segment_bands_shrink_small_segments_toward_the_whole():
    bands = segment_bands(KEPT, "bank")
    # whole level (respondent-weighted) −30; sampling variances 6400/400 = 16, 8100/100 = 81;
    # spread beyond noise τ² = mean((−10)² − 16, 40² − 81) = 801.5
    tau2 = ((100 - 16) + (1600 - 81)) / 2
    whole_unit = math.sqrt((400 * 80**2 + 100 * 90**2) / 500)
    for label, level, unit, v in (("A", -40.0, 80.0, 16.0), ("B", 10.0, 90.0, 81.0)):
        w = tau2 / (tau2 + v)
        band = bands[label]["net_score"]
        assert band.mean == pytest.approx(-30 + w * (level + 30))
        assert band.unit_sd == pytest.approx(whole_unit + w * (unit - whole_unit))
        assert band.level_sd == pytest.approx(math.sqrt(w * v))
        assert band.comparison == "own reference"
        lo, hi = band.limits(225)
        assert hi - lo == pytest.approx(6 * math.sqrt(band.unit_sd**2 / 225 + w * v))
    # B (100 respondents) is pulled toward the whole more than A (400)
    assert 10 - bands["B"]["net_score"].mean > abs(-40 - bands["A"]["net_score"].mean)
    # a segment absent from the training data: the whole, widened by the segments' spread
    assert bands[""]["net_score"].mean == pytest.approx(-30.0)
    assert bands[""]["net_score"].level_sd == pytest.approx(math.sqrt(tau2))
    # accuracy: levels 0.40 and 0.45, spreads √(0.5·0.5) and √(0.4·0.6)
    v_a, v_b = 0.25 / 400, 0.24 / 100
    tau2_acc = max(0.0, ((0.40 - 0.41) ** 2 - v_a + (0.45 - 0.41) ** 2 - v_b) / 2)
    w_b = tau2_acc / (tau2_acc + v_b)
    assert bands["B"]["accuracy"].mean == pytest.approx(0.41 + w_b * 0.04)


def test_the_level_noise_is_the_estimates_own_spread():
    # with the SD of one respondent's estimate kept (40 and 45 points), the levels' sampling
    # variances are 40²/400 = 4 and 45²/100 = 20.25; the band's spread stays the outcome's
    labels = {k: {**v.to_dict(), "estimated_sd": sd} for (k, v), sd
              in zip(KEPT["bank"].labels.items(), (40.0, 45.0), strict=True)}
    bands = segment_bands({"bank": SegmentErrorsDoc.from_dict(
        {"between_sd": 0.0, "labels": labels})}, "bank")
    tau2 = ((100 - 4) + (1600 - 20.25)) / 2
    w = tau2 / (tau2 + 20.25)
    band = bands["B"]["net_score"]
    assert band.mean == pytest.approx(-30 + w * 40)
    assert band.level_sd == pytest.approx(math.sqrt(w * 20.25))
    whole_unit = math.sqrt((400 * 80**2 + 100 * 90**2) / 500)
    assert band.unit_sd == pytest.approx(whole_unit + w * (90 - whole_unit))


def test_an_older_model_file_keeps_no_segment_band():
    old = {"bank": SegmentErrorsDoc.from_dict({"between_sd": 1.0, "labels": {
        "A": {"n": 400, "error": 1.0, "variance": 16.0}}})}
    assert segment_bands(old, "bank") is None
    assert segment_bands(None, "bank") is None and segment_bands(KEPT, "region") is None
    assert "retrain" in NO_SEGMENT_BANDS


def test_change_since_previous_wave():
    before = Alert(metric="net_score", value=-40.0, lower=-60.0, upper=-20.0, alert=False,
                   source="own", comparison="own reference", sd=4.0)
    quiet = Alert(metric="net_score", value=-30.0, lower=-60.0, upper=-20.0, alert=False,
                  source="own", comparison="own reference", sd=3.0)
    jump = Alert(metric="net_score", value=-20.5, lower=-60.0, upper=-20.0, alert=True,
                 source="own", comparison="own reference", sd=3.0)
    # ±3·√(4² + 3²) = ±15 around −40
    assert change_alert(before, quiet).alert is False
    change = change_alert(before, jump)
    assert (change.lower, change.upper, change.alert) == (-55.0, -25.0, True)
    assert change.comparison == "previous wave" and change.direction == "above"
    assert change.sentence("B").startswith("ALERT: B: estimated net score -20.5 rose since "
                                           "the previous wave: above -25.0")
    assert jump.short() == "net score above -20.0 (its own usual range)"
    # analyst limits keep no SD: no change test; a change alert is never compared again
    analyst = Alert(metric="net_score", value=-20.5, lower=-10.0, upper=None, alert=True,
                    source="analyst", comparison="analyst")
    assert change_alert(before, analyst) is None
    assert series_changes([change], [jump]) == ()
    assert [a.metric for a in series_changes([before], [jump])] == ["net_score"]


def _figure(value, sd):
    alert = Alert(metric="net_score", value=value, lower=value - 50, upper=value + 50, alert=False,
                  source="own", comparison="own reference", sd=sd)
    return SegmentEstimate.from_dict({"respondents": 300, "estimated_nps": {
        "value": value, "ci95": [value - 5, value + 5]}, "alerts": [alert.to_dict()]})


def test_program_view_adds_change_alerts_in_wave_order():
    from cx_app.workspace.views import WaveView

    def wave(label, figures):
        # no estimate: the change alerts read only the segments (built without validation)
        return WaveView.model_construct(label=label, date=None, filename=None, sha256=label,
                                        part="", respondents=900, model_id="lr", estimate=None,
                                        segments={"bank": figures})

    # B: −10 → +20 with SDs 4 and 5: ±3·√41 ≈ ±19.2, a rise; A: 0 → 10 with SDs 3: ±12.7, none
    waves = with_change_alerts([wave("W1", {"A": _figure(0.0, 3.0), "B": _figure(-10.0, 4.0)}),
                                wave("W2", {"A": _figure(10.0, 3.0), "B": _figure(20.0, 5.0),
                                            "C": _figure(0.0, 3.0)})])
    assert [len(f.alerts) for f in waves[0].segments["bank"].values()] == [1, 1]
    a, b, c = (waves[1].segments["bank"][k].alerts for k in "ABC")
    assert (len(a), a[1].alert, a[1].comparison) == (2, False, "previous wave")
    assert b[1].alert and b[1].lower == pytest.approx(-10 - 3 * math.sqrt(41))
    assert b[1].short() == f"net score rose since the previous wave (above {b[1].upper:+.1f})"
    assert len(c) == 1  # C was not in the previous wave
    assert b[1].to_dict()["comparison"] == "previous wave"


def test_alert_document_round_trips_the_comparison():
    alert = Alert(metric="accuracy", value=0.3, lower=0.35, upper=0.5, alert=True, source="own",
                  comparison="own reference", sd=0.02)
    doc = Alert.model_validate(alert.to_dict())
    assert doc.to_dict() == alert.to_dict() and doc.short() == alert.short()
    older = Alert.model_validate({"metric": "accuracy", "value": 0.3, "lower": 0.35,
                                  "upper": 0.5, "alert": True, "direction": "below",
                                  "source": "x"})
    assert older.short() == "accuracy below 0.350" and older.sd is None


# ------------------------------------------------------------------ planted events (slow)


def _bench():
    path = Path(__file__).resolve().parents[2] / "bench" / "bench_alerts.py"
    spec = importlib.util.spec_from_file_location("bench_alerts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_segment_alerts_are_true_on_planted_events():
    from cx_app.simulation.alert_events import score_alerts

    measured = _bench().measure(seed=7, waves=64)
    for metric in ("accuracy", "net_score"):
        m = measured[metric]
        assert (m["truth"] >= 0).sum() >= 300  # segment-waves checked
        assert (m["truth"] == 1).sum() >= 15   # enough true events to measure recall
        score = score_alerts(m["raised"], m["truth"])
        assert score.precision >= 0.9, (metric, score)
        assert score.recall >= 0.8, (metric, score)
    # before issue 36 (the whole's band) the lowest and highest segments alert in every wave
    before = score_alerts(measured["net_score"]["before"], measured["net_score"]["truth"])
    assert before.precision < 0.5


def test_segment_corrections_shrink_by_their_stability():
    from cx_app.estimate.segment_error import segment_correction, segment_stability

    # two segments, three waves: lasting effects ±3 plus a wave-to-wave part (V = 0)
    errors = np.array([[5.0, 1.0, 3.0], [-5.0, -1.0, -3.0]])
    # A = mean(d²) = (25 + 1 + 9)/3 = 11.667; B = mean(5·1, 5·3, 1·3) = 7.667: ρ = 23/35
    assert segment_stability(errors, np.zeros((2, 3))) == pytest.approx(23 / 35)
    assert segment_stability(errors[:, :1], np.zeros((2, 1))) is None  # one wave
    assert segment_stability(errors * 0, np.ones((2, 3))) is None      # nothing beyond noise
    doc = {"between_sd": 4.0, "labels": {"N": {"n": 900, "error": 8.0, "variance": 4.0}}}
    full = segment_correction({"bank": SegmentErrorsDoc.from_dict(doc)}, "bank", "N")
    shrunk = segment_correction({"bank": SegmentErrorsDoc.from_dict(
        {**doc, "stability": 0.5, "stability_waves": 4})}, "bank", "N")
    w = 16 / (16 + 4)
    assert full.correction == pytest.approx(w * 8.0)
    assert shrunk.correction == pytest.approx(0.5 * w * 8.0)
    se2 = (1 - w) ** 2 * (64 - 4) + w**2 * 4
    assert full.se == pytest.approx(math.sqrt(se2))
    assert shrunk.se == pytest.approx(math.sqrt(0.25 * se2 + 0.75 * 16))


def test_tracker_segments_use_their_own_band_and_older_files_get_a_note():
    from cx_app.estimate.tracker import track_waves
    from cx_app.estimate.training import train_model
    from cx_app.simulation.alert_events import simulate_alert_waves
    from cx_app.simulation.drift_waves import drift_schema_yaml
    from cx_app.survey.importing import load_survey
    from cx_app.survey.schema import schema_from_yaml_text

    schema = schema_from_yaml_text(drift_schema_yaml(), name="drift_waves")

    def survey(frame, name, scoring=False):
        return load_survey(frame.to_csv(index=False).encode(), schema=schema, filename=name,
                           require_target=not scoring, require_attributes=not scoring,
                           scoring=scoring)

    sim = simulate_alert_waves(900, 400, waves=2, seed=3)
    model = train_model(survey(sim.reference.frame, "ref.csv"), "nb", folds=3, seed=0).model
    waves = [survey(w.unlabeled(), f"{w.label}.csv", True) for w in sim.waves]
    tracked = track_waves(model, waves, by="bank")
    kept = model.cv.net_score_error.segments["bank"]
    for t in tracked:
        for s in t.segments:
            own = [a for a in s.alerts if a.comparison == "own reference"]
            assert [a.metric for a in own] == ["accuracy", "net_score"]
            band = segment_bands({"bank": kept}, "bank")[s.label]["net_score"]
            assert (own[1].lower, own[1].upper) == pytest.approx(band.limits(s.respondents))
    # the second wave compares each segment with the first
    assert all(any(a.comparison == "previous wave" for a in s.alerts)
               for s in tracked[1].segments)
    # an older model file: its segments keep their errors but not their levels
    old = SegmentErrorsDoc.from_dict({"between_sd": kept.between_sd, "labels": {
        k: {"n": v.n, "error": v.error, "variance": v.variance} for k, v in kept.labels.items()}})
    error = model.cv.net_score_error.model_copy(update={"segments": {"bank": old}})
    older = dataclasses.replace(model, cv=model.cv.model_copy(update={"net_score_error": error}))
    for t in track_waves(older, waves, by="bank"):
        for s in t.segments:
            assert s.alerts == () and NO_SEGMENT_BANDS in s.note
