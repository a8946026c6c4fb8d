"""Cleaning the mapped columns of a survey file into its two bases and the quality report."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from cx_app.safe_text import describe_removed, plain_text_column
from cx_app.survey.cells import (
    ColumnCells,
    Scored,
    clean_scores,
    code_sets,
    date_column,
    either_order,
    first_reasons,
    text_column,
)
from cx_app.survey.quality import (
    DATE_IN_SCORE,
    DECIMAL,
    DUPLICATE_ID,
    EXCEL_ERROR,
    MISSING_ATTRIBUTE,
    MISSING_TARGET,
    MODEL,
    NON_NUMERIC,
    NUL_BYTE,
    OUT_OF_SCALE,
    SURVEY,
    DataQualityReport,
    ExcludedRow,
)
from cx_app.survey.schema import SurveySchema
from cx_app.survey.weights import clean_weights


def _invalid(s: Scored, header: str, cells: ColumnCells) -> list[tuple[Any, str, str, ColumnCells]]:
    """The checks of a score column's invalid cells, in the order their reasons win."""
    return [(s.error, EXCEL_ERROR, header, cells), (s.date, DATE_IN_SCORE, header, cells),
            (s.non_numeric, NON_NUMERIC, header, cells), (s.decimal, DECIMAL, header, cells),
            (s.out_of_scale, OUT_OF_SCALE, header, cells)]


