"""Tracking many waves: the estimated net score of each wave and of each of its segments.

With ``by`` a segment's estimate is corrected by its own held-out error
(:mod:`cx_app.estimate.segment_error`) and gets its own interval and alerts (docs/alp.md,
"Several waves: the tracker"); ``TrackedWave.to_dict`` is one entry of the JSON's ``waves``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import pandas as pd
from pydantic import Field, InstanceOf, computed_field

from cx_app.errors import AnalysisError
from cx_app.estimate.alerts import Alert
from cx_app.estimate.new_wave import (
    EstimatedNetScore,
    WaveEstimate,
    _absent,
    estimate_wave,
    estimated_net_score,
    model_net_score_se,
    model_reference_se,
)
from cx_app.estimate.segment_error import segment_correction
from cx_app.models.results import Document
from cx_app.result import Result
from cx_app.survey.nps import NpsResult
from cx_app.survey.nps_flags import flag_changes

if TYPE_CHECKING:
    from cx_app.estimate.alerts import AlertThresholds
    from cx_app.estimate.model_file import TrainedModel
    from cx_app.survey.data import SurveyData

__all__ = ["MIN_SEGMENT", "SMALL_SEGMENT", "SegmentEstimate", "TrackedWave",
           "segment_estimates", "split_waves", "track_waves", "tracker_document",
           "tracker_frame"]

MIN_SEGMENT = 10
"""Fewer respondents than this: no estimate for the segment (its count only)."""
SMALL_SEGMENT = 50
"""Fewer respondents than this: the segment's estimate comes with a "wide interval" note."""


class _Brief(Document):
    @classmethod
    def of(cls, figure: EstimatedNetScore | NpsResult) -> Self:
        """The brief of a full figure: its fields that the brief has."""
        return cls.model_validate(figure.model_dump(mode="json", include=set(cls.model_fields)))


class EstimateBrief(_Brief):
    """An estimated net score in brief: value, 95% interval, SE and what the interval covers."""

    value: float
    ci95: list[float]
    se: float | None = Field(default=None, exclude_if=_absent)
    covers: str | None = Field(default=None, exclude_if=_absent)
    se_segment: float | None = Field(default=None, exclude_if=_absent)
    """A segment's own added SE (its held-out error, :mod:`cx_app.estimate.segment_error`)."""
    segment_correction: float | None = Field(default=None, exclude_if=_absent)
    """The shrunken held-out error subtracted from a segment's estimate (points)."""
    audited_n: int | None = Field(default=None, exclude_if=_absent)
    """The wave's estimate is the audited one (:mod:`cx_app.estimate.audit`) from this many
    audited answers; ``label_free`` is the estimate without them."""
    label_free: float | None = Field(default=None, exclude_if=_absent)


class RealizedBrief(_Brief):
    """A realized net score (a labelled wave's own scores) with its interval."""

    value: float
    ci95: list[float]
    n: int | float


class SegmentEstimate(Document):
    """One segment of one wave: its respondents, estimated net score (None when too small),
    a note on its size, its alerts, and the realized net score when the wave is labelled;
    what the tracker JSON writes per segment and the workspace reads back."""

    label: str = Field(default="", exclude=True)
    respondents: int
    estimated_nps: EstimateBrief | None
    note: str = Field(default="", exclude_if=lambda v: not v)
    realized_nps: RealizedBrief | None = Field(default=None, exclude_if=_absent)
    alerts: tuple[Alert, ...] = Field(default=(), exclude_if=lambda v: not v)


class TrackedWave(Result):
    """One wave of the tracker: its file, the full estimate, and the segments of ``by``."""

    file: str
    estimate: InstanceOf[WaveEstimate] = Field(exclude=True)
    by: str | None = Field(default=None, alias="segment", exclude_if=lambda v: v is None)
    segments: tuple[SegmentEstimate, ...] = Field(default=(), exclude=True)

    @computed_field
    @property
    def respondents(self) -> int:
        return self.estimate.n

    @computed_field(alias="estimated_nps")
    @property
    def estimated_nps_brief(self) -> EstimateBrief:
        return EstimateBrief.of(self.estimate.estimated_nps)

    @computed_field
    @property
    def shares(self) -> dict[str, float]:
        return dict(self.estimate.estimated_nps.shares)

    @computed_field
    @property
    def warnings(self) -> list[str]:
        return list(self.estimate.warnings)

    @computed_field
    @property
    def alerts(self) -> list[Any]:
        return list(self.estimate.alerts)

    @computed_field(alias="realized_nps", exclude_if=lambda v: v is None)
    @property
    def realized_nps_brief(self) -> RealizedBrief | None:
        r = self.estimate.realized_nps
        return None if r is None else RealizedBrief.of(r)

    @computed_field(alias="by", exclude_if=lambda v: v is None)
    @property
    def by_value(self) -> dict[str, SegmentEstimate] | None:
        return None if self.by is None else {s.label: s for s in self.segments}


