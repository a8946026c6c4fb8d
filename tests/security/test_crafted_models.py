"""Issue 24, case 1: a model file of trusted types whose arrays send compiled code outside them.

Each craft (``tests/data/bad/crafted.py``) really crashes or hangs scikit-learn when its model
predicts without the checks (the oracle test below runs that in a throw-away process). With
``load_model`` every one is refused in one sentence naming the file, in the process itself
(:mod:`cx_app.estimate.model_checks`) and, for what no check foresaw, by the limited child
process (:mod:`cx_app.estimate.model_sandbox`); ``cx-app estimate`` exits 2 with that sentence
and the process that asked stays alive.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import skops.io as sio

from cx_app.errors import CxAppError, ModelFileError
from cx_app.estimate import model_sandbox
from cx_app.estimate.model_check_child import synthetic_rows
from cx_app.estimate.model_checks import check_fitted_model
from cx_app.estimate.model_file import load_model, model_bytes, open_checked_model
from cx_app.project import read_project
from tests.data.bad import crafted

pytestmark = pytest.mark.slow  # crafted model files checked in children (~44 s)

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
CRAFTED = "the model file is damaged or was crafted"
EXPECTED = {
    "model_tree_child.skops": r"node 0 of a decision tree points at left child 2000000000, "
                              r"which is not one of the nodes after it",
    "model_tree_right_child.skops": r"node 0 of a decision tree points at right child "
                                    r"2000000000",
    "model_tree_feature.skops": r"a decision tree splits on feature 1000000000, but has 2 "
                                r"features",
    "model_tree_loop.skops": r"node 0 of a decision tree points at left child 0, which is not "
                             r"one of the nodes after it",
    "model_kdtree_index.skops": r"the index array of a KDTree is not a permutation of its 90 "
                                r"rows",
}
"""Crafted model → what its one sentence names (after the file name and ``CRAFTED``)."""

RAW_CHILD = """
import json, sys, warnings
import numpy as np
import skops.io as sio
from cx_app.isolation import child_main, next_cpu_share
warnings.simplefilter("ignore")
def work(data, request):
    start = 0
    for size in request["sizes"]:
        next_cpu_share(request["seconds"])
        one, start = data[start:start + size], start + size
        payload = sio.loads(one, trusted=sio.get_untrusted_types(data=one))
        payload["estimator"].predict_proba(np.array([[1.0, 1.0], [5.0, 5.0], [3.0, 2.0]]))
        print(json.dumps({"ok": True}), flush=True)
if sys.argv[1:] == ["unlimited"]:  # the oracle: no limits at all
    data = sys.stdin.buffer.read()
    work(data, {"sizes": [len(data)], "seconds": 10 ** 6})
else:
    child_main(work)
