"""Prediction-powered inference: the estimators of an audited wave and their typed results.

Below both :mod:`cx_app.estimate.audit`, which applies them to a wave, and the documents
(:mod:`cx_app.estimate.document`); the method and the shift test: docs/alp.md ("Audit samples").
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import model_validator
from scipy.stats import norm

from cx_app.errors import AnalysisError
from cx_app.models.results import Document
from cx_app.result import Estimate
from cx_app.survey.nps import Z95

__all__ = ["MIN_AUDIT", "AuditResult", "AuditedFigure", "ExcludedAuditRow", "PpiMean", "ShiftTest",
           "audited_figure", "f1_macro_ppi", "shift_test", "wave_ppi_mean"]

MIN_AUDIT = 10
"""Fewer audited answers than this: no audited estimate (an error says so)."""
SHIFT_ALPHA = 0.05


class PpiMean(Estimate):
    """A prediction-powered mean with its normal 95 % interval, the λ used, audit and wave
    sizes."""

    se: float
    lam: float
    n: int
    population: int

    @model_validator(mode="before")
    @classmethod
    def _normal_interval(cls, data: dict) -> dict:
        return {"ci95": (data["value"] - Z95 * data["se"], data["value"] + Z95 * data["se"]),
                **data}


def _vectors(y, yhat, pool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, yhat, pool = (np.asarray(v, dtype=float).ravel() for v in (y, yhat, pool))
    if len(y) != len(yhat) or len(y) < 2 or len(pool) < 1:
        raise AnalysisError("prediction-powered inference needs at least 2 audited answers, "
                            "each with its prediction")
    return y, yhat, pool


def wave_ppi_mean(y, yhat, yhat_wave, *, lam: float | None = None) -> PpiMean:
    """The wave's realized mean from an audit of it: λ·mean(yhat_wave) + mean(y − λ·yhat), SE² =
    (1 − n/N)·S²(y − λ·yhat)/n; ``yhat_wave`` holds every respondent's prediction (the audited
    ones included), ``lam=None`` tunes λ = cov(y, yhat)/var(yhat) clipped to [0, 1]."""
    y, yhat, pool = _vectors(y, yhat, yhat_wave)
    n, big_n = len(y), len(pool)
    if n > big_n:
        raise AnalysisError(f"the audit has {n} answers but the wave only {big_n} respondents")
    if lam is None:
        var = float(np.var(yhat, ddof=1))
        lam = 0.0 if var <= 0 else float(np.clip(np.cov(y, yhat, ddof=1)[0, 1] / var, 0.0, 1.0))
    lam = float(lam)
    d = y - lam * yhat
    value = float(lam * np.mean(pool) + np.mean(d))
    se = math.sqrt(max(0.0, (1 - n / big_n) * float(np.var(d, ddof=1)) / n))
    return PpiMean(value=value, se=se, lam=lam, n=n, population=big_n)


def f1_macro_ppi(y_idx: np.ndarray, proba_audit: np.ndarray, pred_audit: np.ndarray,
                 proba_wave: np.ndarray, pred_wave: np.ndarray) -> PpiMean:
    """Macro F1 of the wave (mean over classes present, ``2·TP_k/(A_k + Q_k)``) from the audit
    by :func:`wave_ppi_mean` per quantity and the delta method. ``y_idx``:
    the audited answers as class indices; ``pred_*``: predicted class indices."""
    k = proba_wave.shape[1]
    n, big_n = len(y_idx), len(pred_wave)
    q = np.bincount(pred_wave, minlength=k) / big_n
    influence = np.zeros(n)
    f1 = []
    for c in range(k):
        hit = ((y_idx == c) & (pred_audit == c)).astype(float)
        tp_hat = proba_audit[:, c] * (pred_audit == c)
        tp = wave_ppi_mean(hit, tp_hat, proba_wave[:, c] * (pred_wave == c))
        a = wave_ppi_mean(y_idx == c, proba_audit[:, c], proba_wave[:, c])
        denom = a.value + q[c]
        if denom <= 0:
            continue
        f1.append(2 * tp.value / denom)
        d_tp = hit - tp.lam * tp_hat
        d_a = (y_idx == c) - a.lam * proba_audit[:, c]
        influence += 2 / denom * d_tp - 2 * tp.value / denom**2 * d_a
    m = len(f1)
    se = math.sqrt(max(0.0, (1 - n / big_n) * float(np.var(influence / m, ddof=1)) / n))
    return PpiMean(value=float(np.mean(f1)), se=se, lam=float("nan"), n=n, population=big_n)


class AuditedFigure(Document):
    """An audited value with its 95 % interval; ``label_free`` is the estimate without the
    audit, ``lam`` the PPI++ weight of the model's predictions (0: the audit alone)."""

    value: float
    ci95: list[float]
    n: int
    se: float
    lam: float | None = None
    label_free: float | None = None


