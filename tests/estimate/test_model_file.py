"""Model files: round trip, refusal of pickle / untrusted types / foreign versions."""

from __future__ import annotations

import json
import pickle
import warnings
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from cx_app.errors import ModelFileError
from cx_app.estimate.model_file import (
    FORMAT_VERSION,
    ModelVersionWarning,
    TrainedModel,
    load_model,
    model_bytes,
    save_model,
)
from cx_app.estimate.model_metadata import HeldOutFigures, TrainingData
from cx_app.estimate.training import train_model
from cx_app.models.algorithms import ALGORITHMS, FAST, PRESETS
from cx_app.models.crossval import build_model
from cx_app.simulation.waves import simulate_telecom_waves
from cx_app.survey.importing import load_survey
from cx_app.survey.schema import load_schema

pytestmark = pytest.mark.slow  # every algorithm saved and checked in children (~25 s)

ROOT = Path(__file__).resolve().parents[2]


def _survey(n_per_operator=70, seed=5):
    frame = simulate_telecom_waves([1], respondents_per_operator=n_per_operator, seed=seed)
    schema = load_schema(ROOT / "survey_schemas" / "telecom_nps.yaml")
    return load_survey(frame.to_csv(index=False).encode(), schema=schema, filename="w1.csv")


def _model(estimator, classes=(0, 1, 2), names=("a", "b")):
    return TrainedModel(
        estimator=estimator, classes=classes, attribute_names=names, schema_yaml="name: x\n",
        algorithm_id="lr", settings={}, calibration="none",
        training=TrainingData(sha256="0" * 64, n=60), cv=HeldOutFigures(),
        attribute_distributions={"a": {"1": 3}},
    )


def _fitted(algorithm_id="lr", calibration="none", seed=0, preset=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(90, 2))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    return build_model(algorithm_id, calibration=calibration, preset=preset).fit(X, y), X


def _rewrite(path: Path, out: Path, edit) -> None:
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "schema.json":
                data = edit(data)
            zout.writestr(item, data)


def test_round_trip_gives_identical_predictions_and_metadata(tmp_path):
    est, X = _fitted()
    model = _model(est, names=("a", "b"))
    path = save_model(model, tmp_path / "m.skops")
    back = load_model(path)
    np.testing.assert_array_equal(back.predict_proba(X), model.predict_proba(X))
    assert back.metadata() == model.metadata()
    assert back.classes == (0, 1, 2) and back.load_warnings == ()