def segment_estimates(model: TrainedModel, survey: SurveyData, estimate: WaveEstimate,
                      by: str, thresholds: AlertThresholds | None = None,
                      ) -> tuple[SegmentEstimate, ...]:
    """The estimate of each value of the segment ``by`` of a wave already estimated."""
    from cx_app.estimate.alert_bands import NO_SEGMENT_BANDS, segment_bands
    from cx_app.estimate.alerts import estimate_alerts
    from cx_app.survey.nps import groups_for_schema, nps_summary, segment_frames

    frame = survey.model_frame
    if by not in frame.columns:
        names = [s.name for s in survey.schema.segments if s.name in frame.columns]
        raise AnalysisError(f"{survey.source.filename}: no segment {by!r}; its segments are "
                            f"{names}")
    classes = tuple(model.classes)
    proba = estimate.predictions[[f"p_{c}" for c in classes]].to_numpy()
    groups = groups_for_schema(model.schema)
    kind = estimate.estimated_nps.kind
    weight = survey.weight_name
    target = model.schema.target.name
    error = model.cv.net_score_error
    kept = None if error is None else error.segments  # None: an older model file
    bands = segment_bands(kept, by)
    out = []
    for label, part in segment_frames(frame, by):
        rows = frame.index.get_indexer(part.index)
        n = len(rows)
        weights = None if weight is None else part[weight].to_numpy(dtype=float)
        if n < MIN_SEGMENT:
            out.append(SegmentEstimate(label=label, respondents=n, estimated_nps=None,
                                       note=f"only {n} respondents: too few to estimate"))
            continue
        note = (f"only {n} respondents: a wide interval" if n < SMALL_SEGMENT else "")
        correction = segment_correction(kept, by, label)
        nps = estimated_net_score(proba[rows], classes, groups, kind=kind, weights=weights,
                                  model_se=model_net_score_se(model),
                                  reference_se=model_reference_se(model), segment=correction)
        no_band = NO_SEGMENT_BANDS if bands is None and thresholds is None else ""
        note = "; ".join(t for t in (note, correction.note, no_band) if t)
        realized = None
        if target in part.columns and part[target].notna().any():
            labeled = part[target].notna().to_numpy()
            realized = nps_summary(part[target][labeled].to_numpy(dtype=np.int64),
                                   groups=groups,
                                   weights=None if weights is None else weights[labeled])
        # the segment's ALP accuracy: its mean top probability (predictions are the arg-max),
        # against the segment's own band (none for an older model file: analyst limits only)
        own = {} if bands is None else bands.get(label, bands[""])
        alerts = estimate_alerts(float(proba[rows].max(axis=1).mean()), nps.value, n, own,
                                 thresholds)
        out.append(SegmentEstimate(
            label=label, respondents=n, estimated_nps=EstimateBrief.of(nps), note=note,
            realized_nps=None if realized is None else RealizedBrief.of(realized),
            alerts=alerts))
    return tuple(out)


def split_waves(survey: SurveyData) -> list[SurveyData]:
    """One survey per value of its wave column (the schema's segment with role ``wave``), in
    the column's sorted order, named ``"<file> · <wave>"``: a file holding several waves is
    tracked like several files. A survey without a wave column, or with one wave, comes back
    as it is. Respondents whose wave is blank form their own wave, "(missing)": none is lost.
    The file's data-quality report (rows excluded at import) stays with every part."""
    from cx_app.survey.nps import segment_frames

    wave = next((s.name for s in survey.schema.segments
                 if s.role == "wave" and s.name in survey.frame.columns), None)
    if wave is None or survey.frame[wave].nunique(dropna=False) < 2:
        return [survey]
    in_model = (np.ones(len(survey.frame), dtype=bool) if survey.in_model is None
                else np.asarray(survey.in_model, dtype=bool))
    return [dataclasses.replace(
        survey, frame=part, in_model=in_model[survey.frame.index.get_indexer(part.index)],
        source=survey.source.model_copy(update={"filename": f"{survey.source.filename} · {label}"}))
        for label, part in segment_frames(survey.frame, wave)]


