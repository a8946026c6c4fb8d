"""Cleaning one column of survey cells: blanks and missing-value codes, integer scores on a
scale (with the reason a cell is not one), text and date segments, and the first reason that
excludes each respondent. Vectorised pandas; :mod:`cx_app.survey.importing` assembles them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cx_app.survey.reading import (
    NEVER_BLANK,
    ExcelError,
    cell_type_ids,
    float_cells,
    of_types,
    remembered_answers,
    stand_ins,
    string_cells,
    string_texts,
)
from cx_app.survey.schema import KNOWN_NUMERIC_CODES, KNOWN_TEXT_CODES, Scale, normalise_header

_DATE_TYPES = (dt.date, dt.datetime, dt.time, dt.timedelta, pd.Timestamp)
_EXCEL_EPOCH = "1899-12-30"
_SERIAL_DATES = (18264, 73050)

# --------------------------------------------------------------------------- cleaning


def blank_mask(raw: pd.Series) -> pd.Series:
    """Cells that are empty: missing, ``""``, or text of whitespace only (vectorised).

    Python floats (numbers as calamine reads them), plain strings, numbers and dates are
    decided with numpy over the whole column; other cells (None, error cells, ...) as
    :func:`_blank_cells` decides them, which gives the same answer for every cell."""
    if raw.dtype != object:
        return raw.isna()
    values = raw.to_numpy()
    floats, numbers = float_cells(values)
    texts, blank_texts = string_cells(values)
    blank = np.zeros(len(values), dtype=bool)
    blank[floats] = np.isnan(numbers)
    blank[texts] = blank_texts
    rest = np.flatnonzero(~of_types(cell_type_ids(values), (float, str, *NEVER_BLANK)))
    if rest.size:
        blank[rest] = _blank_cells(raw.iloc[rest]).to_numpy(dtype=bool)
    return pd.Series(blank, index=raw.index, name=raw.name)


def _blank_cells(raw: pd.Series) -> pd.Series:
    """:func:`blank_mask` cell by cell through pandas (the reference for the fast paths)."""
    if raw.dtype != object:
        return raw.isna()
    blank = (raw.isna() | raw.eq("")).astype(bool)
    text = raw.map(type).eq(str) & ~blank
    if text.any():
        spaces = raw[text].astype("str").str.strip().eq("")
        blank[spaces.index[spaces.to_numpy(dtype=bool)]] = True
    return blank


def code_sets(codes: Sequence[Any]) -> tuple[set[float], set[str]]:
    numeric, textual = set(), set()
    for code in codes:
        if isinstance(code, bool):
            continue
        if isinstance(code, (int, float)):
            numeric.add(float(code))
            continue
        try:
            numeric.add(float(str(code).strip()))
        except ValueError:
            textual.add(_fold(code))
    return numeric, textual


def _fold(text: Any) -> str:
    return normalise_header(str(text).replace("’", "'").replace("‘", "'"))


@dataclass
class Scored:
    """A cleaned score column: values (float, NaN where missing or invalid) and masks."""

    values: pd.Series
    missing: pd.Series
    error: pd.Series
    date: pd.Series
    non_numeric: pd.Series
    decimal: pd.Series
    out_of_scale: pd.Series


_KNOWN_TEXT = frozenset(_fold(c) for c in KNOWN_TEXT_CODES)


def clean_scores(raw: pd.Series, blank: pd.Series, scale: Scale,
                  codes: tuple[set[float], set[str]]) -> Scored:
    """Clean one score column. Missing: blanks, the schema's ``codes``, and — whatever the
    schema says — the usual "no answer" codes that cannot be answers on this column's scale
    (:data:`~cx_app.survey.schema.KNOWN_NUMERIC_CODES` outside it, e.g. 99 on 1–10, and the
    texts of :data:`~cx_app.survey.schema.KNOWN_TEXT_CODES`, e.g. "Don't know", "N/A").

    Every decision is per cell, so the Python floats of an object column (numbers as calamine
    reads them: usually nearly all cells) are cleaned as one float64 array and only the other
    cells (text, codes, dates, ...) cell by cell, each distinct text once (:func:`stand_ins`;
    once per file and scale, :func:`remembered_answers`); the result is the same as cleaning
    the whole column cell by cell (:func:`_clean_score_cells`)."""
    if raw.dtype != object:
        return _clean_score_cells(raw, blank, scale, codes)
    values = raw.to_numpy()
    floats, numbers = float_cells(values)
    n = len(values)
    fields = {name: np.zeros(n, dtype=bool) for name in Scored.__dataclass_fields__}
    fields["values"] = np.full(n, np.nan)
    for name, cleaned in _clean_floats(numbers, blank.to_numpy(dtype=bool)[floats], scale,
                                       codes).items():
        fields[name][floats] = cleaned
    rest = np.ones(n, dtype=bool)
    rest[floats] = False
    if rest.any():
        rest = np.flatnonzero(rest)
        samples, shared = np.unique(stand_ins(values, rest, blank.to_numpy(dtype=bool)),
                                    return_inverse=True)
        cells, empty = raw.iloc[samples], blank.iloc[samples]
        keys = [(cell, flag) if type(cell) is str else None
                for cell, flag in zip(cells, empty.tolist(), strict=True)]
        answers = remembered_answers(
            ("clean_scores", scale, *map(frozenset, codes)), keys,
            lambda: _cleaned_arrays(_clean_score_cells(cells, empty, scale, codes)))
        for column, answer in zip(fields.values(), answers, strict=True):
            column[rest] = answer[shared]
    return Scored(**{name: pd.Series(column, index=raw.index)
                     for name, column in fields.items()})


def _cleaned_arrays(scored: Scored) -> tuple[np.ndarray, ...]:
    """The fields of a :class:`Scored` as arrays, in field order: values as float64, masks
    as bool."""
    return tuple(getattr(scored, name).to_numpy(dtype=float if name == "values" else bool)
                 for name in Scored.__dataclass_fields__)


def _numeric_codes(scale: Scale, codes: tuple[set[float], set[str]]) -> set[float]:
    return set(codes[0]) | {float(c) for c in KNOWN_NUMERIC_CODES
                            if not scale.min <= c <= scale.max}


def _clean_floats(numbers: np.ndarray, blank: np.ndarray, scale: Scale,
                  codes: tuple[set[float], set[str]]) -> dict[str, np.ndarray]:
    """:func:`_clean_score_cells` for cells that are floats: no text, error or date cell (a
    NaN that is not blank reads as the text "nan", which is no code: non-numeric)."""
    missing = blank.copy()
    numeric_codes = _numeric_codes(scale, codes)
    if numeric_codes:  # a NaN code matches NaN cells, as pandas' isin does in the reference
        listed = np.fromiter(numeric_codes, dtype=float)
        missing |= np.isin(numbers, listed) | (np.isnan(numbers) & np.isnan(listed).any())
    numbers = np.where(missing, np.nan, numbers)
    present = ~np.isnan(numbers)
    decimal = present & (numbers != np.round(numbers))
    out = present & ~decimal & ((numbers < scale.min) | (numbers > scale.max))
    return {"values": np.where(present & ~decimal & ~out, numbers, np.nan),
            "missing": missing, "non_numeric": ~present & ~missing, "decimal": decimal,
            "out_of_scale": out}


def _clean_score_cells(raw: pd.Series, blank: pd.Series, scale: Scale,
                       codes: tuple[set[float], set[str]]) -> Scored:
    """:func:`clean_scores` cell by cell through pandas (the reference for its fast path)."""
    numeric_codes = _numeric_codes(scale, codes)
    text_codes = set(codes[1]) | _KNOWN_TEXT
    error = date = pd.Series(False, index=raw.index)
    if raw.dtype == object:
        types = raw.map(type)
        error = types.eq(ExcelError)
        date = types.isin(_DATE_TYPES)
        raw = raw.mask(types.eq(bool), "TRUE/FALSE")
    numbers = pd.to_numeric(raw, errors="coerce")
    # cells that are neither numbers nor blank: text (codes, "7,5", words)
    texty = numbers.isna() & ~blank
    if texty.any():
        text = raw[texty].astype(str).str.strip()
        decimal_comma = pd.to_numeric(
            text.str.replace(",", ".", regex=False).where(text.str.fullmatch(r"-?\d+,\d+")),
            errors="coerce")
        numbers.loc[decimal_comma.dropna().index] = decimal_comma.dropna()
        folded = text.map(_fold)
        is_code_text = folded.isin(text_codes)
    else:
        is_code_text = pd.Series(False, index=raw.index[texty])
    missing = blank.copy()
    missing.loc[is_code_text.index] = is_code_text.to_numpy()
    if numeric_codes:
        missing |= numbers.isin(list(numeric_codes))
    missing &= ~error
    numbers = numbers.where(~missing)
    non_numeric = numbers.isna() & ~missing & ~error & ~date
    present = numbers.notna()
    decimal = present & (numbers != np.round(numbers))
    out = present & ~decimal & ((numbers < scale.min) | (numbers > scale.max))
    values = numbers.where(present & ~decimal & ~out)
    return Scored(values, missing, error, date, non_numeric, decimal, out)


def cell_text(cell: Any) -> str:
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell).strip()


def text_column(raw: pd.Series, blank: pd.Series) -> pd.Series:
    """Segment or id cells as trimmed text; whole-number floats without ".0" (ids, waves);
    date cells as ISO dates (time only when not midnight); Excel error cells empty.

    Plain strings are trimmed by pandas' ``str.strip`` over the whole column at once (a
    column of plain strings only is taken as :func:`string_texts` has it), other cells are
    made text as :func:`_text_cells` does it (trimmed already)."""
    if raw.dtype != object:
        return _text_cells(raw, blank)
    values = raw.to_numpy()
    if string_cells(values)[0].size == len(values):
        texts = pd.Series(string_texts(values), index=raw.index, name=raw.name)
        return texts.mask(blank.to_numpy(dtype=bool)).str.strip()
    rest = np.flatnonzero(~of_types(cell_type_ids(values), (str,)))
    if rest.size == len(values):
        return _text_cells(raw, blank)
    out = values.copy()
    if rest.size:
        out[rest] = _text_cells(raw.iloc[rest], blank.iloc[rest]).to_numpy(dtype=object)
    out[blank.to_numpy(dtype=bool)] = None
    return pd.Series(pd.array(out, dtype="string", copy=False), index=raw.index,
                     name=raw.name).str.strip()


def excel_errors(raw: pd.Series) -> pd.Series:
    """Cells that are Excel error cells (:class:`ExcelError`)."""
    if raw.dtype != object:
        return pd.Series(False, index=raw.index, name=raw.name)
    return pd.Series(of_types(cell_type_ids(raw.to_numpy()), (ExcelError,)), index=raw.index,
                     name=raw.name)


def _text_cells(raw: pd.Series, blank: pd.Series) -> pd.Series:
    """:func:`text_column` cell by cell through pandas (the reference for its fast path)."""
    out = raw.astype("str").str.strip()
    types = raw.map(type)
    is_float = types.eq(float) & ~blank
    if is_float.any():
        out[is_float] = raw[is_float].map(cell_text)
    is_date = types.isin(_DATE_TYPES) & ~blank
    if is_date.any():
        out[is_date] = raw[is_date].map(_date_text)
    return out.where(~blank & ~types.eq(ExcelError), None).astype("string")


def _date_text(cell: Any) -> str:
    if isinstance(cell, dt.datetime):
        return cell.date().isoformat() if cell.time() == dt.time(0) else cell.isoformat(" ")
    return cell.isoformat() if hasattr(cell, "isoformat") else str(cell)


def date_column(raw: pd.Series, blank: pd.Series) -> tuple[pd.Series, int, int]:
    """Dates of a date-role column: date cells, date texts, and Excel serial day numbers
    (1950–2099) stored as plain numbers; (dates, cells that are not dates, serials converted).

    The cells' types come from :func:`cell_type_ids` (an object column's are remembered from
    the blank masks); :func:`_date_column_cells` maps each cell to its type instead. Without
    texts to parse, pandas' cache of distinct values (worth it for repeated date texts) only
    costs time: date cells are converted without it."""
    if raw.dtype != object:
        return _date_column_cells(raw, blank)
    types = cell_type_ids(raw.to_numpy())
    kept = ~blank.to_numpy(dtype=bool) & ~of_types(types, (ExcelError,))
    values = raw.where(kept)
    numbers = pd.to_numeric(values.where(~(kept & of_types(types, _DATE_TYPES))),
                            errors="coerce")
    texts = kept & of_types(types, (str,))
    return _parsed_dates(values, numbers, blank, cache=bool(texts.any()))


def _date_column_cells(raw: pd.Series, blank: pd.Series) -> tuple[pd.Series, int, int]:
    """:func:`date_column` through each cell's type (the reference for its fast path)."""
    values = raw.where(~blank & ~raw.map(type).eq(ExcelError))
    numbers = pd.to_numeric(values.where(~values.map(type).isin(_DATE_TYPES)), errors="coerce")
    return _parsed_dates(values, numbers, blank)


