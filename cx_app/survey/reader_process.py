"""Parsing an untrusted workbook, SPSS or Stata file in a child process with limits.

The file's bytes go to :mod:`cx_app.survey.sheet_reader` through :mod:`cx_app.isolation`. A
file that makes the parser exhaust its memory, spin or crash ends the child only: one
:class:`~cx_app.errors.SurveyFileError` sentence says what stopped the reader.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from cx_app.errors import SurveyFileError
from cx_app.isolation import FAILED, ChildLimits, ChildStopped
from cx_app.isolation import run_child as _run_isolated
from cx_app.survey.limits import ImportLimits

_WORDING = {"subject": "the reader", "outcome": "the file was not read"}


@dataclass(frozen=True)
class SheetRead:
    """What the child read: the workbook's sheet names and, when a sheet was asked for, its
    cells as text (one string column per sheet column, sheet row ``i + 1`` at row ``i``)."""

    sheet_names: list[str]
    sheet: str | None = None
    table: pa.Table | None = None
    first_column: int = 0
    """The sheet column (0-based) of the table's first column."""
    errors: list[tuple[int, int, str]] = field(default_factory=list)
    """Excel error cells: (row, column of the table) 0-based, and the error (``#N/A``)."""


def read_in_child(data: bytes, name: str, sheet: str | int | None, limits: ImportLimits,
                  unreadable: str, checks: Callable[[], object] | None = None) -> SheetRead:
    """The sheet names of a workbook and, unless ``sheet`` is None, that sheet's cells."""
    where = name if sheet is None or isinstance(sheet, int) else f"{name}, sheet '{sheet}'"
    table, meta = read_child({"sheet": sheet}, data, name, where, limits, unreadable, checks)
    if meta["sheet"] is None:
        return SheetRead(meta["sheet_names"])
    return SheetRead(meta["sheet_names"], meta["sheet"], table, meta["first_column"],
                     [tuple(error) for error in meta["errors"]])


def read_child(request: dict, data: bytes, name: str, where: str, limits: ImportLimits,
               unreadable: str, checks: Callable[[], object] | None = None
               ) -> tuple[pa.Table, dict]:
    """The table and metadata the reader answers to ``request``; ``unreadable``: the sentence
    for a file it cannot open. ``checks`` (the archive checks) run in this process while the
    child parses: a refusal stops the child and is raised, before anything the child says."""
    request = {**request, "max_rows": limits.max_rows, "max_columns": limits.max_columns,
               "max_cells": limits.max_cells}
    done = run_child([sys.executable, "-m", "cx_app.survey.sheet_reader"], data, where, limits,
                     checks, request)
    if done.returncode == FAILED:
        raise _failure(json.loads(done.stdout), name, where, limits, unreadable)
    try:
        table = pa.ipc.open_stream(done.stdout).read_all()
        meta = json.loads(table.schema.metadata[b"cx_app"])
    except (pa.ArrowInvalid, KeyError, ValueError):
        raise SurveyFileError(f"{where}: the reader's answer cannot be read; the file was "
                              "not read") from None
    return table.replace_schema_metadata(None), meta


def run_child(command: list[str], data: bytes, where: str, limits: ImportLimits,
              checks: Callable[[], object] | None = None, request: object = None):
    """Run the reader ``command`` on ``data`` within the reader's limits."""
    child = ChildLimits(limits.reader_memory_bytes, limits.reader_cpu_seconds,
                        "CX_APP_READER_MEMORY_MB", "CX_APP_READER_CPU_SECONDS")
    try:
        return _run_isolated(command, request, data, child, where, _WORDING, checks=checks)
    except ChildStopped as exc:
        raise SurveyFileError(str(exc)) from None


def _failure(answer: dict, name: str, where: str, limits: ImportLimits,
             unreadable: str) -> SurveyFileError:
    kind = answer.get("failure")
    if answer.get("sheet") is not None:
        where = f"{name}, sheet '{answer['sheet']}'"
    if kind == "password":
        return SurveyFileError(f"{name}: the workbook is password-protected; save an "
                               "unprotected copy")
    if kind == "sheet":
        return SurveyFileError(f"{where}: the sheet cannot be read")
    if kind == "shape":
        return (shape_error(where, answer["rows"], answer["columns"], limits)
                or SurveyFileError(f"{where}: the sheet is too large; refused"))
    return SurveyFileError(unreadable)


def shape_error(where: str, rows: int, cols: int,
                limits: ImportLimits) -> SurveyFileError | None:
    """The error refusing a sheet of ``rows`` × ``cols`` beyond ``limits``, or None."""
    if rows > limits.max_rows:
        return SurveyFileError(f"{where}: {rows:,} rows, more than the limit of "
                               f"{limits.max_rows:,} (CX_APP_MAX_ROWS); refused")
    if cols > limits.max_columns:
        return SurveyFileError(f"{where}: {cols:,} columns, more than the limit of "
                               f"{limits.max_columns:,} (CX_APP_MAX_COLUMNS); refused")
    if rows * cols > limits.max_cells:
        return SurveyFileError(f"{where}: {rows:,} rows × {cols:,} columns = {rows * cols:,} "
                               f"cells, more than the limit of {limits.max_cells:,} "
                               "(CX_APP_MAX_CELLS); refused")
    return None
