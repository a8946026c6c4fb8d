"""Formula-injection neutralisation (CSV) and HTML escaping of survey text."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from cx_app.safe_text import (
    escape_html,
    is_formula_like,
    neutralise_csv_value,
    safe_csv_frame,
    to_safe_csv,
)

HOSTILE = ['=HYPERLINK("http://evil.example","x")', "+1", "-cmd", "@SUM(A1:A2)", "\tx", "\rx"]


@pytest.mark.parametrize("text", HOSTILE)
def test_every_formula_prefix_is_neutralised(text):
    assert is_formula_like(text)
    assert neutralise_csv_value(text) == "'" + text


@pytest.mark.parametrize("value", ["Promoter", "network voice", "", " =not first", 0, -3, -2.5])
def test_plain_text_and_numbers_are_untouched(value):
    assert not is_formula_like(value)
    assert neutralise_csv_value(value) == value


def _read_back(data: bytes) -> list[list[str]]:
    assert data.startswith(b"\xef\xbb\xbf")
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def test_to_safe_csv_neutralises_cells_headers_and_index_but_keeps_negative_numbers():
    frame = pd.DataFrame(
        {"=cmd|' /C calc'!A0": ["=1+1", "ok", "@x"], "score": [-1, 2, -3.5], "mixed": ["-x", -7, None]},
        index=pd.Index(["+a", "b", "c"], name="@id"),
    )
    rows = _read_back(to_safe_csv(frame, index=True))
    assert rows[0] == ["'@id", "'=cmd|' /C calc'!A0", "score", "mixed"]
    assert rows[1] == ["'+a", "'=1+1", "-1.0", "'-x"]
    assert rows[2] == ["b", "ok", "2.0", "-7"]
    assert rows[3] == ["c", "'@x", "-3.5", ""]
    for row in rows:
        for cell in row:
            assert not is_formula_like(cell) or cell.lstrip("-").replace(".", "").isdigit()


def test_safe_csv_frame_leaves_the_input_alone_and_numeric_dtypes_numeric():
    frame = pd.DataFrame({"label": ["-cmd"], "value": [-1.0]})
    out = safe_csv_frame(frame)
    assert frame.loc[0, "label"] == "-cmd"
    assert out.loc[0, "label"] == "'-cmd"
    assert out["value"].dtype == float and out.loc[0, "value"] == -1.0


def test_escape_html():
    assert escape_html("<script>alert('x')</script> & \"q\"") == (
        "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;q&quot;")
    assert escape_html(None) == ""
    assert escape_html(-1.5) == "-1.5"
