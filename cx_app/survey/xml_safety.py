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
   (found while hardening, issue 7). The same check covers OpenDocument repeated rows/columns.

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
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat

from cx_app.errors import SurveyFileError
from cx_app.survey.limits import RATIO_FLOOR_BYTES, ImportLimits, megabytes

CHUNK = 1024 * 1024
_OVERLAP = 64
_DTD = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
# Cell references, searched after tabs/newlines become spaces, single quotes double quotes and
# spaces around "=" go (XML allows all three; Excel writes none), so that ' r="' is a literal
# prefix the regex engine skips to quickly; letters and digits in two passes, reduced in C.
_NORMALISE = bytes.maketrans(b"\t\r\n'", b'   "')
_SPACED_EQUALS = re.compile(rb" *= *")
_REF_LETTERS = re.compile(rb' r="\$?([A-Z]{1,3})\$?[0-9]')
_REF_DIGITS = re.compile(rb' r="\$?[A-Z]{0,3}\$?([0-9]{1,9})"')
_REF_FULL = re.compile(rb' r="\$?([A-Z]{1,3})\$?([0-9]{1,9})"')
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


def column_number(letters: bytes | str) -> int:
    """``"A"`` → 1, ``"XFD"`` → 16384."""
    n = 0
    for ch in letters.decode() if isinstance(letters, bytes) else letters:
        n = n * 26 + (ord(ch) - 64)
    return n


def _is_worksheet(part: str) -> bool:
    return (part.startswith("xl/worksheets/") and part.endswith(".xml")) or part == "content.xml"


def check_workbook_archive(data: bytes, name: str, limits: ImportLimits) -> ArchiveSummary:
    """Refuse (``SurveyFileError`` naming ``name``) a workbook archive that is damaged, not a
    workbook, too big once unzipped, a zip bomb, carries a DTD, or whose sheets claim more
    rows, columns or cells than ``limits`` allow."""
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
    for info in infos:
        if info.is_dir():
            continue
        errors: dict[tuple[int, int], str] = {}
        rows, cols, size = _scan_part(archive, info, name, limits, inflated, errors)
        inflated += size
        max_rows, max_cols = max(max_rows, rows), max(max_cols, cols)
        if _is_worksheet(info.filename):
            _check_extent(name, info.filename, rows, cols, limits)
        if errors:
            error_cells[info.filename] = errors
    return ArchiveSummary(len(infos), declared, inflated, max_rows, max_cols, error_cells)


def _scan_part(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str,
               limits: ImportLimits, inflated_before: int,
               errors: dict[tuple[int, int], str]) -> tuple[int, int, int]:
    """Inflate one part chunk by chunk: (max row, max column, bytes) of its cell references;
    the error cells of an Excel worksheet are added to ``errors``."""
    is_xml = info.filename.endswith((".xml", ".rels")) or info.filename == "content.xml"
    sheet = _is_worksheet(info.filename)
    ods = info.filename == "content.xml"
    max_row = max_col = size = 0
    tail = b""
    try:
        with archive.open(info) as part:
            while chunk := part.read(CHUNK):
                size += len(chunk)
                if inflated_before + size > limits.max_decompressed_bytes:
                    raise SurveyFileError(
                        f"{name}: the workbook unzips to more than the limit of "
                        f"{megabytes(limits.max_decompressed_bytes)} "
                        "(CX_APP_MAX_DECOMPRESSED_MB); refused")
                if is_xml:
                    window = tail + chunk
                    if _DTD.search(window):
                        raise SurveyFileError(
                            f"{name}: part '{info.filename}' contains an XML document type "
                            "declaration (<!DOCTYPE/<!ENTITY), which Excel never writes; refused "
                            "as potentially hostile (entity expansion or external entities)")
                    keep = len(window) - _OVERLAP
                    if sheet and not ods:
                        max_row, max_col = _sheet_extent(window, max_row, max_col)
                        if b't="e"' in window:
                            keep = min(keep, _error_cells(window, errors))
                    elif ods:
                        max_row, max_col = _ods_extent(window, max_row, max_col)
                    tail = window[max(keep, len(window) - _MAX_PENDING, 0):]
    except SurveyFileError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        raise SurveyFileError(
            f"{name}: the workbook is damaged, truncated or encrypted (part "
            f"'{info.filename}': {exc}); save it again from Excel and re-upload") from None
    return max_row, max_col, size


