"""The papers' CNN (``cnn``): scikit-learn contract, reproducibility, adaptation to few
attributes, equivalence of its fast layers with Keras' own, plain-data state."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from cx_app.errors import ModelFileError
from cx_app.models.algorithms import get_algorithm
from cx_app.models.cnn import ArchitectureAdaptationWarning, CNNClassifier, check_architecture
from cx_app.models.crossval import build_model, cross_validate_model
from cx_app.models.weighting import unweighted_reason

# Contract checks are about the interface, not the papers' settings: fewer, larger steps.
QUICK = {"epochs": 40, "batch_size": 16, "learning_rate": 0.01}


def _data(n=240, p=6, seed=1, classes=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(1, 11, (n, p)).astype(float)
    score = X[:, 0] * 0.6 + X[:, -1] * 0.4 + rng.normal(0, 1, n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return (X - 5.5) / 3, y


@pytest.mark.slow  # scikit-learn's ~50 estimator checks, each training the network (~30 s)
@parametrize_with_checks(
    [CNNClassifier(**QUICK, random_state=0)],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data":
            "mini-batch training: a weight of 2 is not the same as a duplicated row (the "
            "batches differ), as for scikit-learn's MLPClassifier",
    },
)
def test_sklearn_estimator_contract(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ArchitectureAdaptationWarning)
        check(estimator)


def test_the_papers_settings_are_the_defaults():
    spec = get_algorithm("cnn", "papers")
    assert spec.defaults == {"filters": 32, "kernel_size": 3, "pool_size": 4, "epochs": 100,
                             "batch_size": 128, "learning_rate": 0.001}
    pipeline = build_model("cnn", seed=3, preset="papers")
    model = pipeline["model"]
    assert isinstance(model, CNNClassifier) and model.random_state == 3
    assert (model.kernel_size, model.pool_size, model.epochs, model.batch_size) == (3, 4, 100,
                                                                                   128)
    assert "scale" in pipeline.named_steps and unweighted_reason(pipeline) is None


def test_architecture_is_the_papers_network_as_plain_data():
    X, y = _data(p=9)
    model = CNNClassifier(epochs=2, random_state=0).fit(X, y)
    arch = model.architecture_
    assert [layer["type"] for layer in arch["layers"]] == ["Conv1D", "MaxPooling1D", "Flatten",
                                                          "Dense"]
    conv, pool, _, dense = arch["layers"]
    assert (conv["kernel_size"], conv["activation"], pool["pool_size"]) == (3, "relu", 4)
    assert (dense["units"], dense["activation"]) == (5, "softmax")
    assert arch["input_shape"] == [9, 1] and model.adaptation_ == ""
    # 9 positions pooled by 4 ("same") -> 3 positions of 32 filters
    assert [w.shape for w in model.weights_] == [(3, 1, 32), (32,), (96, 5), (5,)]
    assert all(w.dtype == np.float32 for w in model.weights_)
    assert check_architecture(arch) == [w.shape for w in model.weights_]


def test_same_seed_same_model_other_seed_other_model():
    X, y = _data()
    a = CNNClassifier(epochs=5, random_state=7).fit(X, y)
    b = CNNClassifier(epochs=5, random_state=7).fit(X, y)
    c = CNNClassifier(epochs=5, random_state=8).fit(X, y)
    for wa, wb in zip(a.weights_, b.weights_, strict=True):
        np.testing.assert_array_equal(wa, wb)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not np.array_equal(a.predict_proba(X), c.predict_proba(X))
    # the seed is the estimator's own: the global numpy state is neither used nor changed
    np.random.seed(0)
    before = np.random.random()
    np.random.seed(0)
    CNNClassifier(epochs=2, random_state=7).fit(X, y)
    assert np.random.random() == before


@pytest.mark.slow  # about 20 s on 2 cores (three CNN cross-validations)
def test_cross_validation_is_reproducible_and_records_the_adaptation():
    X, y = _data(n=150, p=3)
    runs = [cross_validate_model(X, y, range(5), "cnn", folds=3, seed=2,
                                 settings={"epochs": 5}) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].proba, runs[1].proba)
    np.testing.assert_allclose(runs[0].proba.sum(axis=1), 1.0, atol=1e-6)
    notes = " ".join(runs[0].warnings)
    assert "ArchitectureAdaptationWarning" in notes and "pooling 4→3" in notes


@pytest.mark.slow  # four networks trained (~6 s)
@pytest.mark.parametrize(("p", "kernel", "pool", "said"), [
    (1, 1, 1, "kernel 3→1 and pooling 4→1"),
    (2, 2, 2, "kernel 3→2 and pooling 4→2"),
    (3, 3, 3, "pooling 4→3"),
    (4, 3, 4, ""),
])
def test_few_attributes_get_narrower_windows_and_a_warning(p, kernel, pool, said):
    X, y = _data(n=120, p=p)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CNNClassifier(epochs=3, random_state=0).fit(X, y)
    adapted = [w for w in caught if issubclass(w.category, ArchitectureAdaptationWarning)]
    assert (model.kernel_size_, model.pool_size_) == (kernel, pool)
    assert model.architecture_["layers"][0]["kernel_size"] == kernel
    assert model.architecture_["layers"][1]["pool_size"] == pool
    if said:
        assert said in model.adaptation_ and f"{p} input column(s)" in model.adaptation_
        assert [str(w.message) for w in adapted] == [model.adaptation_]
    else:
        assert model.adaptation_ == "" and not adapted
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)


def test_classes_are_the_labels_seen_and_columns_follow_them():
    X, y = _data(classes=5)
    labels = np.array([0, 2, 3, 7, 10])[y]  # positions with gaps, as in a training fold
    model = CNNClassifier(epochs=3, random_state=0).fit(X, labels)
    np.testing.assert_array_equal(model.classes_, [0, 2, 3, 7, 10])
    proba = model.predict_proba(X[:20])
    assert proba.shape == (20, 5) and (proba >= 0).all()
    np.testing.assert_array_equal(model.predict(X[:20]), model.classes_[proba.argmax(1)])
    single = CNNClassifier(epochs=3).fit(X, np.full(len(X), 4))
    np.testing.assert_array_equal(single.predict_proba(X[:3]), np.ones((3, 1)))
    assert single.predict(X[:1]).tolist() == [4]


def test_sample_weights_train_the_network():
    X, y = _data()
    plain = CNNClassifier(epochs=5, random_state=0).fit(X, y)
    ones = CNNClassifier(epochs=5, random_state=0).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(plain.predict_proba(X), ones.predict_proba(X))
    weights = np.where(y == 0, 20.0, 1.0)
    heavy = CNNClassifier(epochs=5, random_state=0).fit(X, y, sample_weight=weights)
    assert heavy.predict_proba(X)[:, 0].mean() > plain.predict_proba(X)[:, 0].mean()


@pytest.mark.slow  # builds and compiles Keras layers (~15 s)
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_fast_layers_compute_what_keras_layers_compute(padding):
    from cx_app.models.cnn import _keras, _layer_classes

    keras = _keras()
    fast = _layer_classes()
    rng = np.random.default_rng(0)
    for width in range(1, 11):
        x = rng.normal(size=(5, width, 1)).astype("float32")
        for kernel in range(1, min(3, width) + 1):
            ours, theirs = fast["Conv1D"](4, kernel, padding=padding, activation="relu"), \
                keras.layers.Conv1D(4, kernel, padding=padding, activation="relu")
            ours.build(x.shape)
            theirs.build(x.shape)
            for mine, other in zip(ours.weights, theirs.weights, strict=True):
                other.assign(mine.value)
            np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-5, atol=1e-6)
        h = rng.normal(size=(5, width, 3)).astype("float32")
        for pool in range(1, min(4, width) + 1):
            np.testing.assert_array_equal(
                fast["MaxPooling1D"](pool, padding=padding)(h),
                keras.layers.MaxPooling1D(pool, padding=padding)(h), err_msg=f"{width} {pool}")


def test_state_is_plain_data_and_survives_pickle():
    X, y = _data()
    model = CNNClassifier(epochs=3, random_state=0).fit(X, y)
    state = model.__getstate__()
    plain = (dict, list, tuple, str, int, float, bool, type(None), np.ndarray)

    def check(value):
        assert isinstance(value, plain), type(value)
        if isinstance(value, dict):
            for v in value.values():
                check(v)
        elif isinstance(value, list | tuple):
            for v in value:
                check(v)

    check({k: v for k, v in state.items() if k != "_sklearn_version"})
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(clone(model).get_params()["epochs"], 3)


def test_a_tampered_state_is_refused():
    X, y = _data()
    state = CNNClassifier(epochs=2, random_state=0).fit(X, y).__getstate__()

    def load(edit):
        tampered = pickle.loads(pickle.dumps(state))
        edit(tampered)
        CNNClassifier().__setstate__(tampered)

    with pytest.raises(ModelFileError, match=r"layer 1 is 'Lambda'; allowed: Conv1D"):
        load(lambda s: s["architecture_"]["layers"][0].update(type="Lambda"))
    with pytest.raises(ModelFileError, match=r"Conv1D activation 'exec'"):
        load(lambda s: s["architecture_"]["layers"][0].update(activation="exec"))
    with pytest.raises(ModelFileError, match=r"options \['function', 'type'\]"):
        load(lambda s: s["architecture_"]["layers"].__setitem__(
            2, {"type": "Flatten", "function": "os.system"}))
    with pytest.raises(ModelFileError, match="damaged weight array 3"):
        load(lambda s: s["weights_"].__setitem__(2, np.zeros((2, 2), np.float32)))
    with pytest.raises(ModelFileError, match="one output per class"):
        load(lambda s: s.update(classes_=np.arange(7)))
    with pytest.raises(ModelFileError, match="unexpected contents"):
        load(lambda s: s.update(keras_model=b"..."))


def test_importing_the_package_does_not_import_keras():
    code = ("import sys, cx_app, cx_app.models.algorithms, cx_app.estimate.model_file; "
            "print('keras' in sys.modules, 'jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.slow  # cross-validates the network three times, once in a child (~20 s)
def test_cnn_folds_run_apart_in_a_process_that_ends_with_the_same_numbers(monkeypatch):
    """JAX uses every core for one fit and a fresh worker process pays seconds of start-up:
    the CNN's folds are no pool tasks (n_jobs 1 for joblib), other algorithms' folds are. They
    run one after another in one process started for them, so that Keras and JAX leave with
    it: the evaluating process never imports them, and the probabilities are those of the
    folds run here."""
    from cx_app.models import crossval

    seen = []
    real = crossval.Parallel

    def spy(*args, **kwargs):
        seen.append(kwargs.get("n_jobs"))
        return real(*args, **kwargs)

    monkeypatch.setattr(crossval, "Parallel", spy)
    rng = np.random.default_rng(0)
    X = rng.integers(1, 11, size=(60, 5)).astype(float)
    y = np.array([0, 1, 2] * 20)
    apart = crossval.cross_validate_model(X, y, (0, 1, 2), "cnn", settings={"epochs": 2},
                                          folds=2, n_jobs=2)
    crossval.cross_validate_model(X, y, (0, 1, 2), "nb", folds=2, n_jobs=2)
    assert seen == [1, 2]
    code = ("import sys, json; import numpy as np; from cx_app.models.crossval import "
            "cross_validate_model; cv = cross_validate_model(np.eye(6), [0, 1, 2] * 2, (0, 1, 2),"
            " 'cnn', settings={'epochs': 2}, folds=2); assert cv.proba.shape == (6, 3);"
            " print(json.dumps(['keras' in sys.modules, 'jax' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == [False, False]
    monkeypatch.setattr(crossval, "_apart", lambda jobs: map(crossval._call, jobs))
    here = crossval.cross_validate_model(X, y, (0, 1, 2), "cnn", settings={"epochs": 2},
                                         folds=2)
    np.testing.assert_array_equal(apart.proba, here.proba)
