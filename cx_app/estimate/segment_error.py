"""A segment's own held-out net-score error: the part of a segment's NPS its attributes miss.

Each segment's held-out error e_s with its answers' variance V_s is kept at training
(:func:`heldout_segment_errors`); a new wave's segment is corrected by the shrunken error
ρ·w·e_s, w = τ²/(τ² + V_s), and its interval gets SE_segment (:func:`segment_correction`).
The formulas, ρ (:func:`segment_stability`, issue 36) and what was measured: docs/alp.md
("Estimated NPS and its interval", item 4).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cx_app.estimate.alp import net_outcome, net_parts
from cx_app.estimate.model_metadata import SegmentErrorsDoc, SegmentHeldOutDoc

if TYPE_CHECKING:
    from cx_app.survey.nps import NetScoreGroups

__all__ = ["MAX_SEGMENT_LABELS", "SegmentCorrection", "heldout_segment_errors",
           "segment_correction", "segment_stability"]

MAX_SEGMENT_LABELS = 200
"""A segment column with more values than this keeps no held-out errors (an id, a date)."""
MIN_HELDOUT_SEGMENT = 10
"""Segments with fewer training respondents do not enter τ² (their error is all noise)."""


@dataclass(frozen=True)
class SegmentCorrection:
    """What a segment's estimate is corrected by (points, subtracted) and the SE it adds."""

    correction: float
    se: float
    note: str = ""
    fresh_sample: bool = False
    """True: no held-out segment error kept; the interval adds a fresh-sample error instead."""


def heldout_segment_errors(y_true: Sequence, proba: np.ndarray, classes: Sequence,
                           groups: NetScoreGroups,
                           segments: Mapping[str, Sequence[str]],
                           wave: str | None = None) -> dict[str, SegmentErrorsDoc]:
    """Per segment column (``segments``: name → each respondent's segment label, aligned with
    ``y_true``): each segment's held-out error, the answers' variance of it and its own level
    and spread for its alert band (:class:`~cx_app.estimate.model_metadata.SegmentHeldOutDoc`),
    and τ. ``wave``: the segment column naming each respondent's wave; with two waves or more,
    each other column also keeps its ``stability`` (:func:`segment_stability`)."""
    y = np.asarray(y_true)
    p = np.asarray(proba, dtype=float)
    pos, neg = net_parts(p, classes, groups)
    outcome = net_outcome(y, groups)
    spread = pos + neg - (pos - neg) ** 2
    top = p.max(axis=1)
    hit = (y == np.asarray(list(classes), dtype=object)[p.argmax(axis=1)]).astype(float)

    def error_and_variance(rows: np.ndarray) -> tuple[float, float]:
        m = int(rows.sum())
        return (100.0 * float(np.mean(pos[rows] - neg[rows]) - np.mean(outcome[rows])),
                100.0**2 * float(spread[rows].sum()) / m**2)

    out: dict[str, SegmentErrorsDoc] = {}
    for name, labels in segments.items():
        values = np.asarray([str(v) for v in labels], dtype=object)
        distinct = np.unique(values)
        if len(values) != len(y) or len(distinct) > MAX_SEGMENT_LABELS:
            continue
        per_label = {}
        for label in distinct:
            rows = values == label
            error, variance = error_and_variance(rows)
            per_label[str(label)] = SegmentHeldOutDoc(
                n=int(rows.sum()), error=error, variance=variance,
                estimated=100.0 * float(np.mean(pos[rows] - neg[rows])),
                outcome_sd=100.0 * float(np.std(outcome[rows])),
                estimated_sd=100.0 * float(np.std(pos[rows] - neg[rows])),
                accuracy_alp=float(np.mean(top[rows])), accuracy_alp_sd=float(np.std(top[rows])),
                accuracy=float(np.mean(hit[rows])))
        big = [v for v in per_label.values() if v.n >= MIN_HELDOUT_SEGMENT]
        tau2 = max(0.0, float(np.mean([v.error**2 - v.variance for v in big]))) if big else 0.0
        kept = {}
        waves = segments.get(wave) if wave is not None and wave != name else None
        if waves is not None and len(waves) == len(values):
            when = np.asarray([str(v) for v in waves], dtype=object)
            periods = np.unique(when)
            err = np.full((len(distinct), len(periods)), np.nan)
            var = np.full_like(err, np.nan)
            for i, label in enumerate(distinct):
                for t, period in enumerate(periods):
                    rows = (values == label) & (when == period)
                    if rows.sum() >= MIN_HELDOUT_SEGMENT:
                        err[i, t], var[i, t] = error_and_variance(rows)
            stability = segment_stability(err, var)
            if stability is not None:
                kept = {"stability": stability, "stability_waves": len(periods)}
        out[name] = SegmentErrorsDoc(labels=per_label, between_sd=math.sqrt(tau2), **kept)
    return out


