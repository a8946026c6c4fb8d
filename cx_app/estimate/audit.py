"""Audit samples: a few labelled respondents of a wave sharpen and check its estimate.

No estimate from probabilities alone can see a change of P(answer | attributes) (a concept
shift): the model reads the attributes as it learned them. A CX team often has a small
labelled sample of the same wave (a short survey that asks the recommend question of a
subsample, a call-back audit). :func:`audit_wave` combines it with the model's predictions
of every respondent by **prediction-powered inference** (Angelopoulos et al. 2023, *Science*
382: 669; PPI++ power tuning, Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453).

For a per-respondent quantity ``s_i`` (the NPS score +1 promoter, 0 passive, −1 detractor,
×100; or 1 when the predicted class is right, for the accuracy) and the model's expected
value ``f_i`` (``100·(p̂_promoter − p̂_detractor)``; the probability of the predicted class),
known for all N respondents of the wave and answered by the n audited ones (the set A):

    θ̂ = λ·mean_wave(f) + mean_A(s − λ·f)

which is the wave's realized value plus an error of mean zero whatever λ (the audit is a
random sample of the wave). The interval is for **this wave's realized value** (as the
label-free interval, :mod:`cx_app.estimate.new_wave`): every respondent's ``f`` is known, so
only the audit's sampling error remains, with the finite-population correction
``SE² = (1 − n/N)·S²(s − λf)/n`` (S²: the audit's variance, n − 1 in the denominator). It
shrinks to 0 when the whole wave is audited. λ minimizes S²(s − λf): λ = cov(s, f)/var(f) over
the audit, clipped to [0, 1] (PPI++'s power tuning with the unlabelled set's own sampling
error left out, since the wave's predictions are not a sample here). λ = 0 is the audit alone
(``audit_only_nps``); λ = 1 is plain PPI.

:func:`ppi_mean` is the textbook estimator for the mean of the customers the wave was drawn
from (the unlabelled predictions a sample too: ``SE² = S₀²(s − λf)/n + λ²·S₀²(f)/N``,
ppi-python's tuned λ); the tests check it against ``ppi_py.ppi_mean_ci`` to 1e-9.

Macro F1 is a ratio of means: ``F1_k = 2·TP_k/(A_k + Q_k)`` with the true positives and
actual counts estimated as above (per class, each with its own λ) and the predicted counts
``Q_k`` known; its SE by the delta method over the audit rows.

**Shift test.** The audit measures the label-free estimate's error on its own rows:
``D = mean_A(s − f)``. If the label-free interval holds (calibrated probabilities, the
model's held-out error), ``Var(D) = S²(s − f)/n + SE_model² + SE_reference²`` (the wave's
answer spread and the audit's sampling without replacement add up to the audit's own
spread); ``shift_detected`` when the two-sided p-value of ``z = D/√Var(D)`` is below 0.05.

**Matching.** Audit rows are matched to wave rows by respondent id when both files have one
(a row without an id, an id not in the wave or repeated in it, and every row the reader left
out of the audit file, e.g. a repeated id, are listed with their reason). Without ids on both sides
the audit file that *is* the wave file (same SHA-256) uses the wave's own rows with an
answer; any other audit file is scored from its own attributes and is taken to be a random
sample of the wave's respondents (a note says so). A weighted wave: the audit is unweighted
(a note says so).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy.stats import norm

from cx_app.errors import AnalysisError
from cx_app.models.results import Document

if TYPE_CHECKING:
    from cx_app.estimate.model_file import TrainedModel
    from cx_app.estimate.new_wave import WaveEstimate
    from cx_app.survey.importing import SurveyData
    from cx_app.survey.schema import SurveySchema

__all__ = ["MIN_AUDIT", "AuditResult", "AuditedFigure", "PpiMean", "ShiftTest", "audit_wave",
           "f1_macro_ppi", "ppi_mean", "read_audit", "wave_ppi_mean", "with_audit"]

Z95 = float(norm.ppf(0.975))
MIN_AUDIT = 10
"""Fewer audited answers than this: no audited estimate (an error says so)."""
SHIFT_ALPHA = 0.05


class PpiMean(BaseModel):
    """A prediction-powered mean: estimate, standard error, the λ used, audit and wave sizes."""

    model_config = ConfigDict(frozen=True)

    value: float
    se: float
    lam: float
    n: int
    population: int

    def ci(self, z: float = Z95) -> tuple[float, float]:
        return (self.value - z * self.se, self.value + z * self.se)


def _vectors(y, yhat, pool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, yhat, pool = (np.asarray(v, dtype=float).ravel() for v in (y, yhat, pool))
    if len(y) != len(yhat) or len(y) < 2 or len(pool) < 1:
        raise AnalysisError("prediction-powered inference needs at least 2 audited answers, "
                            "each with its prediction")
    return y, yhat, pool


def ppi_mean(y, yhat, yhat_unlabeled, *, lam: float | None = None) -> PpiMean:
    """PPI++ mean of the population the labelled and unlabelled respondents were drawn from
    (ppi-python's ``ppi_mean_pointestimate``/``ppi_mean_ci`` in one dimension, same λ)."""
    y, yhat, pool = _vectors(y, yhat, yhat_unlabeled)
    n, big_n = len(y), len(pool)
    if lam is None:
        cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
        var = float(np.var(np.concatenate([yhat, pool]), ddof=1))
        lam = 0.0 if var == 0 else float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))
    value = float(np.mean(lam * pool) + np.mean(y - lam * yhat))
    se = math.sqrt(float(np.std(lam * pool)) ** 2 / big_n + float(np.std(y - lam * yhat)) ** 2 / n)
    return PpiMean(value=value, se=se, lam=float(lam), n=n, population=big_n)


