"""The importer's fast paths (issue 12, import speed) give exactly what the cell-by-cell
reference gives: for any column of mixed cells — Python floats (NaN, inf, -0.0, decimals),
integers, booleans, text with spaces and missing-value codes, Excel error cells, dates, None —
the numpy path over floats and plain strings and the pandas path over each cell agree on
blanks, cleaned scores with every mask, segment texts, inference profiles and present cells."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cx_app.survey import reading
from cx_app.survey import schema as schema_module
from cx_app.survey.cells import (
    _blank_cells,
    _clean_score_cells,
    _date_column_cells,
    _text_cells,
    blank_mask,
    clean_scores,
    code_sets,
    date_column,
    text_column,
)
from cx_app.survey.importing import _object_frame
from cx_app.survey.reading import (
    ExcelError,
    cell_type_ids,
    float_cells,
    remember_grid_cells,
    remembered_cell_types,
    stand_ins,
    string_cells,
    string_texts,
)
from cx_app.survey.schema import (
    KNOWN_NUMERIC_CODES,
    KNOWN_TEXT_CODES,
    Scale,
    _count_distinct,
    _has_text,
    _has_text_cells,
    _numeric_profile,
    _score_cell_texts,
    _score_cells,
    _text_code_display,
)
from cx_app.survey.sheet_shards import cell_array

CELLS = st.one_of(
    st.none(),
    st.floats(-20, 120).map(lambda x: float(round(x))),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([99.0, 98.0, -9.0, 7.5, -0.0, 0.0, 10.0, 11.0, float("nan")]),
    st.integers(-10, 100),
    st.booleans(),
    st.sampled_from(["", " ", "\t", "\u3000", "7", " 3 ", "7,5", "99", "ten", "Don't know",
                     "DON’T  KNOW", " n/a ", "NA", "refused", "1e3", "inf", "TRUE",
                     "2021-03-01"]),
    st.text(max_size=4),
    st.sampled_from([ExcelError("#N/A"), ExcelError("#DIV/0!"), ExcelError(" ")]),
    st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2030, 1, 1)),
    st.just(dt.datetime(2021, 5, 31, 12, 30)),
    st.just(dt.time(8, 15)),
)
COLUMNS = st.lists(CELLS, max_size=25).map(
    lambda cells: pd.Series(cells, index=pd.RangeIndex(2, 2 + len(cells), name="row"),
                            dtype=object, name="Q"))
# float-heavy columns, as calamine reads a numeric survey column with a few odd cells
MOSTLY_FLOATS = st.lists(st.one_of(st.integers(0, 10).map(float), CELLS), max_size=25).map(
    lambda cells: pd.Series(cells, index=pd.RangeIndex(2, 2 + len(cells), name="row"),
                            dtype=object, name="Q"))
# a few distinct cells repeated, as survey columns repeat codes and typos
REPEATING = st.lists(CELLS, min_size=1, max_size=6).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), max_size=40)).map(
    lambda cells: pd.Series(cells, index=pd.RangeIndex(2, 2 + len(cells), name="row"),
                            dtype=object, name="Q"))
ANY_COLUMN = st.one_of(COLUMNS, MOSTLY_FLOATS, REPEATING)
SCALES = st.sampled_from([Scale(min=0, max=10), Scale(min=1, max=5), Scale(min=-2, max=2)])
CODES = st.sampled_from([(), (99, "Don't know"), (98, "n/a", 7), ("nan", -1)])
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(ANY_COLUMN)
def test_blank_mask_matches_the_cell_by_cell_reference(column):
    pd.testing.assert_series_equal(blank_mask(column), _blank_cells(column))


@FAST
@given(ANY_COLUMN, SCALES, CODES)
def test_clean_scores_matches_the_cell_by_cell_reference(column, scale, codes):
    blank = _blank_cells(column)
    fast = clean_scores(column, blank, scale, code_sets(codes))
    slow = _clean_score_cells(column, blank, scale, code_sets(codes))
    for field in ("values", "missing", "error", "date", "non_numeric", "decimal",
                  "out_of_scale"):
        mine, reference = getattr(fast, field), getattr(slow, field)
        assert mine.index.equals(reference.index), field
        dtype = float if field == "values" else bool
        np.testing.assert_array_equal(mine.to_numpy(dtype=dtype),
                                      reference.to_numpy(dtype=dtype), err_msg=field)


@FAST
@given(ANY_COLUMN, SCALES, CODES, st.data())
def test_clean_scores_matches_the_reference_whatever_the_blank_mask(column, scale, codes, data):
    """Also with a blank mask that is not the cells' own (a NaN that is not blank, a blank
    number): every cell is cleaned as the reference cleans it."""
    blank = pd.Series(data.draw(st.lists(st.booleans(), min_size=len(column),
                                         max_size=len(column))), index=column.index,
                      dtype=bool)
    assert_same_scores(clean_scores(column, blank, scale, code_sets(codes)),
                       _clean_score_cells(column, blank, scale, code_sets(codes)))


def assert_same_scores(fast, slow) -> None:
    """Every field of two cleaned score columns (:class:`Scored`) is equal."""
    for field in ("values", "missing", "error", "date", "non_numeric", "decimal",
                  "out_of_scale"):
        dtype = float if field == "values" else bool
        np.testing.assert_array_equal(getattr(fast, field).to_numpy(dtype=dtype),
                                      getattr(slow, field).to_numpy(dtype=dtype),
                                      err_msg=field)


@FAST
@given(ANY_COLUMN)
def test_text_column_matches_the_cell_by_cell_reference(column):
    blank = _blank_cells(column)
    pd.testing.assert_series_equal(text_column(column, blank), _text_cells(column, blank))


@FAST
@given(ANY_COLUMN)
def test_score_cells_match_their_texts(column):
    present, text_code, numbers, folded = _score_cells(column)
    ref_present, ref_code, ref_numbers, ref_folded = _score_cell_texts(column)
    np.testing.assert_array_equal(present, ref_present)
    np.testing.assert_array_equal(text_code, ref_code)
    np.testing.assert_array_equal(numbers[present], ref_numbers[ref_present])
    assert list(folded[text_code]) == list(ref_folded[ref_code])


# segment and id columns as a file holds them: plain strings only
STRING_COLUMNS = st.lists(st.one_of(st.text(max_size=3), st.sampled_from(["", " ", "B ", "B"])),
                          max_size=25).map(lambda cells: pd.Series(
                              cells, index=pd.RangeIndex(2, 2 + len(cells), name="row"),
                              dtype=object, name="Q"))


@FAST
@given(st.one_of(ANY_COLUMN, STRING_COLUMNS))
def test_has_text_matches_the_cell_by_cell_reference(column):
    keep = _has_text(column)
    np.testing.assert_array_equal(keep, _has_text_cells(column))
    assert _count_distinct(column, keep) == column[keep].nunique()


def reference_numeric_profile(values: pd.Series):
    """The profile as it was computed before the fast path (kept here as the reference)."""
    text = values.astype("string").str.strip()
    present = values.notna() & (text != "")
    if not present.any():
        return None
    folded = text[present].str.casefold().str.replace("’", "'", regex=False)
    is_text_code = folded.isin(KNOWN_TEXT_CODES)
    numbers = pd.to_numeric(text[present].str.replace(",", ".", regex=False), errors="coerce")
    is_num_code = numbers.isin(KNOWN_NUMERIC_CODES)
    rest = numbers[~is_num_code & ~is_text_code]
    scores = rest[(rest == np.round(rest)) & rest.between(-5, 10)]
    if rest.empty or scores.size < 0.9 * rest.size or scores.max() - scores.min() > 10:
        return None
    codes = set(folded[is_text_code].map(_text_code_display)) | {
        int(v) for v in numbers[is_num_code].unique()}
    return scores.astype(int), codes


@FAST
@given(st.one_of(ANY_COLUMN, ANY_COLUMN.map(lambda c: pd.to_numeric(c, errors="coerce")
                                            .astype(float))))
def test_numeric_profile_matches_the_previous_computation(column):
    mine, reference = _numeric_profile(column), reference_numeric_profile(column)
    assert (mine is None) == (reference is None)
    if mine is not None:
        assert mine[1] == reference[1]
        assert mine[0].index.equals(reference[0].index)
        assert mine[0].tolist() == reference[0].tolist()


def test_the_fast_paths_are_taken_on_a_float_column(monkeypatch):
    """A column of Python floats never reaches the cell-by-cell text path."""
    def refuse(values):
        raise AssertionError("slow path")

    monkeypatch.setattr(schema_module, "_score_cell_texts", refuse)
    column = pd.Series([1.0, 2.0, 99.0, 10.0, float("nan")] * 10, dtype=object)
    scores, codes = _numeric_profile(column)
    assert codes == {99} and scores.tolist() == [1, 2, 10] * 10


@pytest.mark.parametrize("body", [
    [["a", 1.0, None], ["b", 2.0, dt.date(2021, 1, 1)]],
    [[ExcelError("#N/A"), " "], ["", 3.5]],
    [[[1, 2], "x"], [[3, 4], "y"]],  # a cell that is a sequence: pandas' own path
    [[], []],
])
def test_object_frame_matches_pandas(body):
    pd.testing.assert_frame_equal(_object_frame(cell_array(body, len(body[0]))),
                                  pd.DataFrame(body, dtype=object))


GRIDS = st.integers(1, 4).flatmap(lambda width: st.lists(
    st.lists(st.one_of(st.integers(0, 10).map(float), CELLS), min_size=width, max_size=width),
    min_size=1, max_size=12))


@FAST
@given(GRIDS)
def test_a_grid_classified_at_once_tells_what_each_column_tells(rows):
    """Types, floats and strings (blank or not) of every column, found over the whole grid at
    once, are those of the column's own cells."""
    cells = np.array(rows, dtype=object)
    with remembered_cell_types():
        remember_grid_cells(cells)
        found = [(cell_type_ids(cells[:, j]), float_cells(cells[:, j]), string_cells(cells[:, j]),
                  string_texts(cells[:, j])) for j in range(cells.shape[1])]
    for j, (types, (floats, numbers), (texts, blank), strings) in enumerate(found):
        column = list(cells[:, j])
        assert types.tolist() == [id(type(cell)) for cell in column]
        assert floats.tolist() == [i for i, cell in enumerate(column) if type(cell) is float]
        np.testing.assert_array_equal(numbers, [column[i] for i in floats])
        assert texts.tolist() == [i for i, cell in enumerate(column) if type(cell) is str]
        assert blank.tolist() == [column[i].strip() == "" for i in texts]
        pd.testing.assert_extension_array_equal(
            strings, pd.array([column[i] for i in texts], dtype="string"))


