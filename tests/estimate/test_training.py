"""train_model re-using a cross-validation already done: one fit, the same final model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cx_app.errors import AnalysisError
from cx_app.estimate import training
from cx_app.estimate.model_file import load_model, save_model
from cx_app.estimate.training import train_model
from cx_app.models.crossval import cross_validate_model
from cx_app.simulation.waves import simulate_telecom_waves
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import load_schema

ROOT = Path(__file__).resolve().parents[2]


def _survey(n_per_operator=70, seed=5):
    frame = simulate_telecom_waves([1], respondents_per_operator=n_per_operator, seed=seed)
    schema = load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml")
    return load_survey(frame.to_csv(index=False).encode(), schema=schema, filename="w1.csv")


def _count_builds(monkeypatch) -> list:
    """Each pipeline built by train_model is fitted once: count the builds (and forbid any
    cross-validation)."""
    built = []
    real = training.build_model

    def counting(*args, **kwargs):
        built.append(kwargs.get("calibration"))
        return real(*args, **kwargs)

    def no_cv(*args, **kwargs):
        raise AssertionError("cross-validation re-run")

    monkeypatch.setattr(training, "build_model", counting)
    monkeypatch.setattr(training, "compare_calibrations", no_cv)
    return built


def test_a_given_cross_validation_is_reused_and_only_the_final_model_is_fitted(
        tmp_path, monkeypatch):
    survey = _survey()
    reference = train_model(survey, "lr", calibration="sigmoid", folds=3, seed=2)
    cv = cross_validate_model(survey.X, survey.y, survey.classes, "lr", folds=3, seed=2,
                              calibration="sigmoid")
    built = _count_builds(monkeypatch)
    outcome = train_model(survey, "lr", cross_validation=cv)
    assert built == ["sigmoid"]  # one pipeline, one fit: the final model
    assert outcome.cv is cv and outcome.model.calibration == "sigmoid"
    assert outcome.choice.chosen == "sigmoid"
    assert [r.method for r in outcome.choice.reports] == ["sigmoid"]
    back = load_model(save_model(outcome.model, tmp_path / "m.skops"))
    np.testing.assert_array_equal(back.predict_proba(survey.X),
                                  reference.model.predict_proba(survey.X))
    # the held-out figures are those of the same cross-validation (same folds and seed)
    meta, ref = outcome.model.cv, reference.model.cv
    for key in ("levels", "alp_gap", "full_training_check", "folds", "seed", "n"):
        assert getattr(meta, key) == getattr(ref, key), key
    assert meta.alp_vs_cm["heldout"] == ref.alp_vs_cm["heldout"]
    # this lean cross-validation kept no training-fold probabilities: that side is absent
    assert "training" not in meta.alp_vs_cm and "training" in ref.alp_vs_cm


def test_a_cross_validation_of_another_model_is_refused():
    survey = _survey()
    cv = cross_validate_model(survey.X, survey.y, survey.classes, "lr", folds=3)
    with pytest.raises(AnalysisError, match=r"cannot be re-used .* it is of algorithm 'lr', "
                                            r"not 'nb'"):
        train_model(survey, "nb", cross_validation=cv)
    with pytest.raises(AnalysisError, match=r"its calibration is 'none', not 'sigmoid'"):
        train_model(survey, "lr", calibration="sigmoid", cross_validation=cv)
    other = _survey(seed=6)
    with pytest.raises(AnalysisError, match=r"respondents are not this survey's"):
        train_model(other, "lr", cross_validation=cv)