class ShiftTest(Document):
    """Does the audit disagree with the label-free estimate? (:func:`shift_test`)"""

    difference: float
    """Audited answers minus the model's expectation on the audited rows (points)."""
    se: float
    z: float
    p_value: float
    alpha: float = SHIFT_ALPHA
    detected: bool
    sentence: str


class ExcludedAuditRow(Document):
    row: int
    respondent_id: str | None = None
    reason: str


class AuditResult(Document):
    """What an audit sample adds to a wave's estimate (``cx-app estimate --audit``)."""

    audited_nps: AuditedFigure
    audit_only_nps: AuditedFigure
    accuracy: AuditedFigure
    group_accuracy: AuditedFigure
    f1_macro: AuditedFigure
    shift_detected: bool
    shift_test: ShiftTest
    n_audit: int
    n_wave: int
    matched_by: str
    file: str | None = None
    excluded: list[ExcludedAuditRow] = []
    unanswered: int = 0
    """Audit rows without an answer to the target question (the unaudited respondents when
    the audit is the wave file itself)."""
    notes: list[str] = []
    score: str = "NPS"
    """"NPS" for a recommend question on 0–10, else "net score" (issue 25)."""

    def headline(self) -> str:
        """One sentence: the audited net score, its interval and what the audit adds."""
        a, o = self.audited_nps, self.audit_only_nps
        return (f"audited {self.score} {a.value:+.1f} [{a.ci95[0]:.1f}, {a.ci95[1]:.1f}] from "
                f"{a.n:,} audited answers and the model's predictions of all {self.n_wave:,} "
                f"respondents (prediction-powered; the audit alone: {o.value:+.1f} "
                f"[{o.ci95[0]:.1f}, {o.ci95[1]:.1f}])")


def audited_figure(m: PpiMean, label_free: float, *,
                   bounds: tuple[float, float] = (-100.0, 100.0)) -> AuditedFigure:
    """``m`` as an audited figure, its interval clipped to ``bounds``."""
    return AuditedFigure(value=m.value, n=m.n, se=m.se,
                         ci95=[max(bounds[0], m.ci95[0]), min(bounds[1], m.ci95[1])],
                         lam=None if math.isnan(m.lam) else m.lam, label_free=label_free)


def shift_test(s: np.ndarray, f: np.ndarray, systematic_se: float) -> ShiftTest:
    """D = mean(s − f) against Var(D) = S²(s − f)/n + ``systematic_se``², all in points;
    ``systematic_se``: the label-free estimate's own, √(SE_model² + SE_reference²)."""
    d = s - f
    diff = float(np.mean(d))
    se = math.sqrt(float(np.var(d, ddof=1)) / len(d) + systematic_se**2)
    z = diff / se if se > 0 else 0.0
    p = float(2 * norm.sf(abs(z)))
    detected = p < SHIFT_ALPHA
    sentence = (f"the audit {'disagrees' if detected else 'agrees'} with the label-free "
                f"estimate: on the audited respondents the answers are {diff:+.1f} points from "
                f"the model's expectation (z = {z:.2f}, p = {p:.3g}"
                + ("; the relation between the attributes and the answers has likely changed "
                   "since the model was trained (a concept shift): trust the audited estimate)"
                   if detected else ")"))
    return ShiftTest(difference=diff, se=se, z=z, p_value=p, detected=detected,
                     sentence=sentence)