def track_waves(model: TrainedModel, surveys: Sequence[SurveyData], *,
                by: str | None = None,
                thresholds: AlertThresholds | None = None) -> list[TrackedWave]:
    """Estimate every wave (each read with ``load_survey(..., scoring=True)``) and, with
    ``by`` (a segment name of the model's schema), each of its segments."""
    from joblib import Parallel, delayed

    from cx_app.estimate.alerts import series_changes
    from cx_app.models import cluster

    if not surveys:
        raise AnalysisError("no wave to estimate")
    one_wave = cluster.task(_track_wave)  # one joblib task per wave (on a cluster: a task each)
    tracked = list(Parallel(n_jobs=1, batch_size=1)(
        delayed(one_wave)(model, survey, by, thresholds) for survey in surveys))
    # each segment of each wave with its change alerts since the previous wave
    # (:func:`cx_app.estimate.alerts.series_changes`; the first wave has none)
    out = tracked[:1]
    for before, wave in zip(tracked, tracked[1:], strict=False):
        previous = {s.label: s.alerts for s in before.segments}
        segments = tuple(s.model_copy(update={"alerts": s.alerts + series_changes(
            previous.get(s.label, ()), s.alerts)}) for s in wave.segments)
        out.append(wave.model_copy(update={"segments": segments}))
    return out


def _track_wave(model: TrainedModel, survey: SurveyData, by: str | None,
                thresholds: AlertThresholds | None = None) -> TrackedWave:
    estimate = estimate_wave(model, survey, thresholds=thresholds)
    segments = () if by is None else segment_estimates(model, survey, estimate, by, thresholds)
    return TrackedWave(file=survey.source.filename, estimate=estimate, by=by, segments=segments)


def tracker_document(tracked: Sequence[TrackedWave]) -> dict:
    """``{"waves": [...]}`` (``cx-app estimate --json`` with several waves or ``--by``)."""
    return {"waves": [t.to_dict() for t in tracked]}


TRACKER_COLUMNS = ("wave", "series", "n", "nps", "ci_low", "ci_high", "se", "realized", "note",
                   "alert")
"""The columns of a tracker table before its change flags (:func:`tracker_frame`)."""


def tracker_row(wave: str, series: str, n: int, est: Any, real: Any, note: str,
                alerts: Sequence[Alert]) -> tuple:
    """One row of :data:`TRACKER_COLUMNS` (``est``: an estimate with ``value``, ``ci95`` and
    ``se``, or None; ``real``: the realized score or None)."""
    return (wave, series, n, *((None,) * 4 if est is None else (est.value, *est.ci95, est.se)),
            None if real is None else real.value, note,
            "; ".join(a.short() for a in alerts if a.alert))


def tracker_frame(tracked: Sequence[TrackedWave]) -> pd.DataFrame:
    """One row per wave (series "All respondents") and per segment of each wave
    (:data:`TRACKER_COLUMNS`), with the change from the previous wave of the same series and
    its test (:func:`cx_app.survey.nps_flags.flag_changes`): the tracker chart's and table's data.

    The change test treats the two estimates as independent with their whole SE (answers'
    spread and the model's held-out error): conservative, since the model's systematic error
    is largely shared by two waves scored by the same model."""
    rows = []
    for t in tracked:
        e = t.estimate
        rows.append(tracker_row(t.file, "All respondents", e.n, e.estimated_nps,
                                e.realized_nps, "", e.alerts))
        rows.extend(tracker_row(t.file, s.label, s.respondents, s.estimated_nps,
                                s.realized_nps, s.note, s.alerts) for s in t.segments)
    frame = pd.DataFrame(rows, columns=list(TRACKER_COLUMNS))
    return flag_changes(frame)
