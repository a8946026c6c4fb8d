"""Reading a sheet in shards on several cores gives exactly the grid of one calamine parse of
the whole sheet: the same rows, cells, values and types, wherever the sheet starts and
whatever its gaps, spellings and cell types — else the sheet is read in one piece."""

from __future__ import annotations

import datetime as dt
import io
from itertools import chain

import pytest
import python_calamine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl import Workbook

from cx_app.survey import importing, sheet_shards
from cx_app.survey.importing import load_survey
from cx_app.survey.sheet_shards import parse_in_shards, split_sheet_xml
from tests.data.bad.make_corpus import workbook_parts, zip_bytes

PART = "xl/worksheets/sheet1.xml"


def whole(data: bytes, sheet: str) -> list[list]:
    return python_calamine.CalamineWorkbook.from_filelike(io.BytesIO(data)).get_sheet_by_name(
        sheet).to_python(skip_empty_area=False)


def typed(grid: list[list]) -> list[list]:
    return [[(type(v).__name__, v) for v in row] for row in grid]


@pytest.fixture
def always_sharded(monkeypatch):
    monkeypatch.setattr(sheet_shards, "SHARD_MIN_BYTES", 0)


_VALUES = st.one_of(
    st.none(), st.integers(-10, 10**6), st.floats(allow_nan=False, allow_infinity=False),
    st.text("ab 7,.'\"<>&é", max_size=6), st.booleans(),
    st.datetimes(dt.datetime(1950, 1, 1), dt.datetime(2090, 1, 1)).map(
        lambda d: d.replace(microsecond=0)))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 6), st.integers(1, 5),
       st.lists(st.tuples(st.integers(0, 4), st.lists(_VALUES, max_size=6)), max_size=25),
       st.integers(2, 4))
def test_shards_give_the_grid_of_one_parse(always_sharded, monkeypatch, first_row, first_col,
                                           rows, shards):
    monkeypatch.setattr(sheet_shards, "shard_count", lambda: shards)
    book = Workbook()
    sheet = book.active
    sheet.title = "Data"
    r = first_row
    for gap, values in rows:
        r += gap
        for j, value in enumerate(values):
            if value is not None:
                sheet.cell(r, first_col + j, value)
        r += 1
    out = io.BytesIO()
    book.save(out)
    data = out.getvalue()
    sharded = parse_in_shards(data, PART, "Data")
    written = sum(any(v is not None for v in values) for _, values in rows)
    if written >= 2:  # at least two row tags: cut into shards
        assert sharded is not None and typed(sharded.rows) == typed(whole(data, "Data"))
        if sharded.cells is not None:  # the same objects, row by row
            assert sharded.cells.shape == (len(sharded.rows), len(sharded.rows[0]))
            assert all(a is b for a, b in zip(sharded.cells.ravel(),
                                              chain.from_iterable(sharded.rows), strict=True))
    else:
        assert sharded is None


def _sheet(body: str) -> bytes:
    return zip_bytes(workbook_parts({"S": (
        '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats'
        f'.org/spreadsheetml/2006/main"><sheetData>{body}</sheetData></worksheet>')}))


def test_rows_and_cells_without_r_inside_a_shard_keep_their_places(always_sharded,
                                                                   monkeypatch):
    monkeypatch.setattr(sheet_shards, "shard_count", lambda: 3)
    body = "".join(
        (f'<row r="{3 * i + 1}">' if i % 2 else "<row>")
        + "".join(f'<c r="{"BCD"[j]}{3 * i + 1}"><v>{i}</v></c>' if (i + j) % 3 else
                  f"<c><v>{i * 10 + j}</v></c>" for j in range(3)) + "</row>"
        for i in range(12))
    data = _sheet(body)
    sharded = parse_in_shards(data, PART, "S")
    assert sharded is not None and typed(sharded.rows) == typed(whole(data, "S"))


def test_a_sheet_with_comments_among_its_rows_is_read_in_one_piece(always_sharded):
    rows = "".join(f'<row r="{i}"><c r="A{i}"><v>{i}</v></c></row>' for i in range(1, 40))
    hidden = '<!-- <row r="20"><c r="A20"><v>999</v></c></row> -->'
    assert split_sheet_xml(f"<sheetData>{hidden}{rows}</sheetData>".encode(), 2) is None
    data = _sheet(hidden + rows)
    assert parse_in_shards(data, PART, "S") is None
    assert whole(data, "S")[19] == [20.0]


def test_load_survey_is_the_same_with_and_without_shards(monkeypatch, tmp_path):
    from cx_app.survey.simulate_bank import simulate_bank_waves, write_bank_export

    path = write_bank_export(simulate_bank_waves(400, waves=2, seed=3), tmp_path / "bank.xlsx")
    monkeypatch.setattr(sheet_shards, "SHARD_MIN_BYTES", 0)
    monkeypatch.setattr(sheet_shards, "shard_count", lambda: 3)
    made = []  # cell arrays made from rows after the read (the shards make theirs during it)
    monkeypatch.setattr(importing, "cell_array",
                        lambda rows, width, made_by=importing.cell_array: made.append(1) or
                        made_by(rows, width))
    sharded = load_survey(path)
    assert not made
    monkeypatch.setattr(sheet_shards, "shard_count", lambda: 1)
    single = load_survey(path)
    assert made
    assert sharded.frame.equals(single.frame)
    assert sharded.quality.to_dict() == single.quality.to_dict()


def test_a_sheet_whose_last_row_holds_most_of_its_bytes_is_still_cut():
    huge = "".join(f'<c r="{c}2"><v>{c}</v></c>' for c in ("A", "B", "C") * 1)
    xml = f'<sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="2">{huge * 50}</row>' \
          "</sheetData>"
    shards = split_sheet_xml(xml.encode(), 2)
    assert shards is not None and len(shards) == 2
    assert shards[1].startswith(b'<sheetData><row r="2">')
