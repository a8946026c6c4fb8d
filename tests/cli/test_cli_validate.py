"""``cx-app validate``: text and JSON reports, exit status, mapping flags, inference."""

from __future__ import annotations

import json
from pathlib import Path

from cx_app.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = """\
name: tiny
target: {name: nps, column: "NPS", kind: nps, scale: {min: 0, max: 10}}
attributes:
  - {name: price, column: "Price", scale: {min: 1, max: 5}}
  - {name: speed, column: "Speed", scale: {min: 1, max: 5}}
respondent_id: {name: resp_id, column: "ID"}
missing_codes: [99]
"""
ROWS = "ID,NPS,Price,Speed,Brand\nR1,9,5,4,A\nR2,11,3,3,A\nR3,8,99,3,B\nR1,7,2,2,B\nR4,0,1,1,B\n"


def files(tmp_path: Path, rows: str = ROWS) -> tuple[str, str]:
    (tmp_path / "s.yaml").write_text(SCHEMA)
    (tmp_path / "survey.csv").write_text(rows)
    return str(tmp_path / "survey.csv"), str(tmp_path / "s.yaml")


def test_json_report(tmp_path, capsys):
    survey, schema = files(tmp_path)
    assert main(["validate", survey, "--schema", schema, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # R2 (target 11) and the second R1 are out of the survey; R3's price 99 is a gap, kept
    assert (doc["rows_read"], doc["respondents"], doc["rows_used"]) == (5, 3, 3)
    assert doc["excluded"] == [
        {"row": 3, "column": "NPS", "reason": "out-of-scale score", "value": "11",
         "scope": "survey"},
        {"row": 5, "column": "ID", "reason": "duplicate respondent id", "value": "R1",
         "scope": "survey"},
    ]
    assert doc["gaps"] == {"price": 1, "speed": 0}
    assert doc["target"]["name"] == "nps" and doc["target"]["scale"] == [0, 10]
    assert [a["name"] for a in doc["attributes"]] == ["price", "speed"]
    assert doc["inferred"] is False and doc["usable"] is True
    assert doc["counts_by_reason"] == {"duplicate respondent id": 1, "out-of-scale score": 1}
    assert doc["out_of_survey"] == doc["counts_by_reason"] and doc["out_of_models"] == {}


def test_exclude_policy_leaves_the_gap_out_of_the_models_only(tmp_path, capsys):
    survey, schema = files(tmp_path)
    Path(schema).write_text(SCHEMA + "missing_attributes: exclude\n")
    assert main(["validate", survey, "--schema", schema, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["rows_read"], doc["respondents"], doc["rows_used"]) == (5, 3, 2)
    assert doc["out_of_models"] == {"missing attribute score": 1}
    assert {"row": 4, "column": "Price", "reason": "missing attribute score", "value": "99",
            "scope": "model"} in doc["excluded"]


def test_text_report(tmp_path, capsys):
    survey, schema = files(tmp_path)
    assert main(["validate", survey, "--schema", schema]) == 0
    out = capsys.readouterr().out
    assert ("rows read: 5\nrespondents (survey base: net score, shares, segments): 3\n"
            "used by the models (model base): 3\nrows excluded: 2\n") in out
    assert "  out-of-scale score, out of the survey: 1\n    row 3, column 'NPS': '11'" in out
    assert "unanswered attribute scores used by the models (filled inside each model): Price 1" in out


def test_mapping_flags(tmp_path, capsys):
    survey, _ = files(tmp_path)
    code = main(["validate", survey, "--target", "nps", "--scale", "0-10",
                 "--attributes", "Price, Speed", "--attribute-scale", "1-5", "--segments",
                 "Brand", "--id", "ID", "--missing-codes", "99", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["rows_used"], doc["schema"], doc["inferred"]) == (3, "mapping", False)
    assert doc["segments"] == [{"name": "brand", "column": "Brand", "role": "brand"}]


def test_incomplete_mapping_is_an_error(tmp_path, capsys):
    survey, _ = files(tmp_path)
    assert main(["validate", survey, "--target", "NPS"]) == 2
    assert capsys.readouterr().err == (
        "error: the column mapping needs --scale, --attributes (e.g. --target NPS --scale 0-10 "
        "--attributes A,B,C)\n")


def test_inferred_layout_is_printed_and_used(tmp_path, capsys):
    rows = "ID,Likelihood to recommend,Price,Speed\n" + "".join(
        f"R{i},{i % 11},{1 + i % 5},{1 + (i * 3) % 5}\n" for i in range(30))
    survey, _ = files(tmp_path, rows)
    assert main(["validate", survey]) == 0
    out = capsys.readouterr().out
    assert "no schema given: using the inferred layout below" in out
    assert ("target: 'Likelihood to recommend' (kind nps, scale 0-10; recommend question: "
            "yes)") in out
    assert "used by the models (model base): 30" in out


def test_unusable_files_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"not a workbook" * 20)
    assert main(["validate", str(bad)]) == 2
    assert capsys.readouterr().err.startswith("error: bad.xlsx: not a readable .xlsx workbook")
    survey, schema = files(tmp_path, "ID,NPS,Price,Speed\nR1,11,5,4\nR2,,3,3\n")
    assert main(["validate", survey, "--schema", schema, "--json"]) == 2
    assert capsys.readouterr().err == (
        "error: survey.csv: column 'NPS' (the target) has no valid answer on its scale 0-10 in "
        "any of the 2 rows (missing target: 1; out-of-scale score: 1); check the target column "
        "and its scale\n")


def test_unlabeled_flag(tmp_path, capsys):
    survey, schema = files(tmp_path, "ID,Price,Speed\nR1,5,4\nR2,3,3\n")
    assert main(["validate", survey, "--schema", schema]) == 2
    assert "--unlabeled" in capsys.readouterr().err
    assert main(["validate", survey, "--schema", schema, "--unlabeled", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["target"]["present"] is False and doc["rows_used"] == 2


def test_confirmed_mapping_saved_as_a_schema_reads_back(tmp_path, capsys):
    survey, _ = files(tmp_path)
    saved = tmp_path / "confirmed.yaml"
    assert main(["validate", survey, "--target", "nps", "--scale", "0-10",
                 "--attributes", "price, SPEED", "--attribute-scale", "1-5", "--segments",
                 "Brand", "--id", "ID", "--missing-codes", "99", "--json",
                 "--save-schema", str(saved)]) == 0
    first = json.loads(capsys.readouterr().out)
    from cx_app.survey.schema import load_schema

    schema = load_schema(saved)
    assert (schema.target.column, schema.attribute_names) == ("nps", ("price", "speed"))
    assert [s.column for s in schema.segments] == ["Brand"] and schema.missing_codes == (99,)
    assert main(["validate", survey, "--schema", str(saved), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["excluded"] == first["excluded"] and again["rows_used"] == first["rows_used"] == 3
    assert (again["schema"], again["inferred"]) == ("mapping", False)
    # the inferred layout can be saved too, and the text report says where it went
    inferred = tmp_path / "inferred.yaml"
    assert main(["validate", survey, "--save-schema", str(inferred)]) == 0
    out = capsys.readouterr().out
    assert f"schema saved to {inferred}" in out
    target = load_schema(inferred).target
    assert f"target: {target.column!r} (kind {target.kind}" in out
    assert main(["validate", survey, "--json"]) == 0
    as_inferred = json.loads(capsys.readouterr().out)
    assert main(["validate", survey, "--schema", str(inferred), "--json"]) == 0
    as_saved = json.loads(capsys.readouterr().out)
    for key in ("target", "attributes", "segments", "rows_used", "excluded"):
        assert as_saved[key] == as_inferred[key], key
