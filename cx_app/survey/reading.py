"""Raw reading of survey files: bytes from a path, upload or file object within the import
limits, the checks that run before any parser sees a workbook (foreign formats, encryption,
archive and XML safety), calamine grids with Excel error cells marked, and CSV decoding and
delimiter sniffing. :mod:`cx_app.survey.importing` turns these grids into respondents."""

from __future__ import annotations

import csv
import datetime as dt
import io
import posixpath
import zipfile
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import python_calamine
from defusedxml import ElementTree

from cx_app.errors import CxAppError, SurveyFileError
from cx_app.survey.limits import ImportLimits, megabytes
from cx_app.survey.sheet_shards import SHARD_MIN_BYTES, gc_paused, parse_in_shards
from cx_app.survey.xml_safety import ArchiveSummary, check_workbook_archive

EXCEL_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".ods")
CSV_SUFFIXES = (".csv",)
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


class ExcelError(str):
    """An Excel error cell (``#N/A``, ``#DIV/0!``, ...) found in the worksheet XML; calamine
    itself returns such a cell as empty text."""


def cell_type_ids(values: np.ndarray) -> np.ndarray:
    """The exact type of each cell of a column of grid cells (an object ndarray), as the type's
    ``id`` (the cells keep their types alive), in one C-level pass: comparing types is then an
    integer comparison (:func:`of_types`).

    Inside :func:`remembered_cell_types` a column's types are computed once: blank masks,
    inference and cleaning all look at the same columns of one frame."""
    return _remembered(values, "types", _type_ids)


def _type_ids(cells: np.ndarray) -> np.ndarray:
    """:func:`cell_type_ids` of an object array of any shape, in its element order."""
    return np.fromiter(map(_TypeIds().__getitem__, map(type, cells.flat)), dtype=np.intp,
                       count=cells.size).reshape(cells.shape)


class _TypeIds(dict):
    """type → its ``id``, filled as types are met: a lookup gives the same int object for
    every cell, where ``id`` makes a new one per cell (saves about 10% of :func:`_type_ids`)."""

    def __missing__(self, kind: type) -> int:
        self[kind] = kind_id = id(kind)
        return kind_id


NEVER_BLANK = (int, bool, dt.date, dt.datetime, dt.time, dt.timedelta)
"""Cell types that always hold a value whose text is not blank."""


def of_types(type_ids: np.ndarray, kinds: Sequence[type]) -> np.ndarray:
    """Cells whose exact type (:func:`cell_type_ids`) is one of ``kinds``."""
    return np.isin(type_ids, [id(kind) for kind in kinds])


def float_cells(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions of the Python float cells of a column, their values as float64): numbers as
    calamine reads them; remembered like :func:`cell_type_ids`."""
    return _remembered(values, float, _float_cells)


def _float_cells(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    positions = np.flatnonzero(cell_type_ids(values) == id(float))
    return positions, values[positions].astype(float)


def string_cells(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions of the plain-string cells of a column (exact type ``str``), whether each is
    blank: ``""`` or whitespace only, what ``str.strip`` removes); remembered like
    :func:`cell_type_ids`."""
    return _remembered(values, str, _string_cells)


