"""The work a program's changes need, apart from storing them: read, train, estimate.

:class:`cx_app.workspace.programs.Workspace` stores; these functions return typed records that it
turns into rows. Nothing here opens the database.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from cx_app.errors import WorkspaceError
from cx_app.workspace.labels import wave_label
from cx_app.workspace.names import NAME_LENGTH

if TYPE_CHECKING:
    from cx_app.estimate.model_file import TrainedModel
    from cx_app.models.results import Results
    from cx_app.survey.data import SurveyData
    from cx_app.survey.schema import SurveySchema
    from cx_app.workspace.records import FittedModel, KeptWave

__all__ = ["EstimatedPart", "ModelEstimate", "TrainedProgram", "estimate_file", "estimate_kept",
           "part_key", "read_file", "segment_names", "train_reference"]

TEXT_LENGTH = NAME_LENGTH  # the longest wave label and part the tables hold
NOT_SEGMENTED = ("wave", "date")  # segment roles with one value per wave, or one per day

_RECORD = ConfigDict(frozen=True, arbitrary_types_allowed=True)


class TrainedProgram(BaseModel):
    model_config = _RECORD
    data: bytes
    survey: Any  # cx_app.survey.data.SurveyData
    model: Any  # cx_app.estimate.model_file.TrainedModel
    cv: Any  # cx_app.models.crossval.CrossValResult
    model_id: str
    results: Any  # cx_app.models.results.Results
    settings: dict[str, Any]


class ModelEstimate(BaseModel):
    """One model's estimate of a wave as the ``estimates`` table keeps it."""

    model_config = _RECORD
    model_row: int
    document: dict[str, Any]  # the estimate JSON
    segments: dict[str, Any]  # {segment name: {value: SegmentEstimate.to_dict()}}


class EstimatedPart(BaseModel):
    """One wave of a file (``part``: its wave column's value, "" in a file of one wave)."""

    model_config = _RECORD
    part: str
    label: str
    date: dt.date | None
    sheet: str | None
    respondents: int
    estimates: tuple[ModelEstimate, ...]
    held_personal_data: bool = False  # its file had columns of personal data (never kept)


def segment_names(schema: SurveySchema, survey: SurveyData) -> list[str]:
    """The segments each wave is estimated by (not its wave and date columns)."""
    return [s.name for s in schema.segments
            if s.role not in NOT_SEGMENTED and s.name in survey.model_frame.columns]


def part_key(part: SurveyData, parts: int) -> str:
    """The wave column's value of one part (``split_waves`` names it ``file · value``)."""
    return "" if parts == 1 else part.source.filename.split(" · ", 1)[1][:TEXT_LENGTH]


def read_file(source: Any, filename: str | None = None) -> tuple[bytes, str]:
    """The bytes and shown name of a path, bytes or ``(bytes, name)``, within the limits."""
    from cx_app.survey.limits import limits_from_env
    from cx_app.survey.reading import read_source

    source, filename = source if isinstance(source, tuple) else (source, filename)
    return read_source(source, filename, limits_from_env())


def train_reference(source: Any, *, filename: str | None, schema: SurveySchema | None,
                    sheet: str | int | None, missing_policy: str | None, algorithm: str,
                    preset: str | None, calibration: str, folds: int, seed: int,
                    progress: Any = None) -> TrainedProgram:
    from cx_app.engine.grouping import resolve_plan
    from cx_app.estimate.training import train_model
    from cx_app.models.algorithms import preset_label
    from cx_app.models.analysis import finish_evaluation
    from cx_app.models.evaluation import evaluate_result
    from cx_app.survey.importing import load_survey

    data, shown = read_file(source, filename)
    survey = load_survey(data, schema=schema, sheet=sheet, filename=shown,
                         missing_policy=missing_policy)
    outcome = train_model(survey, algorithm, calibration=calibration, folds=folds, seed=seed,
                          preset=preset, progress=progress)
    model, cv = outcome.model, outcome.cv
    plan = resolve_plan(survey.schema.plan_spec, survey.classes)
    model_id = preset_label(model.algorithm_id, model.preset)
    results: Results = finish_evaluation(survey, {model_id: evaluate_result(cv, plan)}, plan,
                                         None, seed=seed, calibration=model.calibration)
    return TrainedProgram(data=data, survey=survey, model=model, cv=cv, model_id=model_id,
                          results=results,
                          settings={"algorithm": algorithm, "preset": model.preset,
                                    "calibration": calibration, "folds": folds, "seed": seed})


def _estimate(model_row: int, model: TrainedModel, part: SurveyData,
              labelled: Any = None) -> ModelEstimate:
    from cx_app.estimate.audit import with_audit
    from cx_app.estimate.new_wave import estimate_wave
    from cx_app.estimate.tracker import segment_estimates

    estimate = with_audit(model, part, estimate_wave(model, part), labelled)
    return ModelEstimate(model_row=model_row, document=json.loads(estimate.to_json()),
                         segments={by: {s.label: s.to_dict()
                                        for s in segment_estimates(model, part, estimate, by)}
                                   for by in segment_names(model.schema, part)})


def _parts(model: TrainedModel, data: bytes, filename: str, sheet: str | int | None
           ) -> tuple[SurveyData, list[SurveyData]]:
    from cx_app.estimate.tracker import split_waves
    from cx_app.survey.importing import load_survey

    survey = load_survey(data, schema=model.schema, sheet=sheet, filename=filename,
                         require_target=False, scoring=True, require_attributes=False)
    return survey, split_waves(survey)


def estimate_file(models: Sequence[FittedModel], data: bytes, filename: str, *,
                  label: str | None, sheet: str | int | None,
                  sample: tuple[bytes, str] | None = None) -> list[EstimatedPart]:
    """The waves of a wave file, each estimated by every model (``sample``: an audit sample)."""
    from cx_app.estimate.audit import read_audit

    survey, parts = _parts(models[0].model, data, filename, sheet)
    if label is not None and len(parts) > 1:
        raise WorkspaceError(f"{filename} holds {len(parts)} waves in its wave column, "
                             "which label them: leave out the label")
    labelled = None if sample is None else read_audit(*sample, models[0].model.schema,
                                                      waves=len(parts))
    found = []
    for part in parts:
        named = wave_label(part, filename=filename, given=label)
        estimates = tuple(_estimate(m.row_id, m.model, part, labelled) for m in models)
        found.append(EstimatedPart(
            part=part_key(part, len(parts)), label=named.label[:TEXT_LENGTH], date=named.date,
            sheet=survey.source.sheet, respondents=estimates[-1].document["n"],
            estimates=estimates, held_personal_data=survey.source.held_personal_data))
    return found


def estimate_kept(model: FittedModel, waves: Sequence[KeptWave]
                  ) -> tuple[dict[int, ModelEstimate], list[str]]:
    """``{wave row id: estimate}``, and the labels of the waves whose file is not kept."""
    estimates: dict[int, ModelEstimate] = {}
    not_kept = [w.label for w in waves if w.data is None]
    for sha256 in sorted({w.sha256 for w in waves if w.data is not None}):
        same = [w for w in waves if w.sha256 == sha256]
        first = same[0]
        _survey, parts = _parts(model.model, first.data, first.filename or "wave", first.sheet)
        by_key = {part_key(p, len(parts)): p for p in parts}
        for wave in same:
            if wave.part not in by_key:
                not_kept.append(wave.label)
                continue
            estimates[wave.wave_id] = _estimate(model.row_id, model.model, by_key[wave.part])
    return estimates, not_kept
