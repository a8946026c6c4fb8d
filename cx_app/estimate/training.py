"""Training a driver model for new waves: cross-validate, choose the calibration, fit on all.

:func:`train_model` chooses the calibration with the smallest held-out ALP gap
(:mod:`cx_app.estimate.calibration`), fits the chosen pipeline on all respondents and packages
it as a :class:`~cx_app.estimate.model_file.TrainedModel` whose ``cv`` carries the held-out
figures; given a cross-validation already done, it fits only the final model.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from cx_app.engine.catalogue import MACRO_SUMMARY
from cx_app.errors import AnalysisError
from cx_app.estimate.calibration import (
    CALIBRATION_METHODS,
    CalibrationChoice,
    calibration_report,
    choose_calibration,
    compare_calibrations,
)
from cx_app.estimate.model_file import TrainedModel
from cx_app.estimate.model_metadata import HeldOutFigures, TrainingData
from cx_app.json_values import plain_document
from cx_app.models.crossval import CrossValResult, build_model, class_positions
from cx_app.models.weighting import fit_weighted
from cx_app.survey.data import SurveyData

if TYPE_CHECKING:
    from cx_app.engine.grouping import ResolvedPlan
    from cx_app.survey.nps import NetScoreGroups

__all__ = ["TrainingOutcome", "train_model"]


@dataclass(frozen=True, eq=False)
class TrainingOutcome:
    """A trained model plus how its calibration was chosen and its held-out predictions."""

    model: TrainedModel
    choice: CalibrationChoice
    cv_results: Mapping[str, CrossValResult]  # method -> its cross-validation

    @property
    def cv(self) -> CrossValResult:
        """The cross-validation of the chosen calibration."""
        return self.cv_results[self.model.calibration]


def _cv_summary(cv: CrossValResult, resolved_plan: ResolvedPlan, choice: CalibrationChoice,
                groups: NetScoreGroups | None, segments: Mapping[str, Any] | None = None,
                wave: str | None = None) -> dict:
    from cx_app.engine.confusion import confusion_matrix
    from cx_app.estimate.alp import alp_gap, compare_alp_cm, level_metrics
    from cx_app.estimate.model_choice import calibration_error_replicates
    from cx_app.estimate.new_wave import heldout_net_score_error
    from cx_app.estimate.segment_error import heldout_segment_errors

    regular = confusion_matrix(list(cv.y_true), list(cv.y_pred), labels=cv.classes)
    levels = level_metrics(regular, resolved_plan)
    gap = alp_gap(cv.y_true, cv.proba, cv.classes, groups=groups)
    sides = {"heldout": compare_alp_cm(cv.y_true, cv.proba, cv.classes,
                                       resolved_plan=resolved_plan)}
    if cv.train_predictions:
        # every fold model on its own training rows, pooled (each row counted folds − 1 times)
        y_train = np.concatenate([cv.y_true[tp.index] for tp in cv.train_predictions])
        p_train = np.vstack([tp.proba for tp in cv.train_predictions])
        sides["training"] = compare_alp_cm(y_train, p_train, cv.classes,
                                           resolved_plan=resolved_plan)
    return {
        "folds": cv.folds,
        "seed": cv.seed,
        "n": cv.n,
        "levels": {name: {k: m[k] for k in MACRO_SUMMARY if k in m}
                   for name, m in levels.items()},
        "alp_gap": gap.to_dict(),
        "alp_vs_cm": sides,
        "calibration_choice": choice.to_dict(),
        "warnings": list(cv.warnings),
        **({"net_score_error": heldout_net_score_error(
            cv.y_true, cv.proba, cv.fold, cv.classes, groups).model_copy(update={
                "segments": heldout_segment_errors(cv.y_true, cv.proba, cv.classes, groups,
                                                   segments or {}, wave),
                "calibration_error_replicates": calibration_error_replicates(
                    cv.class_positions(), cv.proba, cv.classes, groups).tolist()}).to_dict()}
           if groups is not None else {}),
    }


def _segment_labels(survey: SurveyData) -> dict[str, list[str]]:
    """Each segment column's label per model-base respondent (as the tracker labels them)."""
    from cx_app.survey.nps import segment_frames

    frame = survey.model_frame
    out = {}
    for seg in survey.schema.segments:
        if seg.name not in frame.columns:
            continue
        labels = np.empty(len(frame), dtype=object)
        for label, part in segment_frames(frame, seg.name):
            labels[frame.index.get_indexer(part.index)] = label
        out[seg.name] = labels.tolist()
    return out


def _check_reusable(cv: CrossValResult, survey: SurveyData, algorithm_id: str, classes: tuple,
                    settings: Mapping[str, Any], calibration: str, preset: str) -> None:
    """Refuse a cross-validation that is not of this algorithm, settings, classes and
    respondents (its held-out figures would then describe another model)."""
    problems = []
    if cv.algorithm_id != algorithm_id:
        problems.append(f"it is of algorithm '{cv.algorithm_id}', not '{algorithm_id}'")
    if cv.preset != preset:
        problems.append(f"its preset is '{cv.preset}', not '{preset}'")
    if dict(cv.settings) != dict(settings):
        problems.append(f"its settings {dict(cv.settings)} differ from {dict(settings)}")
    if tuple(cv.classes) != classes:
        problems.append(f"its classes {list(cv.classes)} differ from {list(classes)}")
    y = np.asarray(survey.y)
    if cv.n != len(y) or not np.array_equal(np.asarray(cv.y_true), y):
        problems.append(f"its {cv.n} respondents are not this survey's {len(y)}")
    elif cv.feature_names and tuple(cv.feature_names) != tuple(survey.attribute_names):
        problems.append("its attributes differ from this survey's")
    if cv.missing_policy != survey.schema.missing_attributes:
        problems.append(f"it filled gaps by '{cv.missing_policy}', not by the survey's "
                        f"'{survey.schema.missing_attributes}'")
    if calibration != "auto" and calibration != cv.calibration:
        problems.append(f"its calibration is '{cv.calibration}', not '{calibration}'")
    if problems:
        raise AnalysisError(
            "the given cross-validation cannot be re-used for the final model: "
            + "; ".join(problems) + ". Cross-validate this model again, or train without it.")


