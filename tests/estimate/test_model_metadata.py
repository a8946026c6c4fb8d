"""A model file's typed metadata (cx_app.estimate.model_metadata): old documents round-trip,
files written before the types existed still open, a malformed part is one ModelFileError."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cx_app.errors import ModelFileError
from cx_app.estimate.model_file import TrainedModel, load_model, save_model
from cx_app.estimate.model_metadata import HeldOutFigures, TrainingData
from cx_app.models.crossval import build_model

# what train_model wrote into model files before the metadata was typed (cx-app 0.x, issue 26):
# the keys of _cv_summary and the training dict, values as json.dumps left them
OLD_TRAINING = {"filename": "w1.xlsx", "sheet": "Sheet1", "sha256": "ab" * 32, "n": 90,
                "class_counts": {"0": 30, "1": 31, "2": 29}}
OLD_CV = {
    "folds": 3, "seed": 7, "n": 90,
    "levels": {"original": {"accuracy": 0.6, "f1_macro": 0.55, "precision_macro": None}},
    "alp_gap": {"n": 90, "accuracy_cm": 0.6, "accuracy_alp": 0.625, "accuracy_gap": 0.025,
                "share_gap": 0.04, "net_gap": -1.5, "net_calibration_error": 3.25,
                "score": 0.5},
    "alp_vs_cm": {"heldout": {"original": {"accuracy": {"cm": 0.6, "alp": 0.625,
                                                        "gap": 0.025}}}},
    "calibration_choice": {"chosen": "sigmoid", "reports": [{"method": "sigmoid", "brier": 0.2}],
                           "warnings": ["the held-out gap is large"]},
    "warnings": ["fold 2 had one class"],
    "net_score_error": {"fold_estimated": [10.0, 12.5, 9.0], "fold_realized": [11.0, 12.0, 8.0],
                        "fold_n": [30, 30, 30], "fold_outcome_variance": [1.0, 1.5, 2.0],
                        "bias": 0.1667, "model_se": 0.8},
    "full_training_check": {"n": 90, "heldout_cm": 0.6, "heldout_alp": 0.625,
                            "full_train_cm": 0.7, "full_train_alp": 0.66, "notes": []},
    "learning_curve": [{"train_share": 0.5, "repeat": 0, "n_train": 45, "n_test": 18,
                        "cm_train": 0.8, "alp_train": 0.7, "cm_test": 0.5, "alp_test": 0.6}],
}


def test_an_old_document_round_trips_with_its_parts_typed():
    figures = HeldOutFigures.from_dict(OLD_CV)
    assert figures.to_dict() == OLD_CV
    assert json.dumps(figures.to_dict(), sort_keys=True) == json.dumps(OLD_CV, sort_keys=True)
    assert (figures.folds, figures.seed, figures.alp_gap.accuracy_gap) == (3, 7, 0.025)
    assert figures.net_score_error.model_se == 0.8
    assert figures.calibration_warnings == ["the held-out gap is large"]
    assert figures.full_training_check.full_train_cm == 0.7
    assert figures.learning_curve[0]["n_train"] == 45
    assert isinstance(figures.learning_curve[0]["n_train"], int)  # not turned into 45.0
    training = TrainingData.from_dict(OLD_TRAINING)
    assert training.to_dict() == OLD_TRAINING
    assert (training.n, training.sheet, training.class_counts["1"]) == (90, "Sheet1", 31)


def test_missing_parts_are_none_and_unknown_keys_are_kept():
    figures = HeldOutFigures.from_dict({"folds": 5, "a_later_key": [1, 2]})
    assert (figures.seed, figures.alp_gap, figures.net_score_error) == (None, None, None)
    assert figures.calibration_warnings == [] and figures.levels == {}
    assert figures.to_dict() == {"folds": 5, "a_later_key": [1, 2]}
    assert HeldOutFigures.from_dict({}).to_dict() == {} == HeldOutFigures().to_dict()


@pytest.mark.parametrize(("part", "where"), [
    ({"folds": "five"}, "folds"),
    ({"alp_gap": {"n": 3, "accuracy_cm": "high"}}, "alp_gap.accuracy_cm"),
    ({"calibration_choice": {"warnings": []}}, "calibration_choice.chosen"),
])
def test_a_malformed_part_is_one_model_file_error_naming_it(part, where):
    with pytest.raises(ModelFileError, match=rf"^m\.skops: not a valid HeldOutFigures document: "
                                             rf"{where}"):
        HeldOutFigures.from_dict(part, source="m.skops")


def _with_metadata(path: Path, out: Path, edit) -> None:
    """``path`` rewritten with its metadata edited (the skops archive's schema.json)."""
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "schema.json":
                schema = json.loads(data)
                node = schema["content"]["metadata"]
                meta = json.loads(json.loads(node["content"]))
                edit(meta)
                node["content"] = json.dumps(json.dumps(meta))
                data = json.dumps(schema).encode()
            zout.writestr(item, data)


def test_a_file_with_the_old_metadata_opens_and_writes_it_back(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    model = TrainedModel(
        estimator=build_model("lr").fit(X, y), classes=(0, 1, 2), attribute_names=("a", "b"),
        schema_yaml="name: x\n", algorithm_id="lr", settings={}, calibration="none",
        training=TrainingData(n=90), cv=HeldOutFigures(), attribute_distributions={})
    path = save_model(model, tmp_path / "new.skops")
    old = tmp_path / "old.skops"

    def to_old(meta: dict) -> None:
        meta.update(training=OLD_TRAINING, cv=OLD_CV)
        del meta["preset"], meta["attribute_gaps"]  # older still: before presets and gaps

    _with_metadata(path, old, to_old)
    back = load_model(old)
    assert back.training.filename == "w1.xlsx" and back.cv.alp_gap.net_gap == -1.5
    assert (back.preset, dict(back.attribute_gaps)) == ("papers", {})
    meta = back.metadata()
    assert (meta["training"], meta["cv"]) == (OLD_TRAINING, OLD_CV)
    assert (meta["provenance"]["seed"], meta["provenance"]["folds"]) == (7, 3)
    assert meta["provenance"]["inputs"] == {"w1.xlsx": "ab" * 32}
    np.testing.assert_array_equal(back.predict_proba(X), model.predict_proba(X))


def test_a_file_with_a_malformed_metadata_part_is_refused_in_one_sentence(tmp_path):
    model = TrainedModel(
        estimator=build_model("lr").fit(np.eye(3), [0, 1, 2]), classes=(0, 1, 2),
        attribute_names=("a", "b", "c"), schema_yaml="name: x\n", algorithm_id="lr",
        settings={}, calibration="none", training=TrainingData(n=3), cv=HeldOutFigures(),
        attribute_distributions={})
    path = save_model(model, tmp_path / "m.skops")
    bad = tmp_path / "bad.skops"
    _with_metadata(path, bad, lambda meta: meta["training"].update(n="many"))
    with pytest.raises(ModelFileError, match=r"^bad\.skops: not a valid TrainingData document: "
                                             r"n: "):
        load_model(bad)
