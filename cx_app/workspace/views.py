"""What the workspace returns: typed views of a program built from the library's documents.

:class:`ProgramView` is one program as the tracker reads it: the reference survey's identity
(:class:`cx_app.project.SurveyIdentity`), its models (:class:`ModelSummary`) and its waves in
wave order (:class:`WaveView`), each with the wave's full estimate document
(:class:`cx_app.estimate.document.WaveEstimateDocument`) and the estimate of every segment
(:class:`cx_app.estimate.tracker.SegmentEstimate`, as the tracker wrote it).
``to_dict`` gives ``cx-app program show --json``. No database row leaves the workspace.
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
"""A date or time written as ISO 8601 text, as ``isoformat`` writes it."""


class ModelSummary(Document):
    """A model of the program (its file is in the workspace; ``Workspace.program_model``
    opens it as a :class:`cx_app.estimate.model_file.TrainedModel`)."""

    model_id: str = Field(alias="model")
    algorithm: str
    preset: str
    calibration: str
    file_sha256: str | None
    """The SHA-256 of its model file (None until it is fitted on all respondents)."""
    training_n: int | None
    created: Annotated[dt.datetime, Iso]


class WaveView(Document):
    """One wave of a program, as estimated by one of its models."""

    label: str
    date: Annotated[dt.date, Iso] | None
    filename: str | None = Field(alias="file")
    sha256: str
    part: str = Field(exclude_if=lambda v: not v)
    """The value of the file's wave column when the file holds several waves, else ""."""
    respondents: int
    model_id: str = Field(alias="model")
    estimate: WaveEstimateDocument = Field(exclude=True)
    segments: dict[str, dict[str, SegmentEstimate]]
    """``{segment name: {value: figure}}`` for every segment of the mapping (not the wave and
    date columns)."""

    @computed_field
    @property
    def estimated_nps(self) -> EstimateBrief:
        """The wave's estimate the tracker shows: the audited one when the wave was added
        with an audit sample (and ``covers`` says so), else the label-free one."""
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
    """The waves (in wave order) with each segment's change alerts since the previous wave
    added to its alerts (:func:`cx_app.estimate.alerts.series_changes`): computed when the
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
    """``figure`` with its change alerts derived anew: any it already holds (a program
    imported from a project file that a program wrote, views included) are replaced, never
    added twice."""
    bands = [a for a in figure.alerts if a.comparison != "previous wave"]
    changes = () if previous is None else series_changes(previous.alerts, bands)
    if not changes and len(bands) == len(figure.alerts):
        return figure
    alerts = [a.to_dict() for a in bands] + [a.to_dict() for a in changes]
    return SegmentEstimate.from_dict({**figure.to_dict(), "alerts": alerts})


class ProgramView(Document):
    """A program: its reference survey, models and waves (in wave order)."""

    name: str = Field(alias="program")
    created: Annotated[dt.datetime, Iso]
    survey: SurveyIdentity
    survey_included: bool = Field(exclude=True)
    models: tuple[ModelSummary, ...]
    waves: tuple[WaveView, ...]
    team: str | None = None
    """The team the program belongs to (None: no team, single-user mode)."""

    @field_serializer("survey")
    def _survey(self, survey: SurveyIdentity) -> dict[str, Any]:
        return {"file": survey.filename, "sheet": survey.sheet, "sha256": survey.sha256,
                "included": self.survey_included}

    @property
    def version(self) -> tuple:
        """What the program's tracker is made of, in a hashable key that changes when a wave
        or a model is added, removed or fitted again: its name and team, its models (id and
        model file SHA-256) and its waves in order (label, date, file, its SHA-256, part,
        respondents, and the model that estimated them). Pages cache what they draw from a
        view under it (with the person it is shown to)."""
        return (self.name, self.team,
                tuple((m.model_id, m.file_sha256) for m in self.models),
                tuple((w.label, w.date, w.filename, w.sha256, w.part, w.respondents,
                       w.model_id) for w in self.waves))

    def wave(self, label: str) -> WaveView:
        """The wave labelled ``label`` (the first of that label); KeyError otherwise."""
        for wave in self.waves:
            if wave.label == label:
                return wave
        raise KeyError(label)



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
    """The label of the wave added last (None: no wave yet)."""
    last_change: dt.datetime | None = None
    """When a wave was last added (else when the program was created), UTC."""


def recent_first(programs: list[ProgramSummary]) -> list[ProgramSummary]:
    """``programs`` most recent first: by the time a wave was last added (else created),
    then by name (the first page's order)."""
    by_name = sorted(programs, key=lambda p: p.name)
    return sorted(by_name, key=lambda p: p.last_change or p.created, reverse=True)


@dataclass(frozen=True)
class AddedWave:
    """What adding one wave did: ``added``, or ``already`` (the same file content was added
    before: one wave, not two)."""

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
