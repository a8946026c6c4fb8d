"""Saved driver models: one skops file with the fitted pipeline and everything to apply it.

The layout and what is refused: docs/alp.md ("Model files"); the estimator is trained on class
*positions* 0..K−1. Trusted types are not enough (their arrays come from the file too, issue
24), so :func:`load_model` also bounds the archive, opens and predicts in a limited child
(:mod:`cx_app.estimate.model_sandbox`) and checks every fitted structure
(:mod:`cx_app.estimate.model_checks`) before the model is returned.
"""

from __future__ import annotations

import functools
import io
import json
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from cx_app.atomic_files import write_bytes_atomic
from cx_app.errors import ModelFileError
from cx_app.estimate.model_metadata import HeldOutFigures, TrainingData
from cx_app.json_values import plain_document
from cx_app.provenance import library_versions, provenance_block, sha256_hex

if TYPE_CHECKING:
    from cx_app.survey.schema import SurveySchema

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "TRUSTED_TYPES",
    "ModelVersionWarning",
    "TrainedModel",
    "check_model_files",
    "load_model",
    "model_bytes",
    "open_checked_model",
    "save_model",
]

FORMAT = "cx-app-model"
FORMAT_VERSION = 1

TRUSTED_TYPES: tuple[str, ...] = (
    # our own wrappers (cx_app.models.algorithms) and the CNN, whose state is plain data
    # checked by its __setstate__ (cx_app.models.cnn)
    "cx_app.models.algorithms.ContiguousLabels",
    "cx_app.models.algorithms.OrdinalLogisticClassifier",
    "cx_app.models.algorithms.RareSafeCalibrated",
    "cx_app.models.cnn.CNNClassifier",
    # scikit-learn internals of the pipelines and calibrators we build
    "sklearn.calibration._CalibratedClassifier",
    "sklearn.calibration._SigmoidCalibration",
    "sklearn.calibration._TemperatureScaling",
    "sklearn.metrics._dist_metrics.EuclideanDistance64",
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neighbors._ball_tree.BallTree",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.tree._tree.Tree",
    # the dtype SimpleImputer (the pipelines' "gaps" step) records of its training data: a
    # plain numpy dtype, rebuilt from its name
    "numpy.dtype",
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
    training: TrainingData
    cv: HeldOutFigures
    attribute_distributions: Mapping[str, Mapping[str, int]]
    versions: Mapping[str, str] = field(default_factory=library_versions)
    attribute_gaps: Mapping[str, int] = field(default_factory=dict)
    """Unanswered scores per attribute among the training respondents (``training.n``):
    the reference for the change of a wave's n/a share."""
    created: str = ""
    load_warnings: tuple[str, ...] = ()
    file_sha256: str = ""
    """The SHA-256 of the model file it was loaded from ("" for a model not read from a file;
    :func:`model_bytes` then gives the bytes to hash)."""
    preset: str = "papers"
    """The algorithm's preset (``fast`` or ``papers``); files written before presets existed
    used the papers' settings."""

    @functools.cached_property
    def schema(self) -> SurveySchema:
        """The survey schema the model was trained with (:class:`SurveySchema`; parsed once
        per model: a wave's estimate reads it several times)."""
        import yaml

        from cx_app.survey.schema import parse_schema

        return parse_schema(yaml.safe_load(self.schema_yaml), source="model file schema")

    @property
    def fills_gaps(self) -> bool:
        """Whether the pipeline fills unanswered scores itself (its ``gaps`` step, with the
        training data's medians); models saved before it existed need complete rows."""
        return _has_gap_step(self.estimator)

    @functools.cached_property
    def batch_rows(self) -> int:
        """Rows per prediction batch: a wave's memory does not grow with its size
        (:mod:`cx_app.estimate.model_size`)."""
        from cx_app.estimate.model_size import batch_rows, model_size

        return batch_rows(model_size(self.estimator))

    def predict_proba(self, X) -> np.ndarray:
        """n×K probabilities over ``classes`` (a class unseen in training gets 0); NaN cells
        are unanswered scores, filled by the pipeline from the training data. Predicted in
        batches of :attr:`batch_rows` rows."""
        from cx_app.models.crossval import aligned_proba

        Xa = np.asarray(X, dtype=float)
        if Xa.ndim != 2 or Xa.shape[1] != len(self.attribute_names):
            raise ModelFileError(
                f"the model needs {len(self.attribute_names)} attributes "
                f"({', '.join(self.attribute_names)}), got a table of shape {Xa.shape}"
            )
        step, positions = self.batch_rows, range(len(self.classes))
        if len(Xa) <= step:
            return aligned_proba(self.estimator, Xa, positions)
        return np.vstack([aligned_proba(self.estimator, Xa[i:i + step], positions)
                          for i in range(0, len(Xa), step)])

    def metadata(self) -> dict:
        """Everything but the estimator, as JSON-ready values."""
        provenance = provenance_block(  # of the training
            seed=self.cv.seed, folds=self.cv.folds, preset=self.preset,
            schema_yaml=self.schema_yaml, created=self.created,
            inputs={str(self.training.filename or "training data"): self.training.sha256})
        return plain_document({**{name: getattr(self, name) for name in _METADATA},
                               "training": self.training.to_dict(), "cv": self.cv.to_dict(),
                               "provenance": provenance})


_METADATA = ("classes", "attribute_names", "schema_yaml", "algorithm_id", "settings", "preset",
             "calibration", "attribute_distributions", "attribute_gaps", "versions", "created")
"""The fields of :class:`TrainedModel` written to the model file's metadata as they are."""


def _has_gap_step(estimator: Any) -> bool:
    steps = getattr(estimator, "named_steps", None)
    if steps is not None and "gaps" in steps:
        return True
    inner = getattr(estimator, "estimator", None)
    return inner is not None and _has_gap_step(inner)


def _payload(model: TrainedModel) -> dict:
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "metadata": json.dumps(model.metadata(), sort_keys=True), "estimator": model.estimator}


