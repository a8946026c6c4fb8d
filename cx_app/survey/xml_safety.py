"""Checks on a workbook archive (``.xlsx``/``.xlsm``/``.ods``) before any reader sees it.

A workbook is a zip archive of XML parts. Before the bytes reach python-calamine the importer
calls :func:`check_workbook_archive`, which uses only :mod:`zipfile` and byte scans (no XML
parser, so nothing can be expanded or fetched):

1. the archive must open (a truncated or damaged file is refused), hold at most
   ``max_zip_entries`` parts and look like a workbook (``xl/workbook.xml``, ``xl/workbook.bin``
   or an OpenDocument ``content.xml``);
2. the *declared* sizes in the central directory (``ZipInfo.file_size`` /
   ``compress_size``) must stay under ``max_decompressed_bytes`` in total, and a part larger
   than :data:`~cx_app.survey.limits.RATIO_FLOOR_BYTES` must not compress better than
   ``max_compression_ratio`` — a zip bomb is refused without inflating anything;
3. every part is then inflated *in 1 MB chunks*, counting the bytes actually produced: the
   zipfile module stops at the declared size and checks the CRC, so an archive that lies about
   its sizes is refused too, and memory stays bounded by one chunk;
4. an XML part containing a document type declaration (``<!DOCTYPE`` / ``<!ENTITY``) is
   refused: Excel and LibreOffice never write one, and it is how entity-expansion ("billion
   laughs") and external-entity (XXE) attacks start;
5. the cell references of each worksheet (``r="XFD1048576"``) are scanned for the sheet's
   extent: calamine allocates ``rows × columns`` cells for a sheet, so two cells at ``A1`` and
   ``XFD1048576`` in an 800-byte file would otherwise ask for ~0.5 TB and abort the process
   (found while hardening, issue 7). The scan reads positions as calamine does — references
   in either case and of any length (``xfd2``, ``AAAA2``, ``A3000000000``), cells and rows
   without ``r`` (bounded by their count), prefixed names (``<x:c>``), any legal spelling of
   the attribute — and never reports less than calamine's box (property-tested against an
   oracle that reads the XML as calamine does). It runs in numpy on 1 MB pieces, two at a
   time. The same check covers OpenDocument repeated rows/columns.

The same pass records the worksheet cells that hold an Excel error (``<c r="B3" t="e">`` with
``<v>#N/A</v>``), because python-calamine returns an error cell as empty text, like a blank
(python-calamine issue #105): :attr:`ArchiveSummary.error_cells` lets the importer report them
as "Excel error cell" instead of counting them as missing answers.

XML the application parses itself with Python goes through :mod:`defusedxml`; the library
reads workbooks only with calamine (Rust, quick-xml: no DTD processing) and writes them with
openpyxl (which uses defusedxml whenever it is installed, as it is here).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from cx_app.errors import SurveyFileError
from cx_app.survey.limits import RATIO_FLOOR_BYTES, ImportLimits, megabytes

CHUNK = 1024 * 1024
_OVERLAP = 64
_DTD = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
# A worksheet piece with whitespace around "=" (XML allows it, and tabs, newlines, single
# quotes; Excel writes none) is normalised once before its extent is scanned (_piece_extent).
_NORMALISE = bytes.maketrans(b"\t\r\n\x0c'", b'    "')
_SPACED_EQUALS = re.compile(rb" *= *")
_ERROR_TAG = re.compile(rb'<c\s[^>]*?\bt="e"[^>]*>')
_REF_ATTR = re.compile(rb'\br="\$?([A-Z]{1,3})\$?([0-9]{1,9})"')
_ERROR_VALUE = re.compile(rb"<v>([^<]{1,64})</v>")
_MAX_PENDING = 64 * 1024
_ODS_REPEAT = re.compile(rb'number-(rows|columns)-repeated="([0-9]{1,12})"')
_WORKBOOK_MARKERS = ("xl/workbook.xml", "xl/workbook.bin", "content.xml")


@dataclass(frozen=True)
class ArchiveSummary:
    """What the checks saw: parts, declared and actual unzipped bytes, largest sheet extent."""

    entries: int
    declared_bytes: int
    inflated_bytes: int
    max_rows: int
    max_columns: int
    error_cells: dict[str, dict[tuple[int, int], str]] = field(default_factory=dict)
    """Per worksheet part (``xl/worksheets/sheet1.xml``): {(row, column) 1-based: "#N/A"}."""
    largest_sheet: tuple[str, bytes | bytearray] | None = field(default=None, repr=False,
                                                                compare=False)
    """(part, its XML) of the largest worksheet, when ``keep_sheets_from`` asked for it."""


def column_number(letters: bytes | str) -> int:
    """``"A"`` → 1, ``"XFD"`` → 16384."""
    n = 0
    for ch in letters.decode() if isinstance(letters, bytes) else letters:
        n = n * 26 + (ord(ch) - 64)
    return n


def _is_worksheet(part: str) -> bool:
    return (part.startswith("xl/worksheets/") and part.endswith(".xml")) or part == "content.xml"


def check_workbook_archive(data: bytes, name: str, limits: ImportLimits,
                           keep_sheets_from: int | None = None) -> ArchiveSummary:
    """Refuse (``SurveyFileError`` naming ``name``) a workbook archive that is damaged, not a
    workbook, too big once unzipped, a zip bomb, carries a DTD, or whose sheets claim more
    rows, columns or cells than ``limits`` allow.

    ``keep_sheets_from``: keep the inflated XML of the largest worksheet if it has at least
    that many bytes (:attr:`ArchiveSummary.largest_sheet`), so it is not inflated twice."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise SurveyFileError(
            f"{name}: the workbook is damaged or truncated (its zip structure cannot be read); "
            "save it again from Excel and re-upload") from None
    if len(infos) > limits.max_zip_entries:
        raise SurveyFileError(
            f"{name}: the workbook archive holds {len(infos):,} parts, more than the limit of "
            f"{limits.max_zip_entries:,} (CX_APP_MAX_ZIP_ENTRIES); refused")
    names = {info.filename for info in infos}
    if not any(marker in names for marker in _WORKBOOK_MARKERS):
        raise SurveyFileError(
            f"{name}: a zip archive, but not an Excel or OpenDocument workbook (no "
            "xl/workbook.xml or content.xml inside)")
    declared = sum(info.file_size for info in infos)
    if declared > limits.max_decompressed_bytes:
        raise SurveyFileError(
            f"{name}: the workbook would unzip to {megabytes(declared)}, more than the limit of "
            f"{megabytes(limits.max_decompressed_bytes)} (CX_APP_MAX_DECOMPRESSED_MB); refused "
            "before unzipping")
    for info in infos:
        if info.file_size > RATIO_FLOOR_BYTES:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > limits.max_compression_ratio:
                raise SurveyFileError(
                    f"{name}: part '{info.filename}' is compressed {ratio:,.0f}:1 "
                    f"({megabytes(info.compress_size)} → {megabytes(info.file_size)}), more than "
                    f"the limit of {limits.max_compression_ratio:g}:1 "
                    "(CX_APP_MAX_COMPRESSION_RATIO) — this looks like a zip bomb; refused before "
                    "unzipping")
    inflated, max_rows, max_cols = 0, 0, 0
    error_cells: dict[str, dict[tuple[int, int], str]] = {}
    sheets = [info for info in infos if _is_worksheet(info.filename)
              and info.filename != "content.xml"]
    keep = max(sheets, key=lambda info: info.file_size, default=None)
    if keep is None or keep_sheets_from is None or keep.file_size < keep_sheets_from:
        keep = None
    largest: tuple[str, bytes] | None = None
    for info in infos:
        if info.is_dir():
            continue
        errors: dict[tuple[int, int], str] = {}
        kept = bytearray(info.file_size) if info is keep else None
        rows, cols, size = _scan_part(archive, info, name, limits, inflated, errors, kept)
        if kept is not None:
            del kept[size:]  # only if the part was shorter than declared
            largest = (info.filename, kept)
        inflated += size
        max_rows, max_cols = max(max_rows, rows), max(max_cols, cols)
        if _is_worksheet(info.filename):
            _check_extent(name, info.filename, rows, cols, limits)
        if errors:
            error_cells[info.filename] = errors
    return ArchiveSummary(len(infos), declared, inflated, max_rows, max_cols, error_cells,
                          largest)


