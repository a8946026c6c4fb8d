"""Presets: ``fast`` (default) and ``papers`` per algorithm — same model family, chosen and
recorded everywhere (cross-validation, results.json, the CLI, model files)."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsOneClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.svm import SVC, LinearSVC

from cx_app.cli import main
from cx_app.errors import AnalysisError
from cx_app.models.algorithms import (
    ALGORITHMS,
    FAST,
    PAPERS_BY_DEFAULT,
    PRESETS,
    RareSafeCalibrated,
    default_preset,
    get_algorithm,
    preset_label,
)
from cx_app.models.crossval import build_model, cross_validate_model
from cx_app.models.names import model_display_name


def _final(pipeline):
    return pipeline.steps[-1][1]


def test_the_presets_and_the_default():
    assert PRESETS == ("fast", "papers")
    assert set(FAST) == set(ALGORITHMS)
    for a in ALGORITHMS:
        assert default_preset(a) == ("papers" if a in PAPERS_BY_DEFAULT else "fast")
        assert get_algorithm(a, "papers") is ALGORITHMS[a]
        assert get_algorithm(a, "fast") is FAST[a]
        assert get_algorithm(a).preset == default_preset(a)
    with pytest.raises(AnalysisError, match="unknown preset 'quick'; choose from: fast, papers"):
        get_algorithm("lr", "quick")
    assert preset_label("svm", "papers") == "svm papers"
    assert preset_label("svm", default_preset("svm")) == "svm"


def test_fast_svm_is_a_linear_one_vs_one_svm_with_platt_scaling_like_the_papers_one():
    fast, papers = _final(build_model("svm", preset="fast")), _final(
        build_model("svm", preset="papers"))
    assert isinstance(fast, RareSafeCalibrated) and isinstance(papers, RareSafeCalibrated)
    assert (fast.method, fast.cv) == (papers.method, papers.cv) == ("sigmoid", 5)
    assert isinstance(fast.estimator, OneVsOneClassifier)  # libsvm's multiclass scheme
    svc = fast.estimator.estimator
    assert isinstance(svc, LinearSVC) and (svc.loss, svc.dual) == ("squared_hinge", False)
    assert isinstance(papers.estimator, SVC) and papers.estimator.kernel == "linear"
    assert svc.C == papers.estimator.C == 1.0


def test_fast_mlp_is_the_papers_network_in_larger_steps():
    fast, papers = _final(build_model("ann", preset="fast")), _final(
        build_model("ann", preset="papers"))
    assert isinstance(fast, MLPClassifier) and isinstance(papers, MLPClassifier)
    for name in ("hidden_layer_sizes", "activation", "solver", "n_iter_no_change", "tol",
                 "early_stopping"):
        assert getattr(fast, name) == getattr(papers, name)
    assert (fast.batch_size, fast.learning_rate_init) == (200, 0.01)
    assert (papers.batch_size, papers.learning_rate_init, papers.max_iter) == (10, 0.001, 100)


def test_every_other_fast_estimator_is_the_papers_estimator_type_and_model():
    architecture = {"filters", "kernel_size", "pool_size", "batch_size", "learning_rate",
                    "hidden_layer_sizes", "n_estimators", "max_depth", "criterion",
                    "n_neighbors", "distr"}
    for a in set(ALGORITHMS) - {"svm", "ann"}:
        assert FAST[a].estimator is ALGORITHMS[a].estimator, a
        same = architecture & set(ALGORITHMS[a].defaults)
        assert {k: FAST[a].defaults[k] for k in same} == {
            k: ALGORITHMS[a].defaults[k] for k in same}, a
    assert FAST["cnn"].defaults["epochs"] < ALGORITHMS["cnn"].defaults["epochs"] == 100


def test_fast_threads_follow_the_folds_and_the_papers_stay_single_threaded():
    assert _final(build_model("rf", preset="papers")).n_jobs == 1
    assert FAST["rf"].defaults["n_jobs"] is None
    assert _final(FAST["rf"].build(0, threads=1)).n_jobs == 1
    assert _final(FAST["rf"].build(0, threads=3)).n_jobs == 3
    assert _final(FAST["rf"].build(0, threads=3, n_jobs=2)).n_jobs == 2  # the user's wins


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(7)
    X = pd.DataFrame(rng.integers(1, 11, (240, 3)), columns=["a", "b", "c"]).astype(float)
    y = np.clip(np.round(X.to_numpy() @ [0.5, 0.3, 0.2] + rng.normal(0, 1, 240)), 1, 10)
    return X, y.astype(int), tuple(range(1, 11))


def test_cross_validation_records_its_preset(small):
    X, y, classes = small
    fast = cross_validate_model(X, y, classes, "svm", folds=3)
    papers = cross_validate_model(X, y, classes, "svm", folds=3, preset="papers")
    assert (fast.preset, papers.preset) == (default_preset("svm"), "papers")
    assert fast.summary().preset == default_preset("svm")
    assert "kernel" in papers.settings and "kernel" not in fast.settings
    assert papers.settings["kernel"] == "linear" and fast.settings["dual"] is False
    # both are real classifiers of these data: far better than the 10 % of guessing
    assert (fast.y_pred == y).mean() > 0.3 and (papers.y_pred == y).mean() > 0.3


def test_lr_fast_and_papers_give_identical_predictions(small):
    X, y, classes = small
    fast = cross_validate_model(X, y, classes, "lr", folds=3, preset="fast")
    papers = cross_validate_model(X, y, classes, "lr", folds=3, preset="papers")
    assert isinstance(_final(build_model("lr", preset="fast")), LogisticRegression)
    np.testing.assert_array_equal(fast.proba, papers.proba)


@pytest.fixture(scope="module")
def survey_csv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("presets")
    rng = np.random.default_rng(5)
    n = 240
    attrs = rng.integers(1, 11, (n, 3))
    nps = np.clip(np.round(attrs @ [0.6, 0.3, 0.1] + rng.normal(0, 1.5, n)), 0, 10).astype(int)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops"])
    frame.insert(0, "NPS", nps)
    frame.to_csv(tmp / "survey.csv", index=False)
    return tmp / "survey.csv"


def _cli(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


SURVEY_ARGS = ("--target", "NPS", "--scale", "0-10", "--attributes", "Price,Network,Shops")


@pytest.mark.parametrize("flag", [(), ("--preset", "papers")])
def test_cli_evaluate_preset_flag_is_recorded_in_results_json(survey_csv, tmp_path, flag):
    stdout = _cli("evaluate", str(survey_csv), *SURVEY_ARGS, "--algorithms", "lr,svm",
                  "--folds", "3", "--permutation-repeats", "1", "--out", str(tmp_path), *flag)
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    preset = flag[1] if flag else "fast"
    labels = [preset_label(a, preset) for a in ("lr", "svm")]
    assert list(doc["models"]) == labels
    assert labels == (["lr papers", "svm papers"] if flag else ["lr", "svm"])
    for label in labels:
        assert doc["models"][label]["cross_validation"]["preset"] == preset
        assert doc["provenance"]["presets"][label] == preset
        assert model_display_name(label) in stdout  # the CLI names models in words
    assert doc["models"][labels[1]]["cross_validation"]["settings"]["C"] == 1.0
    assert ("kernel" in doc["models"][labels[1]]["cross_validation"]["settings"]) == bool(flag)
    header = stdout.splitlines()[[i for i, line in enumerate(stdout.splitlines())
                                  if line.startswith("model ")][0]]
    assert "preset" in header.split()
    shown = {"fast": "fast", "papers": "as in the papers"}[preset]  # the preset in words
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert f"Support vector machine (preset: {shown})" in html


def test_cli_train_records_the_preset_in_the_model_file(survey_csv, tmp_path):
    from cx_app.estimate.model_file import load_model
    from cx_app.estimate.new_wave import estimate_wave
    from cx_app.survey.importing import load_survey

    path = tmp_path / "m.skops"
    stdout = _cli("train", str(survey_csv), *SURVEY_ARGS, "--algorithm", "svm",
                  "--calibration", "none", "--folds", "3", "--preset", "papers",
                  "--out", str(path))
    assert "Support vector machine (papers' settings)" in stdout
    model = load_model(path)
    assert model.preset == "papers" and model.metadata()["preset"] == "papers"
    assert model.settings["kernel"] == "linear"
    wave = load_survey(survey_csv, schema=model.schema, require_target=False, scoring=True)
    assert estimate_wave(model, wave).document().model.preset == "papers"
    path2 = tmp_path / "f.skops"
    _cli("train", str(survey_csv), *SURVEY_ARGS, "--algorithm", "svm", "--calibration",
         "none", "--folds", "3", "--out", str(path2))
    fast = load_model(path2)
    assert fast.preset == default_preset("svm") and "loss" in fast.settings
