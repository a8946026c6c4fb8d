"""Reading survey files into clean, validated respondent tables.

:func:`load_survey` reads ``.xlsx``/``.xlsm``/``.xls``/``.ods`` workbooks through fastexcel and
SPSS ``.sav``/``.zsav`` and Stata ``.dta`` files through pyreadstat (each in a child process
with limits), and ``.csv``/``.tsv`` files (delimiter ``,`` ``;`` or tab sniffed; UTF-16 with a
BOM, UTF-8 with or without BOM, then cp1252, then latin-1); the layout stage
(:mod:`cx_app.survey.layout`) folds a survey platform's header rows into one, drops personal
data and platform columns and reads choice texts as scores; then it finds the sheet and the header row that match the schema, maps columns by
header or alias, and cleans every score column with vectorised pandas operations:

- blank cells, the schema's missing-value codes (``99``, ``"Don't know"``, ...) and the usual
  codes that cannot be answers on a column's scale are missing (a gap, not a score);
- a respondent with a missing or invalid target or a repeated respondent id (the first
  occurrence is kept) is out of the survey: not in the NPS, not in the models;
- a respondent with an invalid attribute cell — an Excel error cell (``#N/A``, reported by
  the reader), a date cell in a score column, a non-numeric text, a decimal score on an
  integer scale, an out-of-scale score — or, under policy ``exclude`` only, an unanswered attribute, stays in the NPS but is left out
  of the models; every such row is listed with its reason in the
  :class:`~cx_app.survey.quality.DataQualityReport`;
- unanswered attribute scores are never filled here: the fitted model pipelines fill them from
  each training fold (policies ``impute_indicator``, the default, and ``impute_median``);
- segment cells: date cells become ISO dates in text segments; a ``date``-role segment also
  converts Excel serial day numbers (1950–2099) stored as plain numbers, with a note.

Completely blank rows are skipped before counting (``blank_rows`` and a note say how many).
Row numbers are sheet rows as Excel shows them (CSV: the line number). The raw reading (bytes
within the limits, the safety checks before a parser, sheet grids, CSV decoding) is
:mod:`cx_app.survey.reading`; the cleaning of one column, :mod:`cx_app.survey.cells`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cx_app.errors import SchemaError, SurveyFileError
from cx_app.safe_text import control_characters, describe_removed, plain_text
from cx_app.survey.cells import (
    DATE_TEXT,
    ColumnCells,
    blank_mask,
    date_text,
)
from cx_app.survey.cleaning import clean_columns
from cx_app.survey.data import SourceInfo, SurveyData  # noqa: E402 - re-exported
from cx_app.survey.inference import infer_schema
from cx_app.survey.layout import recognise_layout
from cx_app.survey.leaks import leak_reason
from cx_app.survey.limits import ImportLimits, limits_from_env
from cx_app.survey.reading import (
    CSV_SUFFIXES,
    DELIMITERS,
    EXCEL_SUFFIXES,
    STAT_SUFFIXES,
    Grid,
    csv_grid,
    excel_grids,
    read_source,
    stat_grid,
)
from cx_app.survey.schema import (
    ColumnSpec,
    SurveySchema,
    normalise_header,
)
from cx_app.survey.xml_safety import column_letters

_UNLABELED_HINT = " (a new wave without target scores: load it as unlabeled, --unlabeled)"
_HEADER_SCAN_ROWS = 30
_NUMBER_TEXT = re.compile(r"-?\d+(?:\.\d+)?")


# --------------------------------------------------------------------------- header matching


def _header_texts(row: Sequence[Any]) -> list[str]:
    return [normalise_header(c) if _present(c) else "" for c in row]


def _present(cell: str | None) -> bool:
    return cell is not None and bool(cell.strip())


def _is_text(cell: str | None, typed: bool) -> bool:
    """A cell with text in it; in a workbook, not a number or a date the reader printed."""
    return _present(cell) and not (typed and (_NUMBER_TEXT.fullmatch(cell)
                                              or re.fullmatch(DATE_TEXT, cell)))


def _header_cell(cell: str, typed: bool) -> str:
    """A header cell's text (a date cell without its midnight time)."""
    return date_text(cell) if typed and re.fullmatch(DATE_TEXT, cell) else cell.strip()