def _scan_part(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str,
               limits: ImportLimits, inflated_before: int,
               errors: dict[tuple[int, int], str],
               kept: bytearray | None = None) -> tuple[int, int, int]:
    """Inflate one part chunk by chunk: (max row, max column, bytes) of its cells; the error
    cells of an Excel worksheet are added to ``errors``; the part's bytes are written into
    ``kept`` if given (as long as the part's declared size: no copy of a list of chunks).

    A worksheet is scanned piece by piece, each piece ending just before its last ``<`` (the
    rest waits for the next chunk), so every byte is scanned once and no tag is cut."""
    is_xml = info.filename.endswith((".xml", ".rels")) or info.filename == "content.xml"
    ods = info.filename == "content.xml"
    sheet = _is_worksheet(info.filename) and not ods
    extent = _ExtentScan()
    scanning: deque[Future[_PieceExtent]] = deque()
    max_row = max_col = size = 0
    tail, scanned = b"", 0  # scanned: bytes at the start of ``tail`` the extent has seen
    try:
        with archive.open(info) as part, ThreadPoolExecutor(2) as pool:
            while True:
                chunk = part.read(CHUNK)
                size += len(chunk)
                if kept is not None:
                    if size > len(kept):  # zipfile stops at the declared size: never here
                        raise ValueError("the part is longer than its declared size")
                    kept[size - len(chunk):size] = chunk
                if inflated_before + size > limits.max_decompressed_bytes:
                    raise SurveyFileError(
                        f"{name}: the workbook unzips to more than the limit of "
                        f"{megabytes(limits.max_decompressed_bytes)} "
                        "(CX_APP_MAX_DECOMPRESSED_MB); refused")
                if not is_xml:
                    if not chunk:
                        break
                    continue
                window = tail + chunk
                if chunk and _DTD.search(window):
                    raise SurveyFileError(
                        f"{name}: part '{info.filename}' contains an XML document type "
                        "declaration (<!DOCTYPE/<!ENTITY), which Excel never writes; refused "
                        "as potentially hostile (entity expansion or external entities)")
                keep = len(window) - _OVERLAP
                if sheet:
                    cut = _piece_end(window, scanned, final=not chunk)
                    scanning.append(pool.submit(_piece_extent, window[scanned:cut],
                                                cut_in_tag=bool(chunk) and cut == len(window)))
                    while len(scanning) > _IN_FLIGHT:
                        extent.add(scanning.popleft().result())
                    keep = cut
                    if b't="e"' in window:  # an error cell cut off waits for the next chunk
                        keep = max(min(keep, _error_cells(window, errors)),
                                   len(window) - _MAX_PENDING)
                    scanned = cut - keep
                elif ods:
                    max_row, max_col = _ods_extent(window, max_row, max_col)
                if not chunk:
                    break
                tail = window[max(keep, 0):]
            while scanning:
                extent.add(scanning.popleft().result())
    except SurveyFileError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        raise SurveyFileError(
            f"{name}: the workbook is damaged, truncated or encrypted (part "
            f"'{info.filename}': {exc}); save it again from Excel and re-upload") from None
    if sheet:
        max_row, max_col = extent.extent()
    return max_row, max_col, size


