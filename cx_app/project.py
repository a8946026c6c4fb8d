"""Project files (``.cxproj``): an analysis saved whole, to be reopened without retraining.

The zip's members: docs/architecture.md (``project.py``). :func:`read_project` checks everything,
sizes at every level included (:mod:`cx_app.archive_limits`), before it returns anything: one
:class:`ProjectFileError` sentence otherwise, nothing half-loaded.
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cx_app.archive_limits import read_members
from cx_app.atomic_files import write_bytes_atomic
from cx_app.engine.plan import PlanSpec
from cx_app.errors import CxAppError
from cx_app.json_values import json_default, plain_document
from cx_app.provenance import library_versions, provenance_block, sha256_hex
from cx_app.safe_text import plain_text
from cx_app.survey.data import SurveyData
from cx_app.survey.schema import schema_from_yaml_text

__all__ = ["FORMAT", "FORMAT_VERSION", "Project", "ProjectFileError", "ProjectModel",
           "SurveyIdentity", "crossval_arrays", "crossval_fields", "crossval_from",
           "project_bytes", "read_project", "write_project"]

FORMAT = "cx-app-project"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class ProjectFileError(CxAppError):
    """A project file that cannot be opened: not ours, damaged, truncated, too big, another
    format version, or a member whose content does not match the manifest."""


@dataclass(frozen=True)
class SurveyIdentity:
    """Which survey file the analysis is of (the bytes' SHA-256, file name and sheet)."""

    sha256: str
    filename: str | None
    sheet: str | None = None

    def describe(self) -> str:
        sheet = f", sheet {self.sheet}" if self.sheet else ""
        return f"{self.filename or 'the survey'}{sheet} (SHA-256 {self.sha256[:12]}…)"


@dataclass(frozen=True, eq=False)
class ProjectModel:
    """One cross-validated model: recipe, out-of-fold results (``cv``, without fold models),
    permutation importance and, when fitted, the final model."""

    model_id: str
    algorithm_id: str
    settings: Mapping[str, Any]
    folds: int
    seed: int
    cv: Any
    key: str
    permutation: Any = None
    final: Any = None
    final_bytes: bytes | None = None  # written as is: its SHA-256 stays a downloaded copy's


@dataclass(frozen=True, eq=False)
class Project:
    """Everything a project file holds, parsed and checked."""

    schema_yaml: str
    plan: Mapping[str, Any]
    survey: SurveyIdentity
    models: tuple[ProjectModel, ...] = ()
    survey_bytes: bytes | None = None
    estimates: tuple[Mapping[str, Any], ...] = ()
    results: str | None = None  # results.json as text, written back byte for byte
    settings: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)

    @property
    def schema(self) -> Any:
        return schema_from_yaml_text(self.schema_yaml, "the project's schema")

    def final_model_sha256(self) -> list[str]:
        return [m.final.file_sha256 for m in self.models
                if m.final is not None and m.final.file_sha256]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Member(_Strict):
    name: str = Field(min_length=1, max_length=200)
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Manifest(_Strict):
    format: Literal["cx-app-project"]
    format_version: int
    provenance: dict[str, Any]
    members: list[Member]


def survey_identity(survey: SurveyData) -> SurveyIdentity:
    return SurveyIdentity(sha256=survey.source.sha256, filename=survey.source.filename,
                          sheet=survey.source.sheet)


def _json(value: Any) -> bytes:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True,
                      default=json_default).encode("utf-8")


_NOT_FIELDS = {"y_true", "y_pred", "proba", "fold", "models", "train_predictions", "weighted",
               "unweighted_reason"}  # the arrays, the fold models, and what projects never kept


def crossval_fields(cv: Any) -> dict[str, Any]:
    """A cross-validation's recipe and summary without its per-respondent arrays (JSON-ready)."""
    return {f.name: plain_document(getattr(cv, f.name)) for f in dataclasses.fields(cv)
            if f.name not in _NOT_FIELDS}


