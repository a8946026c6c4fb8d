"""Property tests of the importer (issue 7): for any small sheet — random headers (duplicated,
blank), random cells (scores in and out of scale, floats, text, None, Excel error strings,
dates) — as CSV bytes or as an .xlsx written by openpyxl, loading either raises one of the
library's own errors or returns a report where used + excluded = read and every exclusion
has a known reason."""

from __future__ import annotations

import csv
import datetime as dt
import io

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cx_app.errors import CxAppError
from cx_app.survey.importing import load_survey
from cx_app.survey.quality import REASONS
from cx_app.survey.schema import parse_schema

pytestmark = pytest.mark.slow  # hypothesis fuzzing of the importer (~16 s)

SCHEMA = parse_schema({
    "name": "fuzz",
    "target": {"name": "nps", "column": "NPS", "kind": "nps", "scale": {"min": 0, "max": 10}},
    "attributes": [{"name": "a", "column": "A", "scale": {"min": 1, "max": 5}},
                   {"name": "b", "column": "B", "scale": {"min": 1, "max": 5}}],
    "respondent_id": {"name": "rid", "column": "ID"},
    "missing_codes": [99, "n/a"],
})

HEADERS = st.sampled_from(["NPS", "A", "B", "ID", "", " ", "A", "nps ", "Région", "=1+1", "x"])
CELLS = st.one_of(
    st.none(),
    st.integers(-3, 14),
    st.sampled_from([99, 2.5, 1e300, -0.0, "#N/A", "#DIV/0!", "n/a", "", "7", " 3 ", "7,5",
                     "ten", "TRUE", "=cmd|' /C calc'!A0"]),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2030, 1, 1)),
    st.text(max_size=5),
)
# a header row either fully random or (most often) the schema's columns, shuffled, with random
# extra headers (duplicates, blanks) mixed in, so that both refusals and imports are exercised
MATCHING = st.tuples(st.permutations(["ID", "NPS", "A", "B"]), st.lists(HEADERS, max_size=3),
                     st.randoms()).map(lambda t: t[2].sample(list(t[0]) + t[1],
                                                             len(t[0]) + len(t[1])))
SCORE_CELLS = st.one_of(st.integers(0, 10), CELLS)
TABLES = st.one_of(st.lists(HEADERS, min_size=1, max_size=6), MATCHING, MATCHING).flatmap(
    lambda header: st.tuples(st.just(header), st.lists(
        st.lists(SCORE_CELLS, min_size=0, max_size=len(header) + 1), min_size=0, max_size=8)))


def as_csv(header, rows) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows([["" if v is None else v for v in row] for row in rows])
    return out.getvalue().encode("utf-8")


def as_xlsx(header, rows) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append([v if not isinstance(v, str) else v.replace("\x00", "") for v in row])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def check(data: bytes, filename: str, schema) -> None:
    try:
        survey = load_survey(data, schema=schema, filename=filename, require_target=False)
    except CxAppError as exc:
        assert str(exc)  # a message, never empty
        return
    q = survey.quality
    assert q.rows_used + q.rows_excluded == q.rows_read == len(survey.X) + q.rows_excluded
    assert all(e.reason in REASONS and e.column for e in q.excluded)
    assert all(e.scope in ("survey", "model") for e in q.excluded)
    # every row read is in the model base or excluded, never both
    assert len({e.row for e in q.excluded} | set(survey.model_frame.index)) == q.rows_read
    # the survey base is the model base plus the rows excluded from the models only
    survey_only = {e.row for e in q.excluded if e.scope == "model"}
    assert set(survey.frame.index) == set(survey.model_frame.index) | survey_only
    assert len(survey.frame) == q.respondents


FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FAST
@given(TABLES, st.booleans())
def test_csv_never_escapes_and_always_adds_up(table, with_schema):
    check(as_csv(*table), "fuzz.csv", SCHEMA if with_schema else None)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TABLES, st.booleans())
def test_xlsx_never_escapes_and_always_adds_up(table, with_schema):
    header, rows = table
    try:
        data = as_xlsx(header, rows)
    except (ValueError, openpyxl.utils.exceptions.IllegalCharacterError):
        return  # openpyxl itself refuses the cell (control characters): nothing to import
    check(data, "fuzz.xlsx", SCHEMA if with_schema else None)


@FAST
@given(st.binary(max_size=300), st.sampled_from(["f.csv", "f.xlsx", "f.ods", "f.xls"]))
def test_arbitrary_bytes_give_only_our_errors(data, name):
    check(data, name, SCHEMA)