def _wave_lambda(y: np.ndarray, yhat: np.ndarray) -> float:
    var = float(np.var(yhat, ddof=1))
    if var <= 0:
        return 0.0
    cov = float(np.cov(y, yhat, ddof=1)[0, 1])
    return float(np.clip(cov / var, 0.0, 1.0))


def wave_ppi_mean(y, yhat, yhat_wave, *, lam: float | None = None) -> PpiMean:
    """The wave's realized mean from an audit of it (module docstring): ``yhat_wave`` holds
    every respondent's prediction (the audited ones included), ``lam=None`` tunes λ."""
    y, yhat, pool = _vectors(y, yhat, yhat_wave)
    n, big_n = len(y), len(pool)
    if n > big_n:
        raise AnalysisError(f"the audit has {n} answers but the wave only {big_n} respondents")
    lam = _wave_lambda(y, yhat) if lam is None else float(lam)
    d = y - lam * yhat
    value = float(lam * np.mean(pool) + np.mean(d))
    se = math.sqrt(max(0.0, (1 - n / big_n) * float(np.var(d, ddof=1)) / n))
    return PpiMean(value=value, se=se, lam=lam, n=n, population=big_n)


def f1_macro_ppi(y_idx: np.ndarray, proba_audit: np.ndarray, pred_audit: np.ndarray,
                 proba_wave: np.ndarray, pred_wave: np.ndarray) -> PpiMean:
    """Macro F1 of the wave (mean over classes present, ``2·TP_k/(A_k + Q_k)``) from the audit
    by :func:`wave_ppi_mean` per quantity and the delta method (module docstring). ``y_idx``:
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
    """Does the audit disagree with the label-free estimate? (module docstring)"""

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


def _figure(m: PpiMean, label_free: float, *, scale: float = 1.0,
            bounds: tuple[float, float] = (-100.0, 100.0)) -> AuditedFigure:
    lo, hi = m.ci()
    return AuditedFigure(value=scale * m.value, n=m.n, se=scale * m.se,
                         ci95=[max(bounds[0], scale * lo), min(bounds[1], scale * hi)],
                         lam=None if math.isnan(m.lam) else m.lam, label_free=label_free)


def shift_test(s: np.ndarray, f: np.ndarray, systematic_se: float) -> ShiftTest:
    """The test of the module docstring; ``s``, ``f`` in points, ``systematic_se`` the label-free
    estimate's own systematic SE (√(SE_model² + SE_reference²), points)."""
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


