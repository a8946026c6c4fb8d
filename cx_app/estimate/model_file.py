"""Saved driver models: one skops file with the fitted pipeline and everything to apply it.

A model file is a skops archive of one dict ``{"format", "format_version", "metadata",
"estimator"}``: ``metadata`` is JSON text (schema as YAML text, classes, plan, algorithm and
settings, calibration, training-data fingerprint and size, held-out metrics and ALP gaps,
training attribute distributions, library versions); ``estimator`` is the fitted pipeline
(with its calibration), trained on class *positions* 0..K−1 like :mod:`cx_app.models.crossval`.

Loading never unpickles: pickle and joblib files are recognised by their first bytes and
refused; a skops file is opened only when every type it contains is in :data:`TRUSTED_TYPES`
(skops' ``get_untrusted_types``), an explicit list of the types our algorithms actually use.
A file from a newer format or another major cx-app version is refused; another scikit-learn or
xgboost version gives a :class:`ModelVersionWarning` (predictions may differ slightly).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import warnings
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from cx_app.errors import ModelFileError
from cx_app.provenance import library_versions

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "TRUSTED_TYPES",
    "ModelVersionWarning",
    "TrainedModel",
    "TrainingOutcome",
    "library_versions",
    "load_model",
    "model_bytes",
    "save_model",
    "train_model",
]

FORMAT = "cx-app-model"
FORMAT_VERSION = 1

TRUSTED_TYPES: tuple[str, ...] = (
    # our own wrappers (cx_app.models.algorithms)
    "cx_app.models.algorithms.ContiguousLabels",
    "cx_app.models.algorithms.OrdinalLogisticClassifier",
    "cx_app.models.algorithms.RareSafeCalibrated",
    # scikit-learn internals of the pipelines and calibrators we build
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
    "sklearn.calibration._TemperatureScaling",
    "sklearn.metrics._dist_metrics.EuclideanDistance64",
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neighbors._ball_tree.BallTree",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.tree._tree.Tree",
    # xgboost (the "xgb" algorithm)
    "xgboost.core.Booster",
    "xgboost.sklearn.XGBClassifier",
    # statsmodels' proportional-odds model (the "ordinal" algorithm)
    "scipy.stats._continuous_distns.logistic_gen",
    "statsmodels.base.data.ModelData",
    "statsmodels.miscmodels.ordinal_model.OrderedModel",
    "statsmodels.miscmodels.ordinal_model.OrderedResults",
    "statsmodels.miscmodels.ordinal_model.OrderedResultsWrapper",
)
"""Types (beyond skops' own defaults) a model file may contain. Keep it to what
:data:`cx_app.models.algorithms.ALGORITHMS` with each calibration really produces; the tests save
every algorithm and check that nothing else is needed."""

_PICKLE_MAGIC = (b"\x80",)  # protocol 2+ opcode PROTO
_COMPRESSED_MAGIC = {  # joblib's compressed pickles
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ": "xz",
    b"\x5d\x00\x00": "lzma",
}


class ModelVersionWarning(UserWarning):
    """A model file was written with other library versions; predictions may differ."""


@dataclass(frozen=True, eq=False)
class TrainedModel:
    """A fitted driver model and what is needed to apply it to a new wave.

    ``estimator`` was fitted on class positions 0..K−1 of ``classes``; use
    :meth:`predict_proba` to get probabilities over the full class list.
    """

    estimator: Any
    classes: tuple
    attribute_names: tuple[str, ...]
    schema_yaml: str
    algorithm_id: str
    settings: Mapping[str, Any]
    calibration: str
    training: Mapping[str, Any]
    cv: Mapping[str, Any]
    attribute_distributions: Mapping[str, Mapping[str, int]]
    versions: Mapping[str, str] = field(default_factory=library_versions)
    created: str = ""
    load_warnings: tuple[str, ...] = ()

    @property
    def schema(self):
        """The survey schema the model was trained with (:class:`SurveySchema`)."""
        import yaml

        from cx_app.survey.schema import parse_schema

        return parse_schema(yaml.safe_load(self.schema_yaml), source="model file schema")

    def predict_proba(self, X) -> np.ndarray:
        """n×K probabilities over ``classes`` (a class unseen in training gets 0)."""
        from cx_app.models.crossval import aligned_proba

        Xa = np.asarray(X, dtype=float)
        if Xa.ndim != 2 or Xa.shape[1] != len(self.attribute_names):
            raise ModelFileError(
                f"the model needs {len(self.attribute_names)} attributes "
                f"({', '.join(self.attribute_names)}), got a table of shape {Xa.shape}"
            )
        return aligned_proba(self.estimator, Xa, len(self.classes))

    def metadata(self) -> dict:
        """Everything but the estimator, as JSON-ready values."""
        return {
            "classes": list(self.classes),
            "attribute_names": list(self.attribute_names),
            "schema_yaml": self.schema_yaml,
            "algorithm_id": self.algorithm_id,
            "settings": _jsonable(dict(self.settings)),
            "calibration": self.calibration,
            "training": _jsonable(dict(self.training)),
            "cv": _jsonable(dict(self.cv)),
            "attribute_distributions": _jsonable(dict(self.attribute_distributions)),
            "versions": dict(self.versions),
            "created": self.created,
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _payload(model: TrainedModel) -> dict:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "metadata": json.dumps(model.metadata(), sort_keys=True),
        "estimator": model.estimator,
    }


def save_model(model: TrainedModel, path: str | Path) -> Path:
    """Write ``model`` as one skops file (compressed zip)."""
    import skops.io as sio

    path = Path(path)
    try:
        sio.dump(_payload(model), path, compression=zipfile.ZIP_DEFLATED)
    except OSError as exc:
        raise ModelFileError(f"{path.name}: cannot write the model file ({exc.strerror})") from None
    return path


def model_bytes(model: TrainedModel) -> bytes:
    """The model file's bytes (what :func:`save_model` writes), e.g. for a download button;
    :func:`load_model` reads them back."""
    import skops.io as sio

    return sio.dumps(_payload(model), compression=zipfile.ZIP_DEFLATED)


def _read_source(source) -> tuple[bytes, str]:
    """The bytes of a model file given as a path, bytes or a binary file object, and the name
    to use in messages."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source), "the uploaded model file"
    if isinstance(source, str | Path):
        path = Path(source)
        try:
            return path.read_bytes(), path.name
        except OSError as exc:
            raise ModelFileError(
                f"{path.name}: cannot read the model file ({exc.strerror})") from None
    read = getattr(source, "read", None)
    if read is None:
        raise ModelFileError(
            f"a model file must be a path, bytes or a binary file object, not "
            f"{type(source).__name__}")
    name = Path(str(getattr(source, "name", "") or "the uploaded model file")).name
    try:
        data = read()
    except OSError as exc:
        raise ModelFileError(f"{name}: cannot read the model file ({exc.strerror})") from None
    if isinstance(data, str):
        raise ModelFileError(f"{name}: the model file must be opened in binary mode ('rb')")
    return bytes(data), name


def _refuse_non_skops(data: bytes, name: str) -> None:
    head = data[:8]
    if head.startswith(_PICKLE_MAGIC):
        raise ModelFileError(
            f"{name} is a pickle/joblib file. Pickle files can run any code when opened, "
            "so cx-app refuses them; re-train the model with `cx-app train ... --out "
            "MODEL.skops` to get a safe model file."
        )
    kind = next((k for m, k in _COMPRESSED_MAGIC.items() if head.startswith(m)), None)
    if kind is None and len(head) >= 2 and head[0] == 0x78 and ((head[0] << 8) | head[1]) % 31 == 0:
        kind = "zlib"  # RFC 1950 header: CMF 0x78 and a check byte, joblib's default
    if kind is not None:
        raise ModelFileError(
            f"{name} looks like a compressed ({kind}) joblib/pickle file, which cx-app "
            "refuses (it could run any code); use a .skops file written by `cx-app train`."
        )
    buffer = io.BytesIO(data)
    if not zipfile.is_zipfile(buffer):
        raise ModelFileError(
            f"{name} is not a cx-app model file (expected a .skops archive written by "
            "`cx-app train`)."
        )
    try:
        with zipfile.ZipFile(buffer) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ModelFileError(f"{name}: the model file is damaged ({exc})") from None
    if "schema.json" not in names:
        raise ModelFileError(
            f"{name} is a zip archive but not a skops model file (no schema.json); "
            "use a .skops file written by `cx-app train`."
        )


def _major(version: str) -> str:
    return version.split(".")[0]


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def load_model(source: str | Path | bytes | BinaryIO, *, trusted: Sequence[str] = (),
               name: str | None = None) -> TrainedModel:
    """Read a model file written by :func:`save_model`, refusing anything unsafe or
    incompatible with a :class:`ModelFileError` that says why.

    ``source``: a path, the file's bytes (an upload) or a binary file object.
    ``trusted``: extra type names to trust (for a user who has audited a file); default none.
    ``name``: the file name to use in messages (default: the path's or file object's name).
    """
    import skops.io as sio

    data, default_name = _read_source(source)
    label = name or default_name
    _refuse_non_skops(data, label)
    allowed = set(TRUSTED_TYPES) | set(trusted)
    try:
        untrusted = sio.get_untrusted_types(data=data)
    except Exception as exc:  # a corrupt archive: skops raises various types
        raise ModelFileError(f"{label}: the model file is damaged ({exc})") from None
    unknown = sorted(t for t in untrusted if t not in allowed)
    if unknown:
        raise ModelFileError(
            f"{label} contains types cx-app does not trust, so it was not opened: "
            f"{', '.join(unknown)}. Only models written by `cx-app train` can be loaded."
        )
    try:
        payload = sio.loads(data, trusted=list(untrusted))
    except Exception as exc:
        raise ModelFileError(f"{label}: the model file cannot be read ({exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ModelFileError(f"{label} is a skops file but not a cx-app model file.")
    version = payload.get("format_version")
    if not isinstance(version, int) or version != FORMAT_VERSION:
        newer = isinstance(version, int) and version > FORMAT_VERSION
        raise ModelFileError(
            f"{label} has model-file format version {version!r}; this cx-app reads version "
            f"{FORMAT_VERSION}. "
            + ("Update cx-app to open it." if newer else "Re-train the model with this cx-app.")
        )
    try:
        meta = json.loads(payload["metadata"])
    except (KeyError, TypeError, ValueError):
        raise ModelFileError(f"{label}: the model's metadata is missing or damaged.") from None
    current = library_versions()
    saved = meta.get("versions", {})
    if _major(saved.get("cx_app", "?")) != _major(current["cx_app"]):
        raise ModelFileError(
            f"{label} was written by cx-app {saved.get('cx_app', '?')}; this is cx-app "
            f"{current['cx_app']} (another major version). Re-train the model with this cx-app."
        )
    notes = []
    for lib in ("sklearn", "xgboost"):
        if lib in saved and _minor(saved[lib]) != _minor(current[lib]):
            notes.append(
                f"{label} was written with {lib} {saved[lib]}, this is {lib} {current[lib]}: "
                "predictions may differ slightly; re-train to be sure."
            )
    for note in notes:
        warnings.warn(note, ModelVersionWarning, stacklevel=2)
    classes = tuple(meta["classes"])
    return TrainedModel(
        estimator=payload["estimator"],
        classes=classes,
        attribute_names=tuple(meta["attribute_names"]),
        schema_yaml=meta["schema_yaml"],
        algorithm_id=meta["algorithm_id"],
        settings=meta["settings"],
        calibration=meta["calibration"],
        training=meta["training"],
        cv=meta["cv"],
        attribute_distributions=meta["attribute_distributions"],
        versions=saved,
        created=meta.get("created", ""),
        load_warnings=tuple(notes),
    )


# --------------------------------------------------------------------------- training


@dataclass(frozen=True, eq=False)
class TrainingOutcome:
    """A trained model plus how its calibration was chosen and its held-out predictions."""

    model: TrainedModel
    choice: Any  # cx_app.estimate.calibration.CalibrationChoice
    cv_results: Mapping[str, Any]  # method -> CrossValResult

    @property
    def cv(self):
        return self.cv_results[self.model.calibration]


def _cv_summary(cv, resolved_plan, choice, groups) -> dict:
    from cx_app.engine.confusion import confusion_matrix
    from cx_app.estimate.alp import alp_gap, compare_alp_cm, level_metrics

    regular = confusion_matrix(list(cv.y_true), list(cv.y_pred), labels=cv.classes)
    levels = level_metrics(regular, resolved_plan)
    gap = alp_gap(cv.y_true, cv.proba, cv.classes, groups=groups)
    sides = {"heldout": compare_alp_cm(cv.y_true, cv.proba, cv.classes,
                                       resolved_plan=resolved_plan, label="held-out folds")}
    if cv.train_predictions:
        # every fold model on its own training rows, pooled (each row counted folds − 1 times)
        y_train = np.concatenate([cv.y_true[tp.index] for tp in cv.train_predictions])
        p_train = np.vstack([tp.proba for tp in cv.train_predictions])
        sides["training"] = compare_alp_cm(y_train, p_train, cv.classes,
                                           resolved_plan=resolved_plan, label="training folds")
    return {
        "folds": cv.folds,
        "seed": cv.seed,
        "n": cv.n,
        "levels": {name: {k: m[k] for k in ("accuracy", "precision_macro", "recall_macro",
                                            "f1_macro") if k in m}
                   for name, m in levels.items()},
        "alp_gap": gap.to_dict(),
        "alp_vs_cm": {side: comp.to_dict()["levels"] for side, comp in sides.items()},
        "calibration_choice": choice.to_dict(),
        "warnings": list(cv.warnings),
    }


def _net_groups(schema):
    from cx_app.errors import PlanError
    from cx_app.survey.nps import groups_for_schema

    try:
        return groups_for_schema(schema)
    except PlanError:
        return None  # no net-score groups: the gap has no NPS term


def train_model(survey, algorithm_id: str, *, calibration: str = "auto", folds: int = 5,
                seed: int = 0, settings: Mapping[str, Any] | None = None, n_jobs: int = 1,
                progress: Callable | None = None,
                learning_curve: bool = False) -> TrainingOutcome:
    """Cross-validate ``algorithm_id`` on a labelled survey (every calibration method when
    ``calibration="auto"``, choosing the smallest held-out ALP gap, NPS error included), then
    fit the chosen pipeline on all respondents and package it as a :class:`TrainedModel`.

    The model's ``cv`` metadata holds the held-out metrics per level, the held-out ALP gap,
    regular vs ALP metrics per level on the held-out and on the training folds
    (``alp_vs_cm``), the calibration table, and the paper's Section 5 check
    (``full_training_check``: the model fit on 100 % validated with ALP beside the held-out
    figures). ``learning_curve=True`` adds ``learning_curve`` (CM and ALP accuracy on train
    and test for training shares 3 %–78 %; ten more fits).
    """
    from cx_app.engine.grouping import resolve_plan
    from cx_app.errors import AnalysisError
    from cx_app.estimate.alp import alp_learning_curve, full_training_alp_check
    from cx_app.estimate.calibration import CALIBRATION_METHODS, compare_calibrations
    from cx_app.estimate.drift import value_counts_by_attribute
    from cx_app.models.algorithms import get_algorithm
    from cx_app.models.crossval import build_model, class_positions

    if survey.y is None:
        raise AnalysisError(
            f"{survey.source.filename}: training needs the target column "
            f"'{survey.schema.target.column}', which this file does not have"
        )
    classes = tuple(survey.classes)
    groups = _net_groups(survey.schema)
    methods = CALIBRATION_METHODS if calibration == "auto" else (calibration,)
    choice, results = compare_calibrations(
        survey.X, survey.y, classes, algorithm_id, methods=methods, folds=folds, seed=seed,
        settings=settings, n_jobs=n_jobs, progress=progress, groups=groups,
        keep_train_proba=True)
    chosen = choice.chosen
    estimator = build_model(algorithm_id, settings, seed=seed, calibration=chosen)
    codes = class_positions(survey.y, classes)
    Xa = np.asarray(survey.X, dtype=float)
    estimator.fit(Xa, codes)
    resolved = resolve_plan(survey.schema.plan_spec, classes)
    spec = get_algorithm(algorithm_id)
    cv = results[chosen]
    summary = _cv_summary(cv, resolved, choice, groups)
    positions = tuple(range(len(classes)))
    summary["full_training_check"] = full_training_alp_check(
        Xa, codes, positions, estimator, heldout_y_true=cv.class_positions(),
        heldout_proba=cv.proba).to_dict()
    if learning_curve:
        curve = alp_learning_curve(
            Xa, codes, positions, build_model(algorithm_id, settings, seed=seed,
                                              calibration=chosen), seed=seed)
        summary["learning_curve"] = curve.to_dict(orient="records")
    model = TrainedModel(
        estimator=estimator,
        classes=classes,
        attribute_names=tuple(survey.attribute_names),
        schema_yaml=survey.schema.to_yaml(),
        algorithm_id=algorithm_id,
        settings=spec.settings(settings),
        calibration=chosen,
        training={
            "filename": survey.source.filename,
            "sheet": survey.source.sheet,
            "sha256": survey.source.sha256,
            "n": int(len(codes)),
            "class_counts": {str(c): int(v) for c, v in
                             zip(classes, np.bincount(codes, minlength=len(classes)), strict=True)},
        },
        cv=summary,
        attribute_distributions=value_counts_by_attribute(survey.X),
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    return TrainingOutcome(model, choice, results)
