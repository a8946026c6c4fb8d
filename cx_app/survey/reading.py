"""Raw reading of survey files: bytes, pre-checks, workbook sheets and CSV text as grids.

The checks that run before any parser sees a workbook (foreign formats, encryption, archive and
XML safety) are here; every sheet becomes a :class:`Grid` of cell texts.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from cx_app.archive_limits import megabytes
from cx_app.errors import CxAppError, SurveyFileError
from cx_app.survey.limits import ImportLimits
from cx_app.survey.reader_process import (
    SheetRead,
    read_child,
    read_in_child,
    shape_error,
)
from cx_app.survey.xml_safety import check_workbook_archive

EXCEL_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".ods")
CSV_SUFFIXES = (".csv", ".tsv")
STAT_SUFFIXES = (".sav", ".zsav", ".dta")
"""SPSS (``.sav``, compressed ``.zsav``) and Stata (``.dta``) files, read by pyreadstat."""
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_MARKS = tuple(m.encode("utf-16-le") for m in ("EncryptedPackage", "EncryptionInfo"))
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_FOREIGN_MAGIC = (
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"<!DOCTYPE html", "an HTML page"),
    (b"<html", "an HTML page"),
)
_ENCODINGS = (("utf-8-sig", "UTF-8"), ("cp1252", "cp1252"), ("latin-1", "latin-1"))
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
TEXT = pd.StringDtype("pyarrow")
"""The dtype of every cell column: text, ``<NA>`` for an empty cell."""



class StatVariable(BaseModel):
    """One variable of an SPSS or Stata file; ``missing``: declared ranges, both ends in."""

    model_config = ConfigDict(frozen=True)

    name: str
    label: str | None = None
    value_labels: dict[str, str] = {}
    missing: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Grid:
    """One sheet's cells as text (sheet row ``i + 1`` at row ``i``; ``<NA>`` when empty).

    A workbook's cells (``typed``) are texts the reader printed: numbers as ``7`` or ``7.5``,
    dates and times as ``2024-01-01 00:00:00``, an Excel error cell as its error (``#N/A``)."""

    sheet: str | None
    cells: pd.DataFrame
    typed: bool = False
    errors: dict[int, dict[int, str]] = field(default_factory=dict)
    """Excel error cells: column → {row: error}, 0-based."""
    widths: tuple[int, ...] | None = None
    """A CSV file's number of cells on each line (a sheet's rows are all as wide)."""
    labels: tuple[str | None, ...] | None = None
    """Each column's label (the question text) when the file gives one apart from its header."""
    variables: tuple[StatVariable, ...] | None = None
    """An SPSS/Stata file's variables (labels, value labels, declared missing codes)."""
    row_offset: int = 0
    """File rows above the grid's first row (header rows a platform layout folded into one)."""
    left_out: tuple[tuple[str, str], ...] = ()
    """Columns the layout stage dropped (column, why): personal data, platform columns."""
    encoding: str | None = None
    """A CSV file's encoding and delimiter."""
    delimiter: str | None = None

    def width(self, start: int) -> int:
        """The number of columns of the rows from ``start`` on."""
        if self.widths is None:
            return self.cells.shape[1]
        return max(self.widths[start:], default=0)

    def head(self, n: int) -> list[list[str | None]]:
        """The first ``n`` rows as lists of texts (None for an empty cell)."""
        top = self.cells.iloc[:n].astype(object)
        return top.where(top.notna(), None).to_numpy().tolist()

    @property
    def empty(self) -> bool:
        return self.cells.size == 0 or bool(self.cells.isna().all(axis=None))


def _grid(sheet: str, read: SheetRead) -> Grid:
    """The grid of a sheet the child read, its columns at their sheet position."""
    table = read.table
    columns = {read.first_column + j: table.column(j).to_pandas(types_mapper={
        table.column(j).type: TEXT}.get) for j in range(table.num_columns)}
    width = read.first_column + table.num_columns if table.num_columns else 0
    cells = pd.DataFrame({j: columns.get(j, pd.Series(pd.NA, index=range(table.num_rows),
                                                       dtype=TEXT)) for j in range(width)})
    cells.index = pd.RangeIndex(table.num_rows)
    errors: dict[int, dict[int, str]] = {}
    for row, col, code in read.errors:
        errors.setdefault(read.first_column + col, {})[row] = code
    for col, found in errors.items():
        cells.iloc[list(found), col] = pd.array(list(found.values()), dtype=TEXT)
    return Grid(read.sheet or sheet, cells, typed=True, errors=errors)


def _too_big(name: str, size: int, limits: ImportLimits,
             error: type[CxAppError] = SurveyFileError) -> CxAppError:
    return error(
        f"{name}: the file is {megabytes(size)}, more than the limit of "
        f"{megabytes(limits.max_file_bytes)} (CX_APP_MAX_FILE_MB); refused")


def read_source(source: Any, filename: str | None, limits: ImportLimits, *,
                error: type[CxAppError] = SurveyFileError, what: str = "survey file",
                ) -> tuple[bytes, str]:
    """A file's bytes (in memory only) and its display name, from a path, bytes or a binary
    file object, within ``limits.max_file_bytes``; model files use it too (``error=``)."""
    upload = f"the uploaded {what}"
    if isinstance(source, (str, Path)):
        path = Path(source)
        name = filename or path.name
        try:
            size = path.stat().st_size
            if size > limits.max_file_bytes:
                raise _too_big(name, size, limits, error)
            with path.open("rb") as handle:  # read at most one byte past the limit
                data = handle.read(limits.max_file_bytes + 1)
        except FileNotFoundError:
            raise error(f"{name}: file not found ({path})") from None
        except IsADirectoryError:
            raise error(f"{name}: is a folder, not a {what}") from None
        except OSError as exc:
            raise error(f"{name}: cannot read the {what} ({exc.strerror})") from None
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), filename or upload
    elif hasattr(source, "getvalue") or hasattr(source, "read"):
        name = Path(str(filename or getattr(source, "name", None) or upload)).name
        try:
            data = (source.getvalue() if hasattr(source, "getvalue")
                    else source.read(limits.max_file_bytes + 1))
        except OSError as exc:
            raise error(f"{name}: cannot read the {what} ({exc.strerror})") from None
        if isinstance(data, str):
            raise error(f"{name}: the {what} must be opened in binary mode ('rb')")
        data = bytes(data)
    else:
        raise error(f"cannot read a {what} from a {type(source).__name__}: give a path, bytes "
                    "or a binary file object")
    if len(data) > limits.max_file_bytes:
        raise _too_big(name, len(data), limits, error)
    return data, name


