"""estimate_from_probabilities: any model's probabilities, the estimate JSON's keys, chunks,
calibration chosen on the reference, alerts; the ALP = CBPE identity by an independent formula."""

from __future__ import annotations

import numpy as np
import pytest

from cx_app.errors import AnalysisError
from cx_app.estimate import estimate_from_probabilities
from cx_app.estimate.alerts import AlertThresholds, ReferenceBand, check_alert, parse_limits


def _softmax(z):
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def _draw(rng, p):
    return (rng.random(len(p))[:, None] > p.cumsum(axis=1)).sum(axis=1).clip(max=p.shape[1] - 1)


@pytest.fixture(scope="module")
def reference():
    rng = np.random.default_rng(0)
    p = _softmax(rng.normal(size=(800, 3)) * 1.5)
    return p, _draw(rng, p)


def test_accuracy_is_exactly_the_mean_top_probability(reference):
    """Calibrated probabilities, no calibration: accuracy = mean max probability (eq. 35).
    Dyadic probabilities (multiples of 1/16) make every sum exact, so the two routes (the
    ALP matrix's trace / N, the plain mean) agree to the last bit."""
    ref, y = reference
    rng = np.random.default_rng(1)
    rows = np.array([[8, 4, 4], [2, 12, 2], [1, 3, 12], [10, 5, 1], [6, 6, 4]]) / 16
    new = rows[rng.integers(0, 5, size=512)]
    est = estimate_from_probabilities(ref, y, new, classes=[0, 1, 2], calibration="none")
    assert est.overall.estimated["accuracy"] == new.max(axis=1).mean()
    np.testing.assert_array_equal(est.calibrated_proba, new)  # "none" leaves them alone
    random_rows = _softmax(rng.normal(size=(300, 3)))
    est = estimate_from_probabilities(ref, y, random_rows, classes=[0, 1, 2],
                                      calibration="none")
    assert est.overall.estimated["accuracy"] == pytest.approx(random_rows.max(axis=1).mean(),
                                                              abs=1e-15)


def test_cbpe_formulas_by_hand_on_a_small_matrix(reference):
    """The identity with CBPE without NannyML: CBPE's one-vs-rest estimates per class k,
    TP = Σ_{ŷ=k} p_k, FP = Σ_{ŷ=k} (1 − p_k), FN = Σ_{ŷ≠k} p_k, F1_k = 2TP/(2TP + FP + FN),
    accuracy = mean p of the predicted class, written out by hand for three rows."""
    ref, y = reference
    new = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    ref2 = np.column_stack([ref[:, 0], ref[:, 1:].sum(axis=1)])
    est = estimate_from_probabilities(ref2, np.minimum(y, 1), new, classes=[0, 1],
                                      calibration="none")
    # class 0 predicted for rows 1 and 3: TP0 = 0.8 + 0.6, FP0 = 0.2 + 0.4, FN0 = 0.3
    tp0, fp0, fn0 = 1.4, 0.6, 0.3
    # class 1 predicted for row 2: TP1 = 0.7, FP1 = 0.3, FN1 = 0.2 + 0.4
    tp1, fp1, fn1 = 0.7, 0.3, 0.6
    f1 = (2 * tp0 / (2 * tp0 + fp0 + fn0) + 2 * tp1 / (2 * tp1 + fp1 + fn1)) / 2
    precision = (tp0 / (tp0 + fp0) + tp1 / (tp1 + fp1)) / 2
    recall = (tp0 / (tp0 + fn0) + tp1 / (tp1 + fn1)) / 2
    got = est.overall.estimated
    assert got["accuracy"] == pytest.approx((0.8 + 0.7 + 0.6) / 3, abs=1e-15)
    assert got["f1_macro"] == pytest.approx(f1, abs=1e-15)
    assert got["precision_macro"] == pytest.approx(precision, abs=1e-15)
    assert got["recall_macro"] == pytest.approx(recall, abs=1e-15)


def test_to_dict_has_the_estimate_keys_and_chunks_add_up(reference):
    ref, y = reference
    rng = np.random.default_rng(2)
    new = _softmax(rng.normal(size=(250, 3)))
    est = estimate_from_probabilities(ref, y, new, classes=[0, 1, 2],
                                      calibration="none", chunks=100)
    doc = est.to_dict()
    for key in ("estimated", "estimated_ci95", "estimated_class_counts",
                "estimated_class_shares", "estimated_nps", "alerts", "chunks", "calibration"):
        assert key in doc
    assert set(doc["estimated_ci95"]) == set(doc["estimated"])
    assert [c["n"] for c in doc["chunks"]] == [100, 100, 50]  # the last chunk: the remainder
    for c, rows in zip(doc["chunks"], (slice(0, 100), slice(100, 200), slice(200, 250)),
                       strict=True):
        assert c["estimated"]["accuracy"] == pytest.approx(new[rows].max(axis=1).mean())
        lo, hi = c["estimated_ci95"]["accuracy"]
        assert lo < c["estimated"]["accuracy"] < hi
        # net score of 0..2: top box (2) minus bottom box (0), in points
        assert c["estimated_nps"]["value"] == pytest.approx(
            100 * (new[rows, 2].mean() - new[rows, 0].mean()))
    total = sum(np.array(list(c["estimated_class_counts"].values())) for c in doc["chunks"])
    np.testing.assert_allclose(total, new.sum(axis=0))
    assert doc["estimated_class_shares"]["1"] == pytest.approx(new[:, 1].mean())
    # chunk labels instead of a size: chunks in order of first appearance
    labels = np.where(np.arange(250) % 2 == 0, "even", "odd")
    by_label = estimate_from_probabilities(ref, y, new, classes=[0, 1, 2], calibration="none",
                                           chunks=labels)
    assert [c.chunk for c in by_label.chunks] == ["even", "odd"]
    assert by_label.chunks[1].estimated["accuracy"] == pytest.approx(
        new[1::2].max(axis=1).mean())


