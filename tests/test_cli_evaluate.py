"""`cx-app evaluate`: the results.json shape, on small data with 3 folds and 2 fast algorithms."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cx_app.cli import main


@pytest.fixture(scope="module")
def evaluate_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("evaluate")
    rng = np.random.default_rng(4)
    n = 300
    attrs = rng.integers(1, 11, (n, 3))
    nps = np.clip(np.round(attrs @ [0.6, 0.3, 0.1] + rng.normal(0, 1.5, n)), 0, 10).astype(int)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", nps)
    csv = tmp / "survey.csv"
    frame.to_csv(csv, index=False)
    out = tmp / "out"
    code = main([
        "evaluate", str(csv), "--target", "NPS", "--scale", "0-10",
        "--attributes", "Price,Network,Shops", "--algorithms", "lr,nb", "--folds", "3",
        "--seed", "1", "--out", str(out), "--permutation-repeats", "2",
    ])  # fmt: skip
    assert code == 0
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return SimpleNamespace(doc=doc, n=n, out=out, scores=nps)


@pytest.fixture(scope="module")
def results(evaluate_run):
    return evaluate_run.doc, evaluate_run.n


def test_reports_and_observed_nps_are_written_beside_the_results(evaluate_run):
    doc, n, out, scores = evaluate_run.doc, evaluate_run.n, evaluate_run.out, evaluate_run.scores
    assert (out / "report.xlsx").stat().st_size > 0
    assert "<html" in (out / "report.html").read_text(encoding="utf-8")[:200].lower()
    expected = 100 * (np.mean(scores >= 9) - np.mean(scores <= 6))
    assert doc["dataset"]["nps"]["value"] == pytest.approx(expected)
    assert doc["dataset"]["nps"]["n"] == n


def test_results_json_shape(results):
    doc, n = results
    assert doc["dataset"]["rows_used"] == n
    assert doc["dataset"]["classes"] == list(range(11))
    assert (doc["folds"], doc["seed"]) == (3, 1)
    assert set(doc["models"]) == {"lr", "nb"}
    model = doc["models"]["lr"]
    assert set(model["levels"]) == {"original", "3x3+IM", "2x2+IM"}
    for name, level in model["levels"].items():
        assert {"labels", "matrix", "im", "metrics", "per_fold"} <= set(level)
        assert all(len(v) == 3 for v in level["per_fold"].values())
        assert sum(map(sum, level["matrix"])) + sum(level["im"] or []) == n, name
    assert {"mcc", "delta", "phi", "tp", "imp"} <= set(model["levels"]["2x2+IM"]["per_fold"])
    assert set(model["roc"]) == {"original", "2x2+IM"}
    for roc in model["roc"].values():
        assert {"fpr", "tpr", "auc", "random_auc"} <= set(roc)
    assert model["fit_seconds"] >= 0
    assert doc["provenance"]["file"] == "survey.csv" and len(doc["provenance"]["sha256"]) == 64
    assert doc["quality"]["rows_used"] == n
    assert doc["drivers"]["ranking"][0] == "price"  # schema names are identifiers


def test_comparisons_match_scipy_on_the_reported_per_fold_values(results):
    doc, _ = results
    keys = {"level", "metric", "a", "b", "t", "df", "p", "p_corrected", "p_holm"}
    levels = {(c["level"], c["metric"]) for c in doc["comparisons"]}
    assert levels == {
        ("original", "accuracy"), ("original", "f1_macro"), ("3x3+IM", "accuracy"),
        ("3x3+IM", "f1_macro"), ("2x2+IM", "accuracy"), ("2x2+IM", "mcc"),
    }  # fmt: skip
    for c in doc["comparisons"]:
        assert keys <= set(c)
        a = doc["models"][c["a"]]["levels"][c["level"]]["per_fold"][c["metric"]]
        b = doc["models"][c["b"]]["levels"][c["level"]]["per_fold"][c["metric"]]
        ref = stats.ttest_rel(a, b)
        assert c["t"] == pytest.approx(ref.statistic) and c["p"] == pytest.approx(ref.pvalue)
        assert c["df"] == 2
        # One pair per (level, metric): Holm leaves the corrected p unchanged.
        assert c["p_holm"] == pytest.approx(c["p_corrected"])


def test_unknown_algorithm_is_a_clear_error(tmp_path, capsys):
    csv = tmp_path / "s.csv"
    pd.DataFrame({"NPS": [1, 9] * 10, "A": [2, 8] * 10}).to_csv(csv, index=False)
    code = main(["evaluate", str(csv), "--target", "NPS", "--scale", "0-10", "--attributes", "A",
                 "--algorithms", "lr,cnn", "--out", str(tmp_path / "o")])  # fmt: skip
    assert code == 2
    assert "unknown algorithm 'cnn'" in capsys.readouterr().err
