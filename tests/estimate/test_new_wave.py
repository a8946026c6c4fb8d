"""Estimating a new wave: predictions export, ALP identities, net score and its interval,
drift warnings, realized values in backtest mode."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from cx_app.estimate.new_wave import estimate_wave, estimated_net_score
from cx_app.estimate.training import train_model
from cx_app.simulation.waves import simulate_telecom_waves
from cx_app.survey.importing import load_survey
from cx_app.survey.nps import CSAT_GROUPS, NPS_GROUPS, nps_summary
from cx_app.survey.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml")


def _survey(waves, n_per_operator, *, drift=0.0, labelled=True, seed=11):
    frame = simulate_telecom_waves(waves, respondents_per_operator=n_per_operator, seed=seed,
                                   drift=drift, include_target=labelled)
    return load_survey(frame.to_csv(index=False).encode(), schema=SCHEMA,
                       filename=f"waves{waves[0]}.csv", require_target=labelled)


@pytest.fixture(scope="module")
def model():
    return train_model(_survey([1, 2], 150), "lr", calibration="none", folds=3).model


def test_net_score_interval_by_hand():
    p = np.zeros((4, 11))
    p[0, 10] = 1.0
    p[1, [9, 3]] = 0.5
    p[2, [7, 0]] = [0.6, 0.4]
    p[3, 0] = 1.0
    # the fallback for model files without a held-out error (model_se=None): answers' spread
    # plus a fresh sample's adjusted-Wald error
    est = estimated_net_score(p, range(11), NPS_GROUPS)
    pos, neg = np.array([1, 0.5, 0, 0]), np.array([0, 0.5, 0.4, 1])
    assert est.value == pytest.approx(100 * (pos.sum() - neg.sum()) / 4)
    var_model = np.sum(pos + neg - (pos - neg) ** 2) / 16
    assert est.se_outcome == pytest.approx(100 * math.sqrt(var_model))
    assert est.se_model == 0.0
    pp, pd_ = (pos.sum() + 0.75) / 7, (neg.sum() + 0.75) / 7
    se_wald = 100 * math.sqrt((pp + pd_ - (pp - pd_) ** 2) / 7)
    assert est.se_sampling == pytest.approx(se_wald)
    assert est.se == pytest.approx(math.hypot(se_wald, est.se_outcome))
    assert est.ci95[1] - est.ci95[0] == pytest.approx(2 * 1.959964 * est.se, rel=1e-5)
    # one-hot probabilities: no model uncertainty, the interval is the observed adjusted Wald
    onehot = np.eye(11)[[10, 9, 0, 5, 8]]
    sure = estimated_net_score(onehot, range(11), NPS_GROUPS)
    observed = nps_summary([10, 9, 0, 5, 8])
    assert sure.se_outcome == 0.0
    assert sure.ci95 == pytest.approx(observed.ci95)
    csat = estimated_net_score(np.eye(5)[[4, 3, 0]], range(1, 6), CSAT_GROUPS, kind="csat")
    assert csat.value == pytest.approx(100 * (2 - 1) / 3)


def test_unlabelled_wave(model):
    wave = _survey([7], 60, labelled=False)
    est = estimate_wave(model, wave)
    n = len(wave.X)
    assert est.n == n and est.realized is None
    counts = np.asarray(est.alp.counts)
    assert counts.sum() == pytest.approx(n)
    frame = est.predictions_frame()
    np.testing.assert_allclose(counts.sum(axis=1), frame[[f"p_{c}" for c in range(11)]].sum())
    np.testing.assert_allclose(counts.sum(axis=0),
                               frame.predicted.value_counts().reindex(range(11), fill_value=0))
    assert est.estimated["accuracy"] == pytest.approx(
        frame[[f"p_{c}" for c in range(11)]].max(axis=1).mean())
    assert list(frame.respondent_id) == list(wave.frame["respondent_id"])
    assert list(frame.sheet_row) == list(wave.frame.index)
    grp = frame.group[frame.predicted >= 9]
    assert set(grp) <= {"promoters"}
    p_pos = frame[["p_9", "p_10"]].sum(axis=1).sum()
    p_neg = frame[[f"p_{c}" for c in range(7)]].sum(axis=1).sum()
    assert est.estimated_nps.value == pytest.approx(100 * (p_pos - p_neg) / n)
    d = est.to_dict()
    assert set(d["levels"]) == {"original", "3x3+IM", "2x2+IM"}
    three = est.levels[1]
    assert three.matrix.sum() + three.im.sum() == pytest.approx(n)
    assert "realized" not in d and set(d["drift"]) == set(model.attribute_names)
    # provenance: the model's identity and the common block, kept by the typed document
    doc = est.document()
    assert doc.model.attributes == list(model.attribute_names)
    assert doc.model.training_sha256 == model.training.sha256
    assert doc.provenance.inputs[wave.source.filename] == wave.source.sha256
    assert doc.provenance.seed == model.cv.seed and doc.provenance.versions["cx_app"]
    assert doc.to_dict()["provenance"] == d["provenance"]


def test_backtest_mode_and_drift_warning(model):
    wave = _survey([8], 150, drift=2.5)
    est = estimate_wave(model, wave)
    frame = est.predictions_frame()
    assert est.realized["accuracy"] == pytest.approx(np.mean(frame.predicted == wave.y))
    assert est.realized_nps.value == pytest.approx(nps_summary(wave.y).value)
    assert any("has shifted since training" in w for w in est.warnings)
    assert "realized_nps" in est.to_dict()


def test_out_of_scale_rows_are_named_in_the_warnings(model):
    frame = simulate_telecom_waves([7], respondents_per_operator=60, seed=11,
                                   include_target=False)
    frame.loc[frame.index[:4], "Shops"] = 12
    wave = load_survey(frame.to_csv(index=False).encode(), schema=SCHEMA, filename="oos.csv",
                       require_target=False)
    est = estimate_wave(model, wave)
    assert est.n == len(frame) - 4
    text = " ".join(est.warnings)
    assert "4 row(s) of the file were excluded" in text and "columns: Shops" in text
    assert "out-of-scale" in text


def test_training_median_from_value_counts():
    from cx_app.estimate.new_wave import training_median

    for values in ([3, 1, 2], [4, 1, 2, 3], [7, 7, 7, 1], [10] * 5 + [2] * 5, [5]):
        counts = {str(float(v)): values.count(v) for v in set(values)}
        assert training_median(counts) == np.median(values), values


def test_wave_without_an_attribute_column_is_scored_with_a_warning(model):
    """A wave that lacks an attribute is read (require_attributes=False), that attribute gets
    the training median for everyone, drift reports it missing and a warning says so."""
    frame = simulate_telecom_waves([7], respondents_per_operator=60, seed=11)
    full = load_survey(frame.to_csv(index=False).encode(), schema=SCHEMA, filename="w.csv")
    without = frame.drop(columns=["Billing"])
    with pytest.raises(Exception, match="Billing"):
        load_survey(without.to_csv(index=False).encode(), schema=SCHEMA, filename="w.csv")
    wave = load_survey(without.to_csv(index=False).encode(), schema=SCHEMA, filename="w.csv",
                       require_attributes=False)
    assert wave.absent_attributes == ("billing",)
    assert wave.quality.rows_used == full.quality.rows_used  # no row lost for the gap
    assert wave.X["billing"].isna().all()
    est = estimate_wave(model, wave)
    train_billing = [float(v) for v, c in model.attribute_distributions["billing"].items()
                     for _ in range(c)]
    median = float(np.median(train_billing))
    filled = full.X.copy()
    filled["billing"] = median
    np.testing.assert_allclose(
        est.predictions_frame()[[f"p_{c}" for c in range(11)]].to_numpy(),
        model.predict_proba(filled[list(model.attribute_names)]))
    assert any("'Billing' is not in this wave" in w and f"{median:g}" in w for w in est.warnings)
    # named once, by its label (not again by the drift check), and listed as absent in the drift table
    assert sum("billing" in w.lower() for w in est.warnings) == 1
    assert est.to_dict()["drift"]["billing"]["present"] is False


def test_metric_comparison_rows_hold_the_estimated_and_realized_values(model):
    from sklearn.metrics import accuracy_score, recall_score

    from cx_app.engine.catalogue import WAVE_SUMMARY
    from cx_app.estimate.document import WaveEstimateDocument

    wave = _survey([8], 150)
    est = estimate_wave(model, wave)
    rows = {(r.level, r.metric): r for r in est.metric_comparison()}
    # every level, the catalogue's wave metrics that the level has, in the catalogue's order
    for level in est.levels:
        keys = [r.metric for r in est.metric_comparison() if r.level == level.name]
        assert keys == [k for k in WAVE_SUMMARY if k in level.metrics]
    assert rows[("2x2+IM", "tpr")].estimated == est.levels[2].metrics["tpr"]
    # the realized values are the plain metrics of the labelled wave (sklearn as the oracle)
    predicted = est.predictions_frame().predicted.astype(int).to_numpy()
    actual = np.asarray(wave.y, dtype=int)
    assert rows[("original", "accuracy")].realized == pytest.approx(
        accuracy_score(actual, predicted))
    assert rows[("original", "recall_macro")].realized == pytest.approx(
        recall_score(actual, predicted, average="macro", labels=range(11), zero_division=0))
    assert rows[("2x2+IM", "tpr")].realized == est.realized_levels[2].metrics["tpr"]
    # the interval is the metric's own (MetricIntervals), written flat after the estimate
    accuracy = rows[("original", "accuracy")]
    assert accuracy.interval.ci95 == est.metric_intervals.levels["original"]["accuracy"].ci95
    assert list(accuracy.to_dict()) == ["level", "metric", "estimated", "ci_low", "ci_high",
                                        "realized"]
    document = json.loads(json.dumps(est.to_dict()))  # as `cx-app estimate --json` writes it
    assert WaveEstimateDocument.from_dict(document).to_dict() == document
    unlabelled = estimate_wave(model, _survey([7], 60, labelled=False))
    assert all("realized" not in r.to_dict() for r in unlabelled.metric_comparison())


def test_wave_gaps_are_filled_with_the_training_median_and_no_respondent_is_lost(model):
    """A wave whose answered 'billing' scores are all high (its own median 10) and a third of
    them blank: every respondent is estimated, the blanks get the *training* median, and the
    training distributions that drift compares with hold answered values only."""
    from cx_app.estimate.new_wave import training_median

    frame = simulate_telecom_waves([7], respondents_per_operator=60, seed=5, include_target=False)
    column = SCHEMA.attributes[[a.name for a in SCHEMA.attributes].index("billing")].column
    frame[column] = 10
    frame.loc[frame.index[: len(frame) // 3], column] = None
    data = frame.to_csv(index=False).encode()
    wave = load_survey(data, schema=SCHEMA, filename="w.csv", require_target=False,
                       require_attributes=False, scoring=True)
    assert len(wave.X) == len(frame) and wave.X["billing"].isna().sum() == len(frame) // 3
    est = estimate_wave(model, wave)
    assert est.n == len(frame)
    training = training_median(model.attribute_distributions["billing"])
    assert training < 10
    # the model's gap step holds the training medians, and the wave's billing gaps get it
    gaps_step = model.estimator.named_steps["gaps"]
    np.testing.assert_array_equal(
        gaps_step.statistics_,
        [training_median(model.attribute_distributions[a]) for a in model.attribute_names])
    filled = gaps_step.transform(wave.X[list(model.attribute_names)])
    billing = list(model.attribute_names).index("billing")
    gap_rows = wave.X["billing"].isna().to_numpy()
    assert (filled[gap_rows, billing] == training).all()
    shown = est.predictions_frame()[[f"p_{c}" for c in range(11)]].to_numpy()
    np.testing.assert_allclose(shown, model.predict_proba(wave.X[list(model.attribute_names)]))
    own = wave.X.copy()
    own["billing"] = own["billing"].fillna(10.0)  # the wave's own median: another estimate
    assert not np.allclose(shown, model.predict_proba(own[list(model.attribute_names)]))
    assert any("filled with the training data's median" in w and f"Billing {len(frame) // 3}"
               in w for w in est.warnings)
    # the training distributions hold answered values only: no spike of imputed medians
    train = _survey([1, 2], 150)
    answered = int(train.X["roaming"].notna().sum())
    assert 0 < answered < len(train.X) and train.quality.gaps["roaming"] == len(train.X) - answered
    assert sum(model.attribute_distributions["roaming"].values()) == answered
    assert model.attribute_gaps["roaming"] == len(train.X) - answered
