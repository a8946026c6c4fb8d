"""Cleaning one column of survey cells: codes, scores on a scale, texts and dates.

Each cell gets the reason it is not a score, each respondent the first reason that excludes it;
each decision that reads a cell's text is made once per distinct text
(:func:`~cx_app.survey.distinct.on_distinct`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cx_app.survey.distinct import on_distinct
from cx_app.survey.schema import KNOWN_NUMERIC_CODES, KNOWN_TEXT_CODES, Scale, normalise_header

DATE_TEXT = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?"
"""How the workbook reader prints a date, time or duration cell."""
_MIDNIGHT = re.compile(r" 00:00:00(?:\.0+)?$")
_EXCEL_EPOCH = "1899-12-30"
_SERIAL_DATES = (18264, 73050)
_DAY_MONTH = re.compile(r"^\s*(\d{1,2})[/.-](\d{1,2})[/.-]\d{2,4}\b")
"""A date written with the day and month first, in one order or the other ("05/10/2026")."""
_DOTTED = re.compile(r"\s*\d{1,2}\.\d{1,2}\.")
"""A day-month date written with dots, as German writes it: day first ("05.10.2026")."""


@dataclass(frozen=True)
class ColumnCells:
    """One column of cells below the header (index: sheet rows), its blank and Excel-error
    masks, and whether a workbook's reader printed them (``typed``: a text like
    ``2024-01-01 00:00:00`` is then a date cell)."""

    texts: pd.Series
    blank: np.ndarray
    errors: np.ndarray
    typed: bool

    @property
    def dates(self) -> np.ndarray:
        """Date cells (a workbook's date, time or duration cells)."""
        if not self.typed:
            return np.zeros(len(self.texts), dtype=bool)
        return self.texts.str.fullmatch(DATE_TEXT).to_numpy(dtype=bool, na_value=False)

    def display(self, positions: np.ndarray) -> list[str]:
        """The cells at ``positions`` as a data-quality report shows them."""
        texts = self.texts.iloc[positions].astype(object)
        return ["" if text is pd.NA else cell_text(text, self.typed) for text in texts]


def blank_mask(texts: pd.Series) -> np.ndarray:
    """Cells that are empty: missing, ``""``, or whitespace only."""
    return texts.str.strip().eq("").to_numpy(dtype=bool, na_value=True)


def code_sets(codes: Sequence[Any]) -> tuple[set[float], set[str]]:
    numeric, textual = set(), set()
    for code in codes:
        if isinstance(code, bool):
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


def clean_scores(column: ColumnCells, scale: Scale, codes: tuple[set[float], set[str]]) -> Scored:
    """Clean one score column: gaps and invalid cells as ``docs/bases-and-gaps.md`` says (a
    numeric code is a gap only outside the column's scale); a decimal comma is allowed."""
    answers = on_distinct(column.texts, lambda distinct: _score_answers(
        distinct, column.typed, scale, codes))
    fields = dict(zip(("values", "missing", "date", "non_numeric", "decimal", "out_of_scale"),
                      answers, strict=True))
    error = column.errors
    if error.any():  # an error cell is only that, whatever its text
        fields = {k: np.where(error, np.nan if k == "values" else False, v)
                  for k, v in fields.items()}
    index = column.texts.index
    return Scored(**{k: pd.Series(v, index=index) for k, v in fields.items()},
                  error=pd.Series(error, index=index))


def _score_answers(distinct: pd.Series, typed: bool, scale: Scale,
                   codes: tuple[set[float], set[str]]) -> list[np.ndarray]:
    """:func:`clean_scores` of each distinct text."""
    text = distinct.where(distinct.notna(), "").astype(str).str.strip()
    blank = text.eq("")
    date = (text.str.fullmatch(DATE_TEXT) & typed).astype(bool)
    numbers = pd.to_numeric(distinct.where(~date), errors="coerce")
    texty = numbers.isna() & ~blank
    is_code_text = pd.Series(False, index=distinct.index)
    if texty.any():
        comma = text[texty].where(text[texty].str.fullmatch(r"-?\d+,\d+"))
        decimal_comma = pd.to_numeric(comma.str.replace(",", ".", regex=False),
                                      errors="coerce").dropna()
        numbers.loc[decimal_comma.index] = decimal_comma
        is_code_text[texty] = text[texty].map(_fold).isin(set(codes[1]) | _KNOWN_TEXT)
    missing = blank | is_code_text
    missing |= numbers.isin([float(c) for c in (*codes[0], *KNOWN_NUMERIC_CODES)
                             if not scale.min <= c <= scale.max])
    numbers = numbers.where(~missing)
    present = numbers.notna()
    decimal = present & (numbers != np.round(numbers))
    out = present & ~decimal & ((numbers < scale.min) | (numbers > scale.max))
    values = numbers.where(present & ~decimal & ~out)
    non_numeric = numbers.isna() & ~missing & ~date
    return [values.to_numpy(dtype=float), *(m.to_numpy(dtype=bool) for m in
                                            (missing, date, non_numeric, decimal, out))]


def cell_text(text: str, typed: bool) -> str:
    """A cell's text trimmed; a workbook's date cell as its ISO date (time only if not midnight)."""
    if typed and re.fullmatch(DATE_TEXT, text):
        return _MIDNIGHT.sub("", text.strip())
    return text.strip()


def text_column(column: ColumnCells) -> pd.Series:
    """Segment or id cells as :func:`cell_text`; blank and Excel error cells empty."""
    out = column.texts.str.strip()
    dates = column.dates
    if dates.any():
        out[dates] = out[dates].str.replace(_MIDNIGHT.pattern, "", regex=True)
    return out.mask(column.blank | column.errors)


def date_column(column: ColumnCells) -> tuple[pd.Series, int, int]:
    """(dates, cells that are not dates, Excel serial day numbers converted) of a date-role
    column; a serial is a plain number of 1950–2099."""
    kept = ~(column.blank | column.errors)
    parsed, serial = on_distinct(column.texts.where(kept), _parsed_dates)
    parsed = pd.Series(parsed, index=column.texts.index)
    if kept.any() and column.dates[kept].all() and column.texts[kept].str.contains(
            _MIDNIGHT.pattern, regex=True).all():
        parsed = parsed.dt.as_unit("s")  # whole days, as date cells are (not date texts)
    bad = int((parsed.isna().to_numpy() & ~column.blank).sum())
    return parsed, bad, int(serial.sum())


def day_first(texts: pd.Series) -> bool:
    """Whether a column's "05/10/2026" dates put the day first: some first number is above 12
    and no second one is, or they are written with dots (German). One order for the whole
    column, as its writer used one; with no day above 12 it stays month first (pandas').

    >>> day_first(pd.Series(["05/10/2026", "25/10/2026"])), day_first(pd.Series(["10/25/2026"]))
    (True, False)
    """
    parts = texts.str.extract(_DAY_MONTH).dropna().astype(int)
    if parts.empty or (parts[1] > 12).any():
        return False
    return bool((parts[0] > 12).any() or texts.str.match(_DOTTED).any())


def either_order(texts: pd.Series) -> str | None:
    """A text of a date column whose day-month dates read both ways (every number ≤ 12, no
    dots, some day ≠ month: "03/04/2026"), which :func:`day_first` reads month first; None
    when the order is known or does not matter.

    >>> either_order(pd.Series(["03/04/2026", "05/05/2026"])), either_order(pd.Series(["25/04/2026"]))
    ('03/04/2026', None)
    """
    texts = texts.dropna().astype(str)
    parts = texts.str.extract(_DAY_MONTH).dropna().astype(int)
    if parts.empty or (parts > 12).any(axis=None) or texts.str.match(_DOTTED).any():
        return None
    differ = parts[0] != parts[1]
    return str(texts[differ[differ].index[0]]).strip() if differ.any() else None


def _parsed_dates(distinct: pd.Series) -> list[np.ndarray]:
    """(the date of each distinct text, whether it was an Excel serial day number); day-month
    texts in the column's one order (:func:`day_first`), ISO texts as written."""
    numbers = pd.to_numeric(distinct, errors="coerce")
    serial = numbers.between(*_SERIAL_DATES)
    day_month = distinct.str.match(_DAY_MONTH).fillna(False).astype(bool) & numbers.isna()
    parsed = pd.to_datetime(distinct.where(numbers.isna() & ~day_month), errors="coerce",
                            format="mixed")
    if day_month.any():
        parsed[day_month] = pd.to_datetime(distinct[day_month], errors="coerce", format="mixed",
                                           dayfirst=day_first(distinct[day_month]))
    if serial.any():
        parsed[serial] = pd.to_datetime(numbers[serial], unit="D", origin=_EXCEL_EPOCH)
    return [parsed.to_numpy(), serial.to_numpy(dtype=bool)]


def first_reasons(
    n: int, checks: list[tuple[pd.Series, str, str, ColumnCells]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row, the first check (in order) that fails: reason, column header, the cell."""
    reason = np.full(n, None, dtype=object)
    column = np.full(n, None, dtype=object)
    value = np.full(n, None, dtype=object)
    free = np.ones(n, dtype=bool)  # no reason yet
    for mask, why, header, cells in checks:
        hit = np.asarray(mask, dtype=bool) & free
        if hit.any():
            at = np.flatnonzero(hit)
            reason[at] = why
            column[at] = header
            value[at] = cells.display(at)
            free &= ~hit
    return reason, column, value