def _piece_end(window: bytes, scanned: int, final: bool) -> int:
    """Where the next worksheet piece of ``window`` ends: before its last ``<``; at the end of
    the part; or, if no tag starts in more than 64 KB, at the end of the window (a hard cut)
    — else nothing is scanned yet (``scanned``) and the bytes wait for more."""
    if final:
        return len(window)
    cut = window.rfind(b"<", max(scanned + 1, len(window) - _MAX_PENDING))
    if cut >= 0:
        return cut
    return len(window) if len(window) - scanned > _MAX_PENDING else scanned


# ---------------------------------------------------------------- worksheet extent (numpy)
#
# What calamine (0.36, ``xlsx/cells_reader.rs``) does with positions, and so what is bounded:
# a ``<row>`` start tag sets the row from its ``r`` attribute, else the row after the previous
# one; a ``<c>`` start tag takes (row, column) from its ``r`` (letters of either case, any
# number of them, then digits; parsed into u32), else the current row and the column after the
# previous cell; element names are matched on their local name (``<x:c>`` is a cell), the
# attribute on its exact name ``r``, which follows whitespace or the previous value's quote,
# with optional whitespace around ``=`` and either quote. ``Range::from_sparse`` then allocates
# (rows × columns) of the bounding box.

_GATHER = 12  # bytes read per reference value; Excel's longest is 10 ("XFD1048576")
_PAD = bytes(_GATHER + 8)
_MARGIN = 2  # bytes of padding before a piece (a look-behind of two)
_RUN = re.compile(rb"\$?([A-Za-z]*)\$?([0-9]*)")  # calamine refuses "$", we read through it
_HUGE = 10**12  # stands for any reference beyond every limit (more than 12 digits, 6 letters)
_IN_FLIGHT = 4  # pieces of a worksheet being scanned at once (4 × CHUNK of memory)


