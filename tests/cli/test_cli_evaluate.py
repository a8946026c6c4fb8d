"""`cx-app evaluate`: the results.json shape, on small data with 3 folds and 2 fast algorithms."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cx_app.cli import main
from cx_app.models.analysis import BEST_MODEL_RULE, rank_models
from cx_app.models.crossval import assign_folds, build_model, class_positions
from cx_app.models.names import model_display_name
from cx_app.models.results import Results


@pytest.fixture(scope="module")
def evaluate_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("evaluate")
    rng = np.random.default_rng(4)
    n = 300
    attrs = rng.integers(1, 11, (n, 3))
    nps = np.clip(np.round(attrs @ [0.6, 0.3, 0.1] + rng.normal(0, 1.5, n)), 0, 10).astype(int)
    nps[nps == 0] = 1
    nps[:2] = 0  # a class rarer than the 3 folds: the stratification fallback
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", nps)
    csv = tmp / "survey.csv"
    frame.to_csv(csv, index=False)
    out = tmp / "out"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main([
        "evaluate", str(csv), "--target", "NPS", "--scale", "0-10",
        "--attributes", "Price,Network,Shops", "--algorithms", "lr,nb", "--folds", "3",
        "--seed", "1", "--out", str(out), "--permutation-repeats", "2", "--five-by-two", "lr,nb",
        ])  # fmt: skip
    assert code == 0
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return SimpleNamespace(doc=doc, n=n, out=out, scores=nps, X=attrs, stdout=stdout.getvalue())


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
    # the mapping gave no labels: an attribute is labelled by its column header
    assert doc["dataset"]["attribute_labels"] == {"price": "Price", "network": "Network",
                                                  "shops": "Shops"}


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


def _leaderboard_order(stdout: str) -> list[str]:
    """The model column of the printed leaderboard (models by their display names, columns
    two spaces apart), top to bottom; the baseline's row (the last) left out."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["model", "preset"])
    rows = lines[start + 1:lines.index("", start)]
    names = [re.split(r"\s{2,}", row)[0] for row in rows]
    assert names[-1] == "always the commonest class"
    return names[:-1]


def test_leaderboard_is_ordered_by_the_best_model_rule(evaluate_run):
    """The printed order is ``rank_models`` by BEST_MODEL_RULE (mean per-fold accuracy at the
    original level) on the written results.json; on this run the last level (2×2+IM) ranks the
    two models the other way, which is how the leaderboard was ordered before."""
    doc = Results.from_dict(evaluate_run.doc)
    level, metric = BEST_MODEL_RULE
    by_rule = {m: float(np.mean(lvl.per_fold[metric])) for m, lvl in doc.levels(level).items()}
    by_last = {m: float(np.mean(lvl.per_fold[metric])) for m, lvl in doc.levels("2x2+IM").items()}
    assert rank_models(by_rule, metric) == ["lr", "nb"]  # 0.253 vs 0.237
    assert rank_models(by_last, metric) == ["nb", "lr"]  # 0.657 vs 0.647: the rules differ
    assert by_rule["lr"] > by_rule["nb"] and by_last["nb"] > by_last["lr"]
    assert _leaderboard_order(evaluate_run.stdout) == [
        model_display_name(m) for m in rank_models(by_rule, metric)]
    assert _leaderboard_order(evaluate_run.stdout) == ["Logistic regression", "Naive Bayes"]


def test_the_time_said_before_training_is_the_cost_model_of_the_models_page(evaluate_run):
    """lr and nb, 3 folds of 300 respondents × 3 attributes: both models' folds, then the
    slower importance of the two at 2 repeats of the model's 5, plus starting the workers and
    writing the reports (most of it here), times the load factor."""
    from cx_app.models.timing import expected_phases, format_duration, one_shot_seconds

    phases = [expected_phases(a, rows=300, attributes=3, folds=3) for a in ("lr", "nb")]
    workers = os.cpu_count() or 1
    fixed = one_shot_seconds(2, workers=workers)
    quiet = sum(p.folds for p in phases) + max(p.importance for p in phases) * 2 / 5 + fixed
    first = evaluate_run.stdout.splitlines()[0]
    said = re.fullmatch(r"Expected time: (under 1 s|about \d+ s|about \d+ min) \((starting the "
                        r"workers and )?writing the reports: (about \d+ s); a quiet 2-core "
                        r"server's ([\d.]+) s × ([\d.]+) for this machine's load now\)\.", first)
    assert said is not None, first
    assert said[4] == f"{quiet:.1f}" and float(said[5]) >= 1.0
    assert said[3] == format_duration(fixed * float(said[5]))
    assert (said[2] is not None) == (workers > 1)


