import pytest

from cx_app.engine.plan import NPS_PLAN, load_plan_file, parse_plan
from cx_app.errors import PlanError


def test_builtin_nps_plan_shape():
    assert [s.name for s in NPS_PLAN.steps] == ["3x3+IM", "2x2+IM"]
    assert NPS_PLAN.steps[0].groups[0].members == tuple(range(7))
    assert NPS_PLAN.steps[1].positive == "passives_promoters"
    assert {g.option for g in NPS_PLAN.steps[1].groups} == {"S"}


def test_plan_file_roundtrip(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(
        "classes: [1,2,3]\nplan:\n  - name: a\n    positive: hi\n    groups:\n"
        "      - {name: lo, members: [1], option: R}\n"
        "      - {name: hi, members: [2,3], option: RS, tp_rule: predicted_ge_actual}\n"
    )
    plan = load_plan_file(path)
    assert plan.classes == (1, 2, 3)
    assert plan.steps[0].groups[1].tp_rule == "predicted_ge_actual"


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ([{"name": "a", "members": [1], "option": "X"}, {"name": "b", "members": [2]}],
         "plan.0.groups.0.option"),
        ([{"name": "a", "members": [1], "option": "RS"}, {"name": "b", "members": [2]}],
         "give exactly one of tp_pairs or tp_rule"),
        ([{"name": "a", "members": [1]}, {"name": "a", "members": [2]}],
         "group names must be unique"),
        ([{"name": "a", "members": [1], "tp_rule": "predicted_ge_actual"},
          {"name": "b", "members": [2]}], "belong to option RS only"),
    ],
)
def test_plan_errors_name_the_key(groups, message):
    with pytest.raises(PlanError) as info:
        parse_plan({"plan": [{"name": "s1", "groups": groups}]}, source="myplan.yaml")
    assert "myplan.yaml" in str(info.value)
    assert message in str(info.value)


def test_unknown_positive_group():
    with pytest.raises(PlanError, match="positive group 'zz'"):
        parse_plan({"plan": [{"name": "s", "positive": "zz", "groups": [
            {"name": "a", "members": [1]}, {"name": "b", "members": [2]}]}]})


@pytest.mark.parametrize(("names", "message"), [
    (["s", "s"], "plan step names must be unique, repeated: ['s']"),
    (["original"], "plan step name 'original' is reserved for the unreduced level"),
])
def test_check_step_names_in_plans_and_survey_schemas(names, message):
    from cx_app.engine.plan import StepSpec, check_step_names
    from cx_app.survey.schema import SurveySchema  # same check, same sentence

    steps = [{"name": n, "groups": [{"name": "a", "members": [1]}, {"name": "b", "members": [2]}]}
             for n in names]
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_step_names([StepSpec.model_validate(s) for s in steps])
    with pytest.raises(PlanError, match="unique|reserved") as info:
        parse_plan({"plan": steps}, source="myplan.yaml")
    assert message in str(info.value)
    with pytest.raises(ValueError) as schema_info:
        SurveySchema.model_validate({
            "name": "tiny", "plan": steps,
            "target": {"name": "nps", "column": "NPS", "kind": "nps", "scale": {"min": 0, "max": 10}},
            "attributes": [{"name": "price", "column": "Price", "scale": {"min": 1, "max": 5}}]})
    assert message in str(schema_info.value)
