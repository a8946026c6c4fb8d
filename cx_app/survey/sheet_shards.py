"""Reading one large worksheet with calamine on several cores at once.

calamine parses a sheet on one core (python-calamine releases the GIL meanwhile). A large
sheet's XML is cut, just before row tags that carry their row number (``<row r="…">``), into
twice as many shards as there are cores; each shard becomes a copy of the workbook whose sheet
holds only its rows (head and tail of the sheet kept, parts stored uncompressed, so building
one is a copy), calamine parses the copies in one thread per core, and their rows are laid
back on the sheet's grid, and into one 2-D object array of its cells, each shard's as soon
as it is parsed (``to_python`` and the array hold the GIL, the parse does not, so they
overlap).

Why the grid is the same as one parse of the whole sheet (``to_python(skip_empty_area=False)``,
tested cell by cell on random sheets): calamine (``xlsx/cells_reader.rs``) takes a cell's row
from its ``r`` attribute or the current row, which a row tag with ``r`` sets — so every shard
starts on a known row — and a cell's column from its ``r`` or the cells before it in the same
row, which a shard never splits. A sheet that cannot be cut so (comments, CDATA or processing
instructions among the rows; overlapping shards; an error) is read in one piece instead.
"""

from __future__ import annotations

import gc
import io
import os
import zipfile
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import python_calamine

SHARD_MIN_BYTES = 8 * 1024 * 1024
"""Sheets of less XML are parsed in one piece (the copies would cost more than they save)."""

_SHEET_DATA, _END_SHEET_DATA, _ROW = b"<sheetData>", b"</sheetData>", b'<row r="'


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while calamine turns a sheet into lists of
    Python values: those millions of new objects hold no cycles, yet they set off full
    collections that walk every one of them (0.15 s on 3 million cells). Restored after,
    unless something else had paused it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def shard_count() -> int:
    """Cores this process may use (at most 4)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


def split_sheet_xml(xml: bytes | bytearray, shards: int) -> list[bytes] | None:
    """The worksheet ``xml`` as up to ``shards`` complete worksheets holding consecutive rows
    (each the same head and tail around its rows), cut just before ``<row r="``; None when it
    cannot be cut so."""
    start = xml.find(_SHEET_DATA)
    end = xml.rfind(_END_SHEET_DATA)
    if shards < 2 or start < 0 or end < start:
        return None
    body = start + len(_SHEET_DATA)
    if _has_markup(xml, body, end):
        return None  # "<!" (comment, CDATA) or "<?" among the rows: "<row" may be text there
    cuts = [body]
    for k in range(1, shards):
        point = body + (end - body) * k // shards
        at = xml.find(_ROW, point, end)
        if at < 0:  # no row starts after the point: the last one before it, if any
            at = xml.rfind(_ROW, cuts[-1] + 1, point)
        if at > cuts[-1]:
            cuts.append(at)
    if len(cuts) < 2:
        return None
    head, tail, view = xml[:body], xml[end:], memoryview(xml)
    return [b"".join([head, view[a:b], tail])
            for a, b in zip(cuts, [*cuts[1:], end], strict=True)]


def _has_markup(xml: bytes | bytearray, start: int, end: int, step: int = 1 << 22) -> bool:
    """Whether ``xml[start:end]`` holds ``<!`` or ``<?`` (numpy, 4 MB at a time)."""
    for at in range(start, end, step):
        window = np.frombuffer(xml, dtype=np.uint8, count=min(step + 1, end - at), offset=at)
        if ((window[:-1] == 60) & ((window[1:] == 33) | (window[1:] == 63))).any():
            return True
    return False


def _stored_workbooks(data: bytes, part: str, sheets: list[bytes]) -> list[io.BytesIO]:
    """Copies of the workbook ``data`` whose ``part`` is each of ``sheets``, uncompressed (each
    an in-memory file, read from its start)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        others = [(info.filename, archive.read(info)) for info in archive.infolist()
                  if info.filename != part and not info.is_dir()]
    books = []
    for sheet in sheets:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
            for filename, content in [*others, (part, sheet)]:
                copy.writestr(filename, content)
        out.seek(0)
        books.append(out)
    return books