def test_the_time_said_is_a_range_when_the_best_models_importance_decides_it():
    """rf, knn and ann on 40,000 respondents: the folds take the same time whichever scores
    best, but the best model's permutation importance runs last, and knn's takes minutes
    where ann's takes seconds. The sentence gives both ends and names both models (a single
    figure, the slowest, said 9 min for a run of 1.5 min on a new user's walk)."""
    import argparse
    from types import SimpleNamespace

    from cx_app.cli.evaluate import expected_time
    from cx_app.models.timing import expected_phases, format_duration, one_shot_seconds

    survey = SimpleNamespace(y=np.zeros(40_000), schema=SimpleNamespace(attributes=list("ABCDEFGHIJ")))
    args = argparse.Namespace(folds=10, calibration="none", preset=None, permutation_repeats=5,
                              n_jobs=2)
    phases = {a: expected_phases(a, rows=40_000, attributes=10) for a in ("rf", "knn", "ann")}
    fixed = one_shot_seconds(3, workers=2)
    folds = sum(p.folds for p in phases.values()) + fixed
    low, high = folds + phases["ann"].importance, folds + phases["knn"].importance
    assert phases["ann"].importance < phases["rf"].importance < phases["knn"].importance
    said = expected_time(survey, list(phases), args, 2.0)
    assert said == (
        f"Expected time: {format_duration(2 * low)} to {format_duration(2 * high)}, by which "
        "model scores best: its permutation importance runs last (Neural network's "
        f"{format_duration(2 * phases['ann'].importance)}, k-nearest neighbours' "
        f"{format_duration(2 * phases['knn'].importance)}; starting the workers and writing "
        f"the reports: {format_duration(2 * fixed)}; a quiet 2-core server's "
        f"{low:.1f}–{high:.1f} s × 2.0 for this machine's load now).")
    assert format_duration(2 * low) != format_duration(2 * high)


def test_the_leaderboard_shows_the_pooled_accuracy_of_results_json(evaluate_run):
    """The table's accuracy is the one results.json, the baseline row and its warning use:
    every respondent's out-of-fold prediction pooled (not the mean of the folds'), and its
    footnote says so. Pooled = the share of respondents predicted right, by hand."""
    doc = evaluate_run.doc
    lines = evaluate_run.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["model", "preset"])
    header = re.split(r"\s{2,}", lines[start].strip())
    column = header.index("acc original")
    rows = {re.split(r"\s{2,}", row)[0]: re.split(r"\s{2,}", row.strip())
            for row in lines[start + 1:lines.index("", start)]}
    for model in ("lr", "nb"):
        level = doc["models"][model]["levels"]["original"]
        pooled = level["metrics"]["accuracy"]
        assert rows[model_display_name(model)][column] == f"{pooled:.3f}"
        matrix = np.array(level["matrix"], dtype=float)  # rows actual, columns predicted
        assert pooled == pytest.approx(np.trace(matrix) / matrix.sum())
    footnote = lines[lines.index("", start) + 1]
    assert footnote.startswith("acc: accuracy of every respondent's out-of-fold prediction "
                               "pooled (as in results.json)")


def test_unknown_algorithm_is_a_clear_error(tmp_path, capsys):
    csv = tmp_path / "s.csv"
    pd.DataFrame({"NPS": [1, 9] * 10, "A": [2, 8] * 10}).to_csv(csv, index=False)
    code = main(["evaluate", str(csv), "--target", "NPS", "--scale", "0-10", "--attributes", "A",
                 "--algorithms", "lr,lstm", "--out", str(tmp_path / "o")])  # fmt: skip
    assert code == 2
    assert "unknown algorithm 'lstm'" in capsys.readouterr().err


