"""The child process that parses one untrusted workbook (fastexcel) or SPSS/Stata file.

``python -m cx_app.survey.sheet_reader``, started by :mod:`cx_app.survey.reader_process` through
:mod:`cx_app.isolation` (which limits it first). It answers with one Arrow IPC stream of texts
(sheet row ``i + 1`` is row ``i``) and, in the schema metadata, a workbook's sheet names and
Excel error cells (request ``{"sheet": null | index | name, ...}``; ``null``: the names only) or
an SPSS/Stata file's variables: labels, value labels and declared missing codes, kept as values
(request ``{"kind": "sav" | "dta", ...}``). A shape beyond the limits is refused before any data
is read; a file, sheet or shape it cannot read is a JSON ``{"failure": ...}`` with exit status
2. Imports: fastexcel or pyreadstat, pyarrow and :mod:`cx_app.isolation` only.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys

from cx_app.isolation import child_main, refuse

_ERROR_TYPE = re.compile(r"Error\((\w+)\)")
ERROR_CODES = {"Div0": "#DIV/0!", "NA": "#N/A", "Name": "#NAME?", "Null": "#NULL!",
               "Num": "#NUM!", "Ref": "#REF!", "Value": "#VALUE!",
               "GettingData": "#GETTING_DATA"}
"""calamine's error cell types and the text Excel shows for each."""


def _check_shape(request: dict, rows: int, cols: int, **where: object) -> None:
    if (rows > request["max_rows"] or cols > request["max_columns"]
            or rows * cols > request["max_cells"]):
        refuse("shape", rows=rows, columns=cols, **where)


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
                                       skip_rows=lambda _row: False)
        except Exception:
            refuse("sheet", sheet=label)
        _check_shape(request, loaded.height, loaded.width, sheet=label)
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


def _text(values):  # a pandas Series -> list of texts (None for a missing value)
    import numpy as np

    if values.dtype.kind == "f":
        x = values.to_numpy()
        whole = np.isfinite(x) & (x == np.round(x)) & (np.abs(x) < 2 ** 53)
        out = np.where(whole, np.where(whole, x, 0).astype(np.int64).astype(str), x.astype(str))
        return [None if math.isnan(v) else t for v, t in zip(x, out.tolist(), strict=True)]
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) or str(v) == ""
            else str(v) for v in values.tolist()]


def _code(value: object) -> str:
    if isinstance(value, float) and value == round(value):
        return str(int(value))
    return str(value)


def _read_stat(data: bytes, request: dict) -> None:
    """An SPSS or Stata file (``request["kind"]``: ``"sav"`` or ``"dta"``)."""
    import pyarrow as pa
    import pyreadstat

    read = pyreadstat.read_dta if request["kind"] == "dta" else pyreadstat.read_sav
    try:
        _, meta = read(io.BytesIO(data), metadataonly=True)
    except Exception:  # readstat raises several types for damaged or foreign files
        refuse("open")
    _check_shape(request, meta.number_rows or 0, len(meta.column_names))
    try:
        frame, meta = read(io.BytesIO(data), user_missing=True,
                           dates_as_pandas_datetime=False)
    except Exception:
        refuse("open")
    variables = []
    for name in meta.column_names:
        ranges = [[_code(r["lo"]), _code(r["hi"])] for r in meta.missing_ranges.get(name, [])]
        ranges += [[_code(v), _code(v)] for v in meta.missing_user_values.get(name, [])]
        variables.append({
            "name": name,
            "label": meta.column_names_to_labels.get(name),
            "value_labels": {_code(k): str(v)
                             for k, v in meta.variable_value_labels.get(name, {}).items()},
            "missing": ranges,
        })
    arrays = [pa.array(_text(frame[name]), type=pa.string()) for name in meta.column_names]
    batch = pa.record_batch(arrays, names=[str(j) for j in range(len(arrays))])
    schema = batch.schema.with_metadata({"cx_app": json.dumps({"variables": variables})})
    with pa.ipc.new_stream(sys.stdout.buffer, schema) as stream:
        stream.write_batch(batch.replace_schema_metadata(schema.metadata))


def main() -> None:
    child_main(lambda data, request: (_read_stat if "kind" in request else _read)(data, request))


if __name__ == "__main__":
    main()