def test_pickle_and_joblib_files_are_refused(tmp_path):
    est, _ = _fitted()
    pkl = tmp_path / "m.skops"
    pkl.write_bytes(pickle.dumps(est))
    with pytest.raises(ModelFileError, match="m.skops is a pickle/joblib file"):
        load_model(pkl)
    jbl = tmp_path / "m.joblib"
    joblib.dump(est, jbl, compress=3)
    with pytest.raises(ModelFileError, match="compressed .* joblib/pickle"):
        load_model(jbl)
    other_zip = tmp_path / "m.zip"
    with zipfile.ZipFile(other_zip, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(ModelFileError, match="not a skops model file"):
        load_model(other_zip)


class Sneaky(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self


def test_untrusted_type_is_refused(tmp_path):
    path = save_model(_model(Sneaky().fit(np.zeros((3, 2)), [0, 1, 2])), tmp_path / "s.skops")
    with pytest.raises(ModelFileError, match=r"does not trust.*Sneaky"):
        load_model(path)


def test_tampered_or_foreign_versions(tmp_path):
    est, X = _fitted()
    path = save_model(_model(est), tmp_path / "m.skops")
    newer = tmp_path / "newer.skops"
    _rewrite(path, newer, lambda d: _edit_json(d, "format_version", FORMAT_VERSION + 1))
    with pytest.raises(ModelFileError, match="format version 2.*Update cx-app"):
        load_model(newer)
    major = tmp_path / "major.skops"
    _rewrite(path, major, lambda d: _edit_meta(d, "cx_app", "9.0.0"))
    with pytest.raises(ModelFileError, match="written by cx-app 9.0.0"):
        load_model(major)
    sk = tmp_path / "sk.skops"
    _rewrite(path, sk, lambda d: _edit_meta(d, "sklearn", "0.1.0"))
    with pytest.warns(ModelVersionWarning, match="sklearn 0.1.0"):
        back = load_model(sk)
    assert "sklearn 0.1.0" in back.load_warnings[0]
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


def _edit_json(data: bytes, key: str, value) -> bytes:
    schema = json.loads(data)
    node = schema["content"][key]
    node["content"] = json.dumps(value)
    return json.dumps(schema).encode()


def _edit_meta(data: bytes, lib: str, version: str) -> bytes:
    schema = json.loads(data)
    node = schema["content"]["metadata"]
    meta = json.loads(json.loads(node["content"]))
    meta["versions"][lib] = version
    node["content"] = json.dumps(json.dumps(meta))
    return json.dumps(schema).encode()


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("algorithm_id", sorted(ALGORITHMS))
def test_every_algorithm_saves_with_trusted_types_only(tmp_path, algorithm_id, preset):
    if preset == "fast" and FAST[algorithm_id].estimator is ALGORITHMS[algorithm_id].estimator:
        pytest.skip("the same estimator types in both presets")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for calibration in ("none", "temperature"):
            est, X = _fitted(algorithm_id, calibration, preset=preset)
            path = save_model(_model(est), tmp_path / f"{calibration}.skops")
            np.testing.assert_allclose(load_model(path).predict_proba(X),
                                       _model(est).predict_proba(X))


def test_train_model_records_provenance_and_refits(tmp_path):
    survey = _survey()
    outcome = train_model(survey, "lr", calibration="none", folds=3)
    model = outcome.model
    assert model.training.sha256 == survey.source.sha256
    assert model.training.n == len(survey.y) == sum(model.training.class_counts.values())
    # the answered scores only: the cells imputed by the median are not part of the
    # distribution a new wave's drift is compared with
    assert survey.quality.gaps["shops"] > 0
    assert model.attribute_distributions["shops"] == {
        str(int(k)): int(v) for k, v in survey.X["shops"].value_counts().items()}
    assert model.attribute_gaps["shops"] == survey.quality.gaps["shops"]
    cv = outcome.cv
    assert model.cv.levels["original"]["accuracy"] == pytest.approx(
        np.mean(cv.y_pred == cv.y_true))
    assert set(model.cv.levels) == {"original", "3x3+IM", "2x2+IM"}
    back = load_model(save_model(model, tmp_path / "m.skops"))
    assert back.schema.target.column == survey.schema.target.column
    import hashlib

    assert back.file_sha256 == hashlib.sha256((tmp_path / "m.skops").read_bytes()).hexdigest()
    prov = back.metadata()["provenance"]
    assert prov["inputs"] == {"w1.csv": survey.source.sha256}
    assert (prov["seed"], prov["folds"], prov["created"]) == (0, 3, model.created)
    assert prov["schema_sha256"] == hashlib.sha256(model.schema_yaml.encode()).hexdigest()
    np.testing.assert_array_equal(back.predict_proba(survey.X), model.predict_proba(survey.X))


def test_load_from_bytes_and_file_objects(tmp_path):
    import io

    est, X = _fitted()
    model = _model(est)
    data = model_bytes(model)
    assert data[:2] == b"PK"  # a zip (skops archive)
    save_model(model, tmp_path / "m.skops")
    for source in (data, bytearray(data), io.BytesIO(data)):
        back = load_model(source)
        np.testing.assert_array_equal(back.predict_proba(X), model.predict_proba(X))
        assert back.metadata() == model.metadata()
    with (tmp_path / "m.skops").open("rb") as fh:
        assert load_model(fh).classes == (0, 1, 2)
    # the same refusals, naming the upload
    with pytest.raises(ModelFileError, match="upload.skops is a pickle/joblib file"):
        load_model(pickle.dumps(est), name="upload.skops")
    with pytest.raises(ModelFileError, match="the uploaded model file is not a cx-app model"):
        load_model(b"hello")
    with (tmp_path / "m.skops").open("r", encoding="latin-1") as fh, \
            pytest.raises(ModelFileError, match="binary mode"):
        load_model(fh)
    with pytest.raises(ModelFileError, match="path, bytes or a binary file object"):
        load_model(42)
    sneaky = model_bytes(_model(Sneaky().fit(np.zeros((3, 2)), [0, 1, 2])))
    with pytest.raises(ModelFileError, match=r"does not trust.*Sneaky"):
        load_model(io.BytesIO(sneaky))


def test_training_records_the_gap_report_and_the_full_training_check():
    from cx_app.estimate.alp import compare_alp_cm

    survey = _survey()
    outcome = train_model(survey, "lr", calibration="none", folds=3, learning_curve=True)
    cv, meta, model = outcome.cv, outcome.model.cv, outcome.model
    # training-fold side: every fold model on its own training rows, pooled
    assert cv.train_predictions is not None and len(cv.train_predictions) == 3
    y_tr = np.concatenate([cv.y_true[t.index] for t in cv.train_predictions])
    p_tr = np.vstack([t.proba for t in cv.train_predictions])
    assert len(y_tr) == 2 * len(survey.y)
    train_acc = meta.alp_vs_cm["training"]["original"]["accuracy"]
    assert train_acc["cm"] == pytest.approx(np.mean(p_tr.argmax(1) == cv.class_positions(y_tr)))
    assert train_acc["alp"] == pytest.approx(p_tr.max(axis=1).mean())
    held = compare_alp_cm(cv.y_true, cv.proba, cv.classes)["original"]
    assert meta.alp_vs_cm["heldout"]["original"] == held
    assert set(meta.alp_vs_cm["heldout"]) == {"original", "3x3+IM", "2x2+IM"}
    # Section 5: the model fit on 100 % validated with ALP, beside the held-out figures
    check = meta.full_training_check
    p_full = model.predict_proba(survey.X)
    codes = cv.class_positions()
    assert check.full_train_cm == pytest.approx(np.mean(p_full.argmax(1) == codes))
    assert check.full_train_alp == pytest.approx(p_full.max(axis=1).mean())
    assert check.heldout_cm == pytest.approx(np.mean(cv.proba.argmax(1) == codes))
    assert check.heldout_alp == pytest.approx(cv.proba.max(axis=1).mean())
    # the held-out gap carries the NPS terms of the schema's groups
    p = cv.proba
    est_nps = 100 * (p[:, 9:].sum(axis=1) - p[:, :7].sum(axis=1)).mean()
    y = np.asarray(cv.y_true)
    act_nps = 100 * (np.mean(y >= 9) - np.mean(y <= 6))
    assert meta.alp_gap.net_gap == pytest.approx(est_nps - act_nps)
    assert meta.alp_gap.net_calibration_error >= 0
    curve = meta.learning_curve
    assert [r["train_share"] for r in curve] == [0.03, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6,
                                                 0.7, 0.78]
    assert {"cm_train", "alp_train", "cm_test", "alp_test"} <= set(curve[0])
    # all of it survives the model file
    assert load_model(model_bytes(model)).cv.to_dict() == meta.to_dict()


def _cnn_file(tmp_path):
    est, X = _fitted("cnn")
    model = _model(est)
    return model, X, save_model(model, tmp_path / "cnn.skops")


def test_a_cnn_round_trips_with_identical_probabilities(tmp_path):
    from cx_app.models.cnn import CNNClassifier

    model, X, path = _cnn_file(tmp_path)
    back = load_model(path)
    cnn = back.estimator["model"]
    assert isinstance(cnn, CNNClassifier) and isinstance(cnn.architecture_, dict)
    assert all(isinstance(w, np.ndarray) for w in cnn.weights_)
    np.testing.assert_array_equal(back.predict_proba(X), model.predict_proba(X))


def _edit_cnn_state(data: bytes, edit) -> bytes:
    """Apply ``edit`` to the skops node of the CNN's state (the pipeline's "model" step)."""
    schema = json.loads(data)

    def find(node):
        if isinstance(node, dict):
            if node.get("__class__") == "CNNClassifier":
                return node
            for value in node.values():
                found = find(value)
                if found is not None:
                    return found
        elif isinstance(node, list):
            for value in node:
                found = find(value)
                if found is not None:
                    return found
        return None

    edit(find(schema)["content"]["content"])
    return json.dumps(schema).encode()


def test_a_tampered_cnn_file_is_refused_without_running_code(tmp_path):
    _, _, path = _cnn_file(tmp_path)

    def unknown_layer(state):
        # the architecture is plain dicts, lists and JSON values in the skops schema
        first = state["architecture_"]["content"]["layers"]["content"][0]
        first["content"]["type"]["content"] = json.dumps("Lambda")

    lambda_file = tmp_path / "lambda.skops"
    _rewrite(path, lambda_file, lambda d: _edit_cnn_state(d, unknown_layer))
    with pytest.raises(ModelFileError, match=r"cannot be read.*layer 1 is 'Lambda'"):
        load_model(lambda_file)

    def foreign_type(state):
        # the weights replaced by a call of a function outside the trusted list
        state["weights_"] = {"__class__": "system", "__module__": "os",
                             "__loader__": "FunctionNode"}

    foreign = tmp_path / "foreign.skops"
    _rewrite(path, foreign, lambda d: _edit_cnn_state(d, foreign_type))
    with pytest.raises(ModelFileError, match=r"does not trust.*os\.system"):
        load_model(foreign)
