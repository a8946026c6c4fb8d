"""The pages' tables built by the library (cx_app.app.views)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cx_app.app import views
from cx_app.app.session import Analysis, CrossValidatedModel, survey_key, train_lean
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import schema_from_mapping


@pytest.fixture(scope="module")
def analysis():
    rng = np.random.default_rng(5)
    n = 240
    attrs = rng.integers(1, 11, (n, 3))
    score = np.clip(np.round(attrs @ [0.5, 0.3, 0.2] + rng.normal(0, 1.5, n)), 0, 10)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", score.astype(int))
    schema = schema_from_mapping(target="NPS", scale=(0, 10),
                                 attributes=["Price", "Network", "Shops"])
    survey = load_survey(frame.to_csv(index=False).encode(), schema=schema, filename="s.csv")
    a = Analysis(survey=survey, plan=survey.schema.plan_spec,
                 data_key=survey_key(survey.source.sha256, None, schema.to_yaml(), "s.csv"))
    for algorithm_id in ("nb", "lr", "dt"):
        cv, permutation = train_lean(survey, algorithm_id, folds=3, seed=0, settings={},
                                     calibration="none")
        a.add_model(CrossValidatedModel(algorithm_id, algorithm_id, {}, 3, 0, cv,
                                        f"k-{algorithm_id}", permutation))
    return a


def test_leaderboard_is_ordered_by_the_best_model_rule(analysis):
    board = views.leaderboard(analysis, 0)
    means = {m: analysis.evaluation(m).mean("original", "accuracy") for m in analysis.models}
    assert list(board.frame["model"]) == sorted(means, key=lambda m: -means[m])
    assert board.frame["model"][0] == analysis.best_model()
    assert list(board.frame.columns) == ["model", "Accuracy", "Precision (macro)",
                                         "Recall (macro)", "F1 (macro, mean of per-class F1)",
                                         "F1 of macro precision and recall"]
    lr = board.frame.set_index("model").loc["lr"]
    assert lr["Accuracy"] == analysis.levels("lr")[0].metrics["accuracy"]
    assert board.number_columns == ()


def test_binary_leaderboard_formats_rates_and_numbers(analysis):
    board = views.leaderboard(analysis, 2)  # the 2x2+IM level of the NPS plan
    assert "Matthews correlation (MCC)" in board.number_columns
    assert "Positive intragroup mismatch rate (PIMR)" in board.percent_columns
    dt = board.frame.set_index("model").loc["dt"]
    assert dt["Recall, sensitivity (TPR)"] == analysis.levels("dt")[2].metrics["tpr"]


def test_level_metric_table_keeps_the_engine_order_and_the_models_values(analysis):
    from cx_app.engine.binary import BINARY_KEYS
    from cx_app.engine.catalogue import MULTICLASS_ALL

    binary = views.level_metric_table(analysis, 2)
    assert tuple(binary.frame.columns) == ("model", *BINARY_KEYS)  # tp, fn, fp, tn, imp, ...
    assert list(binary.frame["model"]) == list(analysis.models)  # the order they were trained
    lr = binary.frame.set_index("model").loc["lr"]
    # the 2x2+IM counts add up to every respondent, accuracy is (TP + TN) / n
    assert lr["tp"] + lr["fn"] + lr["fp"] + lr["tn"] + lr["imp"] + lr["imn"] == lr["n"] == 240
    assert lr["accuracy"] == pytest.approx((lr["tp"] + lr["tn"]) / 240)
    assert lr["mcc"] == analysis.levels("lr")[2].metrics["mcc"]
    assert "tpr" in binary.percent_columns and "mcc" in binary.number_columns
    assert "tp" not in binary.percent_columns + binary.number_columns  # a count
    multiclass = views.level_metric_table(analysis, 0)
    assert tuple(multiclass.frame.columns) == ("model", *MULTICLASS_ALL)
    assert multiclass.percent_columns == MULTICLASS_ALL and multiclass.number_columns == ()
    nb = multiclass.frame.set_index("model").loc["nb"]
    assert nb["accuracy"] == nb["precision_micro"] == analysis.levels("nb")[0].metrics["accuracy"]


def test_per_class_table_has_one_row_per_group_with_its_counts(analysis):
    level = analysis.levels("lr")[1]  # 3x3+IM
    table = views.per_class_table(level)
    assert list(table["class"]) == ["detractors", "passives", "promoters"]
    assert table["support"].sum() == 240
    row = table.set_index("class").loc["detractors"]
    assert row["precision"] == pytest.approx(row["tp"] / (row["tp"] + row["fp"] + row["im"]))
    assert row["recall"] == pytest.approx(row["tp"] / row["support"])
    assert row["precision"] == level.metrics["per_class"]["detractors"]["precision"]
    original = views.per_class_table(analysis.levels("lr")[0])
    assert list(original["class"]) == [str(k) for k in range(11)]  # classes as text


def test_definitions_table_names_every_metric_of_the_tables():
    multiclass = views.definitions_table(False)
    assert list(multiclass.columns) == ["metric", "meaning", "formula", "source"]
    assert len(multiclass) == 7
    assert multiclass["metric"][0] == "Accuracy"
    assert multiclass["formula"][1] == "mean over classes of TP / (TP + FP)"
    binary = views.definitions_table(True)
    assert len(binary) == 34
    assert list(binary["metric"][:3]) == ["True positives (TP)", "False negatives (FN)",
                                          "False positives (FP)"]
    assert binary.set_index("metric").loc["Recall, sensitivity (TPR)", "formula"] == \
        "TP / (TP + FN + IMP)"


def test_trained_models_table_holds_each_recipe_and_its_held_out_gap(analysis):
    frame, advice = views.trained_models_table(analysis)
    assert list(frame.columns) == ["model", "algorithm", "preset", "calibration", "folds", "seed",
                                   "fit seconds", "respondents", *views.GAP_COLUMNS,
                                   "Net score gap (points)"]
    assert list(frame["model"]) == ["nb", "lr", "dt"]
    lr = frame.set_index("model").loc["lr"]
    assert lr["algorithm"] == "Logistic regression"
    assert (lr["folds"], lr["seed"], lr["respondents"], lr["calibration"]) == (3, 0, 240, "none")
    gap = analysis.held_out_gap("lr")
    assert lr["estimated − real accuracy (ALP)"] == pytest.approx(gap.accuracy_alp - gap.accuracy_cm)
    assert lr["class-share gap"] == gap.share_gap
    assert lr["Net score gap (points)"] == gap.net_gap
    assert all(isinstance(text, str) and "on held-out respondents" in text for text in advice)
    assert not any(t.startswith("Logistic regression") and "use logistic regression" in t
                   for t in advice)


def test_settings_round_trip_through_yaml_text():
    assert views.setting_text((1, 2)) == "[1, 2]"
    assert views.setting_text(None) == "null"
    assert views.parse_setting("[3, 4]", (1, 2)) == (3, 4)
    assert views.parse_setting("[3, 4]", [1, 2]) == [3, 4]
    assert views.parse_setting("{a: 1}", None) == {"a": 1}
    with pytest.raises(ValueError, match="is not a valid value"):
        views.parse_setting("[1, 2", (1, 2))


def test_edited_plan_is_none_unchanged_new_when_edited_and_an_error_when_invalid(analysis):
    from cx_app.errors import CxAppError

    steps = analysis.plan.model_dump(mode="json", exclude_none=True)["plan"]
    assert views.edited_plan(analysis.plan, analysis.classes, steps) is None
    moved = [dict(s) for s in steps]
    moved[0] = {**steps[0], "groups": [
        {**steps[0]["groups"][0], "members": [0, 1, 2, 3, 4, 5]},
        {**steps[0]["groups"][1], "members": [6, 7, 8]}, steps[0]["groups"][2]]}
    plan = views.edited_plan(analysis.plan, analysis.classes, moved)
    assert [list(g.members) for g in plan.plan[0].groups] == [[0, 1, 2, 3, 4, 5], [6, 7, 8],
                                                              [9, 10]]
    assert plan.classes == analysis.plan.classes
    assert plan.plan[1] == analysis.plan.plan[1]
    missing = [{**steps[0], "groups": steps[0]["groups"][:2]}, steps[1]]  # 9 and 10 in no group
    with pytest.raises(CxAppError):
        views.edited_plan(analysis.plan, analysis.classes, missing)
    text = views.plan_yaml(plan)
    assert "tp_pairs" not in text  # unset fields left out
    assert text.splitlines()[:2] == ["classes:", "- 0"]
    assert "  - name: passives\n    members:\n    - 6\n    - 7\n    - 8\n" in text


def test_baseline_note_names_the_models_below_the_commonest_class(analysis):
    """The Models and Compare pages' baseline: always answering the commonest class, with the
    models whose accuracy at the level is below it (a plain comparison with the share)."""
    from collections import Counter

    from cx_app.models.names import model_display_name

    y = analysis.survey.y
    value, count = Counter(list(y)).most_common(1)[0]
    share = count / len(y)
    text, any_below = views.baseline_note(analysis, 0)
    assert text.startswith(f"Baseline: always answering {value} is right for {share:.1%} of "
                           "respondents at this level.")
    below = [m for m in analysis.models if analysis.levels(m)[0].metrics["accuracy"] < share]
    assert any_below == bool(below)
    for m in analysis.models:
        assert (model_display_name(m) in text) == (m in below)
    text, _ = views.baseline_note(analysis, 2)  # the 2x2+IM level: a group, in words
    assert "passives_promoters" not in text
