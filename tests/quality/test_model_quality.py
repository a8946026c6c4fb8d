"""Model quality (issue 25, points 1 and 2): every algorithm × four surveys with gaps, each read
with defaults as a new user would, cross-validated by our code and by an independent reference
(``quality_reference``: the same estimator family from scikit-learn / statsmodels / Keras
alone, every gap filled by the training fold's median, on our folds).

Rules, per algorithm and survey:

- **Gap handling never hurts.** Out-of-fold accuracy under the default policy
  (``impute_indicator``: each algorithm's own gap features) ≥ its accuracy under
  ``impute_median`` on the same folds − 0.01, and ≥ the majority-class rate (the issue's rule).
- **No quiet breakage.** Default accuracy and macro-F1 ≥ the reference's − tolerance, where the
  tolerance is max(0.01, 2 × the reference's across-fold standard error, SD of its 5 per-fold
  values / √5; :func:`quality_reference.reference_tolerance`). Justification: the per-fold
  values move with the respondents a fold happens to hold; on these surveys the reference's
  standard error is 0.004–0.018 for accuracy and 0.002–0.024 for macro-F1, so a default more
  than two errors below the reference is worse beyond what another draw of the folds explains
  (5 % level), while a model that stopped learning (naive Bayes reading the "was missing"
  columns as Gaussian features: 0.08–0.15 accuracy against 0.31–0.37) falls 10–20 errors below.

Cost: each (algorithm, survey) is cross-validated once per module (``_row``, cached) and shared
by the two tests; svm and ordinal on at most 1,200 respondents per survey
(``HEAVY_ROWS``); the reference's Keras network is compiled once per shape. About 2.5 minutes
on 2 busy cores.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from quality_reference import (
    SURVEYS,
    QualityRow,
    QualitySurvey,
    load_quality_survey,
    quality_row,
    reference_tolerance,
)

from cx_app.models.algorithms import ALGORITHMS
from cx_app.models.crossval import cross_validate_model
from cx_app.survey.importing import load_survey
from cx_app.survey.samples import sample_path

pytestmark = pytest.mark.slow  # the model-quality suite trains every algorithm on three surveys (~80 s)

SLOW = ("svm", "cnn")
"""The two that take most of the module's time (about 65 of 100 s): run by ``make test-slow``
(and CI), not by ``make test``."""
CASES = [pytest.param(a, s, id=f"{a}-{s}", marks=[pytest.mark.slow] if a in SLOW else [])
         for a in ALGORITHMS for s in SURVEYS]


@functools.cache
def _survey(name: str) -> QualitySurvey:
    return load_quality_survey(name)


@functools.cache
def _row(algorithm_id: str, survey: str) -> QualityRow:
    return quality_row(algorithm_id, _survey(survey))


def _show(row: QualityRow) -> str:
    return (f"{row.algorithm_id} on {row.survey}: default acc {row.accuracy:.4f} F1 "
            f"{row.macro_f1:.4f}; impute_median acc {row.median_accuracy:.4f}; reference acc "
            f"{row.reference.accuracy:.4f}±{row.reference.accuracy_se:.4f} F1 "
            f"{row.reference.macro_f1:.4f}±{row.reference.macro_f1_se:.4f}; majority "
            f"{row.majority_rate:.4f}")


@pytest.mark.parametrize(("algorithm_id", "survey"), CASES)
def test_gap_handling_never_hurts(algorithm_id, survey):
    row = _row(algorithm_id, survey)
    assert row.accuracy >= row.median_accuracy - 0.01, _show(row)
    assert row.accuracy >= row.majority_rate, _show(row)


@pytest.mark.parametrize(("algorithm_id", "survey"), CASES)
def test_default_is_as_good_as_the_plain_library_reference(algorithm_id, survey):
    row = _row(algorithm_id, survey)
    assert row.accuracy >= row.reference.accuracy - reference_tolerance(
        row.reference.accuracy_se), _show(row)
    assert row.macro_f1 >= row.reference.macro_f1 - reference_tolerance(
        row.reference.macro_f1_se), _show(row)


def test_every_quality_survey_has_gaps_and_the_default_policy():
    for name in SURVEYS:
        survey = _survey(name)
        share = float(survey.X.isna().to_numpy().mean())
        assert 0.03 < share < 0.6, (name, share)
        assert survey.missing_policy == "impute_indicator"
        assert len(survey.classes) >= 5


def test_naive_bayes_on_the_bundled_sample_with_defaults():
    """The issue's acceptance: 10 folds on all 7,506 respondents of the sample, defaults
    (0.077 before the fix; 0.362 with median imputation in ``bench/RESULTS.md``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        survey = load_survey(sample_path("telecom_nps"))
        cv = cross_validate_model(survey.X, survey.y, survey.classes, "nb", folds=10, seed=0,
                                  missing_policy=survey.schema.missing_attributes,
                                  sample_weight=survey.model_weights)
    assert survey.X.isna().to_numpy().any() and cv.missing_policy == "impute_indicator"
    accuracy = float(np.mean(cv.y_pred == cv.y_true))
    assert accuracy >= 0.35, accuracy
