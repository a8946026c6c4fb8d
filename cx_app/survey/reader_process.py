"""Parsing an untrusted workbook in a child process with limits, from the parent's side.

:func:`read_in_child` starts :mod:`cx_app.survey.sheet_reader` (``python -m``) with the file's
bytes on its standard input; the child sets its own memory (``RLIMIT_AS``) and CPU-time
(``RLIMIT_CPU``) limits before it parses anything and answers with one Arrow IPC stream. A
workbook that makes the parser exhaust its memory, spin, or crash ends the child only: the
parent (the app's server, shared by every analyst) reads its exit status and raises one
:class:`~cx_app.errors.SurveyFileError` sentence saying what stopped the reader. Nothing here
changes the parent process (no limits, signals or allocator settings).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow as pa

from cx_app.archive_limits import megabytes
from cx_app.errors import SurveyFileError
from cx_app.survey.limits import ImportLimits
from cx_app.survey.sheet_reader import FAILED, OUT_OF_MEMORY

_CHILD = [sys.executable, "-m", "cx_app.survey.sheet_reader"]
_STAT_CHILD = [sys.executable, "-m", "cx_app.survey.stat_reader"]
# one thread for the BLAS numpy loads with pyarrow (threads reserve address space), no Rust
# backtrace on stderr
_CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "RUST_BACKTRACE": "0"}
_WALL_MARGIN_SECONDS = 30
"""Wall-clock time a child may take beyond its CPU-time limit (waiting for a core)."""


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
    """Excel error cells: (row, column of the table) 0-based, and the error as Excel shows it
    (``#N/A``)."""


def read_in_child(data: bytes, name: str, sheet: str | int | None, limits: ImportLimits,
                  unreadable: str, checks: Callable[[], object] | None = None) -> SheetRead:
    """The sheet names of a workbook and, unless ``sheet`` is None, that sheet's cells, parsed
    in a child process within ``limits.reader_memory_bytes`` and ``reader_cpu_seconds``;
    ``unreadable`` is the sentence for a file the reader cannot open as a workbook.

    ``checks`` (the archive checks) run in this process while the child parses: a refusal
    stops the child and is raised, before anything the child says."""
    where = name if sheet is None or isinstance(sheet, int) else f"{name}, sheet '{sheet}'"
    request = {"sheet": sheet, "max_rows": limits.max_rows, "max_columns": limits.max_columns,
               "max_cells": limits.max_cells}
    command = [*_CHILD, str(limits.reader_memory_bytes), str(limits.reader_cpu_seconds),
               json.dumps(request)]
    done = run_child(command, data, where, limits, checks)
    if done.returncode == FAILED:
        raise _failure(json.loads(done.stdout), name, where, limits, unreadable)
    try:
        table = pa.ipc.open_stream(done.stdout).read_all()
        meta = json.loads(table.schema.metadata[b"cx_app"])
    except (pa.ArrowInvalid, KeyError, ValueError):
        raise SurveyFileError(f"{where}: the reader's answer cannot be read; the file was "
                              "not read") from None
    if meta["sheet"] is None:
        return SheetRead(meta["sheet_names"])
    return SheetRead(meta["sheet_names"], meta["sheet"], table.replace_schema_metadata(None),
                     meta["first_column"], [tuple(error) for error in meta["errors"]])


def read_stat_in_child(data: bytes, name: str, kind: str, limits: ImportLimits,
                       ) -> tuple[pa.Table, dict]:
    """An SPSS (``kind="sav"``) or Stata (``"dta"``) file's cells as text and its variables'
    metadata, parsed by :mod:`cx_app.survey.stat_reader` in a child process within limits."""
    request = {"kind": kind, "max_rows": limits.max_rows, "max_columns": limits.max_columns,
               "max_cells": limits.max_cells}
    command = [*_STAT_CHILD, str(limits.reader_memory_bytes), str(limits.reader_cpu_seconds),
               json.dumps(request)]
    done = run_child(command, data, name, limits)
    what = "SPSS" if kind == "sav" else "Stata"
    if done.returncode == FAILED:
        raise _failure(json.loads(done.stdout), name, name, limits,
                       f"{name}: not a readable {what} data file (the file is damaged or is "
                       "not one)")
    try:
        table = pa.ipc.open_stream(done.stdout).read_all()
        meta = json.loads(table.schema.metadata[b"cx_app"])
    except (pa.ArrowInvalid, KeyError, ValueError):
        raise SurveyFileError(f"{name}: the reader's answer cannot be read; the file was "
                              "not read") from None
    return table.replace_schema_metadata(None), meta


def run_child(command: list[str], data: bytes, where: str, limits: ImportLimits,
              checks: Callable[[], object] | None = None) -> subprocess.CompletedProcess:
    """Run ``command`` with ``data`` on its standard input (and ``checks`` here meanwhile);
    its output, or one :class:`SurveyFileError` sentence if it was stopped by its limits or a
    signal."""
    timeout = limits.reader_cpu_seconds + _WALL_MARGIN_SECONDS
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={**os.environ, **_CHILD_ENV})
    with child, ThreadPoolExecutor(1) as pool:
        talk = pool.submit(child.communicate, data, timeout)
        try:
            if checks is not None:
                checks()
            stdout, stderr = talk.result()
        except subprocess.TimeoutExpired:
            child.kill()
            raise SurveyFileError(f"{where}: the reader did not finish within {timeout} s and "
                                  "was stopped; the file was not read") from None
        except BaseException:  # a check refused the file: the child is not needed
            child.kill()
            raise
    done = subprocess.CompletedProcess(command, child.returncode, stdout, stderr)
    code = done.returncode
    if code in (0, FAILED):
        return done
    memory = (f"{where}: the reader ran out of its memory limit "
              f"({megabytes(limits.reader_memory_bytes)}, CX_APP_READER_MEMORY_MB) and was "
              "stopped; the file was not read")
    if code == OUT_OF_MEMORY or (code == -signal.SIGABRT
                                 and b"memory allocation" in done.stderr):
        raise SurveyFileError(memory)
    if code == -signal.SIGXCPU:  # the soft limit's signal (SIGKILL may come from anyone)
        raise SurveyFileError(
            f"{where}: the reader used up its CPU-time limit ({limits.reader_cpu_seconds} s, "
            "CX_APP_READER_CPU_SECONDS) and was stopped; the file was not read")
    if code < 0:
        raise SurveyFileError(f"{where}: the reader was killed by signal "
                              f"{signal.Signals(-code).name}; the file was not read")
    if b"MemoryError" in done.stderr:
        raise SurveyFileError(memory)
    raise SurveyFileError(f"{where}: the reader failed (exit status {code}); the file was "
                          "not read")


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