def _foreign_format(data: bytes) -> str | None:
    head = data[:64].lstrip().lower()
    return next((what for magic, what in _FOREIGN_MAGIC if head.startswith(magic.lower())), None)


def _check_workbook_bytes(data: bytes, name: str, suffix: str) -> bool:
    """Refuse bytes that are not a workbook of this kind; whether they are a zip archive."""
    if data.startswith(_OLE_MAGIC):
        # Office wraps a password-protected .xlsx in an OLE2 (CFB) container with
        # "EncryptionInfo" and "EncryptedPackage" streams
        if any(mark in data for mark in _ENCRYPTED_MARKS):
            raise SurveyFileError(
                f"{name}: the workbook is password-protected (encrypted); save an unprotected "
                "copy and upload that")
        return False  # an old .xls (BIFF) workbook: the reader reads it; failures reported later
    if data.startswith(_ZIP_MAGIC):
        return True
    foreign = _foreign_format(data)
    if foreign:
        raise SurveyFileError(
            f"{name}: the file is {foreign} renamed {suffix}, not a spreadsheet")
    if suffix in (".xlsx", ".xlsm", ".ods"):
        hint = (" (it looks like text: if it is a CSV file, give it the .csv extension)"
                if _looks_like_text(data) else "")
        raise SurveyFileError(
            f"{name}: not a readable {suffix} workbook (the file is damaged or is not a "
            f"spreadsheet){hint}")
    return False


