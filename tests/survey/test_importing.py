"""The importer: every exclusion reason with exact counts, CSV dialects, headers, sheets, bad files."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cx_app.errors import SchemaError, SurveyFileError
from cx_app.survey.importing import load_survey, read_table
from cx_app.survey.quality import (
    DATE_IN_SCORE,
    DECIMAL,
    DUPLICATE_ID,
    EXCEL_ERROR,
    MISSING_ATTRIBUTE,
    MISSING_TARGET,
    NON_NUMERIC,
    OUT_OF_SCALE,
)
from cx_app.survey.schema import load_schema, parse_schema

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_surveys"

HEADER = ["Resp ID", "NPS", "Price", "Speed", "Brand"]


def tiny_schema(policy: str = "exclude"):
    return parse_schema({
        "name": "tiny",
        "target": {"name": "nps", "column": "Likelihood to recommend", "aliases": ["NPS"],
                   "kind": "nps", "scale": {"min": 0, "max": 10}},
        "attributes": [
            {"name": "price", "column": "Price", "scale": {"min": 1, "max": 5}},
            {"name": "speed", "column": "Speed", "aliases": ["Checkout speed"],
             "scale": {"min": 1, "max": 5}},
        ],
        "respondent_id": {"name": "resp_id", "column": "Resp ID"},
        "segments": [{"name": "brand", "column": "Brand", "role": "brand"}],
        "missing_codes": [99, "Don't know"],
        "missing_attributes": policy,
    })


# Sheet rows 2..17 (header on row 1); row 14 is completely blank.
ROWS = [
    ["R1", 9, 5, 4, "A"],            # 2 used
    ["R2", 11, 3, 3, "A"],           # 3 out-of-scale target
    ["R3", "ten", 3, 3, "A"],        # 4 non-numeric target
    ["R4", 7.5, 3, 3, "A"],          # 5 decimal target
    ["R5", None, 3, 3, "A"],         # 6 missing target (blank)
    ["R6", 99, 3, 3, "B"],           # 7 missing target (code 99)
    ["R7", 8, 6, 3, "B"],            # 8 out-of-scale attribute
    ["R8", 8, "good", 3, "B"],       # 9 non-numeric attribute
    ["R9", 8, 2.5, 3, "B"],          # 10 decimal attribute
    ["R10", 8, 99, 3, "B"],          # 11 missing attribute (code 99)
    ["R11", 8, 4, "don't  KNOW", "B"],  # 12 missing attribute (text code, any case/space)
    ["R1", 6, 2, 2, "C"],            # 13 duplicate id
    [None, None, None, None, None],  # 14 blank
    ["R12", 0, 1, 1, "C"],           # 15 used
    ["R13", 10, 3, None, "C"],       # 16 missing attribute (blank)
    ["R14", 7, 1, 2, " C "],         # 17 used
]
EXPECTED_COUNTS = {DUPLICATE_ID: 1, MISSING_TARGET: 2, NON_NUMERIC: 2, DECIMAL: 2,
                   OUT_OF_SCALE: 2, MISSING_ATTRIBUTE: 3}
EXPECTED_ROWS = {3: OUT_OF_SCALE, 4: NON_NUMERIC, 5: DECIMAL, 6: MISSING_TARGET,
                 7: MISSING_TARGET, 8: OUT_OF_SCALE, 9: NON_NUMERIC, 10: DECIMAL,
                 11: MISSING_ATTRIBUTE, 12: MISSING_ATTRIBUTE, 13: DUPLICATE_ID,
                 16: MISSING_ATTRIBUTE}


def write_xlsx(path: Path, sheets: dict[str, list[list]]) -> Path:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for i, row in enumerate(rows, start=1):
            for j, value in enumerate(row, start=1):
                if value is not None:
                    ws.cell(row=i, column=j, value=value)
    wb.save(path)
    return path


def csv_bytes(rows: list[list], delimiter: str = ",", encoding: str = "utf-8") -> bytes:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n")
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return buffer.getvalue().encode(encoding)


SURVEY_ROWS = [2, 8, 9, 10, 11, 12, 15, 16, 17]
"""The survey base: every row with a valid target and a first id (attribute problems do not
take a respondent out of the NPS)."""


def check_exclusions(data) -> None:
    q = data.quality
    assert (q.rows_read, q.respondents, q.rows_used, q.blank_rows) == (15, 9, 3, 1)
    assert q.counts_by_reason() == EXPECTED_COUNTS
    assert {e.row: e.reason for e in q.excluded} == EXPECTED_ROWS
    assert {e.row for e in q.excluded if e.scope == "survey"} == {3, 4, 5, 6, 7, 13}
    assert q.counts_by_reason("survey") == {DUPLICATE_ID: 1, MISSING_TARGET: 2, NON_NUMERIC: 1,
                                            DECIMAL: 1, OUT_OF_SCALE: 1}
    # the NPS is over the survey base: 9, 8, 8, 8, 8, 8, 0, 10, 7
    assert list(data.frame.index) == SURVEY_ROWS
    assert data.scores.tolist() == [9, 8, 8, 8, 8, 8, 0, 10, 7]
    # the models train on the model base (policy exclude: no gap, no invalid cell)
    assert list(data.model_frame.index) == [2, 15, 17]
    assert data.y.tolist() == [9, 0, 7]
    assert data.X.to_numpy().tolist() == [[5, 4], [1, 1], [1, 2]]
    assert data.model_frame["resp_id"].tolist() == ["R1", "R12", "R14"]
    assert data.model_frame["brand"].tolist() == ["A", "C", "C"]
    # an invalid attribute cell is not a score in the survey base either
    assert np.isnan(data.frame.loc[8, "price"]) and np.isnan(data.frame.loc[9, "price"])
    assert any("1 completely blank row" in n for n in q.notes)
    by_row = {e.row: e for e in q.excluded}
    assert (by_row[3].column, by_row[3].value) == ("NPS", "11")
    assert (by_row[5].value, by_row[7].value) == ("7.5", "99")
    assert (by_row[9].column, by_row[9].value) == ("Price", "good")
    assert (by_row[12].column, by_row[16].column) == ("Speed", "Speed")
    assert (by_row[13].column, by_row[13].value) == ("Resp ID", "R1")


def test_every_exclusion_reason_xlsx(tmp_path):
    path = write_xlsx(tmp_path / "survey.xlsx", {"Data": [HEADER, *ROWS]})
    data = load_survey(path, schema=tiny_schema())
    check_exclusions(data)
    assert data.source.sheet == "Data" and data.source.header_row == 1
    assert data.quality.first_rows(1)[MISSING_ATTRIBUTE][0].row == 11
    assert data.quality.gaps == {"price": 0, "speed": 0}  # none in the model base


def test_every_exclusion_reason_csv_gives_the_same_report(tmp_path):
    path = tmp_path / "survey.csv"
    path.write_bytes(csv_bytes([HEADER, *ROWS]))
    check_exclusions(load_survey(path, schema=tiny_schema()))


@pytest.mark.parametrize("policy", ["impute_median", "impute_indicator"])
def test_impute_policies_keep_gappy_rows_as_gaps_for_the_models(tmp_path, policy):
    path = write_xlsx(tmp_path / "survey.xlsx", {"Data": [HEADER, *ROWS]})
    data = load_survey(path, schema=tiny_schema(policy))
    q = data.quality
    assert (q.rows_read, q.respondents, q.rows_used) == (15, 9, 6)
    assert MISSING_ATTRIBUTE not in q.counts_by_reason()
    assert list(data.frame.index) == SURVEY_ROWS
    assert list(data.model_frame.index) == [2, 11, 12, 15, 16, 17]
    # gaps stay gaps: never filled at import (each model fills them from its training data)
    assert q.gaps == {"price": 1, "speed": 2}
    assert np.isnan(data.X.loc[11, "price"]) and data.X.loc[[12, 16], "speed"].isna().all()
    assert int(data.X.isna().sum().sum()) == 3


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252"])
@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_csv_encodings_and_delimiters(tmp_path, encoding, delimiter):
    rows = [["Resp ID", "Likelihood to recommend", "Prix (€)", "Qualité", "Région"],
            ["R1", 9, 5, 4, "Zürich"], ["R2", 3, 2, "7,5", "Genève"], ["R3", 7, 1, 2, "Zürich"]]
    path = tmp_path / "enc.csv"
    path.write_bytes(csv_bytes(rows, delimiter, encoding))
    schema = parse_schema({
        "name": "enc",
        "target": {"name": "nps", "column": "Likelihood to recommend",
                   "scale": {"min": 0, "max": 10}},
        "attributes": [{"name": "prix", "column": "Prix (€)", "scale": {"min": 1, "max": 5}},
                       {"name": "qualite", "column": "Qualité", "scale": {"min": 1, "max": 5}}],
        "segments": [{"name": "region", "column": "Région", "role": "region"}],
    })
    data = load_survey(path, schema=schema)
    label = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8 with BOM", "cp1252": "cp1252"}[encoding]
    assert data.source.encoding == label
    assert data.source.delimiter == delimiter
    assert data.model_frame["region"].tolist() == ["Zürich", "Zürich"]
    assert data.quality.counts_by_reason() == {DECIMAL: 1}  # "7,5" read as 7.5: a decimal
    assert data.quality.excluded[0].row == 3
    assert data.quality.notes[0].startswith(f"read as CSV: encoding {label}, delimiter ")


def test_bytes_source_needs_the_filename_for_its_type(tmp_path):
    data = load_survey(csv_bytes([HEADER, *ROWS]), schema=tiny_schema(), filename="up.csv")
    assert data.source.filename == "up.csv"
    assert data.quality.rows_used == 3


def test_header_detection_below_title_rows(tmp_path):
    rows = [[None], ["Customer survey, March"], ["exported 2024-03-31"], [None],
            ["resp  id", " nps ", "PRICE", "checkout speed", "brand"],
            ["R1", 9, 5, 4, "A"], ["R2", 12, 5, 4, "A"]]
    path = write_xlsx(tmp_path / "titled.xlsx", {"Sheet1": rows})
    data = load_survey(path, schema=tiny_schema())
    assert data.source.header_row == 5
    assert list(data.frame.index) == [6]
    assert [(e.row, e.reason) for e in data.quality.excluded] == [(7, OUT_OF_SCALE)]
    assert "header found on row 5 (rows above it skipped)" in data.quality.notes
    # without a schema, the header guess skips the one-cell title rows too
    assert list(read_table(path).columns) == ["resp  id", "nps", "PRICE", "checkout speed",
                                              "brand"]


def test_sheet_choice(tmp_path):
    path = write_xlsx(tmp_path / "book.xlsx", {
        "Notes": [["About this file"], ["nothing here"]],
        "Data": [HEADER, ["R1", 9, 5, 4, "A"]],
        "Copy": [HEADER, ["R1", 9, 5, 4, "A"], ["R2", 9, 5, 4, "A"]],
    })
    schema = tiny_schema()
    default = load_survey(path, schema=schema)
    assert default.source.sheet == "Data"
    assert "sheet 'Data' (the first sheet matching the schema)" in default.quality.notes
    assert load_survey(path, schema=schema, sheet="copy").source.sheet == "Copy"
    assert load_survey(path, schema=schema, sheet=2).quality.rows_read == 2
    assert load_survey(path, schema=schema, sheet="3").source.sheet == "Copy"  # counted from 1
    with pytest.raises(SurveyFileError, match=r"^book\.xlsx: there is no sheet 'Nope'; the "
                                              r"sheets are \['Notes', 'Data', 'Copy'\]$"):
        load_survey(path, schema=schema, sheet="Nope")
    with pytest.raises(SchemaError, match=r"^book\.xlsx, sheet 'Notes': no column matches nps "
                                          r"\('Likelihood to recommend'\), price"):
        load_survey(path, schema=schema, sheet="Notes")


def test_require_target_false_accepts_an_unlabeled_file(tmp_path):
    rows = [["Resp ID", "Price", "Speed"], ["R1", 5, 4], ["R2", 99, 3]]
    path = write_xlsx(tmp_path / "wave.xlsx", {"W": rows})
    with pytest.raises(SchemaError, match="--unlabeled"):
        load_survey(path, schema=tiny_schema())
    data = load_survey(path, schema=tiny_schema(), require_target=False)
    assert data.y is None and not data.has_target
    assert "nps" not in data.frame.columns
    assert data.quality.counts_by_reason() == {MISSING_ATTRIBUTE: 1}
    assert any("treated as unlabeled" in n for n in data.quality.notes)
    # a present target is still validated
    labeled = write_xlsx(tmp_path / "lab.xlsx", {"W": [HEADER, ["R1", 11, 5, 4, "A"],
                                                       ["R2", 10, 5, 4, "A"]]})
    data = load_survey(labeled, schema=tiny_schema(), require_target=False)
    assert data.y.tolist() == [10]
    assert data.quality.counts_by_reason() == {OUT_OF_SCALE: 1}


def test_unusable_files_give_one_clear_sentence(tmp_path):
    schema = tiny_schema()
    junk = tmp_path / "junk.xlsx"
    junk.write_bytes(os.urandom(2048))
    with pytest.raises(SurveyFileError, match=r"^junk\.xlsx: not a readable \.xlsx workbook"):
        load_survey(junk, schema=schema)
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(SurveyFileError, match=r"^empty\.csv: the file is empty \(0 bytes\)$"):
        load_survey(empty, schema=schema)
    text = tmp_path / "notes.txt"
    text.write_text("NPS,Price\n9,5\n")
    with pytest.raises(SurveyFileError, match=r"^notes\.txt: '\.txt' is not a supported survey"):
        load_survey(text, schema=schema)
    locked = tmp_path / "locked.xlsx"  # OOXML encryption wraps the package in an OLE file
    locked.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + "EncryptedPackage".encode(
        "utf-16-le") + bytes(512))
    with pytest.raises(SurveyFileError, match=r"^locked\.xlsx: the workbook is password-protected"):
        load_survey(locked, schema=schema)
    with pytest.raises(SurveyFileError, match=r"^missing\.xlsx: file not found"):
        load_survey(tmp_path / "missing.xlsx", schema=schema)
    other = tmp_path / "other.csv"
    other.write_bytes(b"a,b,c\n1,2,3\n")
    with pytest.raises(SchemaError, match=r"^other\.csv: no column matches nps"):
        load_survey(other, schema=schema)
    header_only = tmp_path / "header.csv"
    header_only.write_bytes(csv_bytes([HEADER]))
    with pytest.raises(SurveyFileError, match=r"^header\.csv: the header is on row 1 but no "):
        load_survey(header_only, schema=schema)
    blank_book = write_xlsx(tmp_path / "blank.xlsx", {"S": []})
    with pytest.raises(SurveyFileError, match=r"^blank\.xlsx: every sheet is empty$"):
        load_survey(blank_book, schema=schema)


def test_inferred_layout_is_said_in_the_notes(tmp_path):
    rows = [["Customer ID", "Overall satisfaction (1-5)", "Staff", "Prices"],
            *[[f"C{i}", 1 + i % 5, 1 + (i * 2) % 5, 1 + (i * 3) % 5] for i in range(20)]]
    path = tmp_path / "shop.csv"
    path.write_bytes(csv_bytes(rows, ";"))
    data = load_survey(path)
    assert data.schema.target.kind == "csat"
    assert data.quality.rows_used == 20
    assert any(n.startswith("layout inferred from the data") for n in data.quality.notes)


CELLS = st.sampled_from([0, 1, 3, 5, 6, 10, 11, -1, 99, 2.5, "x", "", "Don't know", "4"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["R1", "R2", "R3", "R4", ""]), CELLS, CELLS, CELLS),
                min_size=1, max_size=12))
def test_every_row_is_used_or_excluded(rows):
    from cx_app.errors import SchemaError

    table = [HEADER] + [[i, t, a, b, "A"] for i, t, a, b in rows]
    try:
        data = load_survey(csv_bytes(table), schema=tiny_schema(), filename="p.csv")
    except SchemaError as exc:  # only when no row has a valid target (checked by hand)
        assert "has no valid answer on its scale 0-10" in str(exc)
        seen, counted = set(), 0
        for i, t, _, _ in rows:  # a respondent: a valid target and the first row of its id
            first = i == "" or i not in seen
            seen.add(i)
            counted += first and (t in (0, 1, 3, 5, 6, 10, "4"))
        assert counted == 0
        return
    q = data.quality
    assert q.rows_used + len(q.excluded) == q.rows_read == len(rows)
    assert len({e.row for e in q.excluded} | set(data.model_frame.index)) == len(rows)
    assert set(data.y) <= set(range(11))
    assert data.X.isin([1, 2, 3, 4, 5]).all().all()
    ids = data.frame["resp_id"].dropna()
    assert not ids.duplicated().any()


needs_samples = pytest.mark.skipif(not (SAMPLES / "telecom_nps.xlsx").exists(),
                                   reason="sample surveys not generated")


@needs_samples
def test_telecom_samples_with_the_bundled_schema():
    schema = load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml")
    data = load_survey(SAMPLES / "telecom_nps.xlsx", schema=schema)
    q = data.quality
    assert data.source.sheet == "Responses" and data.source.header_row == 1
    assert q.rows_used + q.rows_excluded == q.rows_read > 5000
    assert set(np.unique(data.y)) <= set(range(11))
    assert data.X.shape == (q.rows_used, 9)
    assert q.gaps["roaming"] > q.gaps["billing"]  # 99 = "not used" is frequent for roaming
    assert q.gaps == {a: int(n) for a, n in data.X.isna().sum().items()}
    assert set(data.frame["operator"].unique()) == {"Operator A", "Operator B", "Operator C"}
    unlabeled = load_survey(SAMPLES / "telecom_nps_wave7_unlabeled.xlsx", schema=schema,
                            require_target=False)
    labeled = load_survey(SAMPLES / "telecom_nps_wave7_labeled.xlsx", schema=schema)
    assert unlabeled.y is None and labeled.y is not None
    assert set(unlabeled.frame["wave"]) == {"2021-07"}
    assert unlabeled.quality.rows_read == labeled.quality.rows_read


def test_xlsm_suffix_is_read_like_xlsx(tmp_path):
    path = write_xlsx(tmp_path / "macro.xlsm", {"Data": [HEADER, *ROWS]})
    check_exclusions(load_survey(path, schema=tiny_schema()))


def test_ods_workbook_gives_the_same_report(tmp_path):
    pytest.importorskip("odf", reason="odfpy (pandas' .ods writer) is not installed; it belongs "
                                      "in the test extra")
    import pandas as pd

    path = tmp_path / "survey.ods"
    pd.DataFrame(ROWS, columns=HEADER).to_excel(path, engine="odf", index=False,
                                                sheet_name="Data")
    data = load_survey(path, schema=tiny_schema())
    check_exclusions(data)
    assert data.source.sheet == "Data"


def test_xls_workbook_gives_the_same_report(tmp_path):
    xlwt = pytest.importorskip("xlwt", reason="xlwt (an .xls BIFF8 writer) is not installed; it "
                                              "belongs in the test extra")
    book = xlwt.Workbook()
    sheet = book.add_sheet("Data")
    for i, row in enumerate([HEADER, *ROWS]):
        for j, value in enumerate(row):
            if value is not None:
                sheet.write(i, j, value)
    path = tmp_path / "survey.xls"
    book.save(str(path))
    assert path.read_bytes()[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # OLE2, not a zip
    data = load_survey(path, schema=tiny_schema())
    check_exclusions(data)
    assert data.source.sheet == "Data"


def test_excel_error_cells_are_their_own_reason(tmp_path):
    # openpyxl writes "#N/A" etc. as error cells (t="e"); fastexcel reports them as such
    rows = [["Title row"], HEADER,
            ["R1", 9, 5, 4, "A"],            # 3 used
            ["R2", "#N/A", 3, 3, "A"],       # 4 error in the target
            ["R3", 8, "#DIV/0!", 3, "A"],    # 5 error in an attribute
            ["R4", 8, 4, "#VALUE!", "B"],    # 6 error in an attribute
            ["R5", 7, 4, 4, "#REF!"],        # 7 used, error in the segment: left empty
            ["#N/A", 6, 2, 2, "B"],          # 8 used, error in the id: left empty
            ["R6", 10, None, 3, "B"]]        # 9 a real blank: missing attribute
    path = write_xlsx(tmp_path / "errors.xlsx", {"Data": rows})
    for policy in ("exclude", "impute_median"):  # an error is never imputed like a blank
        data = load_survey(path, schema=tiny_schema(policy))
        q = data.quality
        assert [(e.row, e.column, e.reason, e.value) for e in q.excluded][:3] == [
            (4, "NPS", EXCEL_ERROR, "#N/A"), (5, "Price", EXCEL_ERROR, "#DIV/0!"),
            (6, "Speed", EXCEL_ERROR, "#VALUE!")]
        assert q.counts_by_reason()[EXCEL_ERROR] == 3
        assert data.frame.loc[7, "brand"] is pd_na() and data.frame.loc[8, "resp_id"] is pd_na()
        assert "brand: 1 Excel error cell(s) (#REF!) left empty" in q.notes
        assert "resp_id: 1 Excel error cell(s) (#N/A) left empty" in q.notes
    assert load_survey(path, schema=tiny_schema()).quality.excluded[3].reason == MISSING_ATTRIBUTE
    assert load_survey(path, schema=tiny_schema("impute_median")).quality.rows_used == 4


def pd_na():
    import pandas as pd

    return pd.NA


def test_error_cells_are_reported_by_the_reader_where_they_are():
    from cx_app.survey.limits import limits_from_env
    from cx_app.survey.reader_process import read_in_child

    data = (ROOT / "tests/data/bad/excel_errors.xlsx").read_bytes()
    read = read_in_child(data, "e.xlsx", 0, limits_from_env(), "unreadable")
    # (row, column) 0-based: B3, C4, D5 as Excel shows them
    assert sorted(read.errors) == [(2, 1, "#N/A"), (3, 2, "#DIV/0!"), (4, 3, "#VALUE!")]
    assert read.sheet_names == ["Data"] and read.sheet == "Data"


def test_dates_in_score_and_date_columns(tmp_path):
    import datetime as dt

    schema = parse_schema({
        "name": "dated",
        "target": {"name": "nps", "column": "NPS", "scale": {"min": 0, "max": 10}},
        "attributes": [{"name": "price", "column": "Price", "scale": {"min": 1, "max": 5}}],
        "segments": [{"name": "interview_date", "column": "Date", "role": "date"},
                     {"name": "wave", "column": "Wave", "role": "wave"}],
    })
    rows = [["NPS", "Price", "Date", "Wave"],
            [9, 5, dt.datetime(2024, 3, 5), dt.datetime(2024, 3, 1)],   # 2 date cell
            [8, 4, 45357, "2024-03"],                                   # 3 serial number
            [7, 3, "2024-03-07", dt.datetime(2024, 3, 1, 12, 30)],      # 4 date text
            [6, 2, 2024, "2024-03"],                                    # 5 not a date
            [dt.date(2024, 3, 5), 3, None, "2024-03"],                  # 6 date as a score
            [5, dt.datetime(2024, 1, 2), None, "2024-03"]]              # 7 date as a score
    path = write_xlsx(tmp_path / "dated.xlsx", {"Data": rows})
    data = load_survey(path, schema=schema)
    q = data.quality
    assert [(e.row, e.column, e.reason, e.value) for e in q.excluded] == [
        (6, "NPS", DATE_IN_SCORE, "2024-03-05"),
        (7, "Price", DATE_IN_SCORE, "2024-01-02")]
    dates = data.model_frame["interview_date"]
    assert [d.date().isoformat() if d == d else None for d in dates] == [
        "2024-03-05", "2024-03-06", "2024-03-07", None]  # serial 45357 is 2024-03-06
    assert "interview_date: 1 Excel date serial number(s) converted to dates" in q.notes
    assert "interview_date: 1 value(s) are not dates; left empty" in q.notes
    assert data.model_frame["wave"].tolist() == ["2024-03-01", "2024-03", "2024-03-01 12:30:00",
                                           "2024-03"]


def test_sheet_names_lists_a_workbook_in_order_and_nothing_for_csv(tmp_path):
    from cx_app.survey.importing import sheet_names

    path = write_xlsx(tmp_path / "book.xlsx", {
        "Notes": [["About this file"]], "Data": [HEADER, ["R1", 9, 5, 4, "A"]], "Copy": [HEADER],
    })
    assert sheet_names(path) == ["Notes", "Data", "Copy"]
    with path.open("rb") as handle:
        assert sheet_names(handle, filename="upload.xlsx") == ["Notes", "Data", "Copy"]
    csv_path = tmp_path / "survey.csv"
    csv_path.write_text("id,nps\nR1,9\n")
    assert sheet_names(csv_path) == []
    with pytest.raises(SurveyFileError, match=r"^notes\.txt: '\.txt' is not a supported survey"):
        sheet_names(b"hello", filename="notes.txt")


def test_a_nul_byte_excludes_its_row_and_the_rest_is_imported(tmp_path):
    rows = [HEADER, ["R1", 9, 5, 4, "A"], ["R2", 8, "3\x00", 3, "A"], ["R3", 7, 2, 2, "B\x00x"],
            ["R4", 10, 1, 1, "B"]]
    data = load_survey(csv_bytes(rows), schema=tiny_schema(), filename="nul.csv")
    q = data.quality
    assert (q.rows_read, q.respondents, q.rows_used) == (4, 2, 2)
    assert [(e.row, e.column, e.reason, e.scope) for e in q.excluded] == [
        (3, "Price", "NUL byte (binary data) in a cell", "survey"),
        (4, "Brand", "NUL byte (binary data) in a cell", "survey")]
    assert data.scores.tolist() == [9, 10]
    # real binary data is still refused as a whole
    from cx_app.errors import SurveyFileError

    with pytest.raises(SurveyFileError, match="looks like binary data"):
        load_survey(bytes(range(256)) * 8, schema=tiny_schema(), filename="x.csv")