"""
"""A child that opens and predicts with NO checks: what the sandbox must survive."""


@pytest.fixture(autouse=True)
def _empty_check_memory(monkeypatch, tmp_path):
    """Each test starts with an empty check memory on disk (the tests that reset the process's
    own memory expect a child for every file)."""
    monkeypatch.setenv("CX_APP_MODEL_CHECKS_DIR", str(tmp_path / "model-checks"))


def _one_sentence(message: str, name: str) -> None:
    assert message.startswith(name), message
    assert "\n" not in message and "Traceback" not in message and len(message) < 400, message


def _unchecked_prediction(data: bytes) -> int:
    """Return code of a throw-away process that predicts with the model, unchecked."""
    child = subprocess.run([sys.executable, "-c", RAW_CHILD, "unlimited"],
                           input=data, capture_output=True, timeout=60, cwd=ROOT, check=False)
    return child.returncode


@pytest.mark.parametrize("name", [
    "model_tree_child.skops",
    pytest.param("model_tree_feature.skops", marks=pytest.mark.slow),
    pytest.param("model_kdtree_index.skops", marks=pytest.mark.slow),
])
def test_the_crafts_really_crash_scikit_learn_without_the_checks(name):
    """The oracle: unchecked, a crafted tree or KD-tree kills the process (SIGSEGV)."""
    assert _unchecked_prediction((BAD / name).read_bytes()) == -11  # SIGSEGV


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_crafted_model_of_the_corpus_is_refused_in_one_sentence(name):
    """The checks' sentence for each file (run here: these crafts crash only when predicting,
    so opening them in the test's process is safe; ``load_model`` runs the same in its child,
    as the tests below show end to end)."""
    with pytest.raises(ModelFileError) as info:
        open_checked_model((BAD / name).read_bytes(), name)
    message = str(info.value)
    _one_sentence(message, name)
    assert re.search(f"{CRAFTED} \\({EXPECTED[name]}", message), message
    assert message.endswith("so it was not used.")


def _refusal(data: bytes, name: str) -> str:
    """The sentence a crafted model or project file is refused with."""
    with pytest.raises(CxAppError) as info:
        if name.endswith(".skops"):
            load_model(data, name=name)
        else:
            read_project(data, name=name)
    return str(info.value)


@pytest.mark.slow  # trains and crafts every model of the corpus again (~25 s)
def test_the_corpus_is_what_the_crafts_make_today():
    """The files on disk are reproducible: crafted again from today's models (whose bytes
    change with the algorithms' pipelines and the libraries), each is refused with the same
    sentence as the file on disk."""
    for name, data in crafted.corpus().items():
        if name.endswith((".skops", ".cxproj")):
            assert _refusal(data, name) == _refusal((BAD / name).read_bytes(), name), name


def _fitted(algorithm_id: str, **options):
    """A model of ``algorithm_id`` fitted on 60 seeded respondents (two attributes on 1–5,
    three classes), checked sound as trained."""
    from cx_app.models.crossval import build_model

    rng = np.random.default_rng(1)
    X = rng.integers(1, 6, size=(60, 2)).astype(float)
    y = (X[:, 0] > 2).astype(int) + (X[:, 1] > 3).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator = build_model(algorithm_id, **options).fit(X, y)
    check_fitted_model(estimator, "fine.skops")  # the model as trained passes
    return estimator


@pytest.mark.parametrize("algorithm_id, calibration, holds, edit, expected", [
    # every tree of a forest, and the trees inside a calibrated wrapper
    ("rf", "none", crafted.is_tree_nodes, crafted.set_node("left_child", 2_000_000_000),
     "points at left child 2000000000"),
    ("dt", "sigmoid", crafted.is_tree_nodes, crafted.set_node("feature", 7),
     "splits on feature 7, but has 2 features"),
    ("dt", "none", crafted.is_tree_nodes, crafted.set_node("right_child", 1, node=-1),
     "a leaf of a decision tree has a child"),
    ("knn", "temperature", crafted.is_neighbour_index, crafted.set_first(2_000_000_000),
     "the index array of a KDTree is not a permutation"),
])
def test_the_checks_find_crafted_structures_anywhere_in_the_fitted_graph(
        algorithm_id, calibration, holds, edit, expected):
    """Opened without a prediction (safe: nothing indexes the arrays yet), the graph walk finds
    the crafted structure wherever the pipeline keeps it."""
    estimator = _fitted(algorithm_id, calibration=calibration)
    data = crafted.patch_array(sio.dumps(estimator), holds, edit)
    hostile = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    with pytest.raises(ModelFileError, match=f"^bad.skops: {CRAFTED} \\(.*{expected}"):
        check_fitted_model(hostile, "bad.skops")


@pytest.fixture
def unchecked_child(monkeypatch):
    """The sandbox's child replaced by one that predicts without any check (the checks of
    ``model_checks`` then never run in it): the crash itself must become the sentence."""
    monkeypatch.setattr(model_sandbox, "_child_command",
                        lambda: [sys.executable, "-c", RAW_CHILD])
    monkeypatch.setattr(model_sandbox, "_verdicts", type(model_sandbox._verdicts)())


def test_a_crash_in_the_first_prediction_is_one_sentence_and_the_caller_lives(unchecked_child):
    data = crafted.crafted_models()["model_tree_child.skops"]
    with pytest.raises(ModelFileError) as info:
        model_sandbox.check_files_in_child([(data, "tree.skops")])
    assert str(info.value) == ("tree.skops: the model crashed while making its first "
                               "prediction (signal SIGSEGV); it was not used.")
    started = time.perf_counter()  # the answer is kept: no second child for the same file
    with pytest.raises(ModelFileError, match="^again.skops: the model crashed"):
        model_sandbox.check_files_in_child([(data, "again.skops")])
    assert time.perf_counter() - started < 0.5


def test_files_share_one_child_and_a_crash_is_charged_to_its_file(unchecked_child,
                                                                  monkeypatch):
    """A project's models go to one child; the crafted one kills it, the files after it get a
    new child, the refusal names the crafted file and the sound ones are kept as checked."""
    children = []
    command = model_sandbox._child_command
    monkeypatch.setattr(model_sandbox, "_child_command",
                        lambda: children.append(1) or command())
    sound = [crafted.reproducible(model_bytes(crafted.tiny_model(a))) for a in ("lr", "nb")]
    hostile = crafted.crafted_models()["model_tree_child.skops"]
    files = [(sound[0], "p: 000.skops"), (hostile, "p: 001.skops"), (sound[1], "p: 002.skops")]
    with pytest.raises(ModelFileError) as info:
        model_sandbox.check_files_in_child(files)
    assert str(info.value) == ("p: 001.skops: the model crashed while making its first "
                               "prediction (signal SIGSEGV); it was not used.")
    assert len(children) == 2
    model_sandbox.check_files_in_child([files[0], files[2]])  # kept: no third child
    assert len(children) == 2


def test_a_model_that_loops_forever_is_stopped_by_the_cpu_limit(unchecked_child, monkeypatch):
    """A tree whose node 0 is its own child makes scikit-learn loop forever (without the GIL):
    the child's CPU-time limit ends it."""
    monkeypatch.setenv("CX_APP_MODEL_CHECK_SECONDS", "5")
    data = crafted.crafted_models()["model_tree_loop.skops"]
    with pytest.raises(ModelFileError) as info:
        model_sandbox.check_files_in_child([(data, "loop.skops")])
    assert str(info.value) == ("loop.skops: the model used more than 5 s of CPU time in its "
                               "first prediction; it was not used.")