def _string_cells(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _plain_string_positions(values), _blank_texts(string_texts(values))


def string_texts(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """The plain-string cells of a column (at the positions :func:`string_cells` gives), as
    they are, in a pandas string array; remembered like :func:`cell_type_ids`."""
    return _remembered(values, "texts", _string_texts)


def _string_texts(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    return pd.array(values[_plain_string_positions(values)], dtype="string", copy=False)


def _plain_string_positions(values: np.ndarray) -> np.ndarray:
    return np.flatnonzero(cell_type_ids(values) == id(str))


def _blank_texts(texts: pd.api.extensions.ExtensionArray) -> np.ndarray:
    """Whether each text of a pandas string array is ``""`` or whitespace only (pandas'
    ``str.strip``, vectorised: the same whitespace as Python's)."""
    return pd.Series(texts, copy=False).str.strip().eq("").to_numpy(dtype=bool)


def stand_ins(values: np.ndarray, positions: np.ndarray,
              blank: np.ndarray | None = None) -> np.ndarray:
    """For each cell of a column at ``positions``, the position of the cell whose answer it
    shares under any cell-by-cell computation: for a plain string (exact type ``str``), the
    first plain string there with the same text (and the same ``blank`` flag, when given);
    for any other cell, itself (``1 == 1.0 == True``: only strings are merged).

    A slow cell-by-cell reference run on the distinct stand-ins, its answers spread back,
    answers every cell: survey columns repeat a few codes and typos thousands of times."""
    shared = positions.copy()
    is_string = cell_type_ids(values)[positions] == id(str)
    strings = positions[is_string]
    if strings.size:
        groups = pd.factorize(values[strings])[0]
        if blank is not None:
            groups = 2 * groups + blank[strings]
        _, first, group = np.unique(groups, return_index=True, return_inverse=True)
        shared[is_string] = strings[first][group]
    return shared


def remembered_answers(what: Hashable, keys: list[Hashable | None],
                       answer: Callable[[], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """``answer()``: arrays with one entry per key (a cell-by-cell computation over a few
    cells). Inside :func:`remembered_cell_types` each key's entries are remembered under
    ``what``, and arrays for keys that are all known are made from them without calling
    ``answer``: the score columns of a file repeat the same few texts. A ``None`` key (a cell
    that is not a plain string) is never known."""
    memo = _TYPES.get()
    if memo is None or not keys:
        return answer()
    known = memo.setdefault(("answers", what), {})
    if all(key is not None and key in known for key in keys):
        rows = [known[key] for key in keys]
        return tuple(np.array(entries, dtype=dtype) for entries, dtype
                     in zip(zip(*rows, strict=True), memo[("dtypes", what)], strict=True))
    arrays = answer()
    memo[("dtypes", what)] = tuple(array.dtype for array in arrays)
    known.update((key, row) for key, row in zip(keys, zip(*arrays, strict=True), strict=True)
                 if key is not None)
    return arrays


def remember_grid_cells(cells: np.ndarray) -> None:
    """Inside :func:`remembered_cell_types`, remember :func:`cell_type_ids`,
    :func:`float_cells`, :func:`string_cells` and :func:`string_texts` of every column of a
    2-D object array (``cells[:, j]``, and the columns of a frame that are views of it), found
    by passes over the whole array in its memory order; outside the block, do nothing.

    A workbook's cells are made row by row, so a pass down one column reads objects scattered
    over the whole sheet: the same work column by column takes about twice as long."""
    memo = _TYPES.get()
    if memo is None:
        return
    types = _type_ids(cells)
    floats, strings = types == id(float), types == id(str)
    numbers = np.full(cells.shape, np.nan)
    np.copyto(numbers, cells, casting="unsafe", where=floats)  # casts the float cells only
    # the plain strings, in memory order (a new array: pandas need not copy it)
    texts = pd.array(cells[strings], dtype="string", copy=False)
    blank = np.zeros(cells.shape, dtype=bool)
    blank[strings] = _blank_texts(texts)
    text_order = np.zeros(cells.shape, dtype=np.intp)  # where each string is in texts
    text_order[strings] = np.arange(len(texts))
    for j in range(cells.shape[1]):
        column = cells[:, j]
        key = _column_key(column)
        at_floats, at_strings = np.flatnonzero(floats[:, j]), np.flatnonzero(strings[:, j])
        memo[(*key, "types")] = (column, types[:, j])
        memo[(*key, float)] = (column, (at_floats, numbers[at_floats, j]))
        memo[(*key, str)] = (column, (at_strings, blank[at_strings, j]))
        memo[(*key, "texts")] = (column, texts.take(text_order[at_strings, j]))


_TYPES: ContextVar[dict | None] = ContextVar("cx_app_cell_types", default=None)


def _column_key(values: np.ndarray) -> tuple:
    """The memory an array views: equal for every view of the same cells."""
    return values.__array_interface__["data"][0], values.shape, values.strides


def _remembered(values: np.ndarray, what: object,
                compute: Callable[[np.ndarray], Any]) -> Any:
    """``compute(values)``; inside :func:`remembered_cell_types` computed once per column."""
    memo = _TYPES.get()
    if memo is None:
        return compute(values)
    key = (*_column_key(values), what)
    if key not in memo:
        # the memo holds the array itself, so its memory (the key) cannot be reused meanwhile
        memo[key] = (values, compute(values))
    return memo[key][1]


@contextmanager
def remembered_cell_types() -> Iterator[None]:
    """Within this block (also a decorator), :func:`cell_type_ids`, :func:`float_cells`,
    :func:`string_cells` and :func:`string_texts` compute each column's answer once (all at
    once for a grid, :func:`remember_grid_cells`) and :func:`remembered_answers` keeps answers
    across columns; for reading a file whose cells nobody modifies meanwhile (per thread or
    task). A block inside another shares the outer block's memory."""
    if _TYPES.get() is not None:
        yield
        return
    token = _TYPES.set({})
    try:
        yield
    finally:
        _TYPES.reset(token)


# Excel serial day numbers accepted as dates in a date column: 1950-01-01 .. 2099-12-31
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_MAIN_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_PKG_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"


# --------------------------------------------------------------------------- raw reading


@dataclass(frozen=True)
class Grid:
    """One sheet's cells as rows of Python values; ``rows[i]`` is sheet row ``i + 1``."""

    sheet: str | None
    rows: list[list[Any]]
    cells: np.ndarray | None = field(default=None, repr=False, compare=False)
    """The same cells (the same objects) as one 2-D object array, when the reader made it
    already (a large sheet read in shards); nobody may modify ``rows`` then."""


def _too_big(name: str, size: int, limits: ImportLimits,
             error: type[CxAppError] = SurveyFileError) -> CxAppError:
    return error(
        f"{name}: the file is {megabytes(size)}, more than the limit of "
        f"{megabytes(limits.max_file_bytes)} (CX_APP_MAX_FILE_MB); refused")


def read_source(source: Any, filename: str | None, limits: ImportLimits, *,
                error: type[CxAppError] = SurveyFileError, what: str = "survey file",
                ) -> tuple[bytes, str]:
    """A file's bytes (in memory; nothing is written anywhere) and its display name, from a
    path, bytes or a binary file object, within ``limits.max_file_bytes``.

    The one reader of uploads: surveys (:class:`SurveyFileError`) and model files
    (``error=ModelFileError, what="model file"``) say the same things the same way.
    """
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
    head = data[:64].lstrip()
    for magic, what in _FOREIGN_MAGIC:
        if head[:len(magic)].lower() == magic.lower():
            return what
    return None


def _check_workbook_bytes(data: bytes, name: str, suffix: str,
                          limits: ImportLimits) -> ArchiveSummary | None:
    """Refuse, before calamine sees them, bytes that are not a safe workbook of this kind; the
    archive summary of a zip-based workbook."""
    if data.startswith(_OLE_MAGIC):
        # Office wraps a password-protected .xlsx in an OLE2 (CFB) container with
        # "EncryptionInfo" and "EncryptedPackage" streams
        if any(mark in data for mark in _ENCRYPTED_MARKS):
            raise SurveyFileError(
                f"{name}: the workbook is password-protected (encrypted); save an unprotected "
                "copy and upload that")
        return None  # an old .xls (BIFF) workbook: calamine reads it; failures reported below
    if data.startswith(_ZIP_MAGIC):
        return check_workbook_archive(data, name, limits, keep_sheets_from=SHARD_MIN_BYTES)
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
    return None


def _sheet_parts(data: bytes) -> dict[str, str]:
    """Sheet name → worksheet part (``xl/worksheets/sheet1.xml``) of an .xlsx/.xlsm archive
    (already checked: no DTD, bounded sizes); parsed with defusedxml."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            book = ElementTree.fromstring(archive.read("xl/workbook.xml"))
            rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    except Exception:  # an unusual layout: error cells then stay blank, as calamine reads them
        return {}
    targets = {r.get("Id"): r.get("Target", "") for r in rels.iter(f"{_PKG_NS}Relationship")}
    parts = {}
    for sheet in book.iter(f"{_MAIN_NS}sheet"):
        target = targets.get(sheet.get(f"{_REL_NS}id"), "")
        if target:
            path = target.lstrip("/") if target.startswith("/") else posixpath.join("xl", target)
            parts[sheet.get("name", "")] = posixpath.normpath(path)
    return parts


def _mark_errors(rows: list[list[Any]], errors: dict[tuple[int, int], str]) -> None:
    """Put an :class:`ExcelError` where calamine returned an error cell as empty text."""
    for (row, col), code in errors.items():
        if row <= len(rows) and col <= len(rows[row - 1]) and rows[row - 1][col - 1] == "":
            rows[row - 1][col - 1] = ExcelError(code)


def _looks_like_text(data: bytes) -> bool:
    head = data[:4096]
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(head) - 4  # a character cut at the end of the sample
    return True


def excel_grids(data: bytes, name: str, limits: ImportLimits) -> tuple[list[str], Any]:
    suffix = Path(name).suffix.lower()
    summary = _check_workbook_bytes(data, name, suffix, limits)
    error_cells = summary.error_cells if summary is not None else {}
    # sheet name → worksheet part: for the error cells, and to find a large sheet's XML
    parts = _sheet_parts(data) if error_cells or suffix in (".xlsx", ".xlsm") else {}
    inflated = dict([summary.largest_sheet]) if summary and summary.largest_sheet else {}
    try:
        workbook = python_calamine.CalamineWorkbook.from_filelike(io.BytesIO(data))
    except python_calamine.PasswordError:
        raise SurveyFileError(
            f"{name}: the workbook is password-protected; save an unprotected copy"
        ) from None
    except Exception:  # calamine raises several types for damaged or foreign files
        if data.startswith(_OLE_MAGIC):
            raise SurveyFileError(
                f"{name}: an OLE2 (Compound File) container that calamine cannot read as a "
                "workbook: a password-protected/encrypted workbook, an old .xls from an "
                "unsupported version, or another Office document; save it as an unprotected "
                ".xlsx") from None
        raise SurveyFileError(
            f"{name}: not a readable {suffix or 'spreadsheet'} workbook (the file is damaged or "
            "is not a spreadsheet)"
        ) from None

    def load(sheet: str) -> Grid:
        sharded = None
        if suffix in (".xlsx", ".xlsm"):  # a large sheet: calamine on every core
            part = parts.get(sheet)
            sharded = (parse_in_shards(data, part, sheet, inflated.pop(part, None)) if part
                       else None)
            if sharded is not None:
                _check_shape(f"{name}, sheet '{sheet}'", len(sharded.rows),
                             len(sharded.rows[0]) if sharded.rows else 0, limits)
        rows = _parse_whole(sheet) if sharded is None else sharded.rows
        if parts.get(sheet) in error_cells:
            _mark_errors(rows, error_cells[parts[sheet]])
            return Grid(sheet, rows)  # the cells array would not show the marks
        return Grid(sheet, rows, sharded.cells if sharded is not None else None)

    def _parse_whole(sheet: str) -> list[list[Any]]:
        try:
            loaded = workbook.get_sheet_by_name(sheet)
        except Exception:
            raise SurveyFileError(f"{name}, sheet '{sheet}': the sheet cannot be read") from None
        _check_shape(f"{name}, sheet '{sheet}'", loaded.height, loaded.width, limits)
        try:
            with gc_paused():
                return loaded.to_python(skip_empty_area=False)
        except Exception:
            raise SurveyFileError(f"{name}, sheet '{sheet}': the sheet cannot be read") from None

    return list(workbook.sheet_names), load


def _check_shape(where: str, rows: int, cols: int, limits: ImportLimits) -> None:
    if rows > limits.max_rows:
        raise SurveyFileError(f"{where}: {rows:,} rows, more than the limit of "
                              f"{limits.max_rows:,} (CX_APP_MAX_ROWS); refused")
    if cols > limits.max_columns:
        raise SurveyFileError(f"{where}: {cols:,} columns, more than the limit of "
                              f"{limits.max_columns:,} (CX_APP_MAX_COLUMNS); refused")
    if rows * cols > limits.max_cells:
        raise SurveyFileError(f"{where}: {rows:,} rows × {cols:,} columns = {rows * cols:,} "
                              f"cells, more than the limit of {limits.max_cells:,} "
                              "(CX_APP_MAX_CELLS); refused")


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
    lines; ties go to the order comma, semicolon, tab. A delimiter that leaves a field longer
    than the csv module's limit (a line over 128 KB) is not the file's delimiter."""
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


def csv_grid(data: bytes, name: str, limits: ImportLimits) -> tuple[Grid, str, str]:
    """The rows of a CSV file. Binary data (control bytes, NUL included, on more than 5% of the
    first 4 KB) is refused; a stray NUL byte in a cell of a text file is kept, and the importer
    excludes that row with its reason."""
    head = data[:4096]
    control = sum(head.count(bytes([c])) for c in (*range(9), *range(14, 32)))
    if (control > 0.05 * len(head)
            and not data.startswith((b"\xff\xfe", b"\xfe\xff"))):
        raise SurveyFileError(f"{name}: not a text (CSV) file; it looks like binary data")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text, encoding = data.decode("utf-16"), "UTF-16"
    else:
        text, encoding = _decode(data, name)
    delimiter = _sniff_delimiter(text)
    rows: list[list[str]] = []
    width = 0
    try:
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            rows.append(row)
            width = max(width, len(row))
            _check_shape(name, len(rows), width, limits)
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise SurveyFileError(
                f"{name}: line {len(rows) + 1} has a cell of more than "
                f"{csv.field_size_limit():,} characters, more than a survey answer can hold; "
                "refused") from None
        raise SurveyFileError(f"{name}: not a readable CSV file (line {len(rows) + 1}: {exc})"
                              ) from None
    return Grid(None, rows), encoding, delimiter
