"""The child process that parses one untrusted SPSS or Stata file with pyreadstat, within limits.

``python -m cx_app.survey.stat_reader``, started like :mod:`cx_app.survey.sheet_reader` through
:mod:`cx_app.isolation` (which limits it first), with the request ``{"kind": "sav" | "dta",
"max_rows": n, "max_columns": n, "max_cells": n}`` and the file's bytes. It reads
the file's metadata (refusing a shape beyond the limits before reading any data), then the data
with the user-missing codes kept as values (``user_missing=True``) and answers with one Arrow
IPC stream: one text column per variable (an integer as ``7``, a date as ``2024-01-31``, a
system-missing value null), and in the schema metadata each variable's name, label (the
question text), value labels and declared missing values or ranges. A file it cannot read is a
JSON ``{"failure": ...}`` with exit status 2 (:mod:`cx_app.survey.reader_process`).
"""

from __future__ import annotations

import io
import json
import math
import sys

from cx_app.isolation import child_main, refuse


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


def _read(data: bytes, request: dict) -> None:
    import pyarrow as pa
    import pyreadstat

    read = pyreadstat.read_dta if request["kind"] == "dta" else pyreadstat.read_sav
    try:
        _, meta = read(io.BytesIO(data), metadataonly=True)
    except Exception:  # readstat raises several types for damaged or foreign files
        refuse("open")
    rows, cols = meta.number_rows or 0, len(meta.column_names)
    if (rows > request["max_rows"] or cols > request["max_columns"]
            or rows * cols > request["max_cells"]):
        refuse("shape", rows=rows, columns=cols)
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
    child_main(_read)


if __name__ == "__main__":
    main()