def test_auto_calibration_repairs_overconfident_probabilities():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(3000, 4))
    truth = _softmax(z)
    y = _draw(rng, truth)
    given = _softmax(3 * z)  # over-confident: the arg-max is right, the confidence is not
    ref, new, y_ref, y_new = given[:2000], given[2000:], y[:2000], y[2000:]
    raw = estimate_from_probabilities(ref, y_ref, new, classes=[0, 1, 2, 3], calibration="none")
    auto = estimate_from_probabilities(ref, y_ref, new, classes=[0, 1, 2, 3])
    realized = np.mean(new.argmax(axis=1) == y_new)
    assert auto.calibration.chosen in ("temperature", "isotonic")
    assert {r.method for r in auto.calibration.reports} == {"none", "temperature", "isotonic"}
    assert raw.overall.estimated["accuracy"] - realized > 0.1
    assert abs(auto.overall.estimated["accuracy"] - realized) < 0.03
    lo, hi = auto.overall.intervals.ci95()["accuracy"]
    assert lo <= realized <= hi
    # the held-out error of the raw probabilities widens their interval
    assert raw.overall.intervals.levels["original"]["accuracy"].se_model > 0.1


def test_bad_input_is_refused_with_one_sentence(reference):
    ref, y = reference
    with pytest.raises(AnalysisError, match="one column per class"):
        estimate_from_probabilities(ref, y, ref[:, :2], classes=[0, 1, 2])
    with pytest.raises(AnalysisError, match="reference label 7"):
        estimate_from_probabilities(ref, np.r_[y[:-1], 7], ref, classes=[0, 1, 2])
    with pytest.raises(AnalysisError, match="chunk labels"):
        estimate_from_probabilities(ref, y, ref, classes=[0, 1, 2], chunks=["a", "b"])
    with pytest.raises(AnalysisError, match="unknown calibration"):
        estimate_from_probabilities(ref, y, ref, classes=[0, 1, 2], calibration="platt")


def test_default_alerts_flag_a_drop_and_analyst_limits_replace_the_band(reference):
    ref, y = reference
    rng = np.random.default_rng(4)
    stable = ref[rng.integers(0, len(ref), size=400)]
    flat = _softmax(rng.normal(size=(400, 3)) * 0.3)  # far less confident: accuracy drops
    est = estimate_from_probabilities(ref, y, np.vstack([stable, flat]), classes=[0, 1, 2],
                                      calibration="none", chunks=400)
    first, second = ({a.metric: a for a in c.alerts} for c in est.chunks)
    assert not first["accuracy"].alert
    assert second["accuracy"].alert and second["accuracy"].direction == "below"
    # the band is the reference chunks' realized accuracy ± 3 SD (chunks of 400, as CBPE)
    correct = (ref.argmax(axis=1) == y).astype(float)
    chunks = [correct[:400].mean(), correct[400:800].mean()]
    band = est.bands["accuracy"]
    assert band.mean == pytest.approx(np.mean(chunks))
    lo, hi = first["accuracy"].lower, first["accuracy"].upper
    assert (lo + hi) / 2 == pytest.approx(np.mean(chunks))
    assert (hi - lo) / 6 >= np.std(chunks) - 1e-12
    fixed = estimate_from_probabilities(ref, y, stable, classes=[0, 1, 2], calibration="none",
                                        thresholds=AlertThresholds(accuracy=(0.99, None)))
    acc = fixed.overall.alerts[0]
    assert (acc.metric, acc.alert, acc.lower, acc.upper, acc.source) == (
        "accuracy", True, 0.99, None, "analyst")
    assert acc.sentence().startswith("ALERT: estimated accuracy")


def test_reference_band_scales_with_size_and_limits_parse():
    band = ReferenceBand.from_chunks("accuracy", [0.6, 0.7], [100, 100])
    assert band.mean == pytest.approx(0.65) and band.unit_sd == pytest.approx(0.05 * 10)
    assert band.limits(100) == pytest.approx((0.5, 0.8))
    assert band.limits(400) == pytest.approx((0.575, 0.725))  # four times the size: half the SD
    assert band.limits(1) == (0.0, 1.0)  # within the metric's range
    floor = ReferenceBand.from_chunks("net_score", [10, 10], [50, 50], unit_sd_floor=80)
    assert floor.limits(100) == pytest.approx((-14.0, 34.0))
    alert = check_alert("net_score", 40.0, 100, floor)
    assert alert.alert and alert.direction == "above" and alert.short() == "net score above +34.0"
    assert check_alert("accuracy", 0.5, 10, None) is None
    assert parse_limits("0.6,0.9", "x") == (0.6, 0.9)
    for bad in ("a", "1,2,3", "0.9,0.6", ","):
        with pytest.raises(AnalysisError):
            parse_limits(bad, "--alert-accuracy")
