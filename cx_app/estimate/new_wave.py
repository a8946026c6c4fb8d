"""Apply a saved model to a new survey wave: estimated performance and net score without labels.

NPS_est = 100·(Σ_i p̂_i,positive − Σ_i p̂_i,negative)/N (MATH.md §8); its interval is for *this*
wave's realized score, SE = √(SE_outcome² + SE_model² + SE_reference² [+ SE_segment²]): each
term and the fallbacks of older model files are in docs/alp.md ("Estimated NPS and its interval").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import pandas as pd
from pydantic import Field, PlainSerializer, computed_field, field_serializer

from cx_app.engine.catalogue import MACRO_SUMMARY, WAVE_SUMMARY
from cx_app.engine.confusion import ConfusionMatrix
from cx_app.engine.levels import Level
from cx_app.errors import AnalysisError
from cx_app.estimate.alerts import Alert, AlertThresholds, estimate_alerts
from cx_app.estimate.alp import alp_confusion_matrix, net_outcome, net_parts
from cx_app.estimate.document import EstimatingModel, ProvenanceBlock, WaveEstimateDocument
from cx_app.estimate.drift import DriftReport, attribute_drift
from cx_app.estimate.metric_intervals import (
    MetricComparisonRow,
    MetricIntervals,
    level_values,
    wave_metric_intervals,
)
from cx_app.estimate.model_metadata import NetScoreErrorDoc
from cx_app.estimate.ppi import AuditedFigure, AuditResult
from cx_app.provenance import provenance_block, sha256_hex
from cx_app.result import Estimate, Result
from cx_app.survey.data import SourceInfo
from cx_app.survey.nps import (
    Z95,
    NetScoreGroups,
    NpsResult,
    groups_for_schema,
    net_score_from_counts,
    nps_summary,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cx_app.estimate.model_file import TrainedModel
    from cx_app.estimate.segment_error import SegmentCorrection
    from cx_app.survey.importing import SurveyData

__all__ = ["EstimatedNetScore", "WaveEstimate", "estimate_wave", "estimated_net_score",
           "heldout_net_score_error", "model_net_score_se", "model_reference_se"]

SMALL_WAVE = 200
"""Below this many respondents the ALP estimate of a wave is noisy; a warning says so."""


class EstimatedNetScore(Estimate):
    """An estimated net score (points) with its interval and the two SE components."""

    se: float
    se_sampling: float
    """The fresh-sample part (0 unless the model file lacks its held-out error)."""
    se_model: float
    """The model's systematic error, measured on held-out folds."""
    n: int
    counts: dict[str, float]
    shares: dict[str, float]
    kind: str = "nps"
    n_effective: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """Weighted estimates only: Kish's effective sample size of the wave's weights."""
    se_outcome: float = 0.0
    """The spread of these respondents' answers under the model's probabilities."""
    covers: str = ""
    """What the interval describes, in one sentence for the output."""
    se_reference: float = 0.0
    """The reference survey's own sampling error of its net score, carried by the model."""
    se_segment: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """A segment's own held-out error after its correction (None unless the interval
    ``covers`` :data:`COVERS_SEGMENT`)."""
    segment_correction: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """Points subtracted from a segment's probability mean: its shrunken held-out error
    (None unless the interval ``covers`` :data:`COVERS_SEGMENT`)."""

    @computed_field(exclude_if=lambda v: not v)
    @property
    def weighted(self) -> bool:
        return self.n_effective is not None


COVERS_WAVE = ("this wave's realized score: the spread of its respondents' answers under the "
               "model's probabilities plus the model's error on held-out folds and the "
               "training survey's own sampling error")
COVERS_SAMPLE = ("a new sample's score (fresh-sample error included: the model file has no "
                 "held-out error)")
COVERS_SEGMENT = ("this segment's realized score: its respondents' answers under the model's "
                  "probabilities, the model's error on held-out folds, and the segment's own "
                  "held-out error after its correction")