def _match(model: TrainedModel, survey: SurveyData, estimate: WaveEstimate,
           audit: SurveyData) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, list, int,
                                       list[str]]:
    """Wave row positions of the audited respondents (−1: scored from the audit), their rows
    in the audit, their answers, how they were matched, the excluded rows, the unanswered
    count, notes."""
    schema = model.schema
    target = schema.target.name
    frame = audit.model_frame
    answers = frame[target] if target in frame.columns else None
    if answers is None or answers.notna().sum() == 0:
        raise AnalysisError(f"{audit.source.filename}: the audit has no answers to the target "
                            f"question ({schema.target.column}): it needs the labelled "
                            "respondents of the wave")
    sheet_rows = frame.index.to_numpy()
    answered = answers.notna().to_numpy()
    id_name = schema.respondent_id.name if schema.respondent_id else None
    wave_ids = (estimate.predictions["respondent_id"] if "respondent_id"
                in estimate.predictions.columns else None)
    excluded: list[ExcludedAuditRow] = []
    notes: list[str] = []
    same_file = audit.source.sha256 == survey.source.sha256
    if wave_ids is not None and id_name in frame.columns:
        ids = frame[id_name].astype(str).to_numpy()
        position = {}
        repeated_in_wave = set(wave_ids.astype(str)[wave_ids.astype(str).duplicated()])
        for i, v in enumerate(wave_ids.astype(str)):
            position.setdefault(v, i)
        counts = dict(zip(*np.unique(ids[answered], return_counts=True), strict=True))
        blank = frame[id_name].isna().to_numpy()
        rows, keep = [], []
        for i in np.flatnonzero(answered):
            rid = ids[i]
            reason = ("no respondent id" if blank[i] else
                      "respondent id not in the wave" if rid not in position else
                      "respondent id repeated in the wave" if rid in repeated_in_wave else
                      "respondent id repeated in the audit" if counts[rid] > 1 else None)
            if reason:
                excluded.append(ExcludedAuditRow(row=int(sheet_rows[i]), respondent_id=rid,
                                                 reason=reason))
            else:
                rows.append(position[rid])
                keep.append(i)
        matched = "respondent id"
    elif same_file:
        by_row = {int(r): i for i, r in enumerate(estimate.predictions["sheet_row"])}
        keep = [i for i in np.flatnonzero(answered) if int(sheet_rows[i]) in by_row]
        rows = [by_row[int(sheet_rows[i])] for i in keep]
        matched = "the wave's own rows (the audit is the wave file)"
    else:
        keep = list(np.flatnonzero(answered))
        rows = [-1] * len(keep)
        matched = "the audit's own attributes"
        notes.append("the audit and the wave do not both have respondent ids: the audited "
                     "respondents were scored from their own answers to the attributes and "
                     "are taken to be a random sample of this wave's respondents")
    y = answers.to_numpy()[keep].astype(np.int64)
    unanswered = int((~answered).sum())
    if unanswered and not same_file:
        for i in np.flatnonzero(~answered):
            excluded.append(ExcludedAuditRow(
                row=int(sheet_rows[i]), reason=f"no answer to {schema.target.column}",
                respondent_id=None if id_name not in frame.columns else str(frame[id_name].iloc[i])))
    return (np.asarray(rows, dtype=np.int64), np.asarray(keep, dtype=np.int64), y, matched,
            excluded, unanswered, notes)


