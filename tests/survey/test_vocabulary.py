"""Issue 25 point 6: the schema records whether the target is a recommend question; only a
recommend question on 0–10 is an NPS, and one function gives every output its words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cx_app.errors import PlanError
from cx_app.survey.inference import infer_schema
from cx_app.survey.nps import groups_for_schema, nps_summary
from cx_app.survey.samples import SAMPLE_DIR
from cx_app.survey.schema import (
    load_schema,
    schema_from_mapping,
    schema_from_yaml_text,
    with_recommend,
)
from cx_app.survey.score_groups import describe_groups, groups_between, groups_note
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
    # other words and other cut points (issue 37): the opinion item splits symmetrically
    # (low 0–4 / middle 5 / high 6–10), the recommend question at the NPS cut points, by hand
    scores = [10, 9, 8, 7, 6, 0, 3, 10]
    assert nps_summary(scores, groups=groups_for_schema(schema)).value == pytest.approx(
        100 * (6 - 2) / 8)
    assert (nps_summary(scores, groups=groups_for_schema(schema)).counts
            == {"low": 2, "middle": 0, "high": 6})
    assert nps_summary(scores, groups=groups_for_schema(yes)).value == pytest.approx(
        100 * (3 - 3) / 8)
    assert (nps_summary(scores, groups=groups_for_schema(yes)).counts
            == {"detractors": 3, "passives": 2, "promoters": 3})


def test_a_recommend_question_off_0_to_10_is_no_nps():
    schema = with_recommend(schema_from_mapping(target="Recommend", scale="1-5",
                                                attributes=["Price"]), True)
    assert schema.target.is_recommend and not schema.is_nps
    assert vocabulary(schema).short_name == "net score"


def test_an_opinion_item_averaging_6_4_is_no_longer_scored_at_minus_36():
    """Issue 37: an ESS-like 0–10 opinion item (mean 6.4) scored −36 with the NPS cut points;
    its default groups are the symmetric split, stated in words, and the analyst's own cut
    points give their own hand-computed value."""
    # 25 answers: 0–2: 3, 5: 4, 6: 4, 7: 5, 8: 5, 9: 2, 10: 2 (sum 160, mean 6.4)
    scores = [0, 1, 2] + [5] * 4 + [6] * 4 + [7] * 5 + [8] * 5 + [9] * 2 + [10] * 2
    assert sum(scores) / len(scores) == pytest.approx(6.4)
    schema = schema_from_mapping(target="Trust in parliament", scale="0-10", attributes=["Price"])
    groups = groups_for_schema(schema)
    # with the NPS cut points it scored −28: 4 of 25 at 9–10, 3 + 4 + 4 = 11 at 0–6
    assert nps_summary(scores).value == pytest.approx(100 * (4 - 11) / 25)
    # the symmetric split: high 6–10 = 4 + 5 + 5 + 2 + 2 = 18, low 0–4 = 3: (18 − 3)/25 = +60
    assert nps_summary(scores, groups=groups).value == pytest.approx(100 * (18 - 3) / 25)
    assert describe_groups(groups) == "low 0–4, middle 5, high 6–10"
    assert "symmetric split" in groups_note(schema, groups)
    assert "not a recommend question" in groups_note(schema, groups)
    recommend = with_recommend(schema, True)
    assert groups_note(recommend, groups_for_schema(recommend)) == (
        "Groups: detractors 0–6, passives 7–8, promoters 9–10 (the NPS cut points of a "
        "recommend question).")
    # no plan in the schema: the same symmetric default (not the NPS one)
    bare = schema.model_copy(update={"plan": ()})
    assert groups_for_schema(bare) == groups
    # the analyst's choice: low up to 3, high from 8 → high 5 + 2 + 2 = 9, low 3: +24
    chosen = groups_between(range(11), 3, 8)
    assert nps_summary(scores, groups=chosen).value == pytest.approx(100 * (9 - 3) / 25)
    with pytest.raises(PlanError, match="must end below"):
        groups_between(range(11), 6, 6)