@FAST
@given(GRIDS.flatmap(lambda rows: st.lists(
    st.one_of(st.lists(st.integers(0, 3), max_size=2), st.tuples(st.text(max_size=2))),
    max_size=len(rows[0])).map(lambda sequences: [sequences + row[len(sequences):]
                                                  for row in rows])))
def test_object_frame_matches_pandas_on_any_grid(rows):
    """Also with cells that are sequences, which the frame keeps as cells."""
    frame = _object_frame(cell_array(rows, len(rows[0])))
    pd.testing.assert_frame_equal(frame, pd.DataFrame(rows, dtype=object))
    for j in range(frame.shape[1]):
        assert all(mine is theirs for mine, theirs in zip(frame.iloc[:, j], [r[j] for r in rows],
                                                          strict=True))


@FAST
@given(GRIDS)
def test_text_columns_of_a_grid_match_the_cell_by_cell_reference(rows):
    """Segment texts of a frame's columns, taken from its grid's strings, are the reference's."""
    rows = [[cell if i % 2 else f" {cell!s} " for i, cell in enumerate(row)] for row in rows]
    with remembered_cell_types():
        frame = _object_frame(cell_array(rows, len(rows[0])))
        texts = [text_column(frame.iloc[:, j], blank_mask(frame.iloc[:, j]))
                 for j in range(frame.shape[1])]
    for j, mine in enumerate(texts):
        column = frame.iloc[:, j]
        pd.testing.assert_series_equal(mine, _text_cells(column, _blank_cells(column)))


