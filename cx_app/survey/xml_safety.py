"""Checks on a workbook archive (``.xlsx``/``.xlsm``/``.ods``) before its cells are used.

Only :mod:`zipfile` and byte scans (no XML parser, so nothing can be expanded or fetched):

1. the archive must open, hold at most ``max_zip_entries`` parts and look like a workbook;
2. the *declared* sizes and compression ratios must stay under the limits: a zip bomb is
   refused without inflating;
3. the first :data:`CHECKED_BYTES` of every part are inflated in one read (zipfile stops at
   the declared size and checks the CRC: a part that lies about its size is refused); the
   reader's child process bounds the rest;
4. an XML part with a document type declaration (Excel never writes one) is refused: entity
   expansion ("billion laughs") and external entities (XXE) start there;
5. a worksheet's declared dimension and its cell references long enough to pass a limit may
   not pass the row, column and cell limits: calamine allocates the sheet's whole box (two
   cells at A1 and XFD1048576 ask for ~0.5 TB). Other references are left to the reader's
   shape check and memory limit.
"""

from __future__ import annotations

import io
import re
import zipfile

from cx_app.archive_limits import megabytes
from cx_app.errors import SurveyFileError
from cx_app.survey.limits import RATIO_FLOOR_BYTES, ImportLimits

CHECKED_BYTES = 4 * 1024 * 1024
"""How much of each part the checks inflate (in one read) and scan."""
_DTD = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_DIMENSION = re.compile(rb'dimension\s+ref="[^":]*:?([^"]*)"')  # a literal start: fast
_REFERENCE = re.compile(rb"\$?([A-Za-z]*)\$?([0-9]*)")
_BEFORE_ATTRIBUTE = b" \t\r\n\"'"
_HUGE = 10**12  # stands for any reference beyond every limit (more than 12 digits, 7 letters)
_WORKBOOK_MARKERS = ("xl/workbook.xml", "xl/workbook.bin", "content.xml")


def column_number(letters: bytes | str) -> int:
    """``"A"`` → 1, ``"XFD"`` → 16384 (either case)."""
    n = 0
    for ch in (letters.decode() if isinstance(letters, bytes) else letters).upper():
        n = n * 26 + (ord(ch) - 64)
    return n


def column_letters(n: int) -> str:
    """1 → ``"A"``, 16384 → ``"XFD"``."""
    letters = ""
    while n:
        n, r = divmod(n - 1, 26)
        letters = chr(65 + r) + letters
    return letters


def check_workbook_archive(data: bytes, name: str, limits: ImportLimits) -> None:
    """Refuse (``SurveyFileError`` naming ``name``) a workbook archive (module docstring)."""
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
    inflated = 0
    for info in infos:
        if info.is_dir():
            continue
        head = _inflate_head(archive, info, name)
        inflated += len(head)
        if inflated > limits.max_decompressed_bytes:
            raise SurveyFileError(
                f"{name}: the workbook unzips to more than the limit of "
                f"{megabytes(limits.max_decompressed_bytes)} (CX_APP_MAX_DECOMPRESSED_MB); "
                "refused")
        if info.filename.endswith((".xml", ".rels")):
            _check_xml(head, info.filename, name, limits)


def _inflate_head(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> bytes:
    """The first :data:`CHECKED_BYTES` of one part, inflated in one bounded read."""
    try:
        with archive.open(info) as part:
            return part.read(CHECKED_BYTES)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        raise SurveyFileError(
            f"{name}: the workbook is damaged, truncated or encrypted (part "
            f"'{info.filename}': {exc}); save it again from Excel and re-upload") from None


def _long_references(limits: ImportLimits) -> re.Pattern[bytes]:
    """Cell references with at least as many letters as the column limit's or as many digits
    as the row limit's: the only ones that can pass a limit (fewer are always below it)."""
    letters = len(column_letters(limits.max_columns))
    digits = len(str(limits.max_rows))
    return re.compile(rb'r="\$?(?:[A-Za-z]{%d,}|[A-Za-z]{0,%d}\$?[0-9]{%d,})'
                      % (letters, letters - 1, digits))


def _check_xml(xml: bytes, part: str, name: str, limits: ImportLimits) -> None:
    """Refuse a DTD in an XML part and, in a worksheet, the first declared dimension or long
    cell reference beyond the limits."""
    if _DTD.search(xml):
        raise SurveyFileError(
            f"{name}: part '{part}' contains an XML document type declaration "
            "(<!DOCTYPE/<!ENTITY), which Excel never writes; refused as potentially hostile "
            "(entity expansion or external entities)")
    if not (part.startswith("xl/worksheets/") and part.endswith(".xml")):
        return
    cells_at = xml.find(b"<sheetData")
    found = [(m.group(1), 0, "declares a dimension")
             for m in _DIMENSION.finditer(xml, 0, len(xml) if cells_at < 0 else cells_at)]
    # an attribute named r (not xmlns:r="http...")
    found += [(xml, m.start() + 3, "has cells") for m in _long_references(limits).finditer(xml)
              if m.start() and xml[m.start() - 1] in _BEFORE_ATTRIBUTE]
    rows = columns = 0
    for text, start, what in found:
        letters, digits = _REFERENCE.match(text, start).groups()
        rows = max(rows, _HUGE if len(digits) > 12 else int(digits or 0))
        columns = max(columns, _HUGE if len(letters) > 7 else column_number(letters))
        where = f"{name}: worksheet part '{part}' {what}"
        if rows > limits.max_rows:
            raise SurveyFileError(
                f"{where} down to row {rows:,}, more than the limit of "
                f"{limits.max_rows:,} rows (CX_APP_MAX_ROWS); refused")
        if columns > limits.max_columns:
            raise SurveyFileError(
                f"{where} out to column {columns:,}, more than the limit of "
                f"{limits.max_columns:,} columns (CX_APP_MAX_COLUMNS); refused")
        if rows * columns > limits.max_cells:
            raise SurveyFileError(
                f"{where} spanning {rows:,} rows × {columns:,} columns = "
                f"{rows * columns:,} cells, more than the limit of "
                f"{limits.max_cells:,} (CX_APP_MAX_CELLS); refused")


__all__ = ["check_workbook_archive", "column_letters", "column_number"]
