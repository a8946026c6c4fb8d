"""A wave's label and date, as an analyst names waves, and the order of a program's waves.

Which label and date a wave gets, and their order: docs/workspace.md ("Waves as the analyst
names them").
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Literal

from cx_app.survey.periods import natural_key, period_start

if TYPE_CHECKING:
    from cx_app.survey.data import SurveyData

__all__ = ["WaveLabel", "label_from_file", "label_from_text", "wave_label", "wave_order_key"]

LabelOrigin = Literal["given", "wave column", "file name"]

_NOT_DIGIT_BEFORE, _NOT_DIGIT_AFTER = r"(?<!\d)", r"(?!\d)"
_DAY = re.compile(_NOT_DIGIT_BEFORE + r"(\d{4})[-_. ]?(\d{2})[-_. ]?(\d{2})" + _NOT_DIGIT_AFTER)
_MONTH = re.compile(_NOT_DIGIT_BEFORE + r"(\d{4})[-_. ]?(\d{2})" + _NOT_DIGIT_AFTER)
_QUARTER = re.compile(r"(?i)(?<![A-Za-z\d])(?:(\d{4})[-_ ]?Q([1-4])|Q([1-4])[-_ ]?(\d{4}))"
                      r"(?![A-Za-z\d])")
_WAVE = re.compile(r"(?i)(?<![A-Za-z])(?:W|wave)[-_ ]?(\d{1,4})" + _NOT_DIGIT_AFTER)


@dataclass(frozen=True)
class WaveLabel:
    label: str
    date: dt.date | None
    origin: LabelOrigin


def _date(year: int, month: int, day: int = 1) -> dt.date | None:
    try:
        return dt.date(year, month, day) if 1900 <= year <= 2200 else None
    except ValueError:
        return None


def label_from_text(text: str) -> tuple[str, dt.date | None] | None:
    """The wave a text names (a file name or a wave-column value) and its date; None when it
    names none.

    >>> label_from_text("bank_nps_2026-03.xlsx")
    ('2026-03', datetime.date(2026, 3, 1))
    >>> label_from_text("export 20260315 final.csv")
    ('2026-03-15', datetime.date(2026, 3, 15))
    >>> label_from_text("survey_2026Q2.xlsx")
    ('2026-Q2', datetime.date(2026, 4, 1))
    >>> label_from_text("bank_W07.xlsx")
    ('W07', None)
    >>> label_from_text("results.xlsx") is None
    True
    """
    stem = PurePath(text).stem if PurePath(text).suffix.lower() in _SUFFIXES else text
    for match in _DAY.finditer(stem):
        y, m, d = (int(g) for g in match.groups())
        if (day := _date(y, m, d)) is not None:
            return day.isoformat(), day
    for match in _MONTH.finditer(stem):
        y, m = int(match.group(1)), int(match.group(2))
        if (month := _date(y, m)) is not None:
            return f"{y:04d}-{m:02d}", month
    if match := _QUARTER.search(stem):
        year = int(match.group(1) or match.group(4))
        quarter = int(match.group(2) or match.group(3))
        return f"{year:04d}-Q{quarter}", _date(year, 3 * quarter - 2)
    if match := _WAVE.search(stem):
        number = match.group(1)
        return f"W{number.zfill(2)}", None
    return None


_SUFFIXES = {".xlsx", ".xlsm", ".xls", ".ods", ".csv", ".txt", ".tsv"}


def label_from_file(filename: str | None) -> tuple[str, dt.date | None]:
    """The wave a file name names, else the file name without its extension."""
    named = label_from_text(filename or "")
    return named if named else (PurePath(filename or "wave").stem, None)


def _role_column(survey: SurveyData, role: str) -> str | None:
    return next((s.name for s in survey.schema.segments
                 if s.role == role and s.name in survey.frame.columns), None)


def _single_value(survey: SurveyData, role: str) -> str | None:
    if (column := _role_column(survey, role)) is None:
        return None
    values = survey.frame[column].dropna().unique()
    return str(values[0]) if len(values) == 1 else None


def _earliest_answer(survey: SurveyData) -> dt.date | None:
    import pandas as pd

    if (column := _role_column(survey, "date")) is None:
        return None
    values = pd.to_datetime(survey.frame[column], errors="coerce").dropna()
    return None if values.empty else values.min().date()


def _period_date(label: str) -> dt.date | None:
    """The start of the period a label such as "March 2026" names (:mod:`cx_app.survey.periods`)."""
    start = period_start(label)
    return None if start is None else _date(start.year, start.month, start.day)


def wave_label(survey: SurveyData, *, filename: str | None, given: str | None = None
               ) -> WaveLabel:
    """The label and date of one wave (``survey``: its respondents); rules in docs/workspace.md."""
    from cx_app.safe_text import plain_text

    named: tuple[str, dt.date | None] | None = None
    origin: LabelOrigin
    if given is not None and given.strip():
        label, origin = plain_text(given.strip()), "given"
        named = label_from_text(label)
    elif (value := _single_value(survey, "wave")) is not None:
        label, origin = value, "wave column"
        named = label_from_text(value)
    else:
        origin = "file name"
        named = label_from_file(filename)
        label = named[0]
    date = named[1] if named and named[1] is not None else _period_date(label)
    date = date if date is not None else _earliest_answer(survey)
    return WaveLabel(label, date, origin)


def wave_order_key(label: str, date: dt.date | None) -> tuple:
    """The sort key of a wave: dated waves first, by date, then by label in natural order.

    >>> sorted(["W10", "W2", "W01"], key=lambda w: wave_order_key(w, None))
    ['W01', 'W2', 'W10']
    """
    return (date is None, date or dt.date.min, natural_key(label))
