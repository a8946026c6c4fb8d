"""Issue 25 point 6: the schema records whether the target is a recommend question; only a
recommend question on 0–10 is an NPS, and one function gives every output its words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cx_app.survey.inference import infer_schema
from cx_app.survey.nps import groups_for_schema, nps_summary
from cx_app.survey.samples import SAMPLE_DIR
from cx_app.survey.schema import (
    load_schema,
    schema_from_mapping,
    schema_from_yaml_text,
    with_recommend,
)
from cx_app.survey.vocabulary import vocabulary

SCHEMAS = SAMPLE_DIR.parent / "survey_schemas"


def table(target: str, lo: int = 0, hi: int = 10) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({target: rng.integers(lo, hi + 1, 80), "Price": rng.integers(1, 6, 80),
                         "Staff": rng.integers(1, 6, 80)})


@pytest.mark.parametrize("header, lo, hi, nps, names", [
    ("Q1. How likely are you to recommend us? (0 = not at all, 10 = extremely)", 0, 10, True,
     ("detractors", "passives", "promoters")),
    ("Overall opinion of the bank", 0, 10, False, ("low", "middle", "high")),
    ("Overall satisfaction", 1, 3, False, ("dissatisfied", "neutral", "satisfied")),
    ("Would recommend (1-5)", 1, 5, False, ("low", "middle", "high")),  # not on 0–10
])
def test_inference_records_the_answer_and_the_words_follow(header, lo, hi, nps, names):
    schema = infer_schema(table(header, lo, hi))
    assert schema.target.recommend is None  # not asked: inferred from kind and header
    assert schema.target.is_recommend is (nps or "recommend" in header.lower())
    assert schema.is_nps is nps
    words = vocabulary(schema)
    assert (words.is_nps, words.group_names) == (nps, names)
    assert words.score_name == ("NPS" if nps else "net score (top box − bottom box)")
    groups = groups_for_schema(schema)
    assert groups.names == names
    plan_groups = {g.name for step in schema.plan for g in step.groups}
    assert nps == bool(plan_groups & {"promoters", "detractors", "passives_promoters"})


def test_a_yaml_schema_without_the_field_still_loads_and_is_inferred():
    schema = load_schema(SCHEMAS / "telecom_nps.yaml")
    assert schema.target.recommend is None and schema.is_nps  # kind nps on 0–10
    assert load_schema(SCHEMAS / "csat_5.yaml").is_nps is False
    text = schema.to_yaml()
    assert "recommend:" not in text  # an unanswered question is not written
    answered = with_recommend(schema, False)
    assert "recommend: false" in answered.to_yaml()
    assert schema_from_yaml_text(answered.to_yaml()) == answered


def test_the_analyst_changes_the_answer_and_the_default_plan_follows():
    schema = schema_from_mapping(target="Overall opinion", scale="0-10", attributes=["Price"])
    assert (schema.target.kind, schema.is_nps) == ("custom", False)
    assert [g.name for g in schema.plan[0].groups] == ["low", "middle", "high"]
    yes = with_recommend(schema, True)
    assert (yes.target.kind, yes.is_nps) == ("nps", True)
    assert [g.name for g in yes.plan[0].groups] == ["detractors", "passives", "promoters"]
    back = with_recommend(yes, False)
    assert back.plan == schema.plan and back.target.kind == "custom" and not back.is_nps
    # the same scores, other words: the value is top box − bottom box either way, by hand
    scores = [10, 9, 8, 7, 6, 0, 3, 10]
    assert nps_summary(scores, groups=groups_for_schema(schema)).value == pytest.approx(
        100 * (3 - 3) / 8)
    assert (nps_summary(scores, groups=groups_for_schema(schema)).counts
            == {"low": 3, "middle": 2, "high": 3})
    assert (nps_summary(scores, groups=groups_for_schema(yes)).counts
            == {"detractors": 3, "passives": 2, "promoters": 3})


def test_a_recommend_question_off_0_to_10_is_no_nps():
    schema = with_recommend(schema_from_mapping(target="Recommend", scale="1-5",
                                                attributes=["Price"]), True)
    assert schema.target.is_recommend and not schema.is_nps
    assert vocabulary(schema).short_name == "net score"
