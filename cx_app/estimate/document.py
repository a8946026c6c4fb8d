"""The typed new-wave estimate document: what ``cx-app estimate --json`` writes, validated.

The reports read it, ``cx-app report --new-wave`` validates it; ``from_dict(d).to_dict() == d``.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from cx_app.estimate.alerts import Alert
from cx_app.estimate.drift import AttributeDrift
from cx_app.estimate.metric_intervals import MetricComparisonRow
from cx_app.estimate.model_metadata import AlpGap
from cx_app.estimate.ppi import AuditedFigure, AuditResult
from cx_app.models.results import (
    Document,
    Label,
    LevelDocument,
    NetScoreFigure,
    Results,
    ResultsError,
    read_json_object,
)


class EstimatingModel(Document):
    """The model the wave was estimated with."""

    algorithm: str
    preset: str = "papers"  # model files written before presets existed used the papers' settings
    calibration: str
    training_sha256: str | None = None
    training_n: int | None = None
    heldout_alp_gap: AlpGap | None = None
    file_sha256: str | None = None
    """SHA-256 of the model file (None for a model not read from a file)."""
    training_file: str | None = None
    training_sheet: str | None = None
    attributes: list[str] | None = None
    schema_sha256: str | None = None


class ProvenanceBlock(Document):
    """The common provenance block (:func:`cx_app.provenance.provenance_block`)."""

    created: str
    versions: dict[str, str]
    seed: int | None = None
    folds: int | None = None
    preset: str | None = None
    schema_sha256: str | None = None
    inputs: dict[str, str | None] = {}


class WaveEstimateDocument(Document):
    """A new wave's estimate (and realized values when the wave has its scores)."""

    n: int
    classes: list[Label]
    alp_matrix: list[list[float]]
    estimated: dict[str, float | None]
    estimated_ci95: dict[str, list[float]] | None = None
    """95 % interval of each ``estimated`` metric (same keys)."""
    metric_intervals: dict[str, Any] | None = None
    """Every level's metric intervals with their SE parts (``MetricIntervals.to_dict``)."""
    levels: dict[str, LevelDocument]  # real-valued (ALP) matrices; no per-fold values
    estimated_class_counts: dict[str, float]
    estimated_nps: NetScoreFigure | None = None
    drift: dict[str, AttributeDrift] = {}
    warnings: list[str] = []
    model: EstimatingModel
    source: dict[str, Any] = {}
    metric_comparison: list[MetricComparisonRow] = []
    realized: dict[str, float | None] | None = None
    realized_levels: dict[str, dict[str, Any]] | None = None
    realized_nps: NetScoreFigure | None = None
    provenance: ProvenanceBlock | None = None
    alerts: list[Alert] = []
    audited_nps: AuditedFigure | None = None
    """The net score from an audit sample of the wave (:mod:`cx_app.estimate.audit`)."""
    shift_detected: bool | None = None
    audit: AuditResult | None = None

    @property
    def filename(self) -> str | None:
        value = self.source.get("filename")
        return None if value is None else str(value)


def read_wave_estimate(path: str | Path) -> WaveEstimateDocument:
    """Read and validate an estimate JSON; :class:`ResultsError` naming the file otherwise."""
    return WaveEstimateDocument.from_dict(read_json_object(path, "new-wave estimate"),
                                          source=Path(path).name)


def _short(sha: str | None) -> str:
    return "unknown" if not sha else sha[:12]


def check_estimate_belongs(results: Results, estimate: WaveEstimateDocument, *,
                           results_name: str = "the results",
                           estimate_name: str = "the estimate",
                           model_sha256: Collection[str] | None = None) -> None:
    """:class:`ResultsError`, one sentence naming both sides, unless the estimate was made
    with a model these results evaluated (same training file, classes, attributes, algorithm
    and preset) and, when ``model_sha256`` lists the results' model files (a project file),
    with one of them (a model fitted in the app and never read from a file has no hash)."""
    model = estimate.model
    if model.training_sha256 is None or model.attributes is None:
        raise ResultsError(
            f"{estimate_name} does not record which model and training survey it comes from "
            f"(written by an older cx-app), so it cannot be checked against {results_name}: "
            "estimate the wave again with `cx-app estimate --json`.")
    data_sha = results.provenance.sha256
    if data_sha and model.training_sha256 != data_sha:
        trained_on = model.training_file or "another file"
        raise ResultsError(
            f"{estimate_name} was made with a model trained on {trained_on} (SHA-256 "
            f"{_short(model.training_sha256)}…), but {results_name} are of "
            f"{results.provenance.file or 'another file'} (SHA-256 {_short(data_sha)}…): "
            "they do not belong together.")
    if [str(c) for c in estimate.classes] != [str(c) for c in results.dataset.classes]:
        raise ResultsError(
            f"{estimate_name} has the classes {list(estimate.classes)}, but {results_name} have "
            f"{list(results.dataset.classes)}: they do not belong together.")
    if list(model.attributes) != list(results.dataset.attributes):
        raise ResultsError(
            f"{estimate_name} was made with a model of the attributes "
            f"{', '.join(model.attributes)}, but {results_name} have "
            f"{', '.join(results.dataset.attributes)}: they do not belong together.")
    evaluated = [m for m, r in results.models.items()
                 if (r.cross_validation.algorithm, r.cross_validation.preset)
                 == (model.algorithm, model.preset)]
    if not evaluated:
        raise ResultsError(
            f"{estimate_name} was made with a model of the algorithm {model.algorithm} "
            f"({model.preset} preset), which is not one of the models of {results_name} "
            f"({', '.join(results.models) or 'none'}): they do not belong together.")
    if model_sha256 is not None and model.file_sha256 is not None \
            and model.file_sha256 not in set(model_sha256):
        raise ResultsError(
            f"{estimate_name} was made with the model file {_short(model.file_sha256)}…, which "
            f"is not one of the models of {results_name} "
            f"({', '.join(_short(s) + '…' for s in model_sha256) or 'none'}): they do not "
            "belong together.")