def _parse(book: io.BytesIO, sheet: str) -> python_calamine.CalamineSheet:
    return python_calamine.CalamineWorkbook.from_filelike(book).get_sheet_by_name(sheet)


@dataclass(frozen=True)
class ShardedSheet:
    """A sheet read in shards: its rows from (0, 0), as ``to_python(skip_empty_area=False)``
    gives them, and the same cells as one 2-D object array (the very objects; None when the
    shards do not all span the sheet's full width)."""

    rows: list[list[Any]]
    cells: np.ndarray | None


def cell_array(rows: list[list[Any]], width: int) -> np.ndarray:
    """Rows of ``width`` cells each as a 2-D object array of the same objects, filled cell by
    cell (faster than ``np.array``, which looks into each cell for nested sequences)."""
    return np.fromiter(chain.from_iterable(rows), dtype=object,
                       count=len(rows) * width).reshape(len(rows), width)


def _grid(parsed: Iterator[python_calamine.CalamineSheet]) -> ShardedSheet | None:
    """The sheet from its shards in order (each turned into rows and a block of cells as soon
    as it is parsed, while the next ones still are); None if two shards' rows overlap."""
    blocks = []
    for sheet in parsed:
        if sheet.start is not None:
            with gc_paused():
                rows = sheet.to_python(skip_empty_area=True)
                left, right = sheet.start[1], sheet.end[1]
                block = cell_array(rows, right - left + 1) if left == 0 else None
            blocks.append((*sheet.start, *sheet.end, rows, block))
    if not blocks:
        return ShardedSheet([], None)
    width = max(right for _, _, _, right, _, _ in blocks) + 1
    grid: list[list[Any]] = []
    cells: list[np.ndarray] | None = []
    for first, left, last, right, rows, block in blocks:
        if first < len(grid):
            return None
        if first > len(grid) and cells is not None:
            cells.append(np.full((first - len(grid), width), "", dtype=object))
        grid.extend([""] * width for _ in range(first - len(grid)))
        if left or right + 1 < width:
            rows = [[""] * left + row + [""] * (width - right - 1) for row in rows]
            cells = None
        grid.extend(rows)
        if cells is not None:
            cells.append(block)
        if len(grid) != last + 1:
            return None
    return ShardedSheet(grid, np.concatenate(cells) if cells else None)


def parse_in_shards(data: bytes, part: str, sheet: str,
                    xml: bytes | bytearray | None = None) -> ShardedSheet | None:
    """The rows (and cells) of worksheet ``sheet`` (archive part ``part``, inflated: ``xml`` if given) of
    the .xlsx ``data`` — an archive already checked by
    :func:`~cx_app.survey.xml_safety.check_workbook_archive` — read by calamine in parallel
    shards; None when the sheet is small, cannot be cut, or a shard cannot be read (then read
    it in one piece, which reports the problem)."""
    shards = shard_count()
    if xml is None:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            try:
                info = archive.getinfo(part)
            except KeyError:
                return None
            if shards < 2 or info.file_size < SHARD_MIN_BYTES:
                return None
            xml = archive.read(info)
    if shards < 2 or len(xml) < SHARD_MIN_BYTES:
        return None
    pieces = split_sheet_xml(xml, 2 * shards)  # twice the cores: rows of the first ones
    del xml  # are made (holding the GIL) while the last ones are parsed (not holding it)
    if pieces is None:
        return None
    books = _stored_workbooks(data, part, pieces)
    del pieces
    with ThreadPoolExecutor(shards) as pool:
        parsing = deque(pool.submit(_parse, book, sheet) for book in books)
        del books
        try:
            return _grid(parsing.popleft().result() for _ in range(len(parsing)))
        except Exception:  # any problem: the one-piece read says what it is
            return None


__all__ = ["SHARD_MIN_BYTES", "ShardedSheet", "cell_array", "gc_paused", "parse_in_shards",
           "shard_count", "split_sheet_xml"]
