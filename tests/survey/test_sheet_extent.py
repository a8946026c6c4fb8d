"""A worksheet's extent: calamine allocates rows × columns of a sheet's box, so a sheet claiming
a huge box must be refused before it is parsed or, when its references are spelled in ways
Excel never writes, by the reader's own limits in its child process — in one sentence either
way, never by a crash of the importing process.

The archive check (``xml_safety``) reads the declared dimension and every ``r="..."``
reference long enough to pass a limit; the property test draws sheets as Excel writes them
and compares its verdict with the largest reference written (the oracle)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl.utils import get_column_letter

from cx_app.errors import SurveyFileError
from cx_app.survey import xml_safety
from cx_app.survey.importing import load_survey
from cx_app.survey.limits import ImportLimits, limits_from_env
from tests.data.bad.make_corpus import workbook_parts, zip_bytes

_HEAD = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
         b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
         b'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
         b"<sheetData>")
_TAIL = b"</sheetData></worksheet>"


def _cell(row: int, col: int, *, lower=False, dollar=False) -> str:
    letters = get_column_letter(col)  # an independent oracle for the column letters
    letters = letters.lower() if lower else letters
    d = "$" if dollar else ""
    return f'<c r="{d}{letters}{d}{row}" t="n"><v>1</v></c>'


def _row(row: int, cells: list[str], *, with_r=True) -> str:
    r = f' r="{row}"' if with_r else ""
    return f"<row{r}>" + "".join(cells) + "</row>"


def _workbook(sheet: bytes) -> bytes:
    return zip_bytes(workbook_parts({"S": sheet.decode()}))


def _checked(sheet: bytes, limits: ImportLimits | None = None) -> None:
    xml_safety.check_workbook_archive(_workbook(sheet), "s.xlsx", limits or limits_from_env())


def test_an_ordinary_sheet_passes_the_check():
    body = "".join(_row(r, [_cell(r, c) for c in range(1, 16)]) for r in range(1, 400))
    _checked(_HEAD + body.encode() + _TAIL)  # no refusal


@pytest.mark.parametrize(("hostile", "message"), [
    (_cell(1_000_001, 1), r"down to row 1,000,001, more than the limit of "
                          r"1,000,000 rows \(CX_APP_MAX_ROWS\)"),
    (_cell(2, 2001), r"out to column 2,001, more than the limit of 2,000"),
    (_cell(2, 16384, lower=True), r"out to column 16,384"),  # "xfd2": calamine reads it
    ('<c r="AAAA2"><v>1</v></c>', r"out to column 18,279"),
    ('<c r="A3000000000"><v>1</v></c>', r"down to row 3,000,000,000"),
    ('<c r="A' + "9" * 40 + '"><v>1</v></c>', r"down to row 1,000,000,000,000"),
    (_cell(2, 16384, dollar=True), r"out to column 16,384"),  # "$XFD$2"
    ('<x:c r="XFD2"><x:v>1</x:v></x:c>', r"out to column 16,384"),  # a prefixed name
    ('<c t="n"r="XFD2"><v>1</v></c>', r"out to column 16,384"),
])
def test_a_long_reference_beyond_the_limits_is_refused_before_any_reader(hostile, message):
    sheet = _HEAD + (_row(1, [_cell(1, 1)]) + _row(2, [hostile])).encode() + _TAIL
    with pytest.raises(SurveyFileError, match=r"^s\.xlsx: worksheet part "
                                              r"'xl/worksheets/sheet1\.xml' has cells " + message):
        _checked(sheet)


def test_a_declared_dimension_beyond_the_limits_is_refused():
    sheet = (_HEAD.replace(b"<sheetData>", b'<dimension ref="A1:XFD1048576"/><sheetData>')
             + _row(1, [_cell(1, 1)]).encode() + _TAIL)
    with pytest.raises(SurveyFileError, match=r"declares a dimension down to row 1,048,576"):
        _checked(sheet)


def test_cells_far_apart_are_refused_by_their_product():
    limits = ImportLimits(max_rows=10**6, max_columns=10**4, max_cells=10**6)
    sheet = _HEAD + _row(5000, [_cell(5000, 5000)]).encode() + _TAIL
    with pytest.raises(SurveyFileError, match=r"spanning 5,000 rows × 5,000 columns = "
                                              r"25,000,000 cells, more than the limit of "
                                              r"1,000,000 \(CX_APP_MAX_CELLS\)"):
        _checked(sheet, limits)


@pytest.mark.parametrize("body", [
    # references Excel never writes: spaces around "=", single quotes
    _row(1, [_cell(1, 1)]) + _row(2, ["<c r = 'XFD2'><v>1</v></c>"]),
    # 3 rows without r after row 999,998 reach row 1,000,001
    _row(999_998, [_cell(999_998, 1)]) + "".join(
        _row(0, ["<c><v>1</v></c>"], with_r=False) for _ in range(3)),
    # a row of 2,100 cells without r
    _row(1, ["<c><v>1</v></c>"] * 2_100, with_r=False),
], ids=["spelled", "tall-without-r", "wide-without-r"])
def test_other_spellings_are_refused_by_the_reader_in_one_sentence(tmp_path, body):
    path = tmp_path / "spelled.xlsx"
    path.write_bytes(_workbook(_HEAD + body.encode() + _TAIL))
    _checked(_HEAD + body.encode() + _TAIL)  # the archive check lets these through
    with pytest.raises(SurveyFileError, match=r"^spelled\.xlsx, sheet 'S': [0-9,]+ "
                                              r"(rows|columns), more than the limit of"):
        load_survey(path)


@st.composite
def usual_sheets(draw) -> tuple[bytes, int, int]:
    """A sheet as Excel writes it (every row and cell with its r), its largest row and
    column."""
    rows, row, widest = [], 0, 0
    for _ in range(draw(st.integers(0, 20))):
        row += draw(st.integers(1, 30))
        cells, col = [], 0
        for _ in range(draw(st.integers(1, 8))):
            col += draw(st.integers(1, 12))
            cells.append(_cell(row, col, lower=draw(st.booleans())))
            widest = max(widest, col)
        rows.append(_row(row, cells))
    return _HEAD + "".join(rows).encode() + _TAIL, row, widest


@settings(max_examples=150, deadline=None)
@given(usual_sheets(), st.integers(10, 400), st.integers(2, 60))
def test_the_check_refuses_exactly_the_sheets_beyond_the_limits(drawn, max_rows, max_columns):
    sheet, last_row, last_column = drawn
    limits = ImportLimits(max_rows=max_rows, max_columns=max_columns, max_cells=10**12)
    if last_row > max_rows or last_column > max_columns:
        with pytest.raises(SurveyFileError, match=r"more than the limit"):
            _checked(sheet, limits)
    else:
        _checked(sheet, limits)


def test_a_far_reference_beyond_the_checked_prefix_stops_the_reader_in_one_sentence(tmp_path):
    # the checks read the first CHECKED_BYTES of a sheet; the reader's limits bound the rest
    rows = "".join(_row(r, [_cell(r, c) for c in range(1, 11)]) for r in range(1, 20_001))
    sheet = _HEAD + (rows + _row(1_048_576, [_cell(1_048_576, 16384)])).encode() + _TAIL
    assert len(sheet) > xml_safety.CHECKED_BYTES
    _checked(sheet)  # the far cell is beyond what the checks read
    path = tmp_path / "far.xlsx"
    path.write_bytes(_workbook(sheet))
    with pytest.raises(SurveyFileError, match=r"^far\.xlsx(, sheet 'S')?: (the reader ran out "
                                              r"of its memory limit|1,048,576 rows, more than)"):
        load_survey(path)