def audit_wave(model: TrainedModel, survey: SurveyData, estimate: WaveEstimate,
               audit: SurveyData) -> AuditResult:
    """Audited NPS, accuracy and macro F1 of the wave ``survey`` (estimated as ``estimate``)
    from the labelled respondents of ``audit`` (module docstring)."""
    from cx_app.estimate.new_wave import estimate_wave, model_net_score_se, model_reference_se
    from cx_app.survey.nps import groups_for_schema

    classes = list(model.classes)
    proba_cols = [f"p_{c}" for c in classes]
    proba_wave = estimate.predictions[proba_cols].to_numpy(dtype=float)
    rows, keep, y, matched, excluded, unanswered, notes = _match(model, survey, estimate, audit)
    if len(y) < MIN_AUDIT:
        raise AnalysisError(
            f"{audit.source.filename}: {len(y)} audited respondent(s) with an answer matched "
            f"the wave ({len(excluded)} excluded); an audit needs at least {MIN_AUDIT}")
    if (rows < 0).any():
        proba_audit = estimate_wave(model, audit).predictions[proba_cols].to_numpy(
            dtype=float)[keep]
    else:
        proba_audit = proba_wave[rows]
    if survey.model_weights is not None:
        notes.append("the wave has survey weights: the audited estimates are unweighted")
    excluded = [*(ExcludedAuditRow(row=e.row, reason=f"{e.reason} ({e.column})")
                  for e in audit.quality.excluded), *excluded]  # left out when reading it
    groups = groups_for_schema(model.schema)
    pos = np.isin(classes, list(groups.positive))
    neg = np.isin(classes, list(groups.negative))
    cls_arr = np.asarray(classes)
    y_idx = np.searchsorted(cls_arr, y) if np.all(np.diff(cls_arr) > 0) else np.array(
        [classes.index(v) for v in y])
    s = 100.0 * (pos[y_idx].astype(float) - neg[y_idx].astype(float))

    def score(p):
        return 100.0 * (p[:, pos].sum(axis=1) - p[:, neg].sum(axis=1))

    f_wave, f_audit = score(proba_wave), score(proba_audit)
    label_free = float(np.mean(f_wave))
    nps = wave_ppi_mean(s, f_audit, f_wave)
    alone = wave_ppi_mean(s, f_audit, f_wave, lam=0.0)
    pred_wave, pred_audit = proba_wave.argmax(axis=1), proba_audit.argmax(axis=1)
    conf_wave = proba_wave.max(axis=1)
    accuracy = wave_ppi_mean(y_idx == pred_audit, proba_audit.max(axis=1), conf_wave)
    group_of = np.where(pos, 2, np.where(neg, 0, 1))
    group_p = np.stack([proba_wave[:, group_of == g].sum(axis=1) for g in (0, 1, 2)], axis=1)
    group_pa = np.stack([proba_audit[:, group_of == g].sum(axis=1) for g in (0, 1, 2)], axis=1)
    g_pred_wave, g_pred_audit = group_of[pred_wave], group_of[pred_audit]
    group_acc = wave_ppi_mean(group_of[y_idx] == g_pred_audit,
                              group_pa[np.arange(len(y)), g_pred_audit],
                              group_p[np.arange(len(f_wave)), g_pred_wave])
    f1 = f1_macro_ppi(y_idx, proba_audit, pred_audit, proba_wave, pred_wave)
    f1_free = _alp_f1_macro(proba_wave, pred_wave)
    model_se = model_net_score_se(model) or 0.0
    test = shift_test(s, f_audit, math.hypot(model_se, model_reference_se(model)))
    unit = (0.0, 1.0)
    return AuditResult(
        audited_nps=_figure(nps, label_free), audit_only_nps=_figure(alone, label_free),
        accuracy=_figure(accuracy, float(np.mean(conf_wave)), bounds=unit),
        group_accuracy=_figure(group_acc, float(np.mean(
            group_p[np.arange(len(f_wave)), g_pred_wave])), bounds=unit),
        f1_macro=_figure(f1, f1_free, bounds=unit),
        shift_detected=test.detected, shift_test=test, n_audit=len(y),
        n_wave=len(f_wave), matched_by=matched, file=audit.source.filename,
        excluded=excluded, unanswered=unanswered, notes=notes,
        score="NPS" if model.schema.is_nps else "net score")


def read_audit(data: bytes, filename: str, schema: SurveySchema, *, waves: int = 1
               ) -> SurveyData:
    """An audit sample's file read with the model's schema (as a wave is read); ``waves``: how
    many waves the wave file holds (an audit belongs to one: :class:`AnalysisError` else)."""
    from cx_app.survey.importing import load_survey

    if waves > 1:
        raise AnalysisError(f"the wave file holds {waves} waves in its wave column; an audit "
                            f"sample ({filename}) belongs to one wave: give a file of one")
    return load_survey(data, schema=schema, filename=filename, require_target=False,
                       scoring=True, require_attributes=False)


def with_audit(model: TrainedModel, survey: SurveyData, estimate: WaveEstimate,
               audit: SurveyData | None) -> WaveEstimate:
    """``estimate`` with the audit of ``audit`` (unchanged without one): what the tracker and
    ``--json`` then show (``audited_nps`` beside ``estimated_nps``)."""
    import dataclasses

    if audit is None:
        return estimate
    return dataclasses.replace(estimate, audit=audit_wave(model, survey, estimate, audit))


def _alp_f1_macro(proba: np.ndarray, pred: np.ndarray) -> float:
    """Label-free macro F1 over the classes present: 2·A[k,k]/(row sum + column sum)."""
    k = proba.shape[1]
    diag = np.array([proba[pred == c, c].sum() for c in range(k)])
    denom = proba.sum(axis=0) + np.bincount(pred, minlength=k)
    present = denom > 0
    return float(np.mean(2 * diag[present] / denom[present]))