def _name_end(x: np.ndarray) -> np.ndarray:
    """Bytes that may end an element name: whitespace (and other control bytes), ``>``, ``/``."""
    return (x <= 32) | (x == 62) | (x == 47)


def _quote(x: np.ndarray) -> np.ndarray:
    return (x == 34) | (x == 39)


def _leading(mask: np.ndarray, most: int) -> np.ndarray:
    """How many leading columns of each row of ``mask`` are True, up to ``most``."""
    count = np.zeros(len(mask), dtype=np.int64)
    run = np.ones(len(mask), dtype=bool)
    for i in range(most):
        run &= mask[:, i]
        if not run.any():
            break
        count += run
    return count


@dataclass(frozen=True)
class _PieceExtent:
    """What one piece of a worksheet's XML says about the sheet's extent."""

    max_row: int
    max_col: int
    row_tags: int
    lead_cells: int  # cell tags before the piece's first row tag (all of them if none)
    tail_cells: int  # cell tags after its last row tag
    widest_row: int = 0  # most cell tags of a row, counted where some cell may lack an r
    rows_without_r: bool = False
    cells_without_r: bool = False


@dataclass
class _ExtentScan:
    """The bounding box calamine will allocate for one worksheet, from its pieces in order.

    Cells and rows without an ``r`` (rare: Excel writes one on each) are bounded too: the row
    by the number of row tags, the column by the most cell tags in one row."""

    max_row: int = 0
    max_col: int = 0
    row_tags: int = 0
    widest_row: int = 0
    cells_in_row: int = 0
    rows_without_r: bool = False
    cells_without_r: bool = False

    def add(self, piece: _PieceExtent) -> None:
        self.max_row, self.max_col = (max(self.max_row, piece.max_row),
                                      max(self.max_col, piece.max_col))
        self.rows_without_r |= piece.rows_without_r
        self.cells_without_r |= piece.cells_without_r
        if piece.cells_without_r:
            self.widest_row = max(self.widest_row, piece.widest_row,
                                  self.cells_in_row + piece.lead_cells)
        self.row_tags += piece.row_tags
        self.cells_in_row = (piece.tail_cells if piece.row_tags
                             else self.cells_in_row + piece.lead_cells)

    def extent(self) -> tuple[int, int]:
        """(rows, columns) at most, 1-based."""
        return (self.max_row + (self.row_tags if self.rows_without_r else 0),
                self.max_col + (self.widest_row if self.cells_without_r else 0))


def _piece_extent(piece: bytes, cut_in_tag: bool = False,
                  normalised: bool = False) -> _PieceExtent:
    """The extent of one piece of a worksheet's XML that ends just before a ``<`` (no tag is
    cut) or, with ``cut_in_tag``, may end inside a tag (a reference running into its end then
    counts as beyond every limit). ``normalised``: the piece's spaces around ``=`` are gone
    already (other control bytes may stay: calamine does not take them for whitespace).

    Two whole-piece numpy comparisons (which release the GIL: pieces are scanned two at a
    time) find every ``=`` and ``<``; the bytes around those positions are gathered to tell
    the ``r`` attributes and the cell and row tags, and only the attribute values are gathered
    (12 bytes each) and parsed, by groups of equal shape."""
    n = len(piece)
    a = np.frombuffer(_PAD[:_MARGIN] + piece + _PAD, dtype=np.uint8)
    body = a[_MARGIN:_MARGIN + n]

    def near(positions: np.ndarray, k: int) -> np.ndarray:  # the byte k after each position
        return a[positions + (_MARGIN + k)]

    equals = np.flatnonzero(body == 61)
    if not normalised and ((near(equals, -1) <= 32) | (near(equals, 1) <= 32)).any():
        # XML allows spaces around "=" (and tabs, newlines, single quotes); Excel writes
        # none: such a piece is normalised once and scanned as usual
        return _piece_extent(_SPACED_EQUALS.sub(b"=", piece.translate(_NORMALISE)),
                             cut_in_tag, normalised=True)
    before = near(equals, -2)
    refs = equals[(near(equals, -1) == 114) & ((before <= 34) | (before == 39))
                  & _quote(near(equals, 1))]  # the "=" of each r attribute
    max_row, max_col = _references(piece, a[_MARGIN:], n, refs + 2, cut_in_tag)
    opens = np.flatnonzero(body == 60)
    cells = opens[(near(opens, 1) == 99) & _name_end(near(opens, 2))]
    rows = opens[(near(opens, 1) == 114) & (near(opens, 2) == 111) & (near(opens, 3) == 119)
                 & _name_end(near(opens, 4))]
    colons = np.flatnonzero(body == 58)
    if (not _all_in(cells + 4, refs) or not _all_in(rows + 6, refs)  # not <c r=, <row r=
            or _prefixed_names(a[_MARGIN:], colons)):  # or <x:c>
        return _implicit_positions(a[_MARGIN:], n, max_row, max_col, opens, cells, rows, refs,
                                   colons)
    if not rows.size:
        return _PieceExtent(max_row, max_col, 0, cells.size, cells.size)
    return _PieceExtent(max_row, max_col, rows.size, int(np.searchsorted(cells, rows[0])),
                        int(cells.size - np.searchsorted(cells, rows[-1])))