COVERS_SEGMENT_SAMPLE = ("this segment's realized score, with a fresh-sample error for the "
                         "segment's unknown own error (the model file keeps no held-out error "
                         "per segment)")


def estimated_net_score(proba: np.ndarray, classes: Sequence, groups: NetScoreGroups, *,
                        kind: str = "nps", weights: np.ndarray | None = None,
                        model_se: float | None = None, reference_se: float = 0.0,
                        segment: SegmentCorrection | None = None) -> EstimatedNetScore:
    """Net score from class probabilities and its interval (module docstring).

    ``model_se`` None (an older model file) falls back to the wider fresh-sample interval;
    ``reference_se`` counts with ``model_se`` only; ``segment``: the respondents are one
    segment of a wave (:func:`cx_app.estimate.segment_error.segment_correction`).
    """
    from cx_app.survey.weights import effective_sample_size

    pos, neg = net_parts(proba, classes, groups)
    n = len(pos)
    if n == 0:
        raise AnalysisError("no respondents to estimate a net score from")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    total = float(w.sum())
    n_eff = float(n) if weights is None else effective_sample_size(w)
    neutral = np.clip(1.0 - pos - neg, 0.0, None)
    shares = np.array([w @ neg, w @ neutral, w @ pos]) / total
    value = 100.0 * float(shares[2] - shares[0])
    var_outcome = float(np.sum(w**2 * (pos + neg - (pos - neg) ** 2))) / total**2
    se_outcome = 100.0 * math.sqrt(max(var_outcome, 0.0))
    wald = net_score_from_counts(*(shares * n_eff), groups=groups)
    if model_se is None:
        se, se_sampling, se_model, covers = (math.hypot(wald.se, se_outcome), wald.se, 0.0,
                                             COVERS_SAMPLE)
        centre = 100.0 * ((shares[2] * n_eff + 0.75) - (shares[0] * n_eff + 0.75)) / (n_eff + 3)
    else:
        se, se_sampling, se_model, covers = (math.hypot(se_outcome, model_se, reference_se), 0.0,
                                             float(model_se), COVERS_WAVE)
        centre = value
    se_segment = correction = None
    if segment is not None and model_se is not None:
        if segment.fresh_sample:  # an older model file: the segment's own error is unknown
            se_sampling, covers = wald.se, COVERS_SEGMENT_SAMPLE
            se = math.hypot(se, wald.se)
        else:
            se_segment, correction, covers = segment.se, segment.correction, COVERS_SEGMENT
            se = math.hypot(se, se_segment)
            value = centre = float(np.clip(value - correction, -100.0, 100.0))
    ci = (float(max(-100.0, centre - Z95 * se)), float(min(100.0, centre + Z95 * se)))
    counts = {k: float(v) for k, v in zip(groups.names, shares * n, strict=True)}
    return EstimatedNetScore(value=value, ci95=ci, se=se, se_sampling=se_sampling,
                             se_model=se_model, n=n, counts=counts, shares=dict(wald.shares),
                             kind=kind, n_effective=None if weights is None else n_eff,
                             se_outcome=se_outcome, covers=covers,
                             se_reference=0.0 if model_se is None else float(reference_se),
                             se_segment=se_segment, segment_correction=correction)