def _parsed_dates(values: pd.Series, numbers: pd.Series, blank: pd.Series,
                  cache: bool = True) -> tuple[pd.Series, int, int]:
    """:func:`date_column` from the cells left after blanks and error cells (``values``) and
    the numbers among them (``numbers``: NaN for dates and texts that are not numbers);
    ``cache`` is :func:`pandas.to_datetime`'s (the same dates either way)."""
    serial = numbers.between(*_SERIAL_DATES)
    parsed = pd.to_datetime(values.where(numbers.isna()), errors="coerce", format="mixed",
                            cache=cache)
    if serial.any():
        parsed[serial] = pd.to_datetime(numbers[serial], unit="D", origin=_EXCEL_EPOCH)
    bad = int((parsed.isna() & ~blank).sum())
    return parsed, bad, int(serial.sum())


def first_reasons(
    n: int, checks: list[tuple[pd.Series, str, str, pd.Series]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row, the first check (in order) that fails: reason, column header, raw cell."""
    reason = np.full(n, None, dtype=object)
    column = np.full(n, None, dtype=object)
    value = np.full(n, None, dtype=object)
    free = np.ones(n, dtype=bool)  # no reason yet
    for mask, why, header, raw in checks:
        hit = mask.to_numpy(dtype=bool) & free
        if hit.any():
            reason[hit] = why
            column[hit] = header
            value[hit] = raw.to_numpy()[hit]
            free &= ~hit
    return reason, column, value


def display(cell: Any) -> str:
    if cell is None or (isinstance(cell, float) and np.isnan(cell)):
        return ""
    return cell_text(cell)


