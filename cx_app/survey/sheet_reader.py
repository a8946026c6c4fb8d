"""The child process that parses one untrusted workbook with fastexcel, within limits.

``python -m cx_app.survey.sheet_reader``, started by :mod:`cx_app.survey.reader_process` through
:mod:`cx_app.isolation` (which limits it first). It reads the workbook with fastexcel
(calamine → Arrow) and writes one Arrow IPC stream: every cell of the requested sheet as text
(``dtypes="string"``: numbers as calamine prints them, dates as ``YYYY-MM-DD HH:MM:SS``,
empty cells null; sheet row ``i + 1`` is row ``i``, the columns start at ``first_column``).
The schema metadata carries the sheet names and the Excel error cells (fastexcel reports each
as a cell it could not read, with calamine's error type). A workbook, sheet or shape it cannot
read is a JSON ``{"failure": ...}`` with exit status 2; a hostile file can only crash or
exhaust this process, and :mod:`cx_app.survey.reader_process` says so in one sentence.

REQUEST is JSON: ``{"sheet": null | index | name, "max_rows": n, "max_columns": n,
"max_cells": n}`` (``null``: the sheet names only). Imports: fastexcel, pyarrow and
:mod:`cx_app.isolation` only.
"""

from __future__ import annotations

import json
import re
import sys

from cx_app.isolation import child_main, refuse

_ERROR_TYPE = re.compile(r"Error\((\w+)\)")
ERROR_CODES = {"Div0": "#DIV/0!", "NA": "#N/A", "Name": "#NAME?", "Null": "#NULL!",
               "Num": "#NUM!", "Ref": "#REF!", "Value": "#VALUE!",
               "GettingData": "#GETTING_DATA"}
"""calamine's error cell types and the text Excel shows for each."""


def _keep_row(_row: int) -> bool:
    return False


def _read(data: bytes, request: dict) -> None:
    import fastexcel
    import pyarrow as pa

    try:
        reader = fastexcel.read_excel(data)
        names = list(reader.sheet_names)
    except Exception as exc:  # calamine raises several types for damaged or foreign files
        refuse("password" if "password" in str(exc).lower() else "open")
    meta = {"sheet_names": names, "sheet": None, "errors": []}
    sheet = request["sheet"]
    if sheet is None:
        batch = pa.record_batch([], schema=pa.schema([]))
    else:
        label = names[sheet] if isinstance(sheet, int) and 0 <= sheet < len(names) else sheet
        try:
            # with a function deciding which rows to skip (none), fastexcel keeps the empty
            # rows above the sheet's first cell: row i is sheet row i + 1
            loaded = reader.load_sheet(sheet, header_row=None, dtypes="string",
                                       skip_rows=_keep_row)
        except Exception:
            refuse("sheet", sheet=label)
        rows, cols = loaded.height, loaded.width
        if (rows > request["max_rows"] or cols > request["max_columns"]
                or rows * cols > request["max_cells"]):
            refuse("shape", rows=rows, columns=cols, sheet=label)
        try:
            batch, errors = loaded.to_arrow_with_errors()
        except Exception:
            refuse("sheet", sheet=label)
        meta["sheet"] = loaded.name
        columns = loaded.selected_columns
        meta["first_column"] = columns[0].absolute_index if columns else 0
        for error in errors.errors if errors is not None else ():
            found = _ERROR_TYPE.search(error.detail)
            code = ERROR_CODES.get(found.group(1), "#error") if found else "#error"
            meta["errors"].append([*error.position, code])
    schema = batch.schema.with_metadata({"cx_app": json.dumps(meta)})
    with pa.ipc.new_stream(sys.stdout.buffer, schema) as stream:
        stream.write_batch(batch.replace_schema_metadata(schema.metadata))


def main() -> None:
    child_main(_read)


if __name__ == "__main__":
    main()
