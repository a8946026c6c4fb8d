"""Survey text kept plain and written out safely (no control characters, formulas or markup).

Labels and values come from whoever wrote the survey file. A spreadsheet evaluates a cell that
starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula ("CSV injection",
OWASP): Excel cells get the quote prefix (:mod:`cx_app.reports.excel`), CSV cells a leading
apostrophe; HTML is escaped. Only strings are touched: a negative number stays a number.
Control characters are not valid XML, and vl-convert aborts the whole process on a NUL: they are
removed where a file's text becomes data (:func:`plain_text`, :data:`PlainText`) and again from
every chart spec (:func:`plain_spec`, for text that did not come through an import).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable
from typing import Annotated, Any

import numpy as np
import pandas as pd
from pydantic import BeforeValidator

FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet treat a cell as a formula (OWASP, CSV injection)."""

CSV_ENCODING = "utf-8-sig"
"""CSV downloads carry a byte-order mark so that Excel reads accented labels correctly."""


def is_formula_like(value: Any) -> bool:
    """True when ``value`` is a string a spreadsheet would evaluate as a formula.

    >>> is_formula_like("=HYPERLINK(\\"http://x\\")"), is_formula_like("-cmd"), is_formula_like(-3)
    (True, True, False)
    """
    return isinstance(value, str) and value.startswith(FORMULA_PREFIXES)


def neutralise_csv_value(value: Any) -> Any:
    """The value as it must appear in a CSV cell: formula-like strings get a leading ``'``.

    >>> neutralise_csv_value("@SUM(A1:A9)"), neutralise_csv_value("Promoter"), neutralise_csv_value(-1.5)
    ("'@SUM(A1:A9)", 'Promoter', -1.5)
    """
    if is_formula_like(value):
        return "'" + value
    return value


def _neutralise_label(label: Any) -> Any:
    if isinstance(label, tuple):
        return tuple(neutralise_csv_value(part) for part in label)
    return neutralise_csv_value(label)


def safe_csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose strings (cells, column names, index labels) are CSV-safe."""
    out = frame.copy()
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
            continue
        out.isetitem(position, column.map(neutralise_csv_value, na_action="ignore"))
    out.columns = pd.Index([_neutralise_label(c) for c in out.columns],
                           name=_neutralise_label(out.columns.name))
    out.index = pd.Index([_neutralise_label(i) for i in out.index],
                         name=_neutralise_label(out.index.name))
    return out


def to_safe_csv(frame: pd.DataFrame, *, index: bool = False) -> bytes:
    """``frame`` as CSV bytes (UTF-8 with BOM) with every formula-like string neutralised."""
    text = safe_csv_frame(frame).to_csv(index=index, lineterminator="\r\n")
    return text.encode(CSV_ENCODING)


def escape_html(value: Any) -> str:
    """``value`` as HTML text: ``<``, ``>``, ``&`` and both quotes escaped (:func:`html.escape`).

    >>> escape_html("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    """
    return html.escape("" if value is None else str(value), quote=True)


CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
"""C0 but tab, newline and carriage return, DEL, C1, lone surrogates, U+FFFE and U+FFFF."""
_CARRIAGE_RETURN = re.compile("\r\n?")


def plain_text(text: str) -> str:
    """``text`` without control characters; ``\\r\\n`` and a lone ``\\r`` become ``\\n``.

    >>> plain_text("Pri\\x00ce\\x1b[31m"), plain_text("line 1\\r\\nline 2\\ttab")
    ('Price[31m', 'line 1\\nline 2\\ttab')
    """
    if "\r" in text:
        text = _CARRIAGE_RETURN.sub("\n", text)
    return CONTROL_CHARACTERS.sub("", text)


def _plain_input(value: Any) -> Any:
    return plain_text(value) if isinstance(value, str) else value


PlainText = Annotated[str, BeforeValidator(_plain_input)]
"""A pydantic ``str`` without control characters, removed before ``min_length`` counts."""


def control_characters(text: str) -> Counter[str]:
    """The control characters of ``text`` that :func:`plain_text` removes, by name, with counts.

    >>> control_characters("a\\x00b\\x00c\\x1b")
    Counter({'NUL': 2, 'U+001B': 1})
    """
    return Counter("NUL" if c == "\x00" else f"U+{ord(c):04X}"
                   for c in CONTROL_CHARACTERS.findall(text))


def describe_removed(found: Counter[str]) -> str:
    """``1 control character (NUL)`` / ``3 control characters (NUL ×2, U+001B)``: for notes."""
    total = sum(found.values())
    names = ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in found.most_common())
    return f"{total} control character{'s' if total != 1 else ''} ({names})"