def _looks_like_text(data: bytes) -> bool:
    head = data[:4096]
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(head) - 4  # a character cut at the end of the sample
    return True


def _unreadable(data: bytes, name: str, suffix: str) -> str:
    if data.startswith(_OLE_MAGIC):
        return (f"{name}: an OLE2 (Compound File) container that the reader cannot read as a "
                "workbook: a password-protected/encrypted workbook, an old .xls from an "
                "unsupported version, or another Office document; save it as an unprotected "
                ".xlsx")
    return (f"{name}: not a readable {suffix or 'spreadsheet'} workbook (the file is damaged "
            "or is not a spreadsheet)")


def excel_grids(data: bytes, name: str, limits: ImportLimits, first: bool = True,
                ) -> tuple[list[str], Callable[[str], Grid]]:
    """(sheet names, a function loading one sheet's :class:`Grid`) of a workbook; ``first``:
    read the first sheet with the names (one child process fewer).

    The archive checks run while the first child parses (the child cannot harm this process):
    a refusal stops it and is the answer, in about the reader's time rather than the sum."""
    suffix = Path(name).suffix.lower()
    archive = _check_workbook_bytes(data, name, suffix)
    unreadable = _unreadable(data, name, suffix)
    read = read_in_child(data, name, 0 if first else None, limits, unreadable,
                         checks=(lambda: check_workbook_archive(data, name, limits))
                         if archive else None)
    names = read.sheet_names
    kept = {names[0]: read} if first and names and read.sheet is not None else {}

    def load(sheet: str) -> Grid:
        done = kept.pop(sheet, None) or read_in_child(data, name, sheet, limits, unreadable)
        return _grid(sheet, done)

    return names, load


def _decode(data: bytes, name: str) -> tuple[str, str]:
    for codec, label in _ENCODINGS:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        if codec == "utf-8-sig" and data.startswith(b"\xef\xbb\xbf"):
            label = "UTF-8 with BOM"
        return text, label
    raise SurveyFileError(f"{name}: cannot decode the text")  # pragma: no cover (latin-1)


def _sniff_delimiter(text: str) -> str:
    """The delimiter (``,`` ``;`` tab) giving the most columns consistently over the first
    lines, ties in that order; one leaving a field over the csv module's limit is not it."""
    sample = [line for line in text.splitlines()[:50] if line.strip()]
    best, best_score = ",", (-1, -1)
    for delimiter in DELIMITERS:
        try:
            widths = [len(r) for r in csv.reader(sample, delimiter=delimiter)]
        except csv.Error:  # "field larger than field limit": not this delimiter
            continue
        if not widths:
            continue
        common = max(set(widths), key=widths.count)
        score = (widths.count(common) if common > 1 else 0, common)
        if score > best_score:
            best, best_score = delimiter, score
    return best


def csv_grid(data: bytes, name: str, limits: ImportLimits) -> Grid:
    """The rows of a CSV file. Binary data (control bytes on more than 5% of the first 4 KB)
    is refused; a stray NUL byte in a cell is kept, and the importer excludes that row."""
    head = data[:4096]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text, encoding = data.decode("utf-16"), "UTF-16"
    elif sum(head.count(bytes([c])) for c in (*range(9), *range(14, 32))) > 0.05 * len(head):
        raise SurveyFileError(f"{name}: not a text (CSV) file; it looks like binary data")
    else:
        text, encoding = _decode(data, name)
    delimiter = _sniff_delimiter(text)
    rows: list[list[str]] = []
    width = 0
    try:
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            rows.append(row)
            width = max(width, len(row))
            if (too_big := shape_error(name, len(rows), width, limits)) is not None:
                raise too_big
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise SurveyFileError(
                f"{name}: line {len(rows) + 1} has a cell of more than "
                f"{csv.field_size_limit():,} characters, more than a survey answer can hold; "
                "refused") from None
        raise SurveyFileError(f"{name}: not a readable CSV file (line {len(rows) + 1}: {exc})"
                              ) from None
    cells = pd.DataFrame([row + [None] * (width - len(row)) for row in rows],
                         dtype=object).astype(TEXT) if rows else pd.DataFrame()
    return Grid(None, cells, widths=tuple(map(len, rows)), encoding=encoding,
                delimiter=delimiter)


