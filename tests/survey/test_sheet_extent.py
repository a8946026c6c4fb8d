"""The vectorised scan of a worksheet's cell references gives the regular-expression answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cx_app.survey.xml_safety import _sheet_extent, _sheet_extent_reference

LETTERS = st.text(alphabet="ABCXYZ", min_size=0, max_size=4)
DIGITS = st.text(alphabet="0123456789", min_size=0, max_size=11)
PIECE = st.one_of(
    st.builds(lambda q, col, d, e: f'<c{q}r{e}"{col}{d}" t="n"><v>1</v></c>',
              st.sampled_from([" ", "\t", "\n", "  "]), LETTERS, DIGITS,
              st.sampled_from(["=", " = ", "= "])),
    st.builds(lambda col, d: f"<c r='{col}{d}'/>", LETTERS, DIGITS),
    st.builds(lambda col, d: f'<c r="${col}${d}"/>', LETTERS, DIGITS),
    st.builds(lambda d: f'<row r="{d}" spans="1:3">', DIGITS),
    st.text(alphabet=' r="AZ09<>/$', max_size=12),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECE, max_size=30), st.integers(0, 5), st.integers(0, 5))
def test_vectorised_extent_equals_the_regex_reference(pieces, row0, col0):
    window = "".join(pieces).encode()
    assert _sheet_extent(window, row0, col0) == _sheet_extent_reference(window, row0, col0)


def test_a_far_cell_is_found():
    window = b'<row r="1"><c r="A1"/><c r="B1"/></row><row r="7"><c r="XFD1048576"/></row>'
    assert _sheet_extent(window, 0, 0) == (1048576, 16384)
    assert _sheet_extent(window[:-20], 0, 0) == _sheet_extent_reference(window[:-20], 0, 0)