def plain_text_column(column: pd.Series) -> tuple[pd.Series, Counter[str]]:
    """A column of text cells without control characters, and what was removed (counted over
    every cell); one scan of the distinct values (as objects: an Arrow array costs a call per
    cell) when there is none."""
    distinct = np.asarray(pd.unique(column.dropna()), dtype=object).tolist()
    texts = [v for v in distinct if isinstance(v, str)]
    joined = "".join(texts)
    if not CONTROL_CHARACTERS.search(joined) and "\r" not in joined:
        return column, Counter()
    dirty = {t: plain_text(t) for t in texts if plain_text(t) != t}
    found: Counter[str] = Counter()
    for text, n in column[column.isin(list(dirty))].value_counts().items():
        for name, k in control_characters(text).items():
            found[name] += k * n
    return column.replace(dirty), found


def plain_spec(spec: Any) -> Any:
    """A copy of a JSON-like chart spec whose every string, keys included, is plain and at most
    :data:`SPEC_TEXT_LIMIT` long: vl-convert neither aborts nor draws a label 100,000 px wide."""
    if isinstance(spec, str):
        return short_label(plain_text(spec), SPEC_TEXT_LIMIT)
    if isinstance(spec, dict):
        return {plain_spec(k): plain_spec(v) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return [plain_spec(v) for v in spec]
    return spec


_MARKDOWN_ANYWHERE = re.compile(r"([\\`*\[\]<>~$|@&])")
_MARKDOWN_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_MARKDOWN_URL = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<=\bwww)(\.)")
_MARKDOWN_LINE_START = re.compile(r"(?m)^([ \t]*)([#+\-=]|\d+(?=[.)]))")


def escape_markdown(value: Any) -> str:
    """``value`` as text that Markdown (CommonMark, GFM, Streamlit's directives) shows literally.

    Only what can open a link, image, HTML, emphasis, code, LaTeX, table, autolink, bare URL or a
    line-start block is escaped, so a plain sentence reads the same in the source and the page.

    >>> escape_markdown("Store ![p](http://host/a.png)")
    'Store !\\\\[p\\\\](http\\\\://host/a.png)'
    >>> escape_markdown("cx_report_wave-2.xlsx: 3 rows (max 5).")
    'cx_report_wave-2.xlsx: 3 rows (max 5).'
    """
    text = _MARKDOWN_ANYWHERE.sub(r"\\\1", str(value))
    text = _MARKDOWN_UNDERSCORE.sub(r"\\_", text)
    text = _MARKDOWN_URL.sub(lambda m: "\\" + m.group(0), text)
    return _MARKDOWN_LINE_START.sub(
        lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else "\\" + m.group(2)),
        text)


LABEL_LIMIT = 100
"""Characters of a label shown in a chart (axis, legend, tooltip); the data keeps the rest."""
ELLIPSIS = "…"
SPEC_TEXT_LIMIT = 500
"""Characters of any string of a chart spec given to the renderer (:func:`plain_spec`)."""


def short_label(text: Any, limit: int = LABEL_LIMIT) -> str:
    """``text`` as a label of at most ``limit`` characters, with ``…`` when it was cut.

    >>> short_label("Speed of the network"), short_label("x" * 200, 10)
    ('Speed of the network', 'xxxxxxxxx…')
    """
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def short_labels(values: Iterable[Any], limit: int = LABEL_LIMIT) -> list[str]:
    """Labels of at most ``limit`` characters that stay distinct when distinct values were cut
    to the same text (a counter ``(2)``, ``(3)``... replaces their end); equal values keep
    equal labels.

    >>> short_labels(["a" * 12 + "1", "a" * 12 + "2", "b"], 10)
    ['aaaaaaaaa…', 'aaaaa… (2)', 'b']
    """
    values = [str(v) for v in values]
    out: dict[str, str] = {}
    taken: set[str] = set()
    for value in dict.fromkeys(values):
        label, k = short_label(value, limit), 2
        while label in taken:
            suffix = f"{ELLIPSIS} ({k})"
            label, k = value[: max(0, limit - len(suffix))] + suffix, k + 1
        taken.add(label)
        out[value] = label
    return [out[v] for v in values]
