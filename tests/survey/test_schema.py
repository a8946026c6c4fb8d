"""Survey schemas: bundled files, validation messages, mapping, default plans, inference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cx_app.engine.plan import NPS_PLAN
from cx_app.errors import SchemaError
from cx_app.survey.inference import infer_scale, infer_schema
from cx_app.survey.schema import (
    Scale,
    default_plan,
    describe_schema,
    load_schema,
    normalise_header,
    parse_scale,
    save_schema,
    schema_from_mapping,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "survey_schemas"
SAMPLES = ROOT / "sample_surveys"
TELECOM_ATTRIBUTES = ("tariff_plan", "network_voice", "network_data", "shops", "call_center",
                      "website", "mobile_app", "billing", "roaming")
CSAT_ATTRIBUTES = ("staff_friendliness", "checkout_speed", "product_availability",
                   "store_cleanliness", "prices", "returns_process")

MINIMAL = """\
name: tiny
target: {name: nps, column: "NPS", kind: nps, scale: {min: 0, max: 10}}
attributes:
  - {name: price, column: "Price", scale: {min: 1, max: 5}}
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_telecom_schema_matches_the_sample_layout():
    schema = load_schema(SCHEMAS / "telecom_nps.yaml")
    assert schema.target.name == "nps"
    assert schema.target.column == "Likelihood to recommend (0-10)"
    assert schema.target.kind == "nps"
    assert schema.classes == tuple(range(11))
    assert schema.attribute_names == TELECOM_ATTRIBUTES
    assert all((a.scale.min, a.scale.max) == (1, 10) for a in schema.attributes)
    assert {s.name: s.role for s in schema.segments} == {
        "operator": "brand", "wave": "wave", "interview_date": "date", "region": "region"}
    assert schema.respondent_id.name == "respondent_id"
    assert schema.missing_codes == (99, "Don't know")
    assert schema.missing_attributes == "impute_indicator"
    assert schema.plan_spec == NPS_PLAN


def test_bundled_csat_schema_has_the_three_group_plan():
    schema = load_schema(SCHEMAS / "csat_5.yaml")
    assert schema.classes == (1, 2, 3, 4, 5)
    assert schema.attribute_names == CSAT_ATTRIBUTES
    assert schema.missing_attributes == "exclude"
    first, second = schema.plan
    assert [(g.name, g.members, g.option) for g in first.groups] == [
        ("dissatisfied", (1, 2), "R"), ("neutral", (3,), "R"), ("satisfied", (4, 5), "R")]
    assert second.positive == "satisfied"
    assert [(g.name, g.members, g.option) for g in second.groups] == [
        ("dissatisfied_neutral", ("dissatisfied", "neutral"), "S"),
        ("satisfied", ("satisfied",), "S")]
    assert schema.plan == default_plan("csat", (1, 5))


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        (MINIMAL.replace("max: 10", "max: -1"), "target.scale",
         "scale max (-1) must be greater than min (0)"),
        (MINIMAL.replace("kind: nps", "kind: loyalty"), "target.kind", "Input should be"),
        (MINIMAL.replace("name: price", "name: 'price level'"), "attributes.0.name",
         "should match pattern"),
        (MINIMAL + "colour: red\n", "colour", "Extra inputs are not permitted"),
        (MINIMAL + "missing_attributes: drop\n", "missing_attributes", "'impute_median' or 'exclude'"),
        (MINIMAL + "plan:\n  - name: s\n    groups:\n      - {name: a, members: [0], option: X}\n"
         "      - {name: b, members: [1]}\n", "plan.0.groups.0.option", "'R', 'S' or 'RS'"),
        (MINIMAL.replace('column: "Price"', 'column: "nps"'), "(top level)",
         "column columns must be unique, repeated: ['nps']"),
        ("name: x\ntarget: {name: t, column: T, scale: {min: 1, max: 5}}\nattributes: []\n",
         "attributes", "at least 1 item"),
    ],
)
def test_validation_errors_name_file_key_and_problem(tmp_path, text, key, message):
    path = write(tmp_path, text, "broken.yaml")
    with pytest.raises(SchemaError) as info:
        load_schema(path)
    text = str(info.value)
    assert text.startswith(f"broken.yaml: {key}: "), text
    assert message in text


def test_unreadable_schema_files(tmp_path):
    with pytest.raises(SchemaError, match=r"^bad\.yaml: not valid YAML"):
        load_schema(write(tmp_path, "name: [unclosed", "bad.yaml"))
    with pytest.raises(SchemaError, match=r"^list\.yaml: expected a mapping of schema keys"):
        load_schema(write(tmp_path, "- a\n- b\n", "list.yaml"))
    with pytest.raises(SchemaError, match=r"^nowhere\.yaml: cannot read the schema file"):
        load_schema(tmp_path / "nowhere.yaml")


def test_save_and_load_round_trip(tmp_path):
    for name in ("telecom_nps.yaml", "csat_5.yaml"):
        schema = load_schema(SCHEMAS / name)
        assert load_schema(save_schema(schema, tmp_path / name)) == schema


