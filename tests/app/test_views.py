"""The pages' tables built by the library (cx_app.app.views)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cx_app.app import views
from cx_app.app.session import Analysis, TrainedModel, survey_key, train_lean
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
        a.add_model(TrainedModel(algorithm_id, algorithm_id, {}, 3, 0, cv, f"k-{algorithm_id}",
                                 permutation))
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
    assert "MCC (Matthews correlation)" in board.number_columns
    assert "PIMR (positive intragroup mismatch rate)" in board.percent_columns
    dt = board.frame.set_index("model").loc["dt"]
    assert dt["TPR (recall, sensitivity)"] == analysis.levels("dt")[2].metrics["tpr"]