def stat_grid(data: bytes, name: str, limits: ImportLimits) -> Grid:
    """The grid of an SPSS or Stata file: the variable names as the header row, the
    variables' labels, value labels and declared missing codes beside it."""
    kind = "dta" if Path(name).suffix.lower() == ".dta" else "sav"
    foreign = _foreign_format(data)
    if foreign or data.startswith(_ZIP_MAGIC):
        raise SurveyFileError(f"{name}: the file is {foreign or 'a zip archive'} renamed "
                              f"{Path(name).suffix.lower()}, not an SPSS or Stata data file")
    what = "SPSS" if kind == "sav" else "Stata"
    table, meta = read_child({"kind": kind}, data, name, name, limits, f"{name}: not a readable "
                             f"{what} data file (the file is damaged or is not one)")
    variables = tuple(StatVariable(**{**v, "label": v["label"] or None})
                      for v in meta["variables"])
    header = pd.DataFrame([[v.name for v in variables]], dtype=object).astype(TEXT)
    body = pd.DataFrame({j: table.column(j).to_pandas(types_mapper={pa.string(): TEXT}.get)
                         for j in range(table.num_columns)})
    cells = pd.concat([header, body], ignore_index=True) if len(variables) else pd.DataFrame()
    # no header row in the file: row N of every message is case N, as SPSS and Stata number them
    return Grid(None, cells, labels=tuple(v.label for v in variables), variables=variables,
                row_offset=-1)


def file_kind(name: str) -> str:
    """What kind of survey file a name is, in words ("SPSS/Stata file", "CSV file", "workbook").

    >>> file_kind("wave.SAV"), file_kind("wave.csv"), file_kind("wave.xlsx")
    ('SPSS/Stata file', 'CSV file', 'workbook')
    """
    suffix = Path(name).suffix.lower()
    return ("SPSS/Stata file" if suffix in STAT_SUFFIXES else "CSV file"
            if suffix in CSV_SUFFIXES else "workbook")


def survey_suffix(data: bytes, name: str) -> str:
    """The lower-case suffix of a non-empty survey file; anything else refused."""
    if not data:
        raise SurveyFileError(f"{name}: the file is empty (0 bytes)")
    suffix = Path(name).suffix.lower()
    if suffix not in (*CSV_SUFFIXES, *EXCEL_SUFFIXES, *STAT_SUFFIXES):
        raise SurveyFileError(
            f"{name}: '{suffix or 'no extension'}' is not a supported survey file; use .xlsx, "
            ".xlsm, .xls, .ods, .csv, .tsv, or an SPSS (.sav, .zsav) or Stata (.dta) file")
    return suffix


def read_grids(data: bytes, name: str, limits: ImportLimits,
               ) -> tuple[list[str], Callable[[str | None], Grid]]:
    """Bytes → grid: (the sheet names, a function reading one sheet's :class:`Grid`). A CSV,
    SPSS or Stata file has no sheet names: the function gives its one table for any name."""
    suffix = survey_suffix(data, name)
    if suffix in EXCEL_SUFFIXES:
        names, load = excel_grids(data, name, limits)
        if not names:
            raise SurveyFileError(f"{name}: the workbook has no sheets")
        return names, load
    grid = stat_grid(data, name, limits) if suffix in STAT_SUFFIXES else csv_grid(
        data, name, limits)
    if (grid.cells.shape[0] < 2 if grid.variables is not None else not any(
            c is not None and c.strip() for row in grid.head(30) for c in row)):
        raise SurveyFileError(f"{name}: the file has no data")
    return [], lambda _sheet: grid
