"""The typed new-wave estimate document: what ``cx-app estimate --json`` writes, validated.

:class:`WaveEstimateDocument` is the JSON of :meth:`cx_app.estimate.new_wave.WaveEstimate.to_dict`
with its fields typed; the reports read it, ``cx-app report --new-wave`` validates it. Like
:class:`cx_app.models.results.Results`, ``from_dict(d).to_dict() == d``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cx_app.models.results import (
    Document,
    Label,
    Level,
    NetScoreFigure,
    read_json_object,
)


class AlpGapDoc(Document):
    """The held-out check of the ALP estimate (``cx_app.estimate.alp.AlpGap.to_dict``)."""

    n: int
    accuracy_cm: float | None
    accuracy_alp: float | None
    accuracy_gap: float | None
    share_gap: float | None
    net_gap: float | None = None
    net_calibration_error: float | None = None
    score: float | None = None


class EstimatingModel(Document):
    """The model the wave was estimated with."""

    algorithm: str
    preset: str = "papers"  # model files written before presets existed used the papers' settings
    calibration: str
    training_sha256: str | None = None
    training_n: int | None = None
    heldout_alp_gap: AlpGapDoc | None = None


class AttributeDriftDoc(Document):
    present: bool
    psi: float | None
    level: str
    chi2: float | None
    dof: int | None
    p_value: float | None
    n_reference: int
    n_current: int
    n_missing: int = 0
    unseen_values: list[str] = []
    out_of_scale_values: list[str] = []
    na_share_reference: float | None = None
    na_share_current: float | None = None
    na_share_p: float | None = None
    na_share_changed: bool = False


class MetricComparisonRow(Document):
    """One metric of one level: its ALP estimate, and its realized value when labels exist."""

    level: str
    metric: str
    estimated: float | None
    realized: float | None = None


class WaveEstimateDocument(Document):
    """A new wave's estimate (and realized values when the wave has its scores)."""

    n: int
    classes: list[Label]
    alp_matrix: list[list[float]]
    estimated: dict[str, float | None]
    levels: dict[str, Level]  # real-valued (ALP) matrices; no per-fold values
    estimated_class_counts: dict[str, float]
    estimated_nps: NetScoreFigure | None = None
    drift: dict[str, AttributeDriftDoc] = {}
    warnings: list[str] = []
    model: EstimatingModel
    source: dict[str, Any] = {}
    metric_comparison: list[MetricComparisonRow] = []
    realized: dict[str, float | None] | None = None
    realized_levels: dict[str, dict[str, Any]] | None = None
    realized_nps: NetScoreFigure | None = None

    @property
    def filename(self) -> str | None:
        value = self.source.get("filename")
        return None if value is None else str(value)


def read_wave_estimate(path: str | Path) -> WaveEstimateDocument:
    """Read and validate an estimate JSON; :class:`ResultsError` naming the file otherwise."""
    return WaveEstimateDocument.from_dict(read_json_object(path, "new-wave estimate"),
                                          source=Path(path).name)
