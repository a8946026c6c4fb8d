"""Audit samples: a few labelled respondents of a wave sharpen and check its estimate.

:func:`audit_wave` combines a small labelled sample of the wave with the model's predictions of
every respondent by prediction-powered inference (:mod:`cx_app.estimate.ppi`): θ̂ =
λ·mean_wave(f) + mean_A(s − λ·f), s the answer's quantity (×100 net-score outcome, or 1 when the
predicted class is right) and f the model's expectation of it; the method, the shift test and
how audit rows are matched: docs/alp.md ("Audit samples").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from cx_app.errors import AnalysisError
from cx_app.estimate.alp import net_outcome, net_parts
from cx_app.estimate.ppi import (
    MIN_AUDIT,
    AuditResult,
    ExcludedAuditRow,
    audited_figure,
    f1_macro_ppi,
    shift_test,
    wave_ppi_mean,
)
from cx_app.models.crossval import class_positions

if TYPE_CHECKING:
    from cx_app.estimate.model_file import TrainedModel
    from cx_app.estimate.new_wave import WaveEstimate
    from cx_app.survey.importing import SurveyData
    from cx_app.survey.schema import SurveySchema

__all__ = ["audit_wave", "read_audit", "with_audit"]


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
        wave_ids = wave_ids.astype(str)
        repeated_in_wave = set(wave_ids[wave_ids.duplicated()])  # excluded, whatever position
        position = {v: i for i, v in enumerate(wave_ids)}
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
    y_idx = class_positions(y, classes, "audited label")
    s = 100.0 * net_outcome(y, groups)

    def score(p):
        return 100.0 * np.subtract(*net_parts(p, classes, groups))

    f_wave, f_audit = score(proba_wave), score(proba_audit)
    label_free = float(np.mean(f_wave))
    nps = wave_ppi_mean(s, f_audit, f_wave)
    alone = wave_ppi_mean(s, f_audit, f_wave, lam=0.0)
    pred_wave, pred_audit = proba_wave.argmax(axis=1), proba_audit.argmax(axis=1)
    conf_wave = proba_wave.max(axis=1)
    accuracy = wave_ppi_mean(y_idx == pred_audit, proba_audit.max(axis=1), conf_wave)
    group_of = net_outcome(classes, groups).astype(int) + 1  # 0 negative, 1 neutral, 2 positive

    def group_confidence(p, pred):  # each respondent's probability of its predicted group
        grouped = np.stack([p[:, group_of == g].sum(axis=1) for g in (0, 1, 2)], axis=1)
        return grouped[np.arange(len(p)), group_of[pred]]

    group_conf_wave = group_confidence(proba_wave, pred_wave)
    group_acc = wave_ppi_mean(group_of[y_idx] == group_of[pred_audit],
                              group_confidence(proba_audit, pred_audit), group_conf_wave)
    f1 = f1_macro_ppi(y_idx, proba_audit, pred_audit, proba_wave, pred_wave)
    f1_free = _alp_f1_macro(proba_wave, pred_wave)
    model_se = model_net_score_se(model) or 0.0
    test = shift_test(s, f_audit, math.hypot(model_se, model_reference_se(model)))
    unit = (0.0, 1.0)
    return AuditResult(
        audited_nps=audited_figure(nps, label_free), audit_only_nps=audited_figure(alone, label_free),
        accuracy=audited_figure(accuracy, float(np.mean(conf_wave)), bounds=unit),
        group_accuracy=audited_figure(group_acc, float(np.mean(group_conf_wave)), bounds=unit),
        f1_macro=audited_figure(f1, f1_free, bounds=unit),
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
    if audit is None:
        return estimate
    return estimate.model_copy(update={"audit": audit_wave(model, survey, estimate, audit)})


def _alp_f1_macro(proba: np.ndarray, pred: np.ndarray) -> float:
    """Label-free macro F1 over the classes present: 2·A[k,k]/(row sum + column sum)."""
    k = proba.shape[1]
    diag = np.array([proba[pred == c, c].sum() for c in range(k)])
    denom = proba.sum(axis=0) + np.bincount(pred, minlength=k)
    present = denom > 0
    return float(np.mean(2 * diag[present] / denom[present]))
