"""The typed metadata of a model file: what it was trained on and its held-out figures.

``to_dict`` gives exactly the document ``from_dict`` read, so model files written before these
types existed still open (a part they lack is None; a key this cx-app does not know is kept).
:class:`AlpGap` and :class:`FullTrainingCheck` are also what :mod:`cx_app.estimate.alp`
computes: here, below the documents that read them back, light to import.

>>> doc = {"folds": 5, "seed": 0, "n": 120, "levels": {"original": {"accuracy": 0.5}},
...        "warnings": [], "alp_gap": {"n": 120, "accuracy_cm": 0.5, "accuracy_alp": 0.52,
...        "accuracy_gap": 0.02, "share_gap": 0.01, "net_gap": None,
...        "net_calibration_error": None, "score": 0.4}}
>>> figures = HeldOutFigures.from_dict(doc)
>>> figures.alp_gap.accuracy_gap, figures.net_score_error, figures.to_dict() == doc
(0.02, None, True)
>>> TrainingData.from_dict({"sha256": "ab", "n": 60}).filename is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import ConfigDict

from cx_app.errors import ModelFileError
from cx_app.models.results import Document, ResultsError

__all__ = [
    "LARGE_GAP",
    "LARGE_NET_ERROR",
    "AlpGap",
    "CalibrationChoiceDoc",
    "FullTrainingCheck",
    "HeldOutFigures",
    "NetScoreErrorDoc",
    "SegmentErrorsDoc",
    "SegmentHeldOutDoc",
    "TrainingData",
]

Figure = float | None
"""A figure of the metadata: None where it was not finite (NaN is not JSON)."""



class MetadataDocument(Document):
    """A part of a model file's metadata: :class:`ModelFileError` when it is malformed."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "model file") -> Self:
        """Validate ``data``; :class:`ModelFileError` naming ``source`` and the first bad field."""
        try:
            return super().from_dict(data, source=source)
        except ResultsError as exc:
            raise ModelFileError(str(exc)) from None


LARGE_GAP = 0.03
"""A held-out |ALP − real| accuracy gap or class-share gap above this is warned about."""

LARGE_NET_ERROR = 3.0
"""A held-out net-score calibration error (NPS points) above this is warned about."""


class AlpGap(MetadataDocument):
    """How far the ALP estimate is from the truth on labelled data (Theorem 1's check;
    :func:`cx_app.estimate.alp.alp_gap`; each field in docs/alp.md, "The gap"). ``accuracy_gap``
    > 0: over-confident; net figures in NPS points (None without groups); ``score`` ≤ 1 means
    no warning (None in files written before it)."""

    n: int
    accuracy_cm: Figure
    accuracy_alp: Figure
    accuracy_gap: Figure
    share_gap: Figure
    score: Figure = None
    net_gap: Figure = None
    net_calibration_error: Figure = None


class TrainingData(MetadataDocument):
    """The respondents a model was fitted on (``TrainedModel.training``)."""

    model_config = ConfigDict(extra="allow")

    filename: str | None = None
    sheet: str | int | None = None
    sha256: str | None = None
    n: int | None = None
    class_counts: dict[str, int] | None = None


class CalibrationChoiceDoc(MetadataDocument):
    """The calibration chosen and why (``cx_app.estimate.calibration.CalibrationChoice.to_dict``)."""

    chosen: str
    reports: list[dict[str, Any]] = []
    warnings: list[str] = []


class FullTrainingCheck(MetadataDocument):
    """The paper's Section 5 workflow (:func:`cx_app.estimate.alp.full_training_alp_check`):
    train on 100 % and validate with ALP; ``full_train_cm`` (resubstitution accuracy) far above
    ``heldout_cm`` and ``full_train_alp`` says the model over-fits."""

    n: int
    heldout_cm: Figure
    heldout_alp: Figure
    full_train_cm: Figure
    full_train_alp: Figure
    notes: list[str] = []


class SegmentHeldOutDoc(MetadataDocument):
    """One segment's held-out net-score error: its respondents, estimated minus realized net
    score and the answers' variance of that estimate (points, points²)."""

    n: int
    error: Figure
    variance: Figure
    estimated: Figure = None
    """The segment's held-out estimated net score (points); absent in older files, which then
    give the segment no alert band of its own."""
    outcome_sd: Figure = None
    """The SD of one respondent's promoter/detractor outcome in the segment (points)."""
    accuracy_alp: Figure = None
    """The segment's held-out ALP accuracy (its mean top probability)."""
    accuracy: Figure = None
    """The segment's realized held-out accuracy."""
    estimated_sd: Figure = None
    """The SD of one respondent's estimated net-score contribution, 100·(p̂_P − p̂_D)."""
    accuracy_alp_sd: Figure = None
    """The SD of one respondent's top probability."""


class SegmentErrorsDoc(MetadataDocument):
    """The held-out errors of the segments of one column and the spread between segments."""

    labels: dict[str, SegmentHeldOutDoc]
    between_sd: Figure
    stability: Figure = None
    """The share of a segment's effect that carries over between the training survey's waves
    (:func:`cx_app.estimate.segment_error.segment_stability`); absent with one wave."""
    stability_waves: int | None = None


class NetScoreErrorDoc(MetadataDocument):
    """The held-out systematic net-score error
    (:func:`cx_app.estimate.new_wave.heldout_net_score_error`)."""

    fold_estimated: list[Figure]
    fold_realized: list[Figure]
    fold_n: list[int]
    fold_outcome_variance: list[Figure]
    bias: Figure
    model_se: Figure
    reference_se: Figure = None
    """The training survey's own sampling error of its net score (points); absent in files
    written before it was kept."""
    outcome_sd: Figure = None
    """One respondent's SD of the promoter/detractor outcome in the training survey (points):
    the spread of the alert band (:mod:`cx_app.estimate.alert_bands`); absent in older files."""
    segments: dict[str, SegmentErrorsDoc] | None = None
    """Per segment column, each segment's held-out error
    (:func:`cx_app.estimate.segment_error.heldout_segment_errors`); absent in older files."""
    calibration_error_replicates: list[Figure] | None = None
    """The held-out net-score calibration error on the estimation choice's paired resamples
    (:func:`cx_app.estimate.model_choice.calibration_error_replicates`); absent in older files."""


class HeldOutFigures(MetadataDocument):
    """What the model's cross-validation measured on its held-out folds (``TrainedModel.cv``);
    ``alp_vs_cm``: side (``heldout``, ``training``) → :func:`cx_app.estimate.alp.compare_alp_cm`."""

    model_config = ConfigDict(extra="allow")

    folds: int | None = None
    seed: int | None = None
    n: int | None = None
    levels: dict[str, dict[str, Figure]] = {}
    alp_gap: AlpGap | None = None
    alp_vs_cm: dict[str, dict[str, dict[str, dict[str, Figure]]]] = {}
    calibration_choice: CalibrationChoiceDoc | None = None
    warnings: list[str] = []
    net_score_error: NetScoreErrorDoc | None = None
    full_training_check: FullTrainingCheck | None = None
    learning_curve: list[dict[str, int | Figure]] | None = None

    @property
    def calibration_warnings(self) -> list[str]:
        """The warnings of the calibration choice (none for files saved without it)."""
        return [] if self.calibration_choice is None else list(self.calibration_choice.warnings)
