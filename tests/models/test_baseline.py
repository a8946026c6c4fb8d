"""The baseline (always answering the commonest class): hand-computed per level and grouping,
and each model's ``below_baseline`` in results.json equal to a plain comparison with it."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score

from cx_app.engine.grouping import resolve_plan
from cx_app.engine.plan import PlanSpec
from cx_app.models.analysis import evaluate_survey
from cx_app.models.baseline import below_baseline, majority_baseline
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import schema_from_mapping

# 18 respondents: 8 is the commonest score (5), but promoters (9 and 10: 7) the largest group
Y = [10] * 4 + [9] * 3 + [8] * 5 + [3] * 2 + [5] * 2 + [6] * 2
CLASSES = tuple(range(11))


def _plan(option: str) -> PlanSpec:
    return PlanSpec(classes=CLASSES, plan=[{"name": "3x3+IM", "groups": [
        {"name": "detractors", "members": list(range(7)), "option": option},
        {"name": "passives", "members": [7, 8], "option": option},
        {"name": "promoters", "members": [9, 10], "option": option}]}])


def test_relaxed_grouping_answers_the_largest_group():
    base = majority_baseline(Y, resolve_plan(_plan("R"), CLASSES))
    assert base["original"] == {"class": 8, "accuracy": pytest.approx(5 / 18)}
    # any promoter score is right for every promoter under Relaxed grouping
    assert base["3x3+IM"] == {"class": "promoters", "accuracy": pytest.approx(7 / 18)}


def test_strict_grouping_counts_only_the_exact_score():
    base = majority_baseline(Y, resolve_plan(_plan("S"), CLASSES))
    # answering 10 is exact for 4 promoters only; answering 8 for 5 passives: 8 wins
    assert base["3x3+IM"] == {"class": "passives", "accuracy": pytest.approx(5 / 18)}


def test_the_original_level_is_the_share_of_the_commonest_score():
    rng = np.random.default_rng(3)
    y = rng.choice(CLASSES, size=500, p=np.r_[np.full(9, 0.05), 0.25, 0.30])
    base = majority_baseline(y.tolist(), resolve_plan(_plan("R"), CLASSES))
    value, count = Counter(y.tolist()).most_common(1)[0]
    assert base["original"]["class"] == value
    assert base["original"]["accuracy"] == pytest.approx(
        accuracy_score(y, np.full_like(y, value)))
    assert base["original"]["accuracy"] == pytest.approx(count / 500)


def test_below_baseline_names_the_levels_where_accuracy_is_lower():
    baseline = {"original": {"class": 9, "accuracy": 0.40},
                "3x3+IM": {"class": "promoters", "accuracy": 0.55}}
    assert below_baseline({"original": 0.39, "3x3+IM": 0.60}, baseline) == ["original"]
    assert below_baseline({"original": 0.40, "3x3+IM": 0.50}, baseline) == ["3x3+IM"]
    assert below_baseline({"original": None, "2x2+IM": 0.1}, baseline) == []


@pytest.fixture(scope="module")
def noise_results(tmp_path_factory):
    """Attributes that carry no signal and a target dominated by one score: k-NN cannot beat
    always answering it."""
    rng = np.random.default_rng(0)
    n = 240
    y = rng.choice([6, 8, 9, 10], size=n, p=[0.1, 0.15, 0.6, 0.15])
    frame = pd.DataFrame(rng.integers(1, 11, (n, 3)), columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", y)
    path = tmp_path_factory.mktemp("baseline") / "noise.csv"
    frame.to_csv(path, index=False)
    survey = load_survey(path, schema=schema_from_mapping(
        target="NPS", scale=(0, 10), attributes=["Price", "Network", "Shops"]))
    results, _ = evaluate_survey(survey, ["knn", "lr"], folds=3, seed=0, permutation_repeats=1)
    return results, y


def test_results_flag_every_model_below_the_baseline(noise_results):
    results, y = noise_results
    value, count = Counter(y.tolist()).most_common(1)[0]
    assert results.baseline["original"].class_ == value
    assert results.baseline["original"].accuracy == pytest.approx(count / len(y))
    doc = results.to_dict()
    assert doc["baseline"]["original"] == {"class": value, "accuracy": pytest.approx(count / len(y))}
    flagged = 0
    for model in results.models.values():
        expected = [name for name, level in model.levels.items()
                    if level.metric("accuracy") < results.baseline[name].accuracy]
        assert model.below_baseline == expected
        flagged += bool(expected)
    assert flagged  # noise attributes: at least one model is below the commonest score