def _match(specs: Sequence[ColumnSpec], headers: list[str]) -> dict[str, int]:
    """Column position of each spec (by header, then aliases, then name), first match wins;
    a header is claimed by one spec only."""
    positions: dict[str, list[int]] = {}
    for j, h in enumerate(headers):
        if h:
            positions.setdefault(h, []).append(j)
    found: dict[str, int] = {}
    claimed: set[int] = set()
    for spec in specs:
        for candidate in spec.candidates:
            free = [j for j in positions.get(candidate, ()) if j not in claimed]
            if free:
                found[spec.name] = free[0]
                claimed.add(free[0])
                break
    return found


def _required(schema: SurveySchema, require_target: bool,
              require_attributes: bool = True) -> list[ColumnSpec]:
    return (([schema.target] if require_target else [])
            + (list(schema.attributes) if require_attributes else []))


def _find_header(grid: Grid, schema: SurveySchema) -> tuple[int, dict[str, int]]:
    """(index of the header row, matched positions): the row among the first rows that matches
    the most schema columns."""
    best_row, best = 0, {}
    for i, row in enumerate(grid.head(_HEADER_SCAN_ROWS)):
        found = _match(schema.columns(), _header_texts(row))
        if len(found) > len(best):
            best_row, best = i, found
    return best_row, best


def _guess_header_row(grid: Grid) -> int:
    """Without a schema: the first row whose text cells fill at least half the table width."""
    head = grid.head(_HEADER_SCAN_ROWS)
    texts = [sum(_is_text(c, grid.typed) for c in row) for row in head]
    filled = [sum(_present(c) for c in row) for row in head]
    width = max(filled, default=0)
    for i, n in enumerate(texts):
        if n >= 2 and n >= 0.5 * width:
            return i
    return 0


# --------------------------------------------------------------------------- public API


def read_table(
    source: Any, *, sheet: str | int | None = None, filename: str | None = None,
    limits: ImportLimits | None = None,
) -> pd.DataFrame:
    """The raw table of a file (the detected header as column names; sheet rows as the index),
    for previews and for :func:`~cx_app.survey.inference.infer_schema`."""
    limits = limits or limits_from_env()
    data, name = read_source(source, filename, limits)
    grid, _, _, _ = _grid_for(data, name, sheet, schema=None, require_target=True,
                              limits=limits)
    header = _guess_header_row(grid)
    return _table_from_grid(grid, header).frame


@dataclass(frozen=True)
class _Table:
    """The cells below a header row: ``frame`` (text columns named by the header, index: sheet
    rows, completely blank rows dropped), their blank and Excel-error masks, and how many
    blank rows were dropped."""

    frame: pd.DataFrame
    blank: pd.DataFrame
    errors: dict[str, np.ndarray]
    typed: bool
    blank_rows: int

    def column(self, j: int) -> ColumnCells:
        header = self.frame.columns[j]
        return ColumnCells(self.frame.iloc[:, j], self.blank.iloc[:, j].to_numpy(),
                           self.errors.get(header, np.zeros(len(self.frame), dtype=bool)),
                           self.typed)


def _table_from_grid(grid: Grid, header: int) -> _Table:
    width = grid.width(header)
    body = grid.cells.iloc[header + 1:, :width]
    first = grid.head(header + 1)[header] if len(grid.cells) > header else []
    first = first + [None] * (width - len(first))
    headers, seen = [], set()
    for j in range(width):
        # the header step: the text a column is named by, as plain text (cx_app.safe_text);
        # a header of control characters only is named by its letter, like an empty one
        text = ((plain_text(_header_cell(first[j], grid.typed)) if _present(first[j]) else "")
                or f"Column {column_letters(j + 1)}")
        base, k = text, 2
        while text in seen:
            text, k = f"{base} ({k})", k + 1
        seen.add(text)
        headers.append(text)
    frame = body.reindex(columns=range(width))
    frame.columns = headers
    start = header + 2 + grid.row_offset  # the file's row number (header rows folded: later)
    frame.index = pd.RangeIndex(start, start + len(frame), name="row")
    if grid.labels is not None:  # question texts: infer_schema gives them to the attributes
        frame.attrs["labels"] = {h: label for h, label in zip(headers, grid.labels,
                                                                  strict=False) if label}
    blank = pd.DataFrame({c: blank_mask(frame.iloc[:, j]) for j, c in enumerate(headers)},
                         index=frame.index)
    errors = {}
    for j, found in grid.errors.items():
        rows = [row - header - 1 for row in found if row > header]
        if j < width and rows:
            errors[headers[j]] = np.isin(np.arange(len(frame)), rows)
    keep = ~blank.all(axis=1).to_numpy() if width else np.zeros(len(frame), dtype=bool)
    if keep.all():  # the usual case: no copy
        return _Table(frame, blank, errors, grid.typed, 0)
    return _Table(frame[keep], blank[keep], {c: e[keep] for c, e in errors.items()},
                  grid.typed, int((~keep).sum()))