def heldout_net_score_error(y_true: Sequence, proba: np.ndarray, fold: np.ndarray,
                            classes: Sequence, groups: NetScoreGroups) -> NetScoreErrorDoc:
    """The model's systematic net-score error on its held-out folds: with each fold's
    estimated E_f and realized R_f net score and its answers' variance V_f = 100²·Σ Var(s_i)/n_f²,
    SE_model² = max(0, mean_f((E_f − R_f)² − V_f)) (with fewer than 3 folds, not estimable: the
    mean squared error itself); ``reference_se`` = 100·√(Σ_i Var(s_i))/n over all of them."""
    pos, neg = net_parts(proba, classes, groups)
    outcome = net_outcome(y_true, groups)
    spread = pos + neg - (pos - neg) ** 2
    index = np.unique(np.asarray(fold), return_inverse=True)[1]
    sizes = np.bincount(index)
    estimated = 100.0 * np.bincount(index, weights=pos - neg) / sizes
    realized = 100.0 * np.bincount(index, weights=outcome) / sizes
    variance = 100.0**2 * np.bincount(index, weights=spread) / sizes**2
    errors = estimated - realized
    excess = errors**2 - variance
    squared = float(np.mean(excess)) if len(errors) >= 3 else float(np.mean(errors**2))
    return NetScoreErrorDoc(
        fold_estimated=estimated.tolist(), fold_realized=realized.tolist(),
        fold_n=sizes.tolist(), fold_outcome_variance=variance.tolist(),
        bias=float(np.mean(errors)),
        model_se=math.sqrt(max(squared, 0.0)),
        reference_se=100.0 * math.sqrt(float(spread.sum())) / len(spread),
        outcome_sd=100.0 * float(np.std(outcome)))  # the alert band's spread per respondent


def _absent(value: Any) -> bool:
    return value is None


class WaveEstimate(Result):
    """Everything estimated for one wave (and realized, when its labels are present); its
    JSON is what ``cx-app estimate --json`` prints."""

    n: int
    classes: tuple
    predictions: pd.DataFrame = Field(repr=False, exclude=True)
    alp: Annotated[ConfusionMatrix, PlainSerializer(lambda cm: np.asarray(cm.counts).tolist())
                   ] = Field(serialization_alias="alp_matrix")
    estimated: dict
    levels: tuple[Level, ...]
    estimated_class_counts: dict
    estimated_nps: EstimatedNetScore
    drift: DriftReport
    warnings: tuple[str, ...]
    model_summary: Annotated[EstimatingModel, PlainSerializer(EstimatingModel.to_dict)] = Field(
        serialization_alias="model")
    source: SourceInfo
    realized: dict | None = Field(default=None, exclude_if=_absent)
    realized_levels: tuple[Level, ...] | None = Field(default=None, exclude_if=_absent)
    realized_nps: NpsResult | None = Field(default=None, exclude_if=_absent)
    provenance: Annotated[ProvenanceBlock, PlainSerializer(ProvenanceBlock.to_dict)]
    metric_intervals: MetricIntervals | None = Field(default=None, exclude_if=_absent)
    alerts: tuple[Alert, ...] = ()  # estimated accuracy and net score
    audit: Annotated[AuditResult, PlainSerializer(AuditResult.to_dict)] | None = Field(
        default=None, exclude_if=_absent)

    @field_serializer("levels")
    def _levels(self, levels: tuple) -> dict[str, Any]:  # real-valued (ALP) matrices
        return {lv.name: lv.model_dump(mode="json", exclude={"name"}) for lv in levels}

    @field_serializer("realized_levels")
    def _realized_levels(self, levels: tuple | None) -> dict[str, Any] | None:
        return None if levels is None else {lv.name: lv.metrics for lv in levels}

    @computed_field(exclude_if=_absent)
    @property
    def estimated_ci95(self) -> dict[str, list[float]] | None:
        """95 % interval of each ``estimated`` metric (same keys)."""
        return None if self.metric_intervals is None else self.metric_intervals.ci95()

    @computed_field(exclude_if=_absent, return_type=Annotated[
        AuditedFigure, PlainSerializer(AuditedFigure.to_dict)] | None)
    @property
    def audited_nps(self) -> AuditedFigure | None:
        """The net score from an audit sample of the wave, beside ``estimated_nps``."""
        return None if self.audit is None else self.audit.audited_nps

    @computed_field(exclude_if=_absent)
    @property
    def shift_detected(self) -> bool | None:
        return None if self.audit is None else self.audit.shift_detected

    def predictions_frame(self) -> pd.DataFrame:
        """A copy of :attr:`predictions` (:func:`_predictions`)."""
        return self.predictions.copy()

    def to_json(self) -> str:
        """The estimate as JSON text (what ``cx-app estimate --json`` prints)."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, default=str)

    def document(self) -> WaveEstimateDocument:
        """The estimate as its typed document (the JSON read back), as reports take it."""
        return WaveEstimateDocument.from_dict(json.loads(self.to_json()))

    @computed_field(alias="metric_comparison")
    @property
    def metric_comparison_rows(self) -> list[MetricComparisonRow]:
        return self.metric_comparison()

    def metric_comparison(self) -> list[MetricComparisonRow]:
        """The wave's headline metrics (:data:`cx_app.engine.catalogue.WAVE_SUMMARY`) at each
        level with their intervals and, when the wave carries its scores, realized values;
        the New wave page and the report show these rows."""
        realized = {lv.name: lv.metrics for lv in self.realized_levels or ()}
        intervals = {} if self.metric_intervals is None else self.metric_intervals.levels
        return [MetricComparisonRow(
                    level=level.name, metric=key, estimated=level.metrics[key],
                    interval=intervals.get(level.name, {}).get(key),
                    realized=(None if self.realized_levels is None
                              else realized.get(level.name, {}).get(key)))
                for level in self.levels for key in WAVE_SUMMARY if key in level.metrics]


def model_reference_se(model: TrainedModel) -> float:
    """The training survey's own sampling error of its net score (points): kept at training,
    or for older model files the adjusted-Wald SE of its class counts (a little wider)."""
    error = model.cv.net_score_error
    if error is not None and error.reference_se is not None:
        return float(error.reference_se)
    counts = model.training.class_counts or {}
    if not counts:
        return 0.0
    groups = groups_for_schema(model.schema)
    side = {**{str(c): 2 for c in groups.positive}, **{str(c): 0 for c in groups.negative}}
    n = [0, 0, 0]  # negative, neutral, positive
    for c, v in counts.items():
        n[side.get(c, 1)] += int(v)
    return float(net_score_from_counts(*n, groups=groups).se)


def model_net_score_se(model: TrainedModel) -> float | None:
    """The model's held-out systematic net-score error (points; None: an older model file)."""
    error = model.cv.net_score_error
    return None if error is None or error.model_se is None else float(error.model_se)