def crossval_arrays(cv: Any) -> dict[str, np.ndarray]:
    """A cross-validation's per-respondent arrays (text labels as fixed-width unicode, never
    pickled objects)."""
    arrays = {"y_true": np.asarray(cv.y_true), "y_pred": np.asarray(cv.y_pred),
              "proba": np.asarray(cv.proba, dtype=float), "fold": np.asarray(cv.fold)}
    return {k: a.astype(str) if a.dtype == object else a for k, a in arrays.items()}


def crossval_from(fields: Mapping[str, Any], arrays: Mapping[str, np.ndarray], *,
                  where: str) -> Any:
    """The cross-validation of :func:`crossval_fields` and :func:`crossval_arrays`; ValueError
    naming ``where`` when the arrays do not fit together."""
    from cx_app.models.crossval import CrossValResult

    c = fields
    cv_classes = tuple(c["classes"])
    n, k = len(arrays["y_true"]), len(cv_classes)
    if arrays["proba"].shape != (n, k) or len(arrays["y_pred"]) != n or len(arrays["fold"]) != n:
        raise ValueError(f"{where}: its arrays do not fit together")
    seconds = c["fold_fit_seconds"] if "fold_fit_seconds" in c else arrays["fold_fit_seconds"]
    return CrossValResult(
        y_true=arrays["y_true"], y_pred=arrays["y_pred"], proba=arrays["proba"],
        fold=arrays["fold"], classes=cv_classes, algorithm_id=str(c["algorithm_id"]),
        settings=dict(c["settings"]), calibration=str(c["calibration"]), folds=int(c["folds"]),
        seed=int(c["seed"]), fit_seconds=float(c["fit_seconds"]),
        fold_fit_seconds=tuple(float(s) for s in seconds),
        warnings=tuple(c["warnings"]), feature_names=tuple(c["feature_names"]),
        fold_method=str(c["fold_method"]), provenance=dict(c["provenance"]),
        missing_policy=str(c["missing_policy"]),
        preset=str(c.get("preset", "papers")))  # projects written before presets: papers


def _model_members(i: int, model: ProjectModel) -> dict[str, bytes]:
    cv = model.cv
    fields = crossval_fields(cv)
    arrays = crossval_arrays(cv)
    arrays["fold_fit_seconds"] = np.asarray(fields.pop("fold_fit_seconds"), dtype=float)
    meta = {
        "model_id": model.model_id, "algorithm_id": model.algorithm_id,
        "settings": dict(model.settings), "folds": model.folds, "seed": model.seed,
        "key": model.key, "cv": fields,
    }
    perm = model.permutation
    if perm is not None:
        meta["permutation"] = perm.model_dump(
            include={"algorithm_id", "attributes", "scoring", "n_repeats"})
        arrays["permutation_per_fold"] = np.asarray(perm.per_fold, dtype=float)
    npz = io.BytesIO()
    np.savez_compressed(npz, **arrays)
    out = {f"models/{i:03d}.json": _json(meta), f"models/{i:03d}.npz": npz.getvalue()}
    if model.final is not None:
        from cx_app.estimate.model_file import model_bytes

        out[f"models/{i:03d}.skops"] = model.final_bytes or model_bytes(model.final)
    return out