def _survey_suffix(data: bytes, name: str) -> str:
    """The lower-case suffix of a non-empty CSV or workbook file; anything else refused."""
    if not data:
        raise SurveyFileError(f"{name}: the file is empty (0 bytes)")
    suffix = Path(name).suffix.lower()
    if suffix not in (*CSV_SUFFIXES, *EXCEL_SUFFIXES, *STAT_SUFFIXES):
        raise SurveyFileError(
            f"{name}: '{suffix or 'no extension'}' is not a supported survey file; use .xlsx, "
            ".xlsm, .xls, .ods, .csv, .tsv, or an SPSS (.sav, .zsav) or Stata (.dta) file"
        )
    return suffix


def sheet_names(
    source: Any, *, filename: str | None = None, limits: ImportLimits | None = None,
) -> list[str]:
    """The sheet names of a survey workbook (an empty list for a CSV file).

    The file is read exactly as :func:`load_survey` reads it — the same size limits, archive
    checks (zip bombs, XML document types, encrypted or renamed files) and reader in a child
    process with limits — so listing the sheets of an upload is as safe as importing it.

    Parameters
    ----------
    source
        A path, the file's bytes, or a file-like object (an upload).
    filename
        The display name (its suffix decides CSV or workbook); default: the path's name.
    limits
        Import limits; default :func:`~cx_app.survey.limits.limits_from_env`.

    Raises
    ------
    SurveyFileError
        The same error, with the same message, as :func:`load_survey` for that file.
    """
    limits = limits or limits_from_env()
    data, name = read_source(source, filename, limits)
    if _survey_suffix(data, name) in (*CSV_SUFFIXES, *STAT_SUFFIXES):
        return []
    names, _ = excel_grids(data, name, limits, first=False)
    return names


