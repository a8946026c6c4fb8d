"""The alert bands of a saved model: the whole reference's, and each segment's own.

A segment's band is centred on its *own* held-out level, so that a structurally unhappy bank or
region is not flagged in every wave; small segments are shrunk toward the whole by empirical
Bayes (docs/alp.md, "Alerts"): w_s = τ²/(τ² + V_s), level_s = L + w_s·(L_s − L),
unit_sd_s = u + w_s·(u_s − u), level_sd_s = √(w_s·V_s), u_s one respondent's SD of the
*realized* metric. A segment absent from the training data gets the whole's band, level_sd = τ.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from cx_app.estimate.alerts import DEFAULT_SIGMAS, ReferenceBand
from cx_app.estimate.model_metadata import HeldOutFigures, SegmentErrorsDoc, SegmentHeldOutDoc
from cx_app.estimate.segment_error import MIN_HELDOUT_SEGMENT, segment_correction

__all__ = ["NO_SEGMENT_BANDS", "model_bands", "segment_bands"]

NO_SEGMENT_BANDS = ("no segment alert: the model file keeps no usual range per segment (trained "
                    "before cx-app kept them); retrain the model for segment alerts")
"""The note of a segment whose model file keeps no segment levels."""


def model_bands(cv: HeldOutFigures) -> dict[str, ReferenceBand]:
    """The default bands of a saved model from its cross-validation metadata: accuracy from
    its pooled held-out figures (binomial spread), the net score from its held-out folds; a
    figure the file does not keep gets no band. Centred on the estimator's own held-out value,
    not the realized one, so that a known held-out gap does not flag every wave
    (docs/alp.md, "Alerts")."""
    bands: dict[str, ReferenceBand] = {}
    gap = cv.alp_gap
    if gap is not None and gap.accuracy_alp is not None and gap.accuracy_cm is not None \
            and cv.n:
        a = float(gap.accuracy_cm)  # the binomial spread of the held-out accuracy
        bands["accuracy"] = ReferenceBand("accuracy", float(gap.accuracy_alp),
                                          math.sqrt(max(a * (1 - a), 0.0)),
                                          f"held-out ALP accuracy of {cv.n} respondents ± "
                                          f"{DEFAULT_SIGMAS:g} binomial SD at each wave's size")
    net = cv.net_score_error
    if net is not None and len(net.fold_realized) >= 2 \
            and None not in (*net.fold_realized, *net.fold_estimated):
        # the answers' spread per respondent: fold variance V_f = 100²·ΣVar(s_i)/n_f²
        unit = [v * m for v, m in zip(net.fold_outcome_variance, net.fold_n, strict=False)
                if v is not None]
        # newer files keep one respondent's SD of the realized outcome itself (what "3
        # standard errors at its size" of a realized net score means), and the band then also
        # carries the uncertainty of its centre, as a segment's own band does
        floor = math.sqrt(float(np.mean(unit))) if unit else 0.0
        if net.outcome_sd is not None:
            floor = max(floor, float(net.outcome_sd))
        realized = ReferenceBand.from_chunks("net_score", net.fold_realized, net.fold_n,
                                             unit_sd_floor=floor)
        centre = float(np.average(net.fold_estimated, weights=net.fold_n))
        level_sd = (0.0 if net.outcome_sd is None
                    else realized.unit_sd / math.sqrt(max(sum(net.fold_n), 1)))
        bands["net_score"] = ReferenceBand("net_score", centre, realized.unit_sd,
                                           realized.basis.replace("reference:", "held-out "
                                                                  "estimate:"),
                                           level_sd=level_sd)
    return bands


def _level(metric: str, doc: SegmentHeldOutDoc) -> tuple[float, float, float] | None:
    """(level, one respondent's SD of the realized metric, one respondent's SD of its
    estimate) of one segment for one metric; None when not kept."""
    if metric == "net_score":
        if doc.estimated is None or doc.outcome_sd is None:
            return None
        spread = doc.outcome_sd if doc.estimated_sd is None else doc.estimated_sd
        return float(doc.estimated), float(doc.outcome_sd), float(spread)
    if doc.accuracy_alp is None or doc.accuracy is None:
        return None
    a = float(doc.accuracy)
    unit = math.sqrt(max(a * (1 - a), 0.0))
    spread = unit if doc.accuracy_alp_sd is None else doc.accuracy_alp_sd
    return float(doc.accuracy_alp), unit, float(spread)


def segment_bands(kept: Mapping[str, SegmentErrorsDoc] | None,
                  by: str) -> dict[str, dict[str, ReferenceBand]] | None:
    """``{segment: {metric: band}}`` for the segments of column ``by`` (module docstring),
    from a model's kept held-out segment figures (``model.cv.net_score_error.segments``); a
    segment absent from the training data is looked up under ``""`` (the whole, widened by
    the segments' spread). None when the model file keeps no segment levels for ``by``."""
    column = None if kept is None else kept.get(by)
    if column is None:
        return None
    out: dict[str, dict[str, ReferenceBand]] = {label: {} for label in column.labels}
    out[""] = {}
    for metric in ("accuracy", "net_score"):
        figures = {label: (doc.n, *lv) for label, doc in column.labels.items()
                   if doc.n > 0 and (lv := _level(metric, doc)) is not None}
        if not figures:
            continue
        n, level, unit, spread = np.array(list(figures.values()), dtype=float).T
        whole = float(np.average(level, weights=n))
        whole_unit = math.sqrt(float(np.average(unit**2, weights=n)))
        variance = spread**2 / n
        big = n >= MIN_HELDOUT_SEGMENT
        tau2 = (max(0.0, float(np.mean((level[big] - whole) ** 2 - variance[big])))
                if big.any() else 0.0)
        for i, label in enumerate(figures):
            w = tau2 / (tau2 + variance[i]) if tau2 + variance[i] > 0 else 0.0
            centre = whole + w * (level[i] - whole)
            if metric == "net_score":
                centre -= segment_correction(kept, by, label).correction
            out[label][metric] = ReferenceBand(
                metric, centre, whole_unit + w * (unit[i] - whole_unit),
                f"own reference: this {by}'s held-out level in the training data "
                f"({int(n[i])} respondents, weight {w:.2f} against all respondents) ± "
                f"{DEFAULT_SIGMAS:g} SD at each wave's size",
                level_sd=math.sqrt(w * variance[i]), comparison="own reference")
        out[""][metric] = ReferenceBand(
            metric, whole, whole_unit, f"all respondents of the training data: this {by} was "
            f"not in it (± {DEFAULT_SIGMAS:g} SD at each wave's size, widened by the segments' "
            "spread)", level_sd=math.sqrt(tau2))
    return out if out[""] else None  # an older file: no segment kept its level