def training_median(counts: Mapping[str, int]) -> float:
    """Median of a training attribute from its value counts (what the model file keeps)."""
    if not counts:
        raise AnalysisError("the model file has no training distribution for this attribute")
    return float(np.median(np.repeat([float(v) for v in counts],
                                     [int(c) for c in counts.values()])))


def _model_inputs(model: TrainedModel, survey: SurveyData, absent: list[str]
                  ) -> tuple[pd.DataFrame, dict[str, float], dict[str, int]]:
    """The wave's attributes as the model takes them, the training medians and the gaps filled
    (attribute: count), each with the training data's median, never this wave's: by the model's
    own gap step (svm and ordinal: with "was missing" indicators), or here for older files."""
    if len(absent) == len(model.attribute_names):
        raise AnalysisError(
            f"{survey.source.filename}: the wave has none of the model's attributes "
            f"({', '.join(model.attribute_names)}); it cannot be scored"
        )
    if len(survey.X) == 0:
        raise AnalysisError(f"{survey.source.filename}: no usable respondents in this wave")
    X = survey.X.reindex(columns=list(model.attribute_names))
    medians = {a: training_median(model.attribute_distributions.get(a, {}))
               for a in model.attribute_names}
    gaps = {a: int(X[a].isna().sum()) for a in survey.X.columns
            if a not in absent and a in medians}
    # a question the wave did not ask is set to its training median for everyone ("answered,
    # typical"), not marked unanswered: its gap indicator would read it as "not applicable"
    X = X.assign(**{a: medians[a] for a in absent})
    if not model.fills_gaps:
        X = X.fillna(medians)
    return X, medians, {a: g for a, g in gaps.items() if g}


