"""A loaded survey: its respondents, schema, data-quality report and source."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pydantic import Field

from cx_app.provenance import survey_key
from cx_app.result import Result
from cx_app.survey.quality import DataQualityReport
from cx_app.survey.schema import SurveySchema


class SourceInfo(Result):
    """Where a survey table came from: file name, sheet, content hash, CSV dialect, header row."""

    filename: str
    sheet: str | None
    sha256: str
    encoding: str | None = None
    delimiter: str | None = None
    header_row: int = 1
    left_out: tuple[tuple[str, str], ...] = Field(default=(), exclude_if=lambda v: not v)
    """Columns dropped at import, each with why (:mod:`cx_app.survey.layout`)."""

    @property
    def rows_read(self) -> str:
        """Where the data starts, in words: "header on row 3", or for an SPSS/Stata file (no
        header row, :attr:`header_row` 0) that its rows are numbered as its cases."""
        if self.header_row == 0:
            return "variable names as headers; row N is case N"
        return f"header on row {self.header_row}"

    @property
    def held_personal_data(self) -> bool:
        """Whether the file held personal data (dropped at import): its bytes are never kept."""
        return any(reason.startswith("personal data") for _, reason in self.left_out)


@dataclass(frozen=True)
class SurveyData:
    """A survey's respondents in two bases (:mod:`cx_app.survey.quality`).

    ``frame`` is the survey base: every respondent with a valid target answer (columns = schema
    names, index = sheet row), attribute gaps as NaN — the NPS, shares, segments and waves are
    computed over it (:attr:`scores`). ``in_model`` marks the model base within it (the rows
    the models train on: :attr:`X`, :attr:`y`)."""

    frame: pd.DataFrame
    schema: SurveySchema
    quality: DataQualityReport
    source: SourceInfo
    absent_attributes: tuple[str, ...] = ()
    """Attributes whose column is not in the file (``require_attributes=False``): all missing."""
    in_model: np.ndarray | None = field(default=None, repr=False)
    """True for the rows of ``frame`` in the model base; None: every row."""

    @property
    def data_key(self) -> str:
        """The content key of this survey as the models see it (a label edit keeps the key, so
        trained models stay: :meth:`~cx_app.survey.schema.SurveySchema.training_fields`)."""
        return survey_key(self.source.sha256, self.source.sheet,
                          json.dumps(self.schema.training_fields(), sort_keys=True),
                          self.source.filename)

    @property
    def model_frame(self) -> pd.DataFrame:
        """The rows of the model base."""
        return self.frame if self.in_model is None else self.frame[self.in_model]

    @property
    def attribute_names(self) -> tuple[str, ...]:
        return self.schema.attribute_names

    @property
    def classes(self) -> tuple[int, ...]:
        return self.schema.classes

    @property
    def has_target(self) -> bool:
        return self.schema.target.name in self.frame.columns

    @property
    def X(self) -> pd.DataFrame:  # noqa: N802 - the usual name for a feature matrix
        """Attribute scores of the model base (float; NaN where unanswered)."""
        return self.model_frame[list(self.attribute_names)].astype(float)

    @property
    def y(self) -> np.ndarray | None:
        """Target scores (int) of the model base; None when the file has no target column."""
        if not self.has_target:
            return None
        return self.model_frame[self.schema.target.name].to_numpy(dtype=np.int64)

    @property
    def scores(self) -> np.ndarray | None:
        """Every valid target answer of the survey base (int): what the NPS is computed on."""
        if not self.has_target:
            return None
        values = self.frame[self.schema.target.name]
        return values.dropna().to_numpy(dtype=np.int64)

    @property
    def weight_name(self) -> str | None:
        """The weight column's name in ``frame``, or None for an unweighted survey."""
        spec = self.schema.weight
        return spec.name if spec is not None and spec.name in self.frame.columns else None

    @property
    def weights(self) -> np.ndarray | None:
        """Survey weights aligned with :attr:`scores`, or None for an unweighted survey."""
        if self.weight_name is None:
            return None
        return self.respondents[self.weight_name].to_numpy(dtype=float)

    @property
    def model_weights(self) -> np.ndarray | None:
        """Survey weights of the model base (aligned with :attr:`X`), or None."""
        if self.weight_name is None:
            return None
        return self.model_frame[self.weight_name].to_numpy(dtype=float)

    @property
    def respondents(self) -> pd.DataFrame:
        """The survey base restricted to valid target answers."""
        if not self.has_target:
            return self.frame
        return self.frame[self.frame[self.schema.target.name].notna()]
