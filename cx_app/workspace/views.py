"""What the workspace returns: typed views of a program built from the library's documents.

No database row leaves the workspace; ``ProgramView.to_dict`` gives ``program show --json``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, PlainSerializer, computed_field, field_serializer

from cx_app.estimate.alerts import series_changes
from cx_app.estimate.document import WaveEstimateDocument
from cx_app.estimate.tracker import EstimateBrief, RealizedBrief, SegmentEstimate
from cx_app.models.results import Document
from cx_app.project import SurveyIdentity

__all__ = ["AddedWave", "ModelSummary", "ProgramSummary", "ProgramView", "WaveView",
           "with_change_alerts"]


AUDITED_COVERS = ("audited: this wave's realized score from {n:,} audited answers and the "
                  "model's predictions of every respondent (prediction-powered inference); "
                  "the label-free estimate was {label_free:+.1f}")


Iso = PlainSerializer(lambda d: d.isoformat())


class ModelSummary(Document):
    model_id: str = Field(alias="model")
    algorithm: str
    preset: str
    calibration: str
    file_sha256: str | None  # None until it is fitted on all respondents
    training_n: int | None
    created: Annotated[dt.datetime, Iso]


class WaveView(Document):
    label: str
    date: Annotated[dt.date, Iso] | None
    filename: str | None = Field(alias="file")
    sha256: str
    part: str = Field(exclude_if=lambda v: not v)  # the wave column's value in a file of several
    respondents: int
    model_id: str = Field(alias="model")
    estimate: WaveEstimateDocument = Field(exclude=True)
    segments: dict[str, dict[str, SegmentEstimate]]  # {segment: {value: figure}}

    @computed_field
    @property
    def estimated_nps(self) -> EstimateBrief:
        """The audited estimate when the wave was added with an audit sample, else the
        label-free one."""
        figure = self.estimate.estimated_nps
        assert figure is not None  # every stored estimate has one (estimate_wave)
        audited = self.estimate.audited_nps
        if audited is not None:
            return EstimateBrief(value=audited.value, ci95=list(audited.ci95), se=audited.se,
                                 covers=AUDITED_COVERS.format(n=audited.n,
                                                              label_free=figure.value),
                                 audited_n=audited.n, label_free=figure.value)
        return EstimateBrief(value=figure.value, ci95=list(figure.ci95), se=figure.se,
                             covers=figure.covers)

    @computed_field(exclude_if=lambda v: v is None)
    @property
    def realized_nps(self) -> RealizedBrief | None:
        figure = self.estimate.realized_nps
        return None if figure is None else RealizedBrief(value=figure.value,
                                                         ci95=list(figure.ci95), n=figure.n)

    @computed_field
    @property
    def warnings(self) -> list[str]:
        return list(self.estimate.warnings)


def with_change_alerts(waves: Sequence[WaveView]) -> tuple[WaveView, ...]:
    """The waves with each segment's change alerts since the previous wave, computed when the
    program is read, so a wave added out of order is compared with its real neighbours."""
    out = []
    for before, wave in zip((None, *waves), waves, strict=False):
        segments = {}
        for by, values in wave.segments.items():
            previous = {} if before is None else before.segments.get(by, {})
            segments[by] = {value: _with_changes(figure, previous.get(value))
                            for value, figure in values.items()}
        out.append(wave.model_copy(update={"segments": segments}))
    return tuple(out)


def _with_changes(figure: SegmentEstimate, previous: SegmentEstimate | None
                  ) -> SegmentEstimate:
    """Change alerts it already holds (an imported program) are replaced, never added twice."""
    bands = [a for a in figure.alerts if a.comparison != "previous wave"]
    changes = () if previous is None else series_changes(previous.alerts, bands)
    if not changes and len(bands) == len(figure.alerts):
        return figure
    alerts = [a.to_dict() for a in bands] + [a.to_dict() for a in changes]
    return SegmentEstimate.from_dict({**figure.to_dict(), "alerts": alerts})


class ProgramView(Document):
    name: str = Field(alias="program")
    created: Annotated[dt.datetime, Iso]
    survey: SurveyIdentity
    survey_included: bool = Field(exclude=True)
    models: tuple[ModelSummary, ...]
    waves: tuple[WaveView, ...]
    team: str | None = None

    @field_serializer("survey")
    def _survey(self, survey: SurveyIdentity) -> dict[str, Any]:
        return {"file": survey.filename, "sheet": survey.sheet, "sha256": survey.sha256,
                "included": self.survey_included}

    @property
    def version(self) -> tuple:
        """A hashable key that changes when a wave or a model is added, removed or fitted
        again: pages cache what they draw from a view under it."""
        return (self.name, self.team,
                tuple((m.model_id, m.file_sha256) for m in self.models),
                tuple((w.label, w.date, w.filename, w.sha256, w.part, w.respondents,
                       w.model_id) for w in self.waves))


@dataclass(frozen=True)
class ProgramSummary:
    """One line of ``cx-app program list``."""

    name: str
    created: dt.datetime
    models: tuple[str, ...]
    waves: int
    survey: SurveyIdentity
    team: str | None = None
    last_wave: str | None = None
    last_change: dt.datetime | None = None  # a wave last added, else the program created (UTC)


def recent_first(programs: list[ProgramSummary]) -> list[ProgramSummary]:
    """Most recent change first, then by name (the first page's order)."""
    by_name = sorted(programs, key=lambda p: p.name)
    return sorted(by_name, key=lambda p: p.last_change or p.created, reverse=True)


@dataclass(frozen=True)
class AddedWave:
    """``status``: ``added``, or ``already`` (the same file content: one wave, not two)."""

    label: str
    filename: str | None
    sha256: str
    part: str
    respondents: int
    status: str

    def describe(self) -> str:
        what = ("added" if self.status == "added" else
                "already in the program (the same file content), not added again")
        part = f" ({self.part})" if self.part else ""
        return (f"{self.filename or 'wave'}{part}: wave {self.label}, "
                f"{self.respondents:,} respondents, {what}")
