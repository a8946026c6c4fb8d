"""Private data (issue 7): loading a survey writes no file, logs no respondent value, quotes
hostile column names verbatim; usage statistics are off; CSV exports go through safe_text."""

from __future__ import annotations

import csv
import io
import logging
import os
import tempfile
import tomllib
from pathlib import Path

import pytest

from cx_app.errors import SchemaError
from cx_app.survey.importing import load_survey, read_table
from cx_app.survey.schema import parse_schema

ROOT = Path(__file__).resolve().parents[2]
MARKER = "ZQX-PRIVATE-4242"
HOSTILE = "{0} %s <b>=HYPERLINK(\"x\")</b> {nps!r} \x1b[31m"


def survey_bytes() -> bytes:
    rows = ["ID,NPS,Price,Comment", f"{MARKER}-1,9,5,{MARKER}", f"{MARKER}-2,11,3,{MARKER}",
            f"{MARKER}-3,7,ten,x"]
    return ("\n".join(rows) + "\n").encode()


SCHEMA = parse_schema({
    "name": "private",
    "target": {"name": "nps", "column": "NPS", "kind": "nps", "scale": {"min": 0, "max": 10}},
    "attributes": [{"name": "price", "column": "Price", "scale": {"min": 1, "max": 5}}],
    "respondent_id": {"name": "rid", "column": "ID"},
    "segments": [{"name": "comment", "column": "Comment"}],
})


def snapshot(directory: str) -> set[str]:
    out = set()
    for base, dirs, files in os.walk(directory):
        out |= {os.path.join(base, f) for f in files + dirs}
    return out


@pytest.mark.parametrize("kind", ["csv", "xlsx", "path"])
def test_loading_writes_no_temporary_file(kind, tmp_path, monkeypatch):
    # A private temp folder and working directory: other processes writing to /tmp at the
    # same time cannot make this fail, and anything the importer wrote would land here.
    private_tmp, private_cwd = tmp_path / "tmp", tmp_path / "cwd"
    private_tmp.mkdir()
    private_cwd.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    monkeypatch.chdir(private_cwd)
    data = survey_bytes()
    if kind == "xlsx":
        data = (ROOT / "tests" / "data" / "bad" / "clean.xlsx").read_bytes()
    source = data
    if kind == "path":
        source = tmp_path / "s.csv"
        source.write_bytes(data)
    assert tempfile.gettempdir() == str(private_tmp)
    before = snapshot(tempfile.gettempdir())
    cwd_before = snapshot(os.getcwd())
    schema = SCHEMA if kind != "xlsx" else None
    load_survey(source, schema=schema, filename=f"s.{'xlsx' if kind == 'xlsx' else 'csv'}")
    read_table(source, filename=f"s.{'xlsx' if kind == 'xlsx' else 'csv'}")
    assert snapshot(tempfile.gettempdir()) - before == set()
    assert snapshot(os.getcwd()) - cwd_before == set()


def test_logs_never_contain_respondent_values(caplog):
    caplog.set_level(logging.DEBUG)
    data = load_survey(survey_bytes(), schema=SCHEMA, filename="s.csv")
    assert data.quality.rows_read == 3 and data.quality.rows_used == 1  # the rows were read
    assert MARKER in data.frame["rid"].iloc[0]
    assert all(MARKER not in r.getMessage() for r in caplog.records)


def test_the_library_does_not_log_row_content():
    """Static check: any logging call in the importer modules is absent (counts only
    would be allowed; today there are none)."""
    for path in sorted((ROOT / "cx_app" / "survey").glob("*.py")):
        assert "logging" not in path.read_text(), path.name


def test_hostile_column_names_are_quoted_verbatim():
    header = HOSTILE
    out = io.StringIO()
    csv.writer(out).writerows([["ID", "NPS", header], ["R1", 9, 6], ["R2", 8, 3]])
    text = out.getvalue().encode()
    schema = parse_schema({
        "name": "h",
        "target": {"name": "nps", "column": "NPS", "kind": "nps", "scale": {"min": 0, "max": 10}},
        "attributes": [{"name": "q", "column": header, "scale": {"min": 1, "max": 5}}],
    })
    q = load_survey(text, schema=schema, filename="h.csv").quality
    shown = header.replace("\x1b", "")  # control characters are removed (issue 24), with a note
    assert q.excluded[0].column == shown  # no format(), % or markup interpretation
    assert repr(shown) in q.to_text() and q.to_dict()["excluded"][0]["column"] == shown
    assert f"column C: its header held 1 control character (U+001B), removed (read as " \
           f"{shown!r})" in q.notes
    missing = parse_schema({**schema.model_dump(), "attributes": [
        {"name": "q", "column": header + "?", "scale": {"min": 1, "max": 5}}]})
    with pytest.raises(SchemaError) as info:
        load_survey(text, schema=missing, filename="h.csv")
    assert repr(shown + "?") in str(info.value)  # the schema's column is plain text too


def test_usage_statistics_are_off():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["browser"]["gatherUsageStats"] is False


def test_csv_downloads_go_through_safe_text():
    """Every place that builds CSV bytes for a download or export uses safe_text.to_safe_csv."""
    offenders = []
    for path in [*ROOT.glob("cx_app/**/*.py"), *ROOT.glob("app_pages/*.py")]:
        if path.name in ("safe_text.py", "samples.py"):  # samples: our own generated data
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if ".to_csv(" in line and "to_safe_csv" not in line and not line.lstrip().startswith(
                    ("#", "``", "pandas.crosstab")) and "``" not in line:
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert offenders == []
