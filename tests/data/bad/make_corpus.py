"""Generate the hostile / broken survey-file corpus of ``tests/data/bad/`` (issue 7).

    .venv/bin/python tests/data/bad/make_corpus.py

Every file is tiny on disk and byte-for-byte reproducible (fixed zip times, no random data).
Workbooks are written part by part with :mod:`zipfile` so that each defect is exactly the one
intended; the expected outcome of each file is documented in ``README.md`` next to this script
and asserted by ``tests/survey/test_hostile_files.py``. Zip bombs are small by construction: one part
of highly compressible spaces, or central-directory sizes patched to lie.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import struct
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
TIME = (2024, 1, 1, 0, 0, 0)

SCHEMA = """\
name: corpus
target:
  name: nps
  column: NPS
  kind: nps
  scale: {min: 0, max: 10}
attributes:
  - name: price
    column: Price
    scale: {min: 1, max: 5}
  - name: speed
    column: Speed
    scale: {min: 1, max: 5}
respondent_id: {name: resp_id, column: ID}
missing_codes: [99]
"""

HEADER = ["ID", "NPS", "Price", "Speed"]
GOOD = [["R1", 9, 5, 4], ["R2", 0, 1, 2], ["R3", 7, 3, 3]]

_CT = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
       '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
       '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
       'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
       '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
       'officedocument.spreadsheetml.sheet.main+xml"/>{sheets}'
       '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-'
       'officedocument.spreadsheetml.styles+xml"/></Types>')
_CT_SHEET = ('<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="application/'
             'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>')
_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
         '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
         '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
         'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WB = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
       '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
       'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
       '<sheets>{sheets}</sheets></workbook>')
_WB_SHEET = '<sheet name="{name}" sheetId="{i}" r:id="rId{i}"/>'
_WBR = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '{rels}<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/'
        '2006/relationships/styles" Target="styles.xml"/></Relationships>')
_WBR_SHEET = ('<Relationship Id="rId{i}" Type="http://schemas.openxmlformats.org/officeDocument/'
              '2006/relationships/worksheet" Target="worksheets/sheet{i}.xml"/>')
# cellXfs: 0 = general, 1 = a date (numFmtId 14), so calamine returns a datetime
_STYLES = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
           '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
           '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
           '<fills count="1"><fill><patternFill patternType="none"/></fill></fills>'
           '<borders count="1"><border/></borders>'
           '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
           '</cellStyleXfs><cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" '
           'borderId="0" xfId="0"/><xf numFmtId="14" fontId="0" fillId="0" borderId="0" '
           'xfId="0" applyNumberFormat="1"/></cellXfs></styleSheet>')
_SHEET_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>{doctype}'
               '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">')


class Error(str):
    """An Excel error cell (``#N/A``, ``#DIV/0!``)."""


class DateSerial(float):
    """A number shown as a date (style 1)."""


def column_letter(j: int) -> str:
    letters, j = "", j + 1
    while j:
        j, r = divmod(j - 1, 26)
        letters = chr(65 + r) + letters
    return letters


def cell_xml(ref: str, value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, Error):
        return f'<c r="{ref}" t="e"><v>{escape(value)}</v></c>'
    if isinstance(value, DateSerial):
        return f'<c r="{ref}" s="1"><v>{float(value):g}</v></c>'
    if isinstance(value, str):
        return f'<c r="{ref}" t="inlineStr"><is><t>{escape(value)}</t></is></c>'
    return f'<c r="{ref}"><v>{value}</v></c>'


def sheet_xml(rows: list[list[object]], *, merged: str = "", doctype: str = "",
              body: str | None = None) -> str:
    if body is None:
        body = "".join(
            f'<row r="{i + 1}">'
            + "".join(cell_xml(f"{column_letter(j)}{i + 1}", v) for j, v in enumerate(row))
            + "</row>"
            for i, row in enumerate(rows))
    merge = f'<mergeCells count="1"><mergeCell ref="{merged}"/></mergeCells>' if merged else ""
    return (_SHEET_HEAD.format(doctype=doctype) + f"<sheetData>{body}</sheetData>{merge}"
            "</worksheet>")


def zip_bytes(parts: dict[str, str | bytes], level: int = 6) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        for name, content in parts.items():
            info = zipfile.ZipInfo(name, date_time=TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            archive.writestr(info, content.encode() if isinstance(content, str) else content)
    return out.getvalue()


def workbook_parts(sheets: dict[str, str]) -> dict[str, str]:
    """The parts of a minimal .xlsx whose worksheets are the given XML texts."""
    ids = range(1, len(sheets) + 1)
    parts = {
        "[Content_Types].xml": _CT.format(sheets="".join(_CT_SHEET.format(i=i) for i in ids)),
        "_rels/.rels": _RELS,
        "xl/workbook.xml": _WB.format(sheets="".join(
            _WB_SHEET.format(name=escape(n), i=i) for i, n in zip(ids, sheets, strict=True))),
        "xl/_rels/workbook.xml.rels": _WBR.format(
            rels="".join(_WBR_SHEET.format(i=i) for i in ids)),
        "xl/styles.xml": _STYLES,
    }
    for i, xml in zip(ids, sheets.values(), strict=True):
        parts[f"xl/worksheets/sheet{i}.xml"] = xml
    return parts


def xlsx(sheets: dict[str, list[list[object]]], **kw) -> bytes:
    return zip_bytes(workbook_parts({n: sheet_xml(r, **kw) for n, r in sheets.items()}))


def patch_sizes(data: bytes, part: str, size: int) -> bytes:
    """Make the local header and the central directory of ``part`` declare ``size`` bytes
    unzipped (the content is unchanged): a zip that lies about its sizes."""
    raw = bytearray(data)
    name = part.encode()
    pos = 0
    while (pos := raw.find(name, pos + 1)) > 0:
        if raw[pos - 30:pos - 26] == b"PK\x03\x04":  # local header: size at +22
            struct.pack_into("<I", raw, pos - 30 + 22, size)
        elif raw[pos - 46:pos - 42] == b"PK\x01\x02":  # central directory: size at +24
            struct.pack_into("<I", raw, pos - 46 + 24, size)
    return bytes(raw)


def ole_container(stream_names: list[str]) -> bytes:
    """A minimal OLE2 / Compound File Binary header and one directory sector naming the given
    streams (what Office writes around a password-protected .xlsx: ``EncryptionInfo`` and
    ``EncryptedPackage``). Enough for format detection; not a complete CFB file."""
    header = bytearray(512)
    header[:8] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
    struct.pack_into("<HHHH", header, 24, 0x3E, 3, 0xFFFE, 9)  # minor, major v3, BOM, 512 B
    directory = bytearray()
    for name in ["Root Entry", *stream_names]:
        entry = bytearray(128)
        encoded = name.encode("utf-16-le") + b"\x00\x00"
        entry[:len(encoded)] = encoded
        struct.pack_into("<H", entry, 64, len(encoded))
        entry[66] = 5 if name == "Root Entry" else 2
        directory += entry
    return bytes(header) + bytes(directory.ljust(512, b"\x00"))


def csv_text(rows: list[list[object]]) -> str:
    return "".join(",".join("" if v is None else str(v) for v in row) + "\n" for row in rows)


def skops_with_os_system() -> bytes:
    """A skops archive (written by skops itself) whose payload is a reference to
    ``os.system``: loading it with trust would hand back a shell-command function."""
    import skops.io as sio

    data = sio.dumps({"format": "cx-app-model", "estimator": os.system})
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        schema = json.loads(archive.read("schema.json"))
    counter = iter(range(1, 1000))

    def fix_ids(node):  # skops writes memory addresses as ids: make the file reproducible
        if isinstance(node, dict):
            return {k: (next(counter) if k == "__id__" else fix_ids(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [fix_ids(v) for v in node]
        return node

    return zip_bytes({"schema.json": json.dumps(fix_ids(schema), indent=2)})


def corpus() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    good_rows = [HEADER, *GOOD]
    good = xlsx({"Data": good_rows})
    files["clean.xlsx"] = good

    # --- zip bombs and lying archives (small on disk by construction)
    spaces = " " * (40 * 1024 * 1024)  # 40 MB of blanks inside a worksheet: ~40 KB zipped
    files["bomb_ratio.xlsx"] = zip_bytes(workbook_parts(
        {"Data": sheet_xml(good_rows).replace("<sheetData>", "<sheetData>" + spaces)}), level=9)
    files["bomb_declared.xlsx"] = patch_sizes(good, "xl/worksheets/sheet1.xml", 0xFFFFFFF0)
    lying = zip_bytes(workbook_parts(
        {"Data": sheet_xml(good_rows).replace("<sheetData>", "<sheetData>" + " " * 2_000_000)}))
    files["bomb_lying_sizes.xlsx"] = patch_sizes(lying, "xl/worksheets/sheet1.xml", 5000)
    files["sparse_extent.xlsx"] = zip_bytes(workbook_parts({"Data": sheet_xml([], body=(
        '<row r="1"><c r="A1" t="inlineStr"><is><t>NPS</t></is></c></row>'
        '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'))}))

    # --- XML attacks
    laughs = ('<!DOCTYPE worksheet [<!ENTITY lol "lol">'
              + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
                        for i in range(1, 10))
              + "]>")
    files["billion_laughs.xlsx"] = zip_bytes(workbook_parts({"Data": sheet_xml(
        [HEADER, ["&lol9;", 9, 5, 4]], doctype=laughs).replace("&amp;lol9;", "&lol9;")}))
    marker = HERE / "xxe_secret.txt"
    xxe = f'<!DOCTYPE worksheet [<!ENTITY xxe SYSTEM "file://{marker.as_posix()}">]>'
    files["xxe.xlsx"] = zip_bytes(workbook_parts({"Data": sheet_xml(
        [HEADER, ["&xxe;", 9, 5, 4]], doctype=xxe).replace("&amp;xxe;", "&xxe;")}))
    files["xxe_secret.txt"] = b"XXE-SECRET-7f3a\n"

    # --- damaged, encrypted, foreign formats
    files["truncated.xlsx"] = good[: len(good) // 2]
    files["encrypted.xlsx"] = ole_container(["EncryptionInfo", "EncryptedPackage"])
    files["ole_not_workbook.xlsx"] = ole_container(["WordDocument"])
    files["pdf_renamed.xlsx"] = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"
    files["png_renamed.xlsx"] = b"\x89PNG\r\n\x1a\n" + bytes(24)
    files["zip_no_workbook.xlsx"] = zip_bytes({"readme.txt": "not a workbook"})
    files["csv_renamed.xlsx"] = csv_text(good_rows).encode()
    files["empty.xlsx"] = b""
    files["empty.csv"] = b""

    # --- awkward but legitimate sheets
    files["empty_sheet.xlsx"] = xlsx({"Empty": []})
    files["header_only.xlsx"] = xlsx({"Data": [HEADER]})
    files["merged_header.xlsx"] = xlsx(
        {"Data": [["Respondent", "Scores", None, None], HEADER, *GOOD]}, merged="B1:D1")
    files["excel_errors.xlsx"] = xlsx({"Data": [
        HEADER, ["R1", 9, 5, 4], ["R2", Error("#N/A"), 3, 3], ["R3", 8, Error("#DIV/0!"), 3],
        ["R4", 7, 4, Error("#VALUE!")], ["R5", 6, 2, 2]]})
    files["dates_decimals.xlsx"] = xlsx({"Data": [
        HEADER, ["R1", 9, 5, 4], ["R2", DateSerial(45292), 3, 3], ["R3", 8, DateSerial(45293), 3],
        ["R4", 7.5, 3, 3], ["R5", 8, 2.25, 3], ["R6", 6, 2, 2]]})
    files["duplicate_columns.xlsx"] = xlsx({"Data": [
        ["ID", "NPS", "Price", "Price", "Speed"], ["R1", 9, 5, 1, 4], ["R2", 3, 2, 9, 2]]})
    files["wide.csv"] = csv_text([HEADER + [f"Q{j}" for j in range(2001)],
                                  ["R1", 9, 5, 4] + [1] * 2001]).encode()

    # --- CSV text problems
    text = csv_text(good_rows).encode()
    files["nul_bytes.csv"] = text.replace(b"R2", b"R\x002")
    files["ragged.csv"] = (b"ID,NPS,Price,Speed\nR1,9,5,4\nR2,8,3\nR3,7,3,3,extra\nR4,6\n"
                           b"R5,5,2,2\n")
    files["latin1.csv"] = ("ID;NPS;Price;Speed;Région\nR1;9;5;4;Île-de-France\n"
                           "R2;3;2;2;Genève\n").encode("latin-1")

    # --- hostile text (issue 24): control characters and Markdown in headers, long lines
    files.update(hostile_text_files())

    # --- model files (refused by cx_app.estimate.model_file)
    files["model_pickle.skops"] = pickle.dumps({"estimator": "pickled"}, protocol=4)
    files["model_joblib.skops"] = _joblib_bytes()
    files["model_os_system.skops"] = skops_with_os_system()
    return files


MARKDOWN_HEADER = "Store ![p](http://host/a.png)"
MARKDOWN_VALUES = ("[x](http://host/b)", "<img src=http://host/c.png>", ":red[alarm]")
LONG_CELL = 70_000
"""Characters of each long cell of ``long_line.csv``: two make a line over 128 KB (the csv
module's field limit, which the delimiter sniffer met with the whole line as one field)."""


def hostile_text_files() -> dict[str, bytes]:
    """NUL in a header (CSV, and ``_x0000_`` in an .xlsx, which calamine decodes to NUL: the
    chart renderer aborted the process on it), Markdown in a header and in segment values, a
    line over 128 KB of ordinary cells and a single cell over 128 KB."""
    files: dict[str, bytes] = {}
    nul_header = ["ID", "NPS", "Pri\x00ce", "Spe\x01ed"]
    files["nul_header.csv"] = csv_text([nul_header, *GOOD]).encode()
    files["nul_header.xlsx"] = xlsx({"Data": [["ID", "NPS", "Pri_x0000_ce", "Speed"], *GOOD]})
    files["markdown_header.csv"] = csv_text(
        [[*HEADER, MARKDOWN_HEADER]]
        + [[*row, value] for row, value in zip(GOOD, MARKDOWN_VALUES, strict=True)]).encode()
    long_rows = [[*HEADER, "Comment", "Other"]] + [[*row, "ok", "ok"] for row in GOOD]
    long_rows[2][4:] = ["a" * LONG_CELL, "b" * LONG_CELL]
    files["long_line.csv"] = csv_text(long_rows).encode()
    long_rows[2][4:] = ["c" * (2 * LONG_CELL), "ok"]
    files["long_cell.csv"] = csv_text(long_rows).encode()
    return files


def _joblib_bytes() -> bytes:
    """A joblib (zlib/gzip-compressed pickle) file of a harmless dict."""
    import joblib

    out = io.BytesIO()
    joblib.dump({"estimator": "joblib"}, out, compress=("gzip", 3))
    data = bytearray(out.getvalue())
    data[4:8] = b"\x00\x00\x00\x00"  # gzip mtime: reproducible bytes
    return bytes(data)


def main() -> None:
    (HERE / "schema.yaml").write_text(SCHEMA)
    files = corpus()
    from crafted import corpus as crafted_files  # issue 24: crafted models and projects

    files.update(crafted_files())
    for name, data in files.items():
        (HERE / name).write_bytes(data)
    total = sum(len(d) for d in files.values())
    print(f"wrote {len(files)} files, {total:,} bytes, to {HERE}")


if __name__ == "__main__":
    main()
