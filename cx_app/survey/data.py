"""A loaded survey: its respondents, schema, data-quality report and source
(:func:`cx_app.survey.importing.load_survey` makes it)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cx_app.survey.quality import DataQualityReport
from cx_app.survey.schema import SurveySchema


@dataclass(frozen=True)
class SourceInfo:
    """Where a survey table came from: file name, sheet, content hash, CSV dialect, header row."""

    filename: str
    sheet: str | None
    sha256: str
    encoding: str | None = None
    delimiter: str | None = None
    header_row: int = 1

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SurveyData:
    """Used respondents (``frame``, columns = schema names, index = sheet row), the schema,
    the data-quality report and the source."""

    frame: pd.DataFrame
    schema: SurveySchema
    quality: DataQualityReport
    source: SourceInfo
    absent_attributes: tuple[str, ...] = ()
    """Attributes whose column is not in the file (only with ``require_attributes=False``):
    their column in ``frame`` is all missing, for the caller to fill and to warn about."""
    imputed_cells: pd.DataFrame | None = field(default=None, repr=False)
    """Under policy ``impute_median``: True where an attribute score was a gap filled by the
    median (same index and attribute columns as ``frame``); None when nothing was imputed."""

    @property
    def answered(self) -> pd.DataFrame:
        """The attribute scores as answered: imputed cells back to missing (for descriptive
        figures and the training distributions that drift compares a new wave with)."""
        X = self.X
        return X if self.imputed_cells is None else X.mask(self.imputed_cells)

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
        """Attribute scores of the used respondents (float; imputed cells filled)."""
        return self.frame[list(self.attribute_names)].astype(float)

    @property
    def y(self) -> np.ndarray | None:
        """Target scores (int), or None when the file has no target column."""
        if not self.has_target:
            return None
        return self.frame[self.schema.target.name].to_numpy(dtype=np.int64)
