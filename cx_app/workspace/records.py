"""Rows from the library's objects and back, and the typed views read from them.

Arrays are stored as ``.npy`` bytes and read back with ``allow_pickle=False``."""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session, undefer

from cx_app.estimate.document import WaveEstimateDocument
from cx_app.estimate.model_choice import (
    choose_estimation_model,
    heldout_net_error,
    heldout_net_replicates,
)
from cx_app.estimate.model_metadata import HeldOutFigures, TrainingData
from cx_app.estimate.tracker import SegmentEstimate
from cx_app.project import SurveyIdentity, crossval_arrays, crossval_fields, crossval_from
from cx_app.provenance import sha256_hex
from cx_app.workspace.tables import CrossValidation, Estimate, Model, Program, StoredFile, Wave
from cx_app.workspace.views import ModelSummary, WaveView

if TYPE_CHECKING:
    from cx_app.estimate.model_file import TrainedModel
    from cx_app.models.crossval import CrossValResult

__all__ = ["FittedModel", "KeptWave", "as_utc", "crossval_result", "crossval_row", "keep_file", "estimate_row", "estimating_row", "model_rows", "model_summary",
           "npy_array", "program_models", "npy_bytes", "survey_identity", "wave_view"]


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def npy_array(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def as_utc(value: dt.datetime) -> dt.datetime:
    """A stored time as an aware UTC time (SQLite gives it back without its zone)."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def model_rows(model: TrainedModel, cv: CrossValResult, *, model_id: str, skops: bytes
               ) -> Model:
    return Model(model_id=model_id, algorithm=model.algorithm_id, preset=model.preset,
                 calibration=model.calibration, file_sha256=sha256_hex(skops), skops=skops,
                 model_metadata=json.loads(json.dumps(model.metadata(), default=str)),
                 fit_seconds=float(cv.fit_seconds), crossval=crossval_row(cv))


def crossval_row(cv: CrossValResult) -> CrossValidation:
    return CrossValidation(fields=crossval_fields(cv),
                           **{k: npy_bytes(a) for k, a in crossval_arrays(cv).items()})


def keep_file(session: Session, program_id: int, data: bytes, filename: str | None) -> None:
    """Once per content."""
    sha256 = sha256_hex(data)
    if not session.scalar(select(StoredFile.id).where(StoredFile.program_id == program_id,
                                                      StoredFile.sha256 == sha256)):
        session.add(StoredFile(program_id=program_id, sha256=sha256,
                               filename=None if filename is None else filename[:500],
                               size=len(data), data=data))


def program_models(session: Session, program: Program, *where: Any, full: bool = False
                   ) -> list[Model]:
    """The program's model rows (``full``: with the model file and permutation loaded)."""
    query = select(Model).where(Model.program_id == program.id, *where).order_by(Model.id)
    if full:
        query = query.options(undefer(Model.skops), undefer(Model.permutation))
    return list(session.scalars(query).all())


def crossval_result(row: CrossValidation) -> CrossValResult:
    arrays = {name: npy_array(getattr(row, name)) for name in ("y_true", "y_pred", "proba",
                                                                "fold")}
    return crossval_from(row.fields, arrays, where=f"model {row.model_id}'s cross-validation")


def model_summary(row: Model) -> ModelSummary:
    n = (TrainingData.from_dict(row.model_metadata["training"]).n
         if "training" in row.model_metadata else row.respondents)
    return ModelSummary(model_id=row.model_id, algorithm=row.algorithm, preset=row.preset,
                        calibration=row.calibration, file_sha256=row.file_sha256,
                        training_n=None if n is None else int(n), created=as_utc(row.created))


def estimating_row(rows: Sequence[Model]) -> Model:
    """The model whose waves a program shows by default: the one the New wave page preselects
    (:func:`~cx_app.estimate.model_choice.choose_estimation_model` on the held-out net-score
    errors kept in each model's metadata; the first when none keeps one)."""
    figures = {r.model_id: HeldOutFigures.from_dict(r.model_metadata["cv"])
               if "cv" in r.model_metadata else None for r in rows}
    chosen = choose_estimation_model(
        {m: None if f is None else heldout_net_error(f) for m, f in figures.items()},
        replicates={m: None if f is None else heldout_net_replicates(f)
                    for m, f in figures.items()}).chosen
    return next(r for r in rows if r.model_id == chosen)


def survey_identity(program: Program) -> SurveyIdentity:
    return SurveyIdentity(sha256=program.survey_sha256, filename=program.survey_filename,
                          sheet=program.survey_sheet)


def estimate_row(model_row_id: int, document: dict[str, Any],
                 segments: dict[str, Any]) -> Estimate:
    """An estimate JSON and its segments' as a row; the headline numbers are the audited net
    score's when the wave came with an audit sample."""
    nps = document.get("audited_nps") or document["estimated_nps"]
    realized = document.get("realized_nps")
    return Estimate(model_id=model_row_id, document=document, segments=segments,
                    estimated_nps=float(nps["value"]), ci_low=float(nps["ci95"][0]),
                    ci_high=float(nps["ci95"][1]),
                    realized_nps=None if realized is None else float(realized["value"]))


def wave_view(wave: Wave, estimate: Estimate, model_id: str) -> WaveView:
    where = f"wave {wave.label}"
    return WaveView(
        label=wave.label, date=wave.wave_date, filename=wave.filename, sha256=wave.file_sha256,
        part=wave.part, respondents=wave.respondents, model_id=model_id,
        estimate=WaveEstimateDocument.from_dict(estimate.document, source=where),
        segments={by: {value: SegmentEstimate.from_dict(figure, source=f"{where}, {by} {value}")
                       for value, figure in values.items()}
                  for by, values in estimate.segments.items()})


def model_file(row: Model, program_name: str) -> Any:
    """Opened with every check of :func:`cx_app.estimate.model_file.load_model`."""
    from cx_app.estimate.model_file import load_model

    return load_model(row.skops, name=f"program {program_name}: model {row.model_id}")


class FittedModel(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    row_id: int
    model_id: str
    model: Any  # cx_app.estimate.model_file.TrainedModel


class KeptWave(BaseModel):
    """A stored wave to estimate again (``data`` None: the program does not keep the file)."""

    model_config = ConfigDict(frozen=True)
    wave_id: int
    sha256: str
    part: str
    filename: str | None
    sheet: str | None
    label: str
    data: bytes | None