def _grid_for(
    data: bytes, name: str, sheet: str | int | None, schema: SurveySchema | None,
    require_target: bool, limits: ImportLimits, require_attributes: bool = True,
) -> tuple[Grid, list[str], dict, SurveySchema | None]:
    """The grid to use, notes about the choice, CSV dialect info, and the layout inferred
    while choosing among several sheets without a schema (None when none was inferred)."""
    suffix = _survey_suffix(data, name)
    notes: list[str] = []
    if suffix in STAT_SUFFIXES:
        grid = stat_grid(data, name, limits)
        if grid.cells.shape[0] < 2:
            raise SurveyFileError(f"{name}: the file has no data")
        return _laid_out(grid, notes), notes, {}, None
    if suffix in CSV_SUFFIXES:
        grid, encoding, delimiter = csv_grid(data, name, limits)
        notes.append(f"read as CSV: encoding {encoding}, delimiter {DELIMITERS[delimiter]}")
        if not any(any(_present(c) for c in row) for row in grid.head(_HEADER_SCAN_ROWS)):
            raise SurveyFileError(f"{name}: the file has no data")
        return (_laid_out(grid, notes), notes, {"encoding": encoding, "delimiter": delimiter},
                None)
    names, read = excel_grids(data, name, limits)

    def load(sheet: str) -> Grid:
        return _laid_out(read(sheet), notes)

    if not names:
        raise SurveyFileError(f"{name}: the workbook has no sheets")
    if sheet is not None:
        chosen = _pick_sheet(names, sheet, name)
        grid = load(chosen)
        if grid.empty:
            raise SurveyFileError(f"{name}, sheet '{chosen}': the sheet is empty")
        notes.append(f"sheet '{chosen}' (as requested)")
        return grid, notes, {}, None
    tried, only_target_missing = [], False
    for candidate in names:
        grid = load(candidate)
        if grid.empty:
            tried.append(f"'{candidate}' (empty)")
            continue
        if schema is None:
            if len(names) == 1:
                return grid, notes, {}, None
            layout = _inferred_layout(grid, name)
            if isinstance(layout, SurveySchema):
                notes.append(f"sheet '{candidate}' (the first sheet with a survey layout"
                             + (f"; skipped {', '.join(tried)}" if tried else "") + ")")
                return grid, notes, {}, layout
            tried.append(f"'{candidate}' ({layout})")
            continue
        _, found = _find_header(grid, schema)
        missing = [s for s in _required(schema, require_target, require_attributes)
                   if s.name not in found]
        if not require_attributes and not any(a.name in found for a in schema.attributes):
            missing = missing or list(schema.attributes)  # no attribute at all: not this sheet
        only_target_missing |= [s.name for s in missing] == [schema.target.name]
        if not missing:
            if len(names) > 1:
                notes.append(f"sheet '{candidate}' (the first sheet matching the schema)")
            return grid, notes, {}, None
        tried.append(f"'{candidate}' (missing {', '.join(repr(s.column) for s in missing[:3])}"
                     f"{' ...' if len(missing) > 3 else ''})")
    if all(t.endswith("(empty)") for t in tried):
        raise SurveyFileError(f"{name}: every sheet is empty")
    if schema is None:
        raise SchemaError(f"{name}: no sheet has a survey layout that can be inferred: "
                          + "; ".join(tried) + ". Choose the sheet and give the mapping "
                          "(--sheet, --target COL --scale MIN-MAX --attributes A,B,C)")
    hint = _UNLABELED_HINT if only_target_missing else ""
    raise SchemaError(
        f"{name}: no sheet matches schema '{schema.name}': " + "; ".join(tried) + hint
    )


def _laid_out(grid: Grid, notes: list[str]) -> Grid:
    """The grid after the layout stage (:mod:`cx_app.survey.layout`): platform header rows
    folded, personal data and platform columns dropped, choice texts read as scores. The
    dropped columns are kept on the grid's report (:attr:`Grid.left_out`)."""
    out, report = recognise_layout(grid, _guess_header_row)
    notes.extend(report.notes)
    return replace(out, left_out=tuple((d.column, d.reason) for d in report.dropped))


def _inferred_layout(grid: Grid, name: str) -> SurveySchema | str:
    """The layout inferred from a sheet, or why there is none (a cover or notes sheet before
    the data is skipped this way)."""
    try:
        return infer_schema(_table_from_grid(grid, _guess_header_row(grid)).frame,
                            name=Path(name).stem or "inferred")
    except (SchemaError, SurveyFileError) as exc:
        return "no target and attributes found" if "could not infer" in str(exc) else str(exc)


def _control_character_notes(row: Sequence[str | None], typed: bool) -> list[str]:
    """A note for each header that held control characters (removed: :func:`plain_text`)."""
    notes = []
    for j, cell in enumerate(row):
        found = control_characters(cell) if isinstance(cell, str) else None
        if found:
            notes.append(f"column {column_letters(j + 1)}: its header held "
                         f"{describe_removed(found)}, removed (read as "
                         f"{plain_text(_header_cell(cell, typed))!r})")
    return notes


def _duplicate_header_notes(row: Sequence[str | None], found: dict[str, int],
                            typed: bool) -> list[str]:
    """A note for each used column whose header appears more than once in the header row."""
    texts = _header_texts(row)
    notes = []
    for position in sorted(found.values()):
        same = [j for j, t in enumerate(texts) if t == texts[position]]
        if len(same) > 1 and same[0] == position:
            notes.append(f"header {plain_text(_header_cell(row[position], typed))!r} appears "
                         f"in columns {', '.join(column_letters(j + 1) for j in same)}; column "
                         f"{column_letters(position + 1)} is used")
    return notes