def train_model(
    survey: SurveyData,
    algorithm_id: str,
    *,
    calibration: str = "auto",
    folds: int = 5,
    seed: int = 0,
    settings: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
    progress: Callable[[int, int, str], None] | None = None,
    learning_curve: bool = False,
    cross_validation: CrossValResult | None = None,
    preset: str | None = None,
) -> TrainingOutcome:
    """Cross-validate ``algorithm_id`` on a labelled survey (every calibration method when
    ``calibration="auto"``), fit the chosen pipeline on all respondents and package it as a
    :class:`TrainedModel` (``learning_curve=True``: ten more fits).

    ``preset`` None: the algorithm's default, or that of ``cross_validation``.
    ``cross_validation``: one already done of this algorithm, settings, classes and
    respondents (else :class:`AnalysisError`): its calibration, folds and seed are kept (a
    ``calibration`` other than ``"auto"`` must equal it) and only the final model is fitted;
    ``alp_vs_cm``'s training-folds side is then absent unless it kept ``keep_train_proba``.
    """
    from cx_app.engine.grouping import resolve_plan
    from cx_app.errors import PlanError
    from cx_app.estimate.alp import alp_learning_curve, full_training_alp_check
    from cx_app.estimate.drift import value_counts_by_attribute
    from cx_app.models.algorithms import get_algorithm, resolve_preset
    from cx_app.survey.nps import groups_for_schema

    if survey.y is None:
        raise AnalysisError(
            f"{survey.source.filename}: training needs the target column "
            f"'{survey.schema.target.column}', which this file does not have"
        )
    classes = tuple(survey.classes)
    try:
        groups = groups_for_schema(survey.schema)
    except PlanError:
        groups = None  # no net-score groups: the gap has no NPS term
    if preset is None and cross_validation is not None:
        preset = cross_validation.preset
    preset = resolve_preset(algorithm_id, preset)
    spec = get_algorithm(algorithm_id, preset)
    policy = survey.schema.missing_attributes
    if cross_validation is None:
        methods = CALIBRATION_METHODS if calibration == "auto" else (calibration,)
        choice, results = compare_calibrations(
            survey.X, survey.y, classes, algorithm_id, methods=methods, folds=folds, seed=seed,
            settings=settings, n_jobs=n_jobs, progress=progress, groups=groups,
            keep_train_proba=True, missing_policy=policy, sample_weight=survey.model_weights,
            preset=preset)
    else:
        cv = cross_validation
        _check_reusable(cv, survey, algorithm_id, classes, spec.settings(settings), calibration,
                        preset)
        report = calibration_report(cv.calibration, cv.y_true, cv.proba, classes, groups=groups)
        choice = choose_calibration([report], algorithm_name=spec.name,
                                    algorithm_id=algorithm_id)
        results = {cv.calibration: cv}
        seed = cv.seed
    chosen = choice.chosen
    def unfitted() -> Any:
        return build_model(algorithm_id, settings, seed=seed, calibration=chosen,
                           missing_policy=policy, preset=preset)

    estimator = unfitted()
    codes = class_positions(survey.y, classes)
    Xa = np.asarray(survey.X, dtype=float)
    fit_weighted(estimator, Xa, codes, survey.model_weights)
    resolved = resolve_plan(survey.schema.plan_spec, classes)
    cv = results[chosen]
    summary = _cv_summary(cv, resolved, choice, groups, _segment_labels(survey),
                          next((s.name for s in survey.schema.segments if s.role == "wave"),
                               None))
    positions = tuple(range(len(classes)))
    summary["full_training_check"] = full_training_alp_check(
        Xa, codes, positions, estimator, heldout_y_true=cv.class_positions(),
        heldout_proba=cv.proba).to_dict()
    if learning_curve:
        summary["learning_curve"] = alp_learning_curve(
            Xa, codes, positions, unfitted(), seed=seed).to_dict(orient="records")
    model = TrainedModel(
        estimator=estimator,
        classes=classes,
        attribute_names=tuple(survey.attribute_names),
        schema_yaml=survey.schema.to_yaml(),
        algorithm_id=algorithm_id,
        settings=spec.settings(settings),
        preset=preset,
        calibration=chosen,
        training=TrainingData(
            filename=survey.source.filename,
            sheet=survey.source.sheet,
            sha256=survey.source.sha256,
            n=int(len(codes)),
            class_counts={str(c): int(v) for c, v in
                          zip(classes, np.bincount(codes, minlength=len(classes)), strict=True)},
        ),
        cv=HeldOutFigures.from_dict(plain_document(summary), source="the cross-validation"),
        attribute_distributions=value_counts_by_attribute(survey.X),
        attribute_gaps={a: int(v) for a, v in survey.X.isna().sum().items()},
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    return TrainingOutcome(model, choice, results)