def segment_stability(errors: np.ndarray, variances: np.ndarray) -> float | None:
    """How much of the segments' own effects carries over from one wave to another, 0..1.

    ``errors``/``variances``: segments × waves held-out errors and their answers' variances
    (NaN where a segment had too few respondents in a wave). With each wave's errors centred
    on their mean (``d``), the effects' variance beyond noise is ``A = mean(d² − V)`` and
    their covariance between two different waves of one segment ``B = mean(d_t·d_t')``; the
    stability is ``ρ = B / A`` clipped to 0..1 — the share of an effect that persists, under
    an effect that is a lasting part plus a part new in every wave. None when it cannot be
    measured (fewer than two waves or segments, or no spread beyond noise).

    >>> e = np.array([[4.0, 2.0], [-4.0, -2.0]])       # centred already; V = 1
    >>> round(segment_stability(e, np.ones((2, 2))), 4)  # B = 8, A = (16 + 4)/2 − 1 = 9
    0.8889
    """
    e, v = np.asarray(errors, dtype=float), np.asarray(variances, dtype=float)
    if e.ndim != 2 or e.shape[0] < 2 or e.shape[1] < 2:
        return None
    d = e - np.nanmean(e, axis=0, keepdims=True)
    within = d**2 - v
    if not np.isfinite(within).any():
        return None
    a = float(np.nanmean(within))
    t, u = np.triu_indices(d.shape[1], k=1)  # every pair of two different waves
    cross = (d[:, t] * d[:, u]).ravel()
    cross = cross[np.isfinite(cross)]
    if a <= 0 or not cross.size:
        return None
    return float(min(1.0, max(0.0, float(np.mean(cross)) / a)))


def segment_correction(kept: Mapping[str, SegmentErrorsDoc] | None, by: str,
                       label: str) -> SegmentCorrection:
    """The correction and added SE of segment ``label`` of column ``by`` (module docstring),
    from a model's kept held-out segment errors (``kept``: ``model.cv.net_score_error
    .segments``; None or without ``by``: the fresh-sample fallback)."""
    column = None if kept is None else kept.get(by)
    if column is None:
        return SegmentCorrection(0.0, 0.0, "the model file keeps no held-out error for the "
                                 f"segments of {by!r} (trained before they were kept): the "
                                 "interval adds a fresh-sample error instead (wider); retrain "
                                 "the model for a segment's own correction", fresh_sample=True)
    tau2 = float(column.between_sd or 0.0) ** 2
    stored = column.labels.get(str(label))
    if stored is None or stored.error is None or stored.variance is None:
        return SegmentCorrection(0.0, math.sqrt(tau2), f"segment {label!r} was not in the "
                                 "training data: no correction, the segments' spread is added "
                                 "to its interval")
    error, variance = float(stored.error), float(stored.variance)
    w = tau2 / (tau2 + variance) if tau2 + variance > 0 else 0.0
    effect2 = max(error**2 - variance, tau2)
    se2 = (1 - w) ** 2 * effect2 + w**2 * variance
    rho = 1.0 if column.stability is None else float(column.stability)
    # the effect in a later wave is ρ·δ plus a new part of variance (1 − ρ²)·τ²
    se = math.sqrt(rho**2 * se2 + (1 - rho**2) * tau2)
    return SegmentCorrection(rho * w * error, se)