def test_a_sound_model_passes_the_child_once_and_predicts_the_same(monkeypatch):
    monkeypatch.setattr(model_sandbox, "_verdicts", type(model_sandbox._verdicts)())
    model = crafted.tiny_model("dt")
    data = crafted.reproducible(model_bytes(model))  # bytes this process never wrote
    started = time.perf_counter()
    loaded = load_model(data, name="dt.skops")
    first = time.perf_counter() - started
    started = time.perf_counter()
    load_model(data, name="dt.skops")
    again = time.perf_counter() - started
    rows = synthetic_rows(loaded)
    assert rows.shape == (9, 2) and np.isnan(rows[-1]).all()  # 3 + 5 random + the gap row
    assert rows[:3].tolist() == [[1, 1], [5, 5], [3, 3]]
    np.testing.assert_array_equal(loaded.predict_proba(rows), model.predict_proba(rows))
    assert again < first / 3  # the child ran once (its start is measured in bench/)


def test_cx_app_estimate_refuses_a_crafted_model_with_exit_2(tmp_path):
    """The CLI as the issue ran it: before, SIGSEGV (exit -11); now one sentence, exit 2."""
    model = tmp_path / "crafted.skops"
    model.write_bytes((BAD / "model_tree_child.skops").read_bytes())
    wave = tmp_path / "wave.csv"
    wave.write_text("Price,Speed\n1,2\n5,5\n3,4\n", encoding="utf-8")
    child = subprocess.run([sys.executable, "-m", "cx_app", "estimate", "--model",
                            str(model), str(wave)], capture_output=True, text=True,
                           timeout=120, cwd=ROOT, env={**os.environ}, check=False)
    assert child.returncode == 2, child.stderr
    lines = child.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: crafted.skops: {CRAFTED} (node 0 "
                                                   "of a decision tree points at left child")


def test_an_untrusted_type_is_refused_before_any_child_starts(monkeypatch):
    def no_child():
        raise AssertionError("a child was started for a file the type audit refuses")

    monkeypatch.setattr(model_sandbox, "_child_command", no_child)
    with pytest.raises(ModelFileError, match="does not trust.*posix.system"):
        load_model(BAD / "model_os_system.skops")


