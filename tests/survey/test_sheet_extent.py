"""The worksheet extent scan: the fast path (last reference + one search for anything beyond
it) must give exactly what reading every reference gives, on ordinary and hostile windows."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl.utils import get_column_letter

from cx_app.survey import xml_safety
from cx_app.survey.xml_safety import (
    _NORMALISE,
    _greater_than,
    _sheet_extent,
    _sheet_extent_full,
    column_number,
)

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _letters(n: int) -> str:
    return get_column_letter(n)  # an independent oracle for the column letters


def _cell(row: int, col: int, dollar: bool = False, pad: int = 0) -> bytes:
    d = "$" if dollar else ""
    return f'<c r="{d}{_letters(col)}{d}{str(row).zfill(pad)}" t="n"><v>1</v></c>'.encode()


def _full(window: bytes, max_row: int = 0, max_col: int = 0) -> tuple[int, int]:
    return _sheet_extent_full(window.translate(_NORMALISE), max_row, max_col)


@given(st.integers(1, 10**9 - 1), st.integers(1, 10**9 - 1))
def test_greater_than_digits_is_numeric_order(value, other):
    pattern = re.compile(_greater_than(str(value), "0123456789", 9))
    assert (pattern.fullmatch(str(other)) is not None) == (other > value)


@given(st.integers(1, 18278), st.integers(1, 18278))
def test_greater_than_letters_is_column_order(value, other):
    pattern = re.compile(_greater_than(_letters(value), LETTERS, 3))
    assert (pattern.fullmatch(_letters(other)) is not None) == (other > value)


def test_ordinary_sheet_takes_the_fast_path_and_agrees(monkeypatch):
    rows = b"".join(b'<row r="%d">' % r + b"".join(_cell(r, c) for c in range(1, 16)) + b"</row>"
                    for r in range(1, 400))
    calls = []
    monkeypatch.setattr(xml_safety, "_sheet_extent_full",
                        lambda *a: calls.append(1) or _sheet_extent_full(*a))
    assert _sheet_extent(rows, 0, 0) == (399, 15) == _full(rows)
    assert calls == []  # proved by one search, no reference-by-reference pass


def test_hostile_reference_anywhere_is_found():
    body = b"".join(_cell(r, c) for r in range(1, 50) for c in range(1, 6))
    for hostile in (_cell(1048576, 1), _cell(1, 16384), _cell(7, 16384, dollar=True),
                    _cell(60, 3, pad=9)):
        for at in (0, len(body) // 2, len(body)):
            window = body[:at] + hostile + body[at:]
            assert _sheet_extent(window, 0, 0) == _full(window), (hostile, at)
    assert _sheet_extent(body + _cell(2, 16384), 0, 0)[1] == column_number("XFD")


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(1, 2_000_000), st.integers(1, 20000), st.booleans(),
                          st.integers(0, 9)), min_size=0, max_size=40),
       st.integers(0, 5000), st.integers(0, 100))
def test_fast_path_equals_reading_every_reference(cells, max_row, max_col):
    window = b"".join(_cell(min(r, 999_999_999), min(c, 18278), d, p) for r, c, d, p in cells)
    assert _sheet_extent(window, max_row, max_col) == _full(window, max_row, max_col)