def _predictions(schema: Any, survey: SurveyData, classes: tuple, proba: np.ndarray,
                 y_pred: np.ndarray, groups: NetScoreGroups) -> pd.DataFrame:
    """Per respondent: respondent id, sheet row, predicted class, its group, p per class."""
    frame = pd.DataFrame({
        "sheet_row": survey.X.index.to_numpy(),
        "predicted": y_pred,
        "group": [groups.group_of(c) for c in y_pred],
    })
    id_column = schema.respondent_id
    if id_column and id_column.name in survey.model_frame.columns:
        frame.insert(0, "respondent_id", survey.model_frame[id_column.name].to_numpy())
    for j, c in enumerate(classes):
        frame[f"p_{c}"] = proba[:, j]
    return frame


def _wave_warnings(model: TrainedModel, survey: SurveyData, drift: DriftReport, absent: list[str],
                   medians: Mapping[str, float], filled: Mapping[str, int]) -> list[str]:
    """What the analyst must know about the estimate: the model file's notes, drift, absent
    and unanswered attributes, a small wave, excluded rows."""
    from cx_app.estimate.calibration import coarse_probability_advice
    from cx_app.models.names import model_display_name

    warnings = list(model.load_warnings)
    warnings.extend(model.cv.calibration_warnings)
    coarse = coarse_probability_advice(model.algorithm_id, model_display_name(model.algorithm_id),
                                       model.calibration)
    if coarse and coarse not in warnings:  # files saved before the warning existed
        warnings.append(coarse)
    warnings.extend(drift.warnings)
    shown = {a.name: a.display for a in model.schema.attributes}  # each attribute by its label
    for name in absent:
        warnings.append(
            f"attribute '{shown.get(name, name)}' is not in this wave: every respondent was given its training "
            f"median ({medians[name]:g}), so the model cannot see differences in it and the "
            "estimate leans on the other attributes; a model trained without it estimates "
            "such a wave more closely (in the project's own test of this case the error "
            "roughly halved): retrain with a schema that leaves it out"
        )
    if filled:
        warnings.append(
            "unanswered attribute scores filled with the training data's median (not this "
            "wave's): " + ", ".join(f"{shown.get(a, a)} {g} ({medians[a]:g})"
                                   for a, g in filled.items()))
    n = len(survey.X)
    if n < SMALL_WAVE:
        warnings.append(
            f"only {n} respondents: the estimated metrics of one wave this small vary a lot "
            "(see the interval of the net score)"
        )
    excluded = survey.quality.rows_read - survey.quality.rows_used
    if excluded:
        reasons = survey.quality.counts_by_reason()
        detail = "; ".join(f"{reason}: {count}" for reason, count in reasons.items())
        columns = sorted({e.column for e in survey.quality.excluded if e.column})
        warnings.append(
            f"{excluded} row(s) of the file were excluded and not estimated"
            + (f" ({detail})" if detail else "")
            + (f"; columns: {', '.join(columns)}" if columns else "")
            + " — see the data-quality report; if these are new answer codes or out-of-scale "
            "values the wave differs from the training data and the estimate may not hold"
        )
    return warnings


def _realized(schema: Any, survey: SurveyData, classes: tuple, y_pred: np.ndarray,
              resolved: Any, groups: NetScoreGroups) -> tuple[dict | None, tuple | None, Any]:
    """The realized metrics, levels and net score over the respondents with a valid answer
    (every respondent is estimated); Nones when the wave carries no answers."""
    from cx_app.engine.confusion import confusion_matrix
    from cx_app.engine.levels import reduce_confusion

    target = schema.target.name
    labeled = (survey.model_frame[target].notna().to_numpy() if survey.has_target
               else np.zeros(len(survey.X), dtype=bool))
    if not labeled.any():
        return None, None, None
    y = survey.model_frame[target][labeled].to_numpy(dtype=np.int64)
    regular = confusion_matrix(list(y), list(y_pred[labeled]), labels=classes)
    levels = reduce_confusion(regular, resolved)
    weights = survey.model_weights
    return ({k: levels[0].metrics[k] for k in MACRO_SUMMARY}, levels,
            nps_summary(y, groups=groups, weights=None if weights is None else weights[labeled]))