def _greater_than(value: str, alphabet: str, max_length: int) -> str:
    """A regular expression for the strings over ``alphabet`` (in its order) that are larger
    than ``value`` as numbers in that base without leading zeros: longer strings (up to
    ``max_length``), or as long and larger at the first differing position.

    >>> re.fullmatch(_greater_than("19", "0123456789", 3), "20") is not None
    True
    >>> re.fullmatch(_greater_than("19", "0123456789", 3), "19") is None
    True
    """
    def above(ch: str) -> str:
        rest = alphabet[alphabet.index(ch) + 1:]
        return f"[{rest[0]}-{rest[-1]}]" if rest else ""

    digit = f"[{alphabet[0]}-{alphabet[-1]}]"
    options = []
    if len(value) < max_length:
        options.append(f"{digit}{{{len(value) + 1},{max_length}}}")
    for i, ch in enumerate(value):
        if above(ch):
            tail = len(value) - i - 1
            options.append(re.escape(value[:i]) + above(ch) + (f"{digit}{{{tail}}}" if tail else ""))
    return "(?:" + "|".join(options) + ")" if options else "(?!)"


def _column_letters(number: int) -> str:
    letters = ""
    while number > 0:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


@lru_cache(maxsize=64)
def _beyond(max_row: int, max_col: int) -> re.Pattern[bytes]:
    """A cell reference whose column is beyond ``max_col`` or whose row is beyond ``max_row``
    (as :data:`_REF_LETTERS` and :data:`_REF_DIGITS` read them)."""
    letters = _greater_than(_column_letters(max_col), "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 3) \
        if max_col else "[A-Z]{1,3}"
    digits = _greater_than(str(max_row), "0123456789", 9) if max_row else "[0-9]{1,9}"
    return re.compile(
        (rf' r="\$?(?:{letters}\$?[0-9]|[A-Z]{{0,3}}\$?{digits}")').encode())


def _last_reference(spaced: bytes) -> tuple[int, int]:
    """(row, column) of the last complete cell reference of ``spaced``, (0, 0) if none."""
    end = len(spaced)
    for _ in range(8):
        at = spaced.rfind(b' r="', 0, end)
        if at < 0:
            break
        ref = _REF_FULL.match(spaced, at)
        if ref is not None:
            return int(ref.group(2)), column_number(ref.group(1))
        end = at
    return 0, 0


def _sheet_extent(window: bytes, max_row: int, max_col: int) -> tuple[int, int]:
    """The largest row and column of the cell references (``r="XFD1048576"``) in ``window``.

    Fast path: worksheets list their cells row by row, so the last reference of a window
    holds its largest row (and, in a rectangular table, column); one regular-expression
    search (:func:`_beyond`, no match object per cell) then proves that no reference of the
    window lies beyond that. Any window where one does (a hostile or unusual file) is read
    reference by reference (:func:`_sheet_extent_full`)."""
    spaced = window.translate(_NORMALISE)
    if b" =" in spaced or b"= " in spaced:
        spaced = _SPACED_EQUALS.sub(b"=", spaced)
    row, col = _last_reference(spaced)
    row, col = max(row, max_row), max(col, max_col)
    if _beyond(row, col).search(spaced) is None:
        return row, col
    return _sheet_extent_full(spaced, max_row, max_col)


def _sheet_extent_full(spaced: bytes, max_row: int, max_col: int) -> tuple[int, int]:
    """:func:`_sheet_extent` reference by reference, on an already normalised window."""
    letters = set(_REF_LETTERS.findall(spaced))
    if letters:
        max_col = max(max_col, *map(column_number, letters))
    digits = _REF_DIGITS.findall(spaced)
    if digits:  # zero-padded, the largest number is the largest text
        max_row = max(max_row, int(max(map(bytes.zfill, digits, repeat(9)))))
    return max_row, max_col


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