def test_five_by_two_option_writes_dietterich_and_alpaydin(evaluate_run):
    doc, X, y = evaluate_run.doc, evaluate_run.X.astype(float), evaluate_run.scores
    (c,) = doc["comparisons_5x2cv"]
    assert (c["a"], c["b"], c["level"], c["metric"]) == ("lr", "nb", "original", "accuracy")
    d = np.array(c["differences"])
    assert d.shape == (5, 2)
    # Replication 1 (seed 1 = --seed), by hand: both models fitted on each half, tested on the other.
    codes = class_positions(y, tuple(range(11)))
    half = assign_folds(codes, 2, 1).fold
    for j in range(2):
        acc = []
        for a in ("lr", "nb"):
            model = build_model(a, seed=1).fit(X[half != j], codes[half != j])
            predicted = model.classes_[model.predict_proba(X[half == j]).argmax(axis=1)]
            acc.append(np.mean(predicted == codes[half == j]))
        assert d[0, j] == pytest.approx(acc[0] - acc[1])
    # Dietterich (1998): t = p_1^(1) / √(Σ s_i² / 5), 5 df; Alpaydin (1999): F = Σ p² / (2 Σ s²).
    s2 = ((d - d.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    assert c["t"] == pytest.approx(d[0, 0] / np.sqrt(s2.mean()))
    assert c["t_p"] == pytest.approx(2 * stats.t.sf(abs(c["t"]), 5))
    assert c["f"] == pytest.approx((d**2).sum() / (2 * s2.sum()))
    assert c["f_p"] == pytest.approx(stats.f.sf(c["f"], 10, 5))


def test_five_by_two_needs_a_pair_of_known_algorithms(tmp_path, capsys):
    csv = tmp_path / "s.csv"
    pd.DataFrame({"NPS": [1, 9] * 10, "A": [2, 8] * 10}).to_csv(csv, index=False)
    base = ["evaluate", str(csv), "--target", "NPS", "--scale", "0-10", "--attributes", "A",
            "--algorithms", "nb", "--out", str(tmp_path / "o")]  # fmt: skip
    assert main([*base, "--five-by-two", "lr"]) == 2
    assert "needs two different algorithm ids like 'lr,svm', got 'lr'" in capsys.readouterr().err
    assert main([*base, "--five-by-two", "lr,lstm"]) == 2
    assert "unknown algorithm 'lstm'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_rare_class_fallback_is_in_results_and_shown(evaluate_run):
    doc, scores = evaluate_run.doc, evaluate_run.scores
    counts = {c: int((scores == c).sum()) for c in range(11)}
    rare = {c: k for c, k in counts.items() if 0 < k < 3}
    assert rare, "the fixture should have a class rarer than the 3 folds"
    for c, k in rare.items():
        start = f"class {c!r} has {k} respondent(s), fewer than the 3 folds"
        for model in ("lr", "nb"):
            assert any(w.startswith(start) for w in doc["warnings"][model]), (model, c)
        assert evaluate_run.stdout.count(f"warning: {start}") == 1
    assert doc["models"]["lr"]["cross_validation"]["fold_method"] == (
        "stratified (rare classes merged)"
    )


@pytest.mark.slow  # trains the CNN (~12 s)
def test_evaluate_runs_the_papers_cnn_and_states_its_adaptation(tmp_path):
    """`--algorithms cnn` with the papers' settings (100 epochs, batch 128) on 150 respondents
    and 3 attributes: too few for pooling 4, which the output and results.json say."""
    rng = np.random.default_rng(2)
    n = 150
    attrs = rng.integers(1, 11, (n, 3))
    nps = np.clip(np.round(attrs @ [0.6, 0.3, 0.1] + rng.normal(0, 1.5, n)), 0, 10).astype(int)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", nps)
    csv = tmp_path / "survey.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "out"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["evaluate", str(csv), "--target", "NPS", "--scale", "0-10", "--attributes",
                     "Price,Network,Shops", "--algorithms", "cnn", "--folds", "3", "--seed", "0",
                     "--out", str(out), "--permutation-repeats", "1", "--preset", "papers"])
    assert code == 0
    assert ("warning: Convolutional neural network, fold(s) 1, 2, 3: "
            "ArchitectureAdaptationWarning") in stdout.getvalue()
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    model = doc["models"]["cnn papers"]
    assert model["algorithm"] == "cnn" and model["cross_validation"]["preset"] == "papers"
    assert model["cross_validation"]["settings"]["epochs"] == 100
    level = model["levels"]["original"]
    assert sum(map(sum, level["matrix"])) + sum(level["im"] or []) == n
    notes = " ".join(model["cross_validation"]["warnings"])
    assert "pooling 4→3" in notes and "3 input column(s)" in notes
    assert doc["warnings"]["cnn papers"] == model["cross_validation"]["warnings"]
    assert doc["drivers"]["ranking"]  # permutation importance of the CNN's fold models
    assert (out / "report.html").stat().st_size > 0 and (out / "report.xlsx").stat().st_size > 0


