"""ALP = CBPE: fed NannyML CBPE's calibrated probabilities and its predictions, our ALP accuracy
and macro F1 equal CBPE's estimates chunk by chunk. Runs only where nannyml is installed (the
``bench`` extra); skipped, not failed, elsewhere. The same identity is tested without nannyml,
against CBPE's formulas written out by hand, in ``test_from_probabilities.py``."""

from __future__ import annotations

import pytest

from cx_app.engine.confusion import multiclass_metrics
from cx_app.estimate.alp import alp_confusion_matrix


@pytest.fixture(scope="module")
def nannyml(monkeypatch_module):
    monkeypatch_module.setenv("NML_DISABLE_USAGE_LOGGING", "1")  # no usage events sent
    return pytest.importorskip("nannyml")


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_alp_accuracy_and_macro_f1_equal_cbpe_on_its_own_data(nannyml):
    from nannyml.datasets import load_synthetic_multiclass_classification_dataset
    from nannyml.performance_estimation.confidence_based.cbpe import (
        _calibrate_predicted_probabilities,
    )

    classes = ("prepaid_card", "highstreet_card", "upmarket_card")
    columns = {c: f"y_pred_proba_{c}" for c in classes}
    reference, analysis, _ = load_synthetic_multiclass_classification_dataset()
    reference, analysis = reference.iloc[:20000], analysis.iloc[:20000]
    cbpe = nannyml.CBPE(y_pred_proba=columns, y_pred="y_pred", y_true="y_true",
                        problem_type="classification_multiclass", metrics=["accuracy", "f1"],
                        chunk_size=5000)
    cbpe.fit(reference)
    frame = cbpe.estimate(analysis).to_df()
    frame = frame[frame[("chunk", "period")] == "analysis"]  # the reference's chunks come too
    calibrated = _calibrate_predicted_probabilities(analysis.copy(), "y_true", columns,
                                                    cbpe._calibrators)
    proba = calibrated[list(columns.values())].to_numpy()
    pred = analysis["y_pred"].to_numpy()
    assert len(frame) == 4
    for i in range(4):
        rows = slice(i * 5000, (i + 1) * 5000)
        cm = alp_confusion_matrix(proba[rows], classes, pred[rows])
        ours = multiclass_metrics(cm)  # the engine's metrics of the ALP matrix
        assert ours.accuracy == pytest.approx(frame[("accuracy", "value")].iloc[i], abs=1e-12)
        assert ours.to_dict()["f1_macro"] == pytest.approx(frame[("f1", "value")].iloc[i],
                                                           abs=1e-12)
