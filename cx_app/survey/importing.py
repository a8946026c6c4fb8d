"""Reading survey files into clean, validated respondent tables: the import's stages.

:func:`load_survey` calls each stage once, in order: bytes, grid, layout, typed columns, roles,
survey (``docs/architecture.md``, "The import"). Row numbers are the file's rows as Excel shows
them (CSV: the line number).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pandas as pd

from cx_app.errors import SchemaError, SurveyFileError
from cx_app.survey.cleaning import clean_columns
from cx_app.survey.data import SourceInfo, SurveyData  # noqa: E402 - re-exported
from cx_app.survey.inference import infer_schema
from cx_app.survey.layout import HEADER_SCAN_ROWS, recognise_layout
from cx_app.survey.leaks import leak_reason
from cx_app.survey.limits import ImportLimits, limits_from_env
from cx_app.survey.quality import SURVEY, reasons_text
from cx_app.survey.reading import (
    DELIMITERS,
    EXCEL_SUFFIXES,
    Grid,
    excel_grids,
    read_grids,
    read_source,
    survey_suffix,
)
from cx_app.survey.schema import ColumnSpec, SurveySchema, normalise_header
from cx_app.survey.table import Table, find_header, read_columns

_UNLABELED_HINT = " (a new wave without target scores: load it as unlabeled, --unlabeled)"


def read_table(
    source: Any, *, sheet: str | int | None = None, filename: str | None = None,
    limits: ImportLimits | None = None,
) -> pd.DataFrame:
    """The raw table of a file (the detected header as column names; sheet rows as the index),
    for previews and for :func:`~cx_app.survey.inference.infer_schema`."""
    limits = limits or limits_from_env()
    data, name = read_source(source, filename, limits)
    return _sheet(data, name, sheet, None, True, True, limits)[0][1].frame


def sheet_names(
    source: Any, *, filename: str | None = None, limits: ImportLimits | None = None,
) -> list[str]:
    """The sheet names of a survey workbook ([] for a CSV or statistics file), read exactly as
    :func:`load_survey` reads it: listing the sheets of an upload is as safe as importing it."""
    limits = limits or limits_from_env()
    data, name = read_source(source, filename, limits)
    if survey_suffix(data, name) not in EXCEL_SUFFIXES:
        return []
    return excel_grids(data, name, limits, first=False)[0]


def _required(schema: SurveySchema, require_target: bool,
              require_attributes: bool = True) -> list[ColumnSpec]:
    return (([schema.target] if require_target else [])
            + (list(schema.attributes) if require_attributes else []))


def _laid_out(grid: Grid, notes: list[str]) -> Grid:
    out, found = recognise_layout(grid)  # the layout stage, its notes kept
    notes.extend(found)
    return out


def _sheet(data: bytes, name: str, sheet: str | int | None, schema: SurveySchema | None,
           require_target: bool, require_attributes: bool, limits: ImportLimits,
           ) -> tuple[tuple[Grid, Table, SurveySchema | None], list[str]]:
    """The stages up to the typed columns of the sheet to use (the first that matches the
    schema, or without one the first with a layout that can be inferred): ((grid, table, the
    layout inferred while choosing, or None), notes)."""
    notes: list[str] = []
    names, read = read_grids(data, name, limits)
    if not names:  # a CSV, SPSS or Stata file: one table
        grid = _laid_out(read(None), notes)
        if grid.encoding is not None:
            notes.insert(0, f"read as CSV: encoding {grid.encoding}, delimiter "
                         f"{DELIMITERS[grid.delimiter]}")
        return (grid, read_columns(grid, schema), None), notes
    if sheet is not None:
        chosen = _pick_sheet(names, sheet, name)
        grid = _laid_out(read(chosen), notes)
        if grid.empty:
            raise SurveyFileError(f"{name}, sheet '{chosen}': the sheet is empty")
        notes.append(f"sheet '{chosen}' (as requested)")
        return (grid, read_columns(grid, schema), None), notes
    tried, only_target_missing = [], False
    for candidate in names:
        grid = _laid_out(read(candidate), notes)
        if grid.empty:
            tried.append(f"'{candidate}' (empty)")
            continue
        if schema is None:
            table = read_columns(grid, None)
            if len(names) == 1:
                return (grid, table, None), notes
            try:
                inferred = infer_schema(table.frame, name=Path(name).stem or "inferred")
            except (SchemaError, SurveyFileError) as exc:
                tried.append(f"'{candidate}' (" + ("no target and attributes found"
                                                   if "could not infer" in str(exc)
                                                   else str(exc)) + ")")
                continue
            notes.append(f"sheet '{candidate}' (the first sheet with a survey layout"
                         + (f"; skipped {', '.join(tried)}" if tried else "") + ")")
            return (grid, table, inferred), notes
        _, found = find_header(grid, schema)
        missing = [s for s in _required(schema, require_target, require_attributes)
                   if s.name not in found]
        if not require_attributes and not any(a.name in found for a in schema.attributes):
            missing = missing or list(schema.attributes)  # no attribute at all: not this sheet
        only_target_missing |= [s.name for s in missing] == [schema.target.name]
        if not missing:
            if len(names) > 1:
                notes.append(f"sheet '{candidate}' (the first sheet matching the schema)")
            return (grid, read_columns(grid, schema), None), notes
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
    """Read, map and clean a survey file (in memory only: nothing is written to disk).

    ``source`` is a path, bytes (give ``filename``: its extension picks the reader) or an
    uploaded file object. ``sheet``: a name (case-insensitive), a 0-based ``int``, or digits
    counting from 1; by default the first sheet matching the schema (``schema=None``: inferred).
    ``require_target=False`` accepts a file without the target column (``.y`` is None);
    ``require_attributes=False`` one lacking some attribute columns (``absent_attributes``,
    all missing: never imputed here, never a reason to exclude a row). ``scoring=True`` (a
    wave scored by a saved model) keeps every respondent but a repeated id: invalid cells stay
    missing for the saved model to fill with the training data's statistics, not this file's.
    ``missing_policy`` sets an inferred layout's policy; with a schema it must equal its own.
    """
    limits = limits or limits_from_env()
    if schema is not None and missing_policy not in (None, schema.missing_attributes):
        raise SchemaError(
            f"missing-attribute policy {missing_policy!r} conflicts with schema "
            f"'{schema.name}', which says missing_attributes: {schema.missing_attributes}")
    data, name = read_source(source, filename, limits)  # the bytes
    (grid, table, inferred), notes = _sheet(data, name, sheet, schema, require_target,
                                            require_attributes, limits)  # grid, layout, table
    notes.extend(table.notes)
    where = f"{name}, sheet '{grid.sheet}'" if grid.sheet is not None else name
    if schema is None:  # the roles
        try:
            schema = inferred or infer_schema(table.frame, name=Path(name).stem or "inferred")
        except SchemaError as exc:  # the file named, as the app's message names it
            raise SchemaError(f"{name}: {exc}") from None
        if missing_policy is not None:
            schema = schema.model_copy(update={"missing_attributes": missing_policy})
        notes.append(f"layout inferred from the data (no schema given): target "
                     f"{schema.target.column!r} on {schema.target.scale}, "
                     f"{len(schema.attributes)} attributes")
        notes.extend(part for part in (schema.description or "").split("; ")
                     if part.startswith("matrix "))  # a numbered 'Not applicable', perhaps
    found = table.positions(schema)
    _check_columns(schema, found, table, where, notes, require_target, require_attributes)
    column_of = {spec.name: table.frame.columns[found[spec.name]] for spec in schema.columns()
                 if spec.name in found}
    segments = {s.name for s in schema.segments}
    named = [column_of[s] for s in segments & set(column_of)
             if table.value_labels.get(column_of[s])]
    if named:
        notes.append("segment column(s) " + ", ".join(map(repr, sorted(named)))
                     + ": codes read as their value labels (as the file's own tool shows them)")
    frame, in_model, report = clean_columns(  # the survey
        {spec: table.column(found[spec], labelled=spec in segments) for spec in column_of},
        column_of, schema,
        table.frame.index, notes, table.blank_rows, scoring=scoring, where=where,
        check_nul=b"\x00" in data if grid.encoding else Path(name).suffix.lower() == ".xls")
    if report.rows_read == 0:
        raise SurveyFileError(f"{where}: the header is on row {table.header + 1} but no "
                              "respondent rows follow it")
    target = schema.target
    if target.name in found and not scoring:
        _refuse_leaks(frame, schema, where)
        if report.respondents == 0:
            reasons = reasons_text(report.counts_by_reason(SURVEY))
            raise SchemaError(
                f"{where}: column {target.column!r} (the target) has no valid answer on its "
                f"scale {target.scale} in any of the {report.rows_read:,} rows ({reasons}); "
                "check the target column and its scale")
    info = SourceInfo(filename=name, sheet=grid.sheet, sha256=hashlib.sha256(data).hexdigest(),
                      encoding=grid.encoding, delimiter=grid.delimiter,
                      header_row=table.header + 1 + grid.row_offset, left_out=grid.left_out)
    return SurveyData(frame=frame, schema=schema, quality=report, source=info,
                      absent_attributes=tuple(a.name for a in schema.attributes
                                              if a.name not in found), in_model=in_model)


def _check_columns(schema: SurveySchema, found: dict[str, int], table: Table, where: str,
                   notes: list[str], require_target: bool, require_attributes: bool) -> None:
    """Refuse a file that lacks a required column; a note for each column not found."""
    missing = [s for s in _required(schema, require_target, require_attributes)
               if s.name not in found]
    absent = [a.name for a in schema.attributes if a.name not in found]
    if not require_attributes and len(absent) == len(schema.attributes):
        missing = list(schema.attributes)
    if missing:
        raise SchemaError(
            f"{where}: no column matches "
            + ", ".join(f"{s.name} ({s.column!r})" for s in missing)
            + f" of schema '{schema.name}' in the first {HEADER_SCAN_ROWS} rows"
            + (_UNLABELED_HINT if [s.name for s in missing] == [schema.target.name] else "")
        )
    if table.header > 0:
        notes.append(f"header found on row {table.header + 1} (rows above it skipped)")
    notes.extend(table.header_notes(found))
    for spec in schema.columns():
        if spec.name in absent:
            notes.append(f"attribute column {spec.column!r} ({spec.name}) is not in the file: "
                         "left empty (not imputed, no row excluded for it)")
        elif spec.name not in found and spec is not schema.target:
            notes.append(f"column {spec.column!r} ({spec.name}) not found; left out")
    if schema.target.name not in found:
        notes.append(f"no target column {schema.target.column!r}: the file is treated as "
                     "unlabeled (no target scores)")
    if table.blank_rows:
        notes.append(f"{table.blank_rows} completely blank row(s) skipped (not counted as "
                     "respondents)")


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


__all__ = ["SourceInfo", "SurveyData", "load_survey", "read_table", "sheet_names"]
