"""The app's library path and `cx-app evaluate` write the same results.json (timings aside):
same survey, plan, seed, folds and models — the issue #11 acceptance check."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from cx_app.app.session import Analysis, CrossValidatedModel, survey_key, train_lean
from cx_app.cli import main
from cx_app.provenance import without_wall_clock
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import save_schema, schema_from_mapping

ALGORITHMS = ("lr", "nb")
FOLDS = 3




def test_app_path_and_cli_evaluate_give_the_same_results_document(tmp_path, capsys):
    rng = np.random.default_rng(11)
    n = 300
    attrs = rng.integers(1, 11, (n, 3))
    score = np.clip(np.round(attrs @ [0.5, 0.3, 0.2] + rng.normal(0, 1.5, n)), 0, 10)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", score.astype(int))
    data = tmp_path / "survey.csv"
    frame.to_csv(data, index=False)
    schema = schema_from_mapping(target="NPS", scale=(0, 10),
                                 attributes=["Price", "Network", "Shops"])
    schema_path = save_schema(schema, tmp_path / "schema.yaml")

    # the app: the library path the Models and Report pages call
    survey = load_survey(data, schema=schema)
    analysis = Analysis(survey=survey, plan=survey.schema.plan_spec,
                        data_key=survey_key(survey.source.sha256, None, schema.to_yaml(),
                                            survey.source.filename))
    for algorithm_id in ALGORITHMS:
        cv, permutation = train_lean(survey, algorithm_id, folds=FOLDS, seed=0, settings={},
                                     calibration="none")
        analysis.add_model(CrossValidatedModel(algorithm_id, algorithm_id, {}, FOLDS, 0, cv,
                                               f"key-{algorithm_id}", permutation))
    from_app = json.loads(analysis.report_document().to_json())

    # the CLI
    out = tmp_path / "out"
    code = main(["evaluate", str(data), "--schema", str(schema_path), "--algorithms",
                 ",".join(ALGORITHMS), "--folds", str(FOLDS), "--seed", "0", "--out", str(out)])
    assert code == 0, capsys.readouterr()
    from_cli = json.loads((out / "results.json").read_text(encoding="utf-8"))

    assert without_wall_clock(from_app) == without_wall_clock(from_cli)
    # not vacuous: both hold every model, levels and the permutation importance
    assert set(from_cli["models"]) == set(ALGORITHMS)
    assert from_cli["drivers"]["permutation"]