def test_the_columns_of_an_object_frame_are_classified_with_its_grid(monkeypatch):
    """Inside remembered_cell_types, the blank masks of a frame's columns reuse the types found
    over its whole grid: no column is classified again."""
    body = [[1.0, " a ", None], [" ", 2.0, dt.date(2021, 1, 1)]]
    with remembered_cell_types():
        frame = _object_frame(cell_array(body, len(body[0])))
        monkeypatch.setattr(reading, "_type_ids", lambda cells: pytest.fail("classified again"))
        masks = [blank_mask(frame.iloc[:, j]).tolist() for j in range(frame.shape[1])]
    assert masks == [[False, True], [False, False], [True, False]]


@FAST
@given(ANY_COLUMN)
def test_stand_ins_are_the_first_equal_plain_strings(column):
    """A plain string stands in for the later plain strings with the same text and blank flag;
    every other cell (1 == 1.0 == True) only for itself."""
    values, blank = column.to_numpy(), _blank_cells(column).to_numpy()
    shared = stand_ins(values, np.arange(len(values)), blank)
    for i, cell in enumerate(values):
        same = [k for k in range(i + 1) if type(cell) is str and type(values[k]) is str
                and values[k] == cell and blank[k] == blank[i]]
        assert shared[i] == (same[0] if same else i)


