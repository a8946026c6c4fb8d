"""Checks on a workbook archive (``.xlsx``/``.xlsm``/``.ods``) before its cells are used.

A workbook is a zip archive of XML parts. :func:`check_workbook_archive` uses only
:mod:`zipfile` and byte scans (no XML parser, so nothing can be expanded or fetched):

1. the archive must open (a truncated or damaged file is refused), hold at most
   ``max_zip_entries`` parts and look like a workbook (``xl/workbook.xml``, ``xl/workbook.bin``
   or an OpenDocument ``content.xml``);
2. the *declared* sizes in the central directory must stay under ``max_decompressed_bytes``
   in total, and a part larger than :data:`~cx_app.survey.limits.RATIO_FLOOR_BYTES` must not
   compress better than ``max_compression_ratio``: a zip bomb is refused without inflating;
3. the first :data:`CHECKED_BYTES` of every part are inflated in 1 MB chunks, counting the
   bytes produced (zipfile stops at the declared size and checks the CRC: a part that lies
   about its small size is refused); the checks are bounded, the reader's child process
   (:mod:`cx_app.survey.reader_process`, ``CX_APP_READER_MEMORY_MB``) bounds the rest;
4. an XML part with a document type declaration (``<!DOCTYPE``/``<!ENTITY``; XML allows one
   only in the prolog, Excel never writes one) is refused: entity expansion ("billion
   laughs") and external entities (XXE) start there;
5. a worksheet's declared dimension (``<dimension ref="A1:XFD1048576"/>``) and its cell
   references long enough to pass a limit (``r="XFD1048576"``: as many letters or digits as
   the limit has or more) may not pass the row, column and cell limits: calamine allocates
   the sheet's whole box (two cells at A1 and XFD1048576 ask for ~0.5 TB). References beyond
   the checked prefix or spelled as Excel never writes (``r = 'XFD2'``, none at all) are left
   to the reader's shape check and memory limit.

Excel error cells need no scan here: fastexcel reports them (:mod:`cx_app.survey.sheet_reader`).
XML the application parses itself goes through :mod:`defusedxml`; workbooks are read only by
calamine (quick-xml: no DTD processing) and written by openpyxl (defusedxml when installed).
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass

from cx_app.archive_limits import megabytes
from cx_app.errors import SurveyFileError
from cx_app.survey.limits import RATIO_FLOOR_BYTES, ImportLimits

CHUNK = 1024 * 1024
CHECKED_BYTES = 4 * CHUNK
"""How much of each part the checks inflate and read."""
_OVERLAP = 64
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


def _is_worksheet(part: str) -> bool:
    return part.startswith("xl/worksheets/") and part.endswith(".xml")


def check_workbook_archive(data: bytes, name: str, limits: ImportLimits) -> None:
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
    inflated = 0
    for info in infos:
        if not info.is_dir():
            inflated += _scan_part(archive, info, name, limits, inflated)


def _long_references(limits: ImportLimits) -> re.Pattern[bytes]:
    """Cell references with at least as many letters as the column limit's or as many digits
    as the row limit's: the only ones that can pass a limit (fewer are always below it)."""
    letters = len(column_letters(limits.max_columns))
    digits = len(str(limits.max_rows))
    return re.compile(rb'r="\$?(?:[A-Za-z]{%d,}|[A-Za-z]{0,%d}\$?[0-9]{%d,})'
                      % (letters, letters - 1, digits))


def _scan_part(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str,
               limits: ImportLimits, inflated_before: int) -> int:
    """Inflate one part chunk by chunk, checking what the module docstring lists; its
    size."""
    is_xml = info.filename.endswith((".xml", ".rels"))
    sheet = _is_worksheet(info.filename)
    long_references = _long_references(limits)
    size, tail = 0, b""
    extent = _Extent(name, info.filename, limits)
    try:
        with archive.open(info) as part:
            while size < CHECKED_BYTES and (chunk := part.read(CHUNK)):
                size += len(chunk)
                if inflated_before + size > limits.max_decompressed_bytes:
                    raise SurveyFileError(
                        f"{name}: the workbook unzips to more than the limit of "
                        f"{megabytes(limits.max_decompressed_bytes)} "
                        "(CX_APP_MAX_DECOMPRESSED_MB); refused")
                if not is_xml:
                    continue
                # the seam between two chunks, then the chunk: nothing is copied twice
                for window in (tail + chunk[:_OVERLAP], chunk):
                    _scan_window(window, info.filename, name, extent if sheet else None,
                                 long_references)
                tail = chunk[-_OVERLAP:]
    except SurveyFileError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError) as exc:
        raise SurveyFileError(
            f"{name}: the workbook is damaged, truncated or encrypted (part "
            f"'{info.filename}': {exc}); save it again from Excel and re-upload") from None
    return size


def _scan_window(window: bytes, part: str, name: str, extent: _Extent | None,
                 long_references: re.Pattern[bytes]) -> None:
    if _DTD.search(window):
        raise SurveyFileError(
            f"{name}: part '{part}' contains an XML document type declaration "
            "(<!DOCTYPE/<!ENTITY), which Excel never writes; refused as potentially hostile "
            "(entity expansion or external entities)")
    if extent is None:
        return
    if not extent.in_data:  # the dimension comes before the cells
        for found in _DIMENSION.finditer(window):
            extent.add(found.group(1), 0, "declares a dimension")
        extent.in_data = b"<sheetData" in window
    for found in long_references.finditer(window):
        at = found.start()
        # an attribute named r (not xmlns:r="http..."); one at the start of a window is seen
        # whole in the seam before it
        if at and window[at - 1] in _BEFORE_ATTRIBUTE:
            extent.add(window, at + 3, "has cells")


@dataclass
class _Extent:
    """The largest row and column a worksheet's long references reach; refuses as soon as
    they pass a limit."""

    name: str
    part: str
    limits: ImportLimits
    rows: int = 0
    columns: int = 0
    in_data: bool = False

    def add(self, text: bytes, start: int, what: str) -> None:
        letters, digits = _REFERENCE.match(text, start).groups()
        # a reference cut by the end of a chunk is read whole from the next one
        self.rows = max(self.rows, _HUGE if len(digits) > 12 else int(digits or 0))
        self.columns = max(self.columns, _HUGE if len(letters) > 7 else column_number(letters))
        where = f"{self.name}: worksheet part '{self.part}' {what}"
        limits = self.limits
        if self.rows > limits.max_rows:
            raise SurveyFileError(
                f"{where} down to row {self.rows:,}, more than the limit of "
                f"{limits.max_rows:,} rows (CX_APP_MAX_ROWS); refused")
        if self.columns > limits.max_columns:
            raise SurveyFileError(
                f"{where} out to column {self.columns:,}, more than the limit of "
                f"{limits.max_columns:,} columns (CX_APP_MAX_COLUMNS); refused")
        if self.rows * self.columns > limits.max_cells:
            raise SurveyFileError(
                f"{where} spanning {self.rows:,} rows × {self.columns:,} columns = "
                f"{self.rows * self.columns:,} cells, more than the limit of "
                f"{limits.max_cells:,} (CX_APP_MAX_CELLS); refused")


__all__ = ["check_workbook_archive", "column_letters", "column_number"]