def _pick_sheet(names: list[str], sheet: str | int, filename: str) -> str:
    if isinstance(sheet, int):
        if 0 <= sheet < len(names):
            return names[sheet]
        raise SurveyFileError(
            f"{filename}: there is no sheet number {sheet + 1}; the sheets are {names}")
    if sheet in names:
        return sheet
    folded = [n for n in names if normalise_header(n) == normalise_header(sheet)]
    if folded:
        return folded[0]
    if sheet.strip().isdigit():  # typed by a person: a sheet number counting from 1
        return _pick_sheet(names, int(sheet) - 1, filename)
    raise SurveyFileError(f"{filename}: there is no sheet '{sheet}'; the sheets are {names}")


def load_survey(
    source: Any,
    *,
    schema: SurveySchema | None = None,
    sheet: str | int | None = None,
    filename: str | None = None,
    require_target: bool = True,
    require_attributes: bool = True,
    limits: ImportLimits | None = None,
    scoring: bool = False,
    missing_policy: str | None = None,
) -> SurveyData:
    """Read, map and clean a survey file; see the module docstring.

    ``source`` is a path, bytes or an uploaded file object (give ``filename`` for bytes: its
    extension picks the reader). ``schema=None`` infers the layout (:func:`infer_schema`) and
    says so in the notes. ``sheet`` is a sheet name (case-insensitive), an ``int`` 0-based index,
or a text of digits that names no sheet, read as a number counting from 1; by default the first
    sheet matching the schema. With ``require_target=False`` a file without the target column
    is accepted (``.y`` is then None); a present target column is validated as usual. With
    ``require_attributes=False`` (new waves scored by a saved model) a file lacking some
    attribute columns is accepted too: those attributes are listed in ``absent_attributes``
    and their column is all missing — never imputed here, never a reason to exclude a row.
    ``scoring=True`` (a new wave scored by a saved model) keeps every respondent but a
    repeated id, whatever the schema's policy: attribute gaps and invalid attribute cells stay
    missing (the saved model fills them with the training data's statistics, not this file's),
    and a row without a valid target is estimated but left out of the realized NPS.

    ``missing_policy`` (``impute_indicator``, ``impute_median``, ``exclude``) sets the policy of
    an inferred layout; with a schema it must equal the schema's ``missing_attributes`` (a
    conflict is a :class:`SchemaError`, never ignored).

    The result holds two bases (:mod:`cx_app.survey.quality`): ``frame`` is the survey base
    (every respondent with a valid target: NPS, shares, segments, waves) and ``in_model``
    marks the model base within it (``X`` and ``y``).

    ``limits`` (:class:`~cx_app.survey.limits.ImportLimits`; default: :func:`limits_from_env`) bounds
    the file size, rows, columns, cells and unzipped size; a file beyond them, a zip bomb, a
    workbook XML part with a DTD, an encrypted or foreign file raises :class:`SurveyFileError`
    before any large allocation. The file is read into memory only: nothing is written to disk.
    """
    limits = limits or limits_from_env()
    if schema is not None and missing_policy not in (None, schema.missing_attributes):
        raise SchemaError(
            f"missing-attribute policy {missing_policy!r} conflicts with schema "
            f"'{schema.name}', which says missing_attributes: {schema.missing_attributes}")
    data, name = read_source(source, filename, limits)
    grid, notes, dialect, inferred = _grid_for(data, name, sheet, schema, require_target,
                                               limits, require_attributes)
    where = f"{name}, sheet '{grid.sheet}'" if grid.sheet is not None else name
    table: tuple[int, _Table] | None = None
    if schema is None:
        if inferred is None:  # the cells below the guessed header, kept for the cleaning
            guessed = _guess_header_row(grid)
            table = (guessed, _table_from_grid(grid, guessed))
        schema = inferred or infer_schema(table[1].frame, name=Path(name).stem or "inferred")
        if missing_policy is not None:
            schema = schema.model_copy(update={"missing_attributes": missing_policy})
        notes.append(f"layout inferred from the data (no schema given): target "
                     f"{schema.target.column!r} on {schema.target.scale}, "
                     f"{len(schema.attributes)} attributes")
    header, found = _find_header(grid, schema)
    missing = [s for s in _required(schema, require_target, require_attributes)
               if s.name not in found]
    absent = tuple(a.name for a in schema.attributes if a.name not in found)
    if not require_attributes and len(absent) == len(schema.attributes):
        missing = list(schema.attributes)
    if missing:
        raise SchemaError(
            f"{where}: no column matches "
            + ", ".join(f"{s.name} ({s.column!r})" for s in missing)
            + f" of schema '{schema.name}' in the first {_HEADER_SCAN_ROWS} rows"
            + (_UNLABELED_HINT if [s.name for s in missing] == [schema.target.name] else "")
        )
    if header > 0:
        notes.append(f"header found on row {header + 1} (rows above it skipped)")
    notes.extend(_duplicate_header_notes(grid.head(header + 1)[header], found, grid.typed))
    notes.extend(_control_character_notes(grid.head(header + 1)[header], grid.typed))
    for spec in schema.columns():
        if spec.name in absent:
            notes.append(f"attribute column {spec.column!r} ({spec.name}) is not in the file: "
                         "left empty (not imputed, no row excluded for it)")
        elif spec.name not in found and spec is not schema.target:
            notes.append(f"column {spec.column!r} ({spec.name}) not found; left out")
    if schema.target.name not in found:
        notes.append(f"no target column {schema.target.column!r}: the file is treated as "
                     "unlabeled (no target scores)")
    cells = (table[1] if table is not None and table[0] == header
             else _table_from_grid(grid, header))
    if cells.blank_rows:
        notes.append(f"{cells.blank_rows} completely blank row(s) skipped (not counted as "
                     "respondents)")
    headers = list(cells.frame.columns)
    raw = {spec.name: cells.column(found[spec.name]) for spec in schema.columns()
           if spec.name in found}
    column_of = {spec.name: headers[found[spec.name]] for spec in schema.columns()
                 if spec.name in found}
    frame, in_model, report = clean_columns(raw, column_of, schema, cells.frame.index, notes,
                                           cells.blank_rows, scoring=scoring, where=where,
                                           check_nul=_may_hold_nul(data, name, dialect))
    if report.rows_read == 0:
        raise SurveyFileError(f"{where}: the header is on row {header + 1} but no respondent "
                              "rows follow it")
    target = schema.target
    if target.name in found and not scoring:
        _refuse_leaks(frame, schema, where)
    if target.name in found and not scoring and report.respondents == 0:
        reasons = "; ".join(f"{r}: {n:,}" for r, n in report.counts_by_reason("survey").items())
        raise SchemaError(
            f"{where}: column {target.column!r} (the target) has no valid answer on its scale "
            f"{target.scale} in any of the {report.rows_read:,} rows ({reasons}); check the "
            "target column and its scale")
    info = SourceInfo(
        filename=name,
        sheet=grid.sheet,
        sha256=hashlib.sha256(data).hexdigest(),
        encoding=dialect.get("encoding"),
        delimiter=dialect.get("delimiter"),
        header_row=header + 1 + grid.row_offset,
        left_out=grid.left_out,
    )
    return SurveyData(frame=frame, schema=schema, quality=report, source=info,
                      absent_attributes=absent, in_model=in_model)


def _refuse_leaks(frame: pd.DataFrame, schema: SurveySchema, where: str) -> None:
    """Refuse an attribute that carries the target's answer (:mod:`cx_app.survey.leaks`)."""
    for spec in schema.attributes:
        if spec.name in frame:
            reason = leak_reason(frame[schema.target.name].astype(float),
                                 frame[spec.name].astype(float))
            if reason is not None:
                raise SchemaError(
                    f"{where}: attribute {spec.column!r} {reason} {schema.target.column!r}, "
                    "so a model would be given the answer it should predict; remove it from "
                    "the attributes")


def _may_hold_nul(data: bytes, name: str, dialect: dict) -> bool:
    """Whether text cells can hold a NUL character: a CSV with a NUL byte, or a legacy .xls
    (binary strings). Zip workbooks cannot (XML forbids the character; their archive bytes
    hold NULs that say nothing about the cells), so they skip the per-cell check."""
    if dialect:
        return b"\x00" in data
    return Path(name).suffix.lower() == ".xls"


__all__ = ["SourceInfo", "SurveyData", "load_survey", "read_table", "sheet_names"]