def test_a_model_below_the_commonest_class_is_flagged_in_results_and_the_excel_report(tmp_path):
    """Noise attributes and one dominant score: k-NN is below always answering it. results.json
    says so (``baseline``, ``below_baseline``), the CLI warns, the Excel Summary says it in
    words."""
    from collections import Counter

    from openpyxl import load_workbook

    rng = np.random.default_rng(0)
    n = 240
    scores = rng.choice([6, 8, 9, 10], size=n, p=[0.1, 0.15, 0.6, 0.15])
    frame = pd.DataFrame(rng.integers(1, 11, (n, 3)), columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", scores)
    csv = tmp_path / "noise.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "out"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main(["evaluate", str(csv), "--target", "NPS", "--scale", "0-10",
                     "--attributes", "Price,Network,Shops", "--algorithms", "knn",
                     "--folds", "3", "--out", str(out), "--permutation-repeats", "1"]) == 0
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    value, count = Counter(scores.tolist()).most_common(1)[0]
    assert doc["baseline"]["original"] == {"class": value, "accuracy": pytest.approx(count / n)}
    knn = doc["models"]["knn"]
    accuracy = knn["levels"]["original"]["metrics"]["accuracy"]
    assert accuracy < count / n  # the premise: k-NN on noise is below the commonest score
    assert "original" in knn["below_baseline"]
    assert knn["below_baseline"] == [
        name for name, level in knn["levels"].items()
        if level["metrics"]["accuracy"] < doc["baseline"][name]["accuracy"]]
    assert f"below the baseline at original: accuracy {accuracy:.3f}" in stdout.getvalue()
    sheet = load_workbook(out / "report.xlsx")["Summary"]
    text = "\n".join(str(c.value) for row in sheet.iter_rows() for c in row if c.value)
    assert (f"{model_display_name('knn')} is below the baseline (always answering the "
            f"commonest class): at original its accuracy is {accuracy:.1%}, always answering "
            f"{value} gets {count / n:.1%}") in text


@pytest.mark.slow  # a whole evaluate run with its reports
def test_with_a_weight_results_json_says_which_models_are_weighted(tmp_path, capsys):
    """Issue 37, point 6: lr trained with the survey weights, k-NN without them and the
    reason beside its name; the metrics are said to count every respondent once."""
    rng = np.random.default_rng(4)
    n = 200
    a = rng.integers(0, 11, n)
    frame = pd.DataFrame({"NPS": np.clip(a + rng.integers(-2, 3, n), 0, 10), "A": a,
                          "B": rng.integers(0, 11, n), "W": rng.uniform(0.5, 2.0, n)})
    csv = tmp_path / "w.csv"
    frame.to_csv(csv, index=False)
    out = tmp_path / "o"
    code = main(["evaluate", str(csv), "--target", "NPS", "--scale", "0-10", "--attributes",
                 "A,B", "--weight", "W", "--algorithms", "lr,knn", "--folds", "3",
                 "--permutation-repeats", "1", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["models"]["lr"]["weighted"] is True
    assert doc["models"]["knn"]["weighted"] is False
    assert doc["models"]["knn"]["cross_validation"]["unweighted_reason"] == (
        "k-nearest neighbours has no way to weight respondents")
    assert "k-nearest neighbours (unweighted)" in printed
    assert ("Survey weights: Logistic regression trained with them; k-nearest neighbours "
            "without them (k-nearest neighbours has no way to weight respondents)") in printed