def test_header_normalisation_ignores_case_and_whitespace():
    assert normalise_header("  Likelihood \t to   RECOMMEND ") == "likelihood to recommend"
    schema = load_schema(SCHEMAS / "telecom_nps.yaml")
    assert normalise_header("recommend") in schema.target.candidates
    assert schema.target.candidates[0] == "likelihood to recommend (0-10)"


@pytest.mark.parametrize(("text", "expected"), [("0-10", (0, 10)), (" 1 - 5 ", (1, 5)),
                                                ("1..7", (1, 7)), ("1 to 10", (1, 10))])
def test_parse_scale(text, expected):
    assert (parse_scale(text).min, parse_scale(text).max) == expected


@pytest.mark.parametrize("text", ["10", "a-b", "5-1", "3-3"])
def test_parse_scale_rejects(text):
    with pytest.raises(SchemaError, match="scale"):
        parse_scale(text)


def test_mapping_with_nps_scale_gets_the_nps_plan():
    schema = schema_from_mapping(target="Recommend", scale="0-10",
                                 attributes=["Price", "Network - voice"],
                                 segments=["Operator", "Wave"], respondent_id="Resp ID")
    assert schema.target.kind == "nps" and schema.target.name == "nps"
    assert schema.plan_spec == NPS_PLAN
    assert schema.attribute_names == ("price", "network_voice")
    assert [(s.name, s.role) for s in schema.segments] == [("operator", "brand"), ("wave", "wave")]
    assert schema.respondent_id.name == "resp_id"
    assert all(a.scale == Scale(min=0, max=10) for a in schema.attributes)


def test_mapping_defaults_for_other_scales():
    csat = schema_from_mapping(target="Overall satisfaction", scale=(1, 5), attributes=["Staff"])
    assert csat.target.kind == "csat"
    assert [g.name for g in csat.plan[0].groups] == ["dissatisfied", "neutral", "satisfied"]
    ces = schema_from_mapping(target="Customer effort", scale="1-7", attributes=["Web"])
    assert ces.target.kind == "ces"
    assert [g.members for g in ces.plan[0].groups] == [(1, 2, 3), (4,), (5, 6, 7)]
    custom = schema_from_mapping(target="Score", scale="1-10", attributes=["A"],
                                 attribute_scale="1-5")
    assert custom.target.kind == "custom"  # bottom box / middle / top box (docs/scales.md)
    assert [g.members for g in custom.plan[0].groups] == [(1, 2, 3, 4), (5, 6), (7, 8, 9, 10)]
    assert custom.plan[1].positive == "top_box"
    assert custom.attributes[0].scale == Scale(min=1, max=5)
    with pytest.raises(SchemaError, match="at least one attribute"):
        schema_from_mapping(target="Score", scale="1-10", attributes=[])


def test_infer_scale_prefers_the_header_then_standard_scales():
    assert infer_scale(pd.Series([3, 4]), "Overall (1-5)") == Scale(min=1, max=5)
    assert infer_scale(pd.Series([2, 4])) == Scale(min=1, max=5)
    assert infer_scale(pd.Series([1, 6])) == Scale(min=1, max=6)
    assert infer_scale(pd.Series([1, 7])) == Scale(min=1, max=7)
    assert infer_scale(pd.Series([0, 8])) == Scale(min=0, max=10)
    assert infer_scale(pd.Series([1, 9])) == Scale(min=1, max=10)
    assert infer_scale(pd.Series([1, 2, 3])) == Scale(min=1, max=3)
    assert infer_scale(pd.Series([0, 1])) == Scale(min=0, max=1)
    assert infer_scale(pd.Series([-2, -1, 0, 2])) == Scale(min=-2, max=2)
    assert infer_scale(pd.Series([-1, 0, 1])) == Scale(min=-1, max=1)


def test_infer_schema_on_a_hand_built_table():
    frame = pd.DataFrame({
        "Customer ID": ["C1", "C2", "C3", "C4", "C5", "C6"],
        "Store": ["North", "South", "North", "South", "North", "South"],
        "Price": [1, 2, 3, 4, 5, "N/A"],
        "Overall satisfaction": [5, 4, 3, 2, 1, 3],
        "Staff": ["1", "2", "5", "4", "3", "2"],
        "Comment": ["ok", "bad", "good", "fine", "meh", "great"],
    })
    schema = infer_schema(frame, name="shop")
    assert schema.target.column == "Overall satisfaction"
    assert schema.target.kind == "csat"
    assert schema.target.scale == Scale(min=1, max=5)
    assert [a.column for a in schema.attributes] == ["Price", "Staff"]
    assert schema.respondent_id.column == "Customer ID"
    # "Comment" is an open question (its header says so): free text, never a segment
    assert [(s.column, s.role) for s in schema.segments] == [("Store", "other")]
    assert "free text (never a segment): 'Comment'" in schema.description
    assert schema.missing_codes == ("N/A",)
    assert schema.missing_attributes == "impute_indicator"  # the default: gaps kept
    assert "17% of respondents miss an attribute score" in schema.description
    assert "Overall satisfaction" in describe_schema(schema)


