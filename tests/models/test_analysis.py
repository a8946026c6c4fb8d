"""The whole evaluation is reproducible: same data, plan, seed and settings → same document."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cx_app.models.analysis import evaluate_survey
from cx_app.provenance import without_wall_clock
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import schema_from_mapping


def _survey(tmp_path, seed=3, n=240):
    rng = np.random.default_rng(seed)
    attrs = rng.integers(1, 11, (n, 3))
    score = np.clip(np.round(attrs @ [0.5, 0.3, 0.2] + rng.normal(0, 1.5, n)), 0, 10).astype(int)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", score)
    path = tmp_path / "s.csv"
    frame.to_csv(path, index=False)
    schema = schema_from_mapping(target="NPS", scale=(0, 10), attributes=["Price", "Network", "Shops"])
    return load_survey(path, schema=schema)




def test_same_inputs_give_the_same_results_document(tmp_path):
    survey = _survey(tmp_path)
    runs = [
        evaluate_survey(survey, ["lr", "dt"], folds=3, seed=7, permutation_repeats=2)[0]
        for _ in range(2)
    ]
    a, b = (without_wall_clock(json.loads(r.to_json())) for r in runs)
    assert a == b
    # and the seed matters: another seed changes the folds, hence the per-fold values
    other = evaluate_survey(survey, ["lr", "dt"], folds=3, seed=8, permutation_repeats=2)[0]
    c = without_wall_clock(json.loads(other.to_json()))
    assert c["models"]["lr"]["levels"]["original"]["per_fold"] != a["models"]["lr"]["levels"][
        "original"]["per_fold"]


def test_results_round_trip_and_validate(tmp_path):
    """The typed results: to_dict(from_dict(d)) == d on a real evaluation (with 5×2cv), a
    written results.json reads back equal, and a broken one is refused naming the field."""
    from cx_app.models.analysis import write_results
    from cx_app.models.results import Results, ResultsError, read_results

    results, _ = evaluate_survey(_survey(tmp_path), ["lr", "nb"], folds=3, seed=1,
                                 permutation_repeats=2, five_by_two=[("lr", "nb")])
    document = json.loads(results.to_json())
    assert Results.from_dict(document).to_dict() == document
    assert results.comparisons_5x2cv[0].a == "lr" and len(results.comparisons) == 6
    path = write_results(results, tmp_path / "out")
    assert read_results(path).to_dict() == document
    assert results.provenance.schema_name == document["provenance"]["schema"]

    broken = json.loads(results.to_json())
    broken["models"]["lr"]["levels"]["original"]["matrix"] = "3 by 3"
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(ResultsError, match=r"broken.json: .*models\.lr\.levels\.original\.matrix"):
        read_results(tmp_path / "broken.json")
    unknown = {**document, "extra_part": 1}
    with pytest.raises(ResultsError, match="extra_part"):
        Results.from_dict(unknown)
    with pytest.raises(ResultsError, match="does not exist"):
        read_results(tmp_path / "missing.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ResultsError, match="does not hold a JSON object"):
        read_results(tmp_path / "list.json")


def test_a_plan_without_net_score_groups_fails_before_any_fit(tmp_path, monkeypatch):
    import cx_app.models.analysis as analysis
    from cx_app.errors import PlanError

    survey = _survey(tmp_path)
    plan = {"classes": list(range(11)), "plan": [{"name": "halves", "groups": [
        {"name": "first", "members": list(range(6))},
        {"name": "second", "members": list(range(6, 11))}]}]}
    from cx_app.engine.plan import parse_plan

    schema = survey.schema.model_copy(update={"plan": parse_plan(plan).plan})
    survey = type(survey)(survey.frame, schema, survey.quality, survey.source)

    def no_fit(*args, **kwargs):
        raise AssertionError("a model was fitted before the plan was checked")

    monkeypatch.setattr(analysis, "evaluate_algorithm", no_fit)
    with pytest.raises(PlanError, match="net-score|promoters|positive"):
        evaluate_survey(survey, ["lr"], folds=3)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_driver_views_need_no_model_and_are_computed_while_the_folds_fit(tmp_path, monkeypatch,
                                                                         n_jobs):
    """The model-free driver views (relative weights, ordinal, importance–performance,
    top-2-box) are computed in a thread while worker processes fit the folds, and in this
    thread when the folds are fitted here (a fold records its warnings process-wide); the
    document is the same either way."""
    import threading

    from cx_app.models import analysis

    survey = _survey(tmp_path)
    threads = []
    real_views = analysis.driver_views

    def recording_views(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real_views(*args, **kwargs)

    monkeypatch.setattr(analysis, "driver_views", recording_views)
    options = dict(folds=3, seed=4, permutation_repeats=2)
    results = evaluate_survey(survey, ["lr", "dt"], n_jobs=n_jobs, **options)[0]
    assert len(threads) == 1
    assert threads[0].startswith("cx-app-drivers") == (n_jobs == 2)
    monkeypatch.setattr(analysis, "driver_views", real_views)
    alone = evaluate_survey(survey, ["lr", "dt"], n_jobs=1, **options)[0]
    assert without_wall_clock(json.loads(results.to_json())) == without_wall_clock(
        json.loads(alone.to_json()))
    drivers = results.drivers
    assert list(drivers.relative_weights.attributes) == ["price", "network", "shops"]
    assert list(drivers.permutation) == [drivers.permutation_model] and drivers.ordinal