def save_model(model: TrainedModel, path: str | Path) -> Path:
    """Write ``model`` as one skops file (compressed zip), whole or not at all
    (:func:`cx_app.atomic_files.write_bytes_atomic`: a killed run leaves the old file)."""
    path = Path(path)
    try:
        write_bytes_atomic(path, model_bytes(model))
    except OSError as exc:
        raise ModelFileError(f"{path.name}: cannot write the model file ({exc.strerror})") from None
    return path


def model_bytes(model: TrainedModel) -> bytes:
    """The model file's bytes (what :func:`save_model` writes), e.g. for a download button;
    remembered as checked (:func:`cx_app.estimate.model_sandbox.remember`): this process
    fitted or already checked the model."""
    import skops.io as sio

    from cx_app.estimate.model_sandbox import remember

    data = sio.dumps(_payload(model), compression=zipfile.ZIP_DEFLATED)
    remember(data)
    return data


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


def load_model(source: str | Path | bytes | BinaryIO, *, trusted: Sequence[str] = (),
               name: str | None = None) -> TrainedModel:
    """Read a model file (a path, its bytes or a binary file object), refusing anything unsafe
    or incompatible with a :class:`ModelFileError` that says why; nothing is built from the file
    before :func:`check_model_files` accepted it. ``trusted``: extra type names to trust (for a
    user who has audited a file); ``name``: the file's name in messages."""
    from cx_app.survey.limits import limits_from_env
    from cx_app.survey.reading import read_source

    data, default_name = read_source(source, None, limits_from_env(), error=ModelFileError,
                                     what="model file")
    label = name or default_name
    check_model_files([(data, label)], trusted=trusted)
    return open_checked_model(data, label, trusted)


def check_model_files(files: Sequence[tuple[bytes, str]], *, trusted: Sequence[str] = ()
                      ) -> None:
    """What :func:`load_model` checks before it opens a file, for several files at once
    (``(bytes, name)``; a project's final models): each one's kind, archive members and types,
    then their first opening and prediction in one child process for all (those already
    checked in this process skipped). :class:`ModelFileError` for the first refused."""
    from cx_app.archive_limits import read_members
    from cx_app.estimate.model_sandbox import check_files_in_child
    from cx_app.survey.limits import limits_from_env

    limits = limits_from_env()
    for data, label in files:
        _refuse_non_skops(data, label)
        read_members(data, label=label, error=ModelFileError,
                     budget=limits.inflation_budget(), keep=False)
        _audited_types(data, label, trusted)
    check_files_in_child(files, trusted)


def _audited_types(data: bytes, label: str, trusted: Sequence[str]) -> list[str]:
    """The types skops would build from ``data`` beyond its own defaults (read from the
    archive's schema, nothing built); :class:`ModelFileError` if one is not trusted."""
    import skops.io as sio

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
    return list(untrusted)


def open_checked_model(data: bytes, label: str, trusted: Sequence[str] = ()) -> TrainedModel:
    """The model in ``data`` (a skops archive already within the size limits), its types,
    format, versions, fitted structures and size checked; :func:`load_model` calls it after
    the child process has done the same safely."""
    import skops.io as sio

    from cx_app.estimate.model_checks import check_fitted_model
    from cx_app.estimate.model_size import check_model_size

    untrusted = _audited_types(data, label, trusted)
    try:
        payload = sio.loads(data, trusted=untrusted)
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
    if saved.get("cx_app", "?").split(".")[0] != current["cx_app"].split(".")[0]:
        raise ModelFileError(
            f"{label} was written by cx-app {saved.get('cx_app', '?')}; this is cx-app "
            f"{current['cx_app']} (another major version). Re-train the model with this cx-app."
        )
    check_fitted_model(payload["estimator"], label)
    check_model_size(payload["estimator"], label)
    notes = []
    for lib in ("sklearn", "xgboost"):
        if lib in saved and saved[lib].split(".")[:2] != current[lib].split(".")[:2]:
            notes.append(
                f"{label} was written with {lib} {saved[lib]}, this is {lib} {current[lib]}: "
                "predictions may differ slightly; re-train to be sure.")
            warnings.warn(notes[-1], ModelVersionWarning, stacklevel=3)
    return TrainedModel(**{
        **{name: meta[name] for name in _METADATA if name in meta},
        "classes": tuple(meta["classes"]), "attribute_names": tuple(meta["attribute_names"]),
        "preset": str(meta.get("preset", "papers")),
        "training": TrainingData.from_dict(meta["training"], source=label),
        "cv": HeldOutFigures.from_dict(meta["cv"], source=label)},
        estimator=payload["estimator"], load_warnings=tuple(notes), file_sha256=sha256_hex(data))