def estimate_wave(model: TrainedModel, survey: SurveyData, *,
                  thresholds: AlertThresholds | None = None) -> WaveEstimate:
    """Estimate a wave read with the model's schema (its target column may be absent).

    An attribute the wave lacks is filled with its training median and warned about; drift
    reports it as missing. ``thresholds``: the analyst's alert limits (default: the reference
    bands of :mod:`cx_app.estimate.alerts`).
    """
    from cx_app.engine.grouping import resolve_plan
    from cx_app.engine.levels import reduce_confusion
    from cx_app.estimate.alert_bands import model_bands

    schema = model.schema
    classes = tuple(model.classes)
    absent = [a for a in model.attribute_names
              if a not in survey.X.columns or a in getattr(survey, "absent_attributes", ())]
    # Drift sees only the attributes the wave has: an absent one is reported as missing.
    drift = attribute_drift(
        model.attribute_distributions, survey.X[[c for c in survey.X.columns if c not in absent]],
        scales={a.name: (a.scale.min, a.scale.max) for a in schema.attributes if a.scale},
        reference_gaps=model.attribute_gaps, reference_n=model.training.n,
        labels={a.name: a.display for a in schema.attributes})
    X, medians, filled = _model_inputs(model, survey, absent)
    n = len(X)
    proba = model.predict_proba(X)
    pred_idx = proba.argmax(axis=1)
    y_pred = np.asarray(classes, dtype=object)[pred_idx]

    alp = alp_confusion_matrix(proba, classes, y_pred)
    resolved = resolve_plan(schema.plan_spec, classes)
    levels = reduce_confusion(alp, resolved)
    estimated = {k: levels[0].metrics[k] for k in MACRO_SUMMARY}
    intervals = wave_metric_intervals(proba, pred_idx, level_values(levels), resolved,
                                      model.cv)
    groups = groups_for_schema(schema)
    kind = "nps" if schema.is_nps else "csat" if schema.target.kind == "csat" else "net"
    est_nps = estimated_net_score(proba, classes, groups, kind=kind,
                                  weights=survey.model_weights,
                                  model_se=model_net_score_se(model),
                                  reference_se=model_reference_se(model))
    pred_frame = _predictions(schema, survey, classes, proba, y_pred, groups)
    warnings = _wave_warnings(model, survey, drift, absent, medians, filled)
    realized, realized_levels, realized_nps = _realized(schema, survey, classes, y_pred,
                                                        resolved, groups)

    return WaveEstimate(
        n=n, classes=classes, predictions=pred_frame, alp=alp, estimated=estimated,
        levels=levels,
        estimated_class_counts={str(c): float(v) for c, v in zip(classes, proba.sum(axis=0),
                                                                  strict=True)},
        estimated_nps=est_nps, drift=drift, warnings=tuple(warnings),
        model_summary=EstimatingModel(
            algorithm=model.algorithm_id, preset=model.preset, calibration=model.calibration,
            training_sha256=model.training.sha256, training_n=model.training.n,
            heldout_alp_gap=model.cv.alp_gap, file_sha256=model.file_sha256 or None,
            training_file=model.training.filename, training_sheet=model.training.sheet,
            attributes=list(model.attribute_names), schema_sha256=sha256_hex(model.schema_yaml)),
        source=survey.source,
        provenance=ProvenanceBlock.from_dict(provenance_block(
            seed=model.cv.seed, folds=model.cv.folds,
            preset=model.preset, schema_yaml=survey.schema.to_yaml(),
            inputs={survey.source.filename or "wave": survey.source.sha256,
                    "model file": model.file_sha256 or None})),
        realized=realized, realized_levels=realized_levels, realized_nps=realized_nps,
        metric_intervals=intervals,
        alerts=estimate_alerts(estimated["accuracy"], est_nps.value, n,
                               model_bands(model.cv), thresholds),
    )