def _prefixed_cells(a: np.ndarray, colons: np.ndarray) -> np.ndarray:
    """The colons of ``colons`` that end the prefix of a cell name (``x:c``)."""
    return colons[(a[colons + 1] == 99) & _name_end(a[colons + 2])]


def _prefixed_rows(a: np.ndarray, colons: np.ndarray) -> np.ndarray:
    """The colons of ``colons`` that end the prefix of a row name (``x:row``)."""
    return colons[(a[colons + 1] == 114) & (a[colons + 2] == 111) & (a[colons + 3] == 119)
                  & _name_end(a[colons + 4])]


def _prefixed_names(a: np.ndarray, colons: np.ndarray) -> bool:
    """Whether a colon of ``a`` (at ``colons``) may end the prefix of a cell or row name."""
    return bool(colons.size and (_prefixed_cells(a, colons).size
                                 or _prefixed_rows(a, colons).size))


def _references(piece: bytes, a: np.ndarray, n: int, starts: np.ndarray,
                cut_in_tag: bool) -> tuple[int, int]:
    """(largest row, largest column) of the ``r`` values starting at ``starts``."""
    max_row = max_col = 0
    if not starts.size:
        return max_row, max_col
    block = np.lib.stride_tricks.sliding_window_view(a, _GATHER)[starts]
    letters = ((block & 0xDF) - 65) < 26  # "a" → "A"; uint8 arithmetic wraps below 65
    n_letters = _leading(letters, 4)
    end = _leading(letters | ((block - 48) < 10), _GATHER)  # letters, then digits
    odd = (n_letters > 3) | (end >= _GATHER) | (end - n_letters > 9) | (end == n_letters)
    if cut_in_tag:
        odd |= starts + end >= n
    shape = np.where(odd, 0, n_letters * _GATHER + end)
    for key in np.flatnonzero(np.bincount(shape)[1:]) + 1:  # the usual ones, by shape
        width, stop = divmod(int(key), _GATHER)
        group = block[shape == key]
        col = np.zeros(len(group), dtype=np.int64)
        for i in range(width):
            col = col * 26 + (group[:, i] & 0xDF) - 64
        row = np.zeros_like(col)
        for i in range(width, stop):
            row = row * 10 + group[:, i] - 48
        max_row, max_col = max(max_row, int(row.max())), max(max_col, int(col.max()))
    for start in starts[odd]:  # long, cut, "$" or no digits: exactly, in Python
        run = _RUN.match(piece, int(start))
        letters_, digits_ = run.groups()
        cut = cut_in_tag and run.end() >= n
        max_col = max(max_col, _HUGE if cut or len(letters_) > 6
                      else column_number(letters_.upper()))
        max_row = max(max_row, _HUGE if cut or len(digits_) > 12 else int(digits_ or 0))
    return max_row, max_col


def _implicit_positions(a: np.ndarray, n: int, max_row: int, max_col: int,
                        opens: np.ndarray, cells: np.ndarray, rows: np.ndarray,
                        refs: np.ndarray, colons: np.ndarray) -> _PieceExtent:
    """A piece where some cell or row tag may lack an ``r`` (or names have a prefix): tag by
    tag, which ones have one, and the cell tags of each row (``colons``: where its colons
    are)."""
    if colons.size:  # <x:c>, <x:row>: a prefixed name
        cells = _tag_starts(a, opens, cells, _prefixed_cells(a, colons))
        rows = _tag_starts(a, opens, rows, _prefixed_rows(a, colons))
    owners = _owners(a, n, opens, refs)
    per_row = np.bincount(np.searchsorted(rows, cells), minlength=rows.size + 1)
    return _PieceExtent(max_row, max_col, rows.size, int(per_row[0]), int(per_row[-1]),
                        widest_row=int(per_row.max()),
                        rows_without_r=not _all_in(rows, owners),
                        cells_without_r=not _all_in(cells, owners))