def project_bytes(project: Project, *, created: str | None = None) -> bytes:
    """The project file's bytes (what :func:`write_project` writes; a download button's data)."""
    members: dict[str, bytes] = {
        "schema.yaml": project.schema_yaml.encode("utf-8"),
        "plan.json": _json(dict(project.plan)),
        "survey.json": _json({**dataclasses.asdict(project.survey),
                              "included": project.survey_bytes is not None}),
        "settings.json": _json(dict(project.settings)),
        "versions.json": _json(library_versions()),
    }
    if project.survey_bytes is not None:
        members["survey.data"] = project.survey_bytes
    for i, model in enumerate(project.models):
        members.update(_model_members(i, model))
    for i, estimate in enumerate(project.estimates):
        members[f"estimates/{i:03d}.json"] = _json(dict(estimate))
    if project.results is not None:
        members["results.json"] = project.results.encode("utf-8")
    first = project.models[0] if project.models else None
    provenance = provenance_block(
        seed=first.seed if first else None, folds=first.folds if first else None,
        preset=project.settings.get("preset"), schema_yaml=project.schema_yaml,
        inputs={project.survey.filename or "survey": project.survey.sha256}, created=created)
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "provenance": provenance,
                "members": [{"name": n, "size": len(d), "sha256": sha256_hex(d)}
                            for n, d in members.items()]}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, _json(manifest))
        for name, data in members.items():
            packed = name.endswith((".npz", ".skops"))  # already compressed
            zf.writestr(name, data,
                        compress_type=zipfile.ZIP_STORED if packed else zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def write_project(project: Project, path: str | Path) -> Path:
    """Write ``project`` to ``path`` whole or not at all; :class:`ProjectFileError` if it
    cannot be written."""
    path = Path(path)
    try:
        write_bytes_atomic(path, project_bytes(project))
    except OSError as exc:
        raise ProjectFileError(f"{path.name}: cannot write the project file "
                               f"({exc.strerror or exc})") from None
    return path


def _members(data: bytes, label: str, limits: Any) -> tuple[Manifest, dict[str, bytes]]:
    """The manifest and every member's bytes (inflated within the limits of
    :func:`~cx_app.archive_limits.read_members`), each checked against the manifest."""
    if not (_ends_with_zip_directory(data) and zipfile.is_zipfile(io.BytesIO(data))):
        raise ProjectFileError(f"{label} is not a cx-app project file, or it is truncated: it is "
                               "not a complete zip archive.")
    members = read_members(data, label=label, error=ProjectFileError,
                           budget=limits.inflation_budget())
    if MANIFEST not in members:
        raise ProjectFileError(f"{label} is a zip archive but not a cx-app project file (it has "
                               "no manifest.json).")
    manifest = _manifest(members.pop(MANIFEST), label)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()  # with its repeats, which the members' dict folds
    listed = {m.name for m in manifest.members}
    extra = sorted(set(names) - listed - {MANIFEST})
    missing = sorted(listed - set(names))
    if missing or extra or len(names) != len(set(names)):
        what = (f"the member {missing[0]} is missing" if missing else
                f"it holds {extra[0]}, which its manifest does not list" if extra else
                "a member appears twice")
        raise ProjectFileError(f"{label} is damaged: {what}.")
    for member in manifest.members:
        content = members[member.name]
        if len(content) != member.size or sha256_hex(content) != member.sha256:
            raise ProjectFileError(
                f"{label} is damaged: the content of {member.name} does not match the "
                "SHA-256 in its manifest (the file was changed or corrupted).")
    return manifest, members


def _ends_with_zip_directory(data: bytes) -> bool:
    """Whether ``data`` starts like a zip and ends with its end-of-central-directory record.

    A truncated project can still look like a zip to :mod:`zipfile`, which searches the tail
    for the record and so may find the one of a stored ``.npz`` member inside it."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 65535))
    if not data.startswith(b"PK\x03\x04") or end < 0 or len(data) < end + 22:
        return False
    comment = int.from_bytes(data[end + 20:end + 22], "little")
    return end + 22 + comment == len(data)


def _manifest(raw: bytes, label: str) -> Manifest:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ProjectFileError(f"{label} is damaged: its manifest.json is not JSON.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ProjectFileError(f"{label} is a zip archive with a manifest, but not a cx-app "
                               "project file.")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        newer = isinstance(version, int) and version > FORMAT_VERSION
        raise ProjectFileError(
            f"{label} has project-file format version {version!r}; this cx-app reads version "
            f"{FORMAT_VERSION}: "
            + ("update cx-app to open it." if newer else "it cannot be opened with this cx-app."))
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ProjectFileError(f"{label} is damaged: its manifest is not valid ({where}: "
                               f"{first['msg']}).") from None


def _load_json(members: Mapping[str, bytes], name: str) -> Any:
    return json.loads(members[name].decode("utf-8"))


def _model(members: Mapping[str, bytes], stem: str, label: str, classes: Sequence) -> ProjectModel:
    from cx_app.estimate.model_file import load_model
    from cx_app.models.drivers import PermutationImportance

    meta = _load_json(members, f"{stem}.json")
    with np.load(io.BytesIO(members[f"{stem}.npz"]), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    cv_classes = list(meta["cv"]["classes"])
    if cv_classes != list(classes):
        raise ValueError(f"{stem}: its classes {cv_classes} are not the schema's "
                         f"{list(classes)}")
    cv = crossval_from(meta["cv"], arrays, where=stem)
    permutation = None
    if "permutation" in meta:
        permutation = PermutationImportance.model_validate(
            {**meta["permutation"], "per_fold": arrays["permutation_per_fold"]})
    final = final_bytes = None
    if f"{stem}.skops" in members:
        final_bytes = members[f"{stem}.skops"]  # kept as is: its SHA-256 stays the file's
        final = load_model(final_bytes, name=f"{label}: {stem}.skops")
    return ProjectModel(model_id=plain_text(str(meta["model_id"])),  # text as data
                        algorithm_id=str(meta["algorithm_id"]),
                        settings=dict(meta["settings"]), folds=int(meta["folds"]),
                        seed=int(meta["seed"]), key=str(meta["key"]), cv=cv,
                        permutation=permutation, final=final, final_bytes=final_bytes)


def read_project(source: str | Path | bytes | BinaryIO, *, name: str | None = None) -> Project:
    """Open a project file (a path, its bytes or a binary file object), every member checked
    and parsed before anything is returned."""
    from cx_app.estimate.document import WaveEstimateDocument
    from cx_app.models.results import Results
    from cx_app.survey.limits import limits_from_env
    from cx_app.survey.reading import read_source

    limits = limits_from_env()
    data, default_name = read_source(source, None, limits, error=ProjectFileError,
                                     what="project file")
    label = name or default_name
    manifest, members = _members(data, label, limits)
    required = ("schema.yaml", "plan.json", "survey.json", "settings.json", "versions.json")
    absent = [m for m in required if m not in members]
    if absent:
        raise ProjectFileError(f"{label} is not a complete cx-app project: it has no "
                               f"{absent[0]}.")
    try:
        schema_yaml = members["schema.yaml"].decode("utf-8")
        schema = schema_from_yaml_text(schema_yaml, "schema.yaml")
        plan = _load_json(members, "plan.json")
        PlanSpec.model_validate(plan)
        survey = _load_json(members, "survey.json")
        identity = SurveyIdentity(sha256=str(survey["sha256"]), filename=survey.get("filename"),
                                  sheet=survey.get("sheet"))
        survey_bytes = members.get("survey.data")
        if survey_bytes is not None and sha256_hex(survey_bytes) != identity.sha256:
            raise ValueError("the survey it holds is not the survey it names")
        stems = sorted({n.rsplit(".", 1)[0] for n in members if n.startswith("models/")})
        from cx_app.estimate.model_file import check_model_files

        check_model_files([(members[f"{stem}.skops"], f"{label}: {stem}.skops")
                           for stem in stems if f"{stem}.skops" in members])
        models = tuple(_model(members, stem, label, schema.classes) for stem in stems)
        estimates = tuple(
            WaveEstimateDocument.from_dict(_load_json(members, n), source=n).to_dict()
            for n in sorted(members) if n.startswith("estimates/"))
        results = None
        if "results.json" in members:
            results = members["results.json"].decode("utf-8")
            Results.from_dict(json.loads(results), source="results.json")
        settings = _load_json(members, "settings.json")
        versions = _load_json(members, "versions.json")
        if not isinstance(settings, dict) or not isinstance(versions, dict):
            raise ValueError("settings.json and versions.json must hold JSON objects")
    except ProjectFileError:
        raise
    except CxAppError as exc:
        raise ProjectFileError(f"{label} cannot be opened: {exc}") from None
    except (KeyError, TypeError, ValueError, UnicodeDecodeError, ValidationError) as exc:
        raise ProjectFileError(f"{label} is damaged: {exc}.") from None
    return Project(schema_yaml=schema_yaml, plan=plan, survey=identity, models=models,
                   survey_bytes=survey_bytes, estimates=estimates, results=results,
                   settings=settings, provenance=manifest.provenance, versions=versions)