def test_a_project_with_a_crafted_final_model_is_one_sentence(monkeypatch):
    """The project's final models go through the same checks (one child for all of them)."""
    from cx_app.project import ProjectFileError, read_project

    monkeypatch.setattr(model_sandbox, "_verdicts", type(model_sandbox._verdicts)())
    hostile = crafted.crafted_models()["model_tree_feature.skops"]
    project = crafted.replace_project_member(crafted.tiny_project_bytes(), "models/000.skops",
                                             hostile)
    with pytest.raises(ProjectFileError) as info:
        read_project(project, name="p.cxproj")
    assert str(info.value) == (f"p.cxproj cannot be opened: p.cxproj: models/000.skops: "
                               f"{CRAFTED} (a decision tree splits on feature 1000000000, but "
                               "has 2 features), so it was not used.")


@pytest.mark.slow  # trains every algorithm, the CNN too (~40 s on two busy cores)
def test_every_algorithm_passes_the_child_check(monkeypatch):
    """No sound model is refused: one of each algorithm (and the papers' libsvm SVM, the
    calibrated wrappers), all in one child, each bytes this process never wrote."""
    from cx_app.estimate.model_file import check_model_files
    from cx_app.models.algorithms import ALGORITHMS

    monkeypatch.setattr(model_sandbox, "_verdicts", type(model_sandbox._verdicts)())
    files = [(crafted.tiny_model_bytes(a), f"{a}.skops") for a in sorted(ALGORITHMS)]
    svm = crafted.tiny_model("svm")
    from cx_app.models.crossval import build_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(2)
        X = rng.integers(1, 6, size=(90, 2)).astype(float)
        y = np.arange(90) % 11
        for algorithm, preset, calibration in (("svm", "papers", "none"),
                                               ("rf", "fast", "sigmoid")):
            estimator = build_model(algorithm, calibration=calibration, preset=preset).fit(X, y)
            model = dataclasses.replace(svm, estimator=estimator, algorithm_id=algorithm)
            files.append((crafted.reproducible(model_bytes(model)),
                          f"{algorithm}-{preset}-{calibration}.skops"))
    children = []
    command = model_sandbox._child_command
    monkeypatch.setattr(model_sandbox, "_child_command",
                        lambda: children.append(1) or command())
    check_model_files(files)
    assert len(children) == 1
    assert all(model_sandbox._verdicts[model_sandbox._key(d, ())] is None for d, _ in files)


def _first(estimator, attribute: str):
    """The first object of the fitted graph that has ``attribute`` (the walk of the checks)."""
    from cx_app.estimate.model_checks import _walk

    return next(obj for obj, _ in _walk(estimator) if hasattr(obj, attribute))


@pytest.mark.parametrize("algorithm_id, preset, attribute, change, expected", [
    ("xgb", None, "_Booster", lambda m: setattr(m, "n_classes_", 7),
     "an XGBoost booster has 3 classes, its classifier 7"),
    ("svm", "papers", "_n_support", lambda m: setattr(m, "_n_support", m._n_support + 1),
     "an SVM counts"),
    ("ann", None, "coefs_", lambda m: m.coefs_.__setitem__(0, m.coefs_[0].T.copy()),
     "layer 1 of a neural network has weights"),
    ("nb", None, "theta_", lambda m: setattr(m, "theta_", m.theta_[:, :1]),
     "a naive Bayes model's means and variances are not"),
    ("lr", None, "statistics_", lambda m: setattr(m, "statistics_", m.statistics_[:1]),
     "the gap filler holds 1 medians for 2 attributes"),
    ("lr", None, "coef_", lambda m: setattr(m, "coef_", m.coef_[:, :1]),
     "a linear model's coefficients have shape"),
])
def test_the_checks_refuse_coefficients_that_do_not_fit_their_sizes(
        algorithm_id, preset, attribute, change, expected):
    estimator = _fitted(algorithm_id, preset=preset)
    change(_first(estimator, attribute))
    with pytest.raises(ModelFileError, match=f"^bad.skops: {CRAFTED} \\(.*{expected}"):
        check_fitted_model(estimator, "bad.skops")