def test_infer_schema_needs_scores():
    with pytest.raises(SchemaError, match="could not infer a layout"):
        infer_schema(pd.DataFrame({"A": ["x", "y"], "B": [1, 2]}))
    with pytest.raises(SchemaError, match="empty table"):
        infer_schema(pd.DataFrame())


needs_samples = pytest.mark.skipif(not (SAMPLES / "telecom_nps.xlsx").exists(),
                                   reason="sample surveys not generated")


@needs_samples
def test_infer_schema_on_the_telecom_sample():
    from cx_app.survey.importing import read_table

    schema = infer_schema(read_table(SAMPLES / "telecom_nps.xlsx"))
    assert schema.target.column == "Likelihood to recommend (0-10)"
    assert (schema.target.kind, schema.target.name) == ("nps", "nps")
    assert schema.plan_spec == NPS_PLAN
    assert schema.attribute_names == TELECOM_ATTRIBUTES
    assert all(a.scale == Scale(min=1, max=10) for a in schema.attributes)
    assert [(s.column, s.role) for s in schema.segments] == [
        ("Operator", "brand"), ("Wave", "wave"), ("Interview date", "date"),
        ("Region", "region")]
    assert schema.respondent_id.column == "Respondent ID"
    assert set(schema.missing_codes) == {99, "Don't know"}
    assert schema.missing_attributes == "impute_indicator"


@needs_samples
def test_infer_schema_on_the_csat_sample():
    from cx_app.survey.importing import read_table

    schema = infer_schema(read_table(SAMPLES / "retail_csat.csv"))
    assert schema.target.column == "Overall satisfaction (1-5)"
    assert (schema.target.kind, schema.classes) == ("csat", (1, 2, 3, 4, 5))
    assert schema.attribute_names == CSAT_ATTRIBUTES
    assert [(s.column, s.role) for s in schema.segments] == [("Store", "other"),
                                                             ("Month", "wave")]
    assert schema.respondent_id.column == "Customer ID"
    assert schema.plan == load_schema(SCHEMAS / "csat_5.yaml").plan


def test_infer_schema_flags_a_guessed_target():
    frame = pd.DataFrame({"Price": [1, 2, 3, 4, 5] * 4, "Staff": [2, 3, 4, 5, 1] * 4,
                          "Score": [0, 3, 6, 9, 10] * 4})
    schema = infer_schema(frame)
    # no header names a target question: the widest scale (0-10) is taken, and said so; a
    # 0-10 score that is not a recommend question is not labelled NPS
    assert schema.target.column == "Score" and schema.target.kind == "custom"
    assert "no header names a target question, so 'Score' was taken as the target" in (
        schema.description)
    assert schema.missing_attributes == "impute_indicator"  # the default, gaps or not
    assert "miss an attribute score" not in schema.description  # no gaps at all


def test_inference_reads_each_scale_and_codes_only_outside_it():
    """1–3, 1–6, 1–10 and signed attributes in one file, each on its own scale; −1 is an answer
    on −2..2, 99 and "Don't know" are codes; the target's kind follows its question."""
    n = 60
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({
        "How likely are you to recommend us to a friend?": rng.integers(0, 11, n),
        "Ease (1-3)": rng.integers(1, 4, n),
        "Staff": rng.integers(1, 7, n),
        "Fees": np.where(rng.random(n) < 0.3, 99, rng.integers(1, 11, n)),
        "Effort": rng.integers(-2, 3, n),
        "App": np.where(rng.random(n) < 0.2, "Don't know", rng.integers(1, 6, n).astype(str)),
    })
    frame.loc[0:5, "Staff"] = [1, 6, 2, 5, 3, 4]  # the whole 1-6 range is seen
    frame.loc[0:4, "Effort"] = [-2, -1, 0, 1, 2]
    schema = infer_schema(frame)
    assert schema.target.kind == "nps" and schema.target.scale == Scale(min=0, max=10)
    scales = {a.column: (a.scale.min, a.scale.max) for a in schema.attributes}
    assert scales == {"Ease (1-3)": (1, 3), "Staff": (1, 6), "Fees": (1, 10),
                      "Effort": (-2, 2), "App": (1, 5)}
    assert set(schema.missing_codes) == {99, "Don't know"}
    assert -1 not in schema.missing_codes


def test_inference_is_unsure_with_two_zero_to_ten_scores_and_no_recommend_question():
    # Score B and Staff repeat every 8 rows, Score A every 5: neither is a function of the
    # other (a column that is would be left out as derived from the target, cx_app.survey.leaks)
    frame = pd.DataFrame({"Score A": [0, 3, 6, 9, 10] * 8,
                          "Score B": [10, 2, 5, 7, 0, 3, 8, 1] * 5,
                          "Staff": [1, 2, 3, 4, 5, 1, 2, 3] * 5})
    schema = infer_schema(frame)
    assert "unsure: 2 columns are on 0–10 and none is a recommend question" in schema.description