def clean_columns(
    raw: dict[str, ColumnCells], column_of: dict[str, str], schema: SurveySchema,
    index: pd.Index, notes: list[str], blank_rows: int, scoring: bool = False,
    where: str = "", check_nul: bool = False,
) -> tuple[pd.DataFrame, np.ndarray, DataQualityReport]:
    """(the survey base with attribute gaps as NaN, the model-base mask over it, the report).

    ``scoring`` (a wave scored by a saved model): every row but a repeated id is kept for the
    estimate; an invalid target only leaves the realized NPS (the target cell is NaN) and an
    invalid attribute cell is a gap the model fills, both counted in the notes."""
    n = len(index)
    codes = code_sets(schema.missing_codes)
    nul = {key: cells.texts.str.contains("\x00", regex=False).to_numpy(dtype=bool,
                                                                       na_value=False)
           for key, cells in raw.items()} if check_nul else {}
    survey_checks: list[tuple[Any, str, str, ColumnCells]] = [
        (mask, NUL_BYTE, column_of[key], raw[key]) for key, mask in nul.items() if mask.any()]
    model_checks: list[tuple[Any, str, str, ColumnCells]] = []
    out: dict[str, pd.Series] = {}
    id_spec = schema.respondent_id
    if id_spec is not None and id_spec.name in raw:
        ids = text_column(raw[id_spec.name])
        duplicated = ids.duplicated(keep="first") & ids.notna()
        survey_checks.append((duplicated, DUPLICATE_ID, column_of[id_spec.name],
                              raw[id_spec.name]))
        if ids.isna().any():
            notes.append(f"{int(ids.isna().sum())} row(s) without a respondent id")
        out[id_spec.name] = ids
    scored = {spec.name: clean_scores(raw[spec.name], spec.scale, codes)
              for spec in (schema.target, *schema.attributes) if spec.name in raw}
    target = schema.target.name
    if target in scored:
        s = scored[target]
        target_checks = [(s.missing, MISSING_TARGET, column_of[target], raw[target]),
                         *_invalid(s, column_of[target], raw[target])]
        if scoring:
            unlabeled = int(s.values.isna().sum())
            if unlabeled:
                notes.append(f"{unlabeled} row(s) without a valid {target} answer: estimated "
                             "like every respondent, left out of the realized "
                             f"{schema.target.kind.upper()}")
        else:
            survey_checks += target_checks
    present = [spec for spec in schema.attributes if spec.name in scored]
    for spec in present:
        invalid = _invalid(scored[spec.name], column_of[spec.name], raw[spec.name])
        if scoring:
            bad = sum(int(m.sum()) for m, *_ in invalid)
            if bad:
                notes.append(f"{spec.name}: {bad} invalid cell(s) (text, decimal, out of scale, "
                             "error) scored as unanswered")
        else:
            model_checks += invalid
    if schema.missing_attributes == "exclude" and not scoring:
        for spec in present:
            model_checks.append((scored[spec.name].missing, MISSING_ATTRIBUTE,
                                 column_of[spec.name], raw[spec.name]))
    survey_reason, _, _ = first_reasons(n, survey_checks)
    reason, column, value = first_reasons(n, survey_checks + model_checks)
    in_survey = survey_reason == None  # noqa: E711 - elementwise
    in_model = reason == None  # noqa: E711 - elementwise
    rows = index.to_numpy()
    out_of_model = ~in_model
    excluded = tuple(map(ExcludedRow, rows[out_of_model].tolist(), column[out_of_model],
                         reason[out_of_model], value[out_of_model],
                         np.where(in_survey[out_of_model], MODEL, SURVEY).tolist()))
    if target in scored:
        out[target] = scored[target].values
    for spec in schema.attributes:  # an absent column (require_attributes=False): all NaN
        out[spec.name] = (scored[spec.name].values if spec.name in scored
                          else pd.Series(np.nan, index=index, dtype=float))
    for spec in schema.segments:
        if spec.name not in raw:
            continue
        if spec.role == "date":
            parsed, bad, serials = date_column(raw[spec.name])
            if serials:
                notes.append(f"{spec.name}: {serials} Excel date serial number(s) converted to "
                             "dates")
            if bad:
                notes.append(f"{spec.name}: {bad} value(s) are not dates; left empty")
            example = either_order(raw[spec.name].texts.where(~raw[spec.name].blank))
            if example is not None:
                read = pd.to_datetime(example, format="mixed", dayfirst=False)
                notes.append(f"{spec.name}: no day is above 12, so its dates read month first "
                             f"or day first; read month first ({example} = {read:%-d %B %Y}); "
                             "write them as YYYY-MM-DD if the day comes first")
            out[spec.name] = parsed
        else:
            out[spec.name] = text_column(raw[spec.name])
    weight_spec = schema.weight
    if weight_spec is not None and weight_spec.name in raw:
        weights = raw[weight_spec.name]
        out[weight_spec.name] = clean_weights(weights.texts, pd.Series(weights.blank,
                                                                       index=index),
                                              in_survey, column_of[weight_spec.name], where)
    texts = (*schema.segments, *([id_spec] if id_spec is not None else []))
    for spec in texts:
        if spec.name in raw:
            errors = raw[spec.name].errors
            if errors.any():
                codes_seen = sorted(set(raw[spec.name].texts[errors]))
                notes.append(f"{spec.name}: {int(errors.sum())} Excel error cell(s) "
                             f"({', '.join(codes_seen)}) left empty")
    order = [target, *schema.attribute_names, *(s.name for s in texts)]
    order += [weight_spec.name] if weight_spec is not None else []
    frame = pd.DataFrame({k: out[k] for k in order if k in out}, index=index)[in_survey]
    for spec in texts:
        if spec.name in frame:  # the final text step: no control character (cx_app.safe_text)
            frame[spec.name], found = plain_text_column(frame[spec.name])
            if found:
                notes.append(f"{spec.name}: the values held {describe_removed(found)}, removed")
    if target in frame and not frame[target].isna().any():
        frame[target] = frame[target].astype(np.int64)
    model_mask = in_model[in_survey]
    gaps = {spec.name: int(frame.loc[model_mask, spec.name].isna().sum()) for spec in present}
    report = DataQualityReport(
        rows_read=n, rows_used=int(in_model.sum()), excluded=excluded, gaps=gaps,
        notes=tuple(notes), blank_rows=blank_rows,
    )
    return frame, model_mask, report