def _owners(a: np.ndarray, n: int, opens: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """The ``<`` of the tag each ``r=`` of ``refs`` stands in (ascending; none if in text)."""
    if not refs.size or not opens.size:
        return np.empty(0, dtype=np.intp)
    closes = np.flatnonzero(a[:n] == 62)
    owner = opens[np.maximum(np.searchsorted(opens, refs) - 1, 0)]
    first_close = np.searchsorted(closes, owner)
    inside = (owner < refs) & ((first_close >= closes.size) | (
        closes[np.minimum(first_close, closes.size - 1)] > refs))
    return owner[inside]


def _all_in(values: np.ndarray, sorted_pool: np.ndarray) -> bool:
    """Whether every one of ``values`` is in ``sorted_pool`` (ascending)."""
    if not values.size:
        return True
    if not sorted_pool.size:
        return False
    at = np.minimum(np.searchsorted(sorted_pool, values), sorted_pool.size - 1)
    return bool((sorted_pool[at] == values).all())


def _tag_starts(a: np.ndarray, opens: np.ndarray, found: np.ndarray,
                names: np.ndarray) -> np.ndarray:
    """``found`` plus the ``<`` before each prefixed name in ``names`` (conservatively: the
    nearest one, whatever lies between) that opens a start tag (not ``</``)."""
    if not names.size or not opens.size:
        return found
    starts = opens[np.maximum(np.searchsorted(opens, names) - 1, 0)]
    return np.union1d(found, starts[(starts < names) & (a[starts + 1] != 47)])


def _error_cells(window: bytes, errors: dict[tuple[int, int], str]) -> int:
    """Add the error cells of ``window`` to ``errors``; return the offset of an error cell cut
    off by the end of the window (kept for the next chunk), else ``len(window)``."""
    pending = len(window)
    for tag in _ERROR_TAG.finditer(window):
        ref = _REF_ATTR.search(tag.group(0))
        if ref is None:  # no cell reference (optional in OOXML, Excel always writes it)
            continue
        cell = (int(ref.group(2)), column_number(ref.group(1)))
        if tag.group(0).endswith(b"/>"):  # an error cell without a value
            errors[cell] = "#error"
            continue
        end = window.find(b"</c>", tag.end())
        if end < 0:
            pending = min(pending, tag.start())
            continue
        value = _ERROR_VALUE.search(window, tag.end(), end)
        errors[cell] = value.group(1).decode("utf-8", "replace") if value else "#error"
    return pending


def _ods_extent(window: bytes, max_row: int, max_col: int) -> tuple[int, int]:
    """A conservative extent for OpenDocument: the largest repeat counts seen (LibreOffice
    writes large repeats for trailing empty cells, which calamine skips; a repeat of a cell
    holding a value is materialised, so large repeats are bounded by the limits)."""
    for kind, digits in _ODS_REPEAT.findall(window):
        if kind == b"rows":
            max_row = max(max_row, int(digits))
        else:
            max_col = max(max_col, int(digits))
    return max_row, max_col


def _check_extent(name: str, part: str, rows: int, cols: int, limits: ImportLimits) -> None:
    if part == "content.xml":
        return  # repeats of empty cells are legitimate; calamine's own extent is checked later
    where = f"{name}: worksheet part '{part}'"
    if rows > limits.max_rows:
        raise SurveyFileError(
            f"{where} has cells down to row {rows:,}, more than the limit of "
            f"{limits.max_rows:,} rows (CX_APP_MAX_ROWS); refused")
    if cols > limits.max_columns:
        raise SurveyFileError(
            f"{where} has cells out to column {cols:,}, more than the limit of "
            f"{limits.max_columns:,} columns (CX_APP_MAX_COLUMNS); refused")
    if rows * cols > limits.max_cells:
        raise SurveyFileError(
            f"{where} spans {rows:,} rows × {cols:,} columns = {rows * cols:,} cells, more than "
            f"the limit of {limits.max_cells:,} (CX_APP_MAX_CELLS); refused")


__all__ = ["ArchiveSummary", "check_workbook_archive", "column_number"]