DATE_COLUMNS = st.lists(st.one_of(
    CELLS, st.integers(18000, 75000).map(float), st.just(pd.Timestamp("2021-05-31 08:00")),
    st.sampled_from(["31/05/2021", "2021-05-31 12:00", " 2021-06-01 ", "May 2021"])),
    max_size=25).map(lambda cells: pd.Series(  # repeated: pandas caches dates from 51 cells
        cells * 4, index=pd.RangeIndex(2, 2 + 4 * len(cells), name="row"), dtype=object,
        name="Q"))


@FAST
@given(DATE_COLUMNS)
def test_date_column_matches_the_cell_by_cell_reference(column):
    blank = _blank_cells(column)
    (dates, bad, serials), (ref_dates, ref_bad, ref_serials) = (
        date_column(column, blank), _date_column_cells(column, blank))
    pd.testing.assert_series_equal(dates, ref_dates)
    assert (bad, serials) == (ref_bad, ref_serials)


def test_python_and_pandas_strip_the_same_whitespace():
    """Blank strings are found with str.strip, texts are trimmed with pandas' str.strip (as
    the references do): both take the same code points for whitespace."""
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    by_pandas = pd.Series(chars, dtype="string").str.strip().eq("").to_numpy(dtype=bool)
    np.testing.assert_array_equal(by_pandas, [not c.strip() for c in chars])


# score columns as a file holds them: floats and a few texts shared by the columns
SCORE_TEXTS = st.lists(st.one_of(
    st.integers(0, 10).map(float),
    st.sampled_from(["", " ", "Don't know", " don't KNOW ", "N/A", "7,5", "good", "99", " 3 "])),
    max_size=25).map(lambda cells: pd.Series(
        cells, index=pd.RangeIndex(2, 2 + len(cells), name="row"), dtype=object, name="Q"))


@FAST
@given(st.lists(st.one_of(SCORE_TEXTS, ANY_COLUMN), min_size=2, max_size=4), SCALES, CODES)
def test_answers_remembered_across_columns_are_the_references(columns, scale, codes):
    """While a file is read, the answers for texts met in one column serve the next columns:
    every column still gets what the cell-by-cell references give it."""
    with remembered_cell_types():
        found = [(clean_scores(column, _blank_cells(column), scale, code_sets(codes)),
                  _score_cells(column)) for column in columns]
    for column, (fast, (present, text_code, numbers, folded)) in zip(columns, found,
                                                                    strict=True):
        assert_same_scores(fast, _clean_score_cells(column, _blank_cells(column), scale,
                                                    code_sets(codes)))
        ref_present, ref_code, ref_numbers, ref_folded = _score_cell_texts(column)
        np.testing.assert_array_equal(present, ref_present)
        np.testing.assert_array_equal(text_code, ref_code)
        np.testing.assert_array_equal(numbers[present], ref_numbers[ref_present])
        assert list(folded[text_code]) == list(ref_folded[ref_code])


def test_a_block_inside_another_shares_its_memory():
    """infer_schema and read_table remember cell types themselves and, called inside
    load_survey, use what load_survey's block already holds."""
    column = np.array([1.0, "a", None], dtype=object)
    with remembered_cell_types():
        outer = cell_type_ids(column)
        with remembered_cell_types():
            assert cell_type_ids(column) is outer
        assert cell_type_ids(column) is outer
