"""Crafted model and project files (issue 24): trusted types with hostile contents, and bombs
nested inside archives. Used by ``make_corpus.py`` (the small files of ``tests/data/bad/``) and
by ``tests/security/`` (the same crafts on freshly trained models, and the bombs too big to keep
on disk).

A model file is a skops zip: ``schema.json`` plus one ``.npy`` member per array. The crafts
train a tiny model, then rewrite one array (found by what it holds: a tree's node records, a
KD-tree's index permutation) and zip the file again; skops' own ids (memory addresses) are
renumbered so the corpus files are reproducible.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from collections.abc import Callable

import numpy as np
from numpy.lib import format as npy_format

TIME = (2024, 1, 1, 0, 0, 0)
CREATED = "2024-01-01T00:00:00+00:00"
HUGE_SHAPE = (100_000_000_000,)
"""A float64 array of this shape claims 745 GiB."""

SCHEMA = """\
name: crafted
target: {name: nps, column: NPS, kind: nps, scale: {min: 0, max: 10}}
attributes:
  - {name: price, column: Price, scale: {min: 1, max: 5}}
  - {name: speed, column: Speed, scale: {min: 1, max: 5}}
"""


# --------------------------------------------------------------------------- zips


def zip_members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def zip_bytes(members: dict[str, bytes], *, stored: tuple[str, ...] = ()) -> bytes:
    """A zip of ``members`` with fixed times (``stored``: suffixes kept uncompressed)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members.items():
            info = zipfile.ZipInfo(name, TIME)
            info.compress_type = (zipfile.ZIP_STORED if name.endswith(stored)
                                  else zipfile.ZIP_DEFLATED)
            archive.writestr(info, content)
    return out.getvalue()


def declare_size(data: bytes, member: str, size: int) -> bytes:
    """``data`` with the sizes ``member`` declares (local header and central directory) set
    to ``size``: a member that claims gigabytes without holding them."""
    out = bytearray(data)
    name = member.encode()
    for signature, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        at = out.find(signature)
        while at >= 0:
            if out[at + name_at:at + name_at + len(name)] == name:
                struct.pack_into("<I", out, at + size_at, size)
            at = out.find(signature, at + 4)
    return bytes(out)


def npy_bytes(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def npy_claiming(shape: tuple[int, ...], dtype: str = "<f8", data: bytes = bytes(64)) -> bytes:
    """An ``.npy`` whose header claims ``shape`` of ``dtype`` but holds only ``data``."""
    out = io.BytesIO()
    npy_format.write_array_header_1_0(out, {"descr": dtype, "fortran_order": False,
                                           "shape": shape})
    return out.getvalue() + data


def zip_with_zeros(members: dict[str, bytes], name: str, size: int,
                   header: bytes = b"") -> bytes:
    """A valid zip of ``members`` plus ``name``: ``header`` then zero bytes, ``size`` bytes in
    all, about ``size / 1000`` bytes on disk and built without ever holding ``size`` bytes:
    the zeros are one deflate block of 1 MiB (sync-flushed, so it can be repeated, its
    back-references landing on zeros) and the CRC is computed by chunks."""
    chunk = 1024 * 1024
    zeros = bytes(chunk)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = packer.compress(header + zeros) + packer.flush(zlib.Z_SYNC_FLUSH)
    block = packer.compress(zeros) + packer.flush(zlib.Z_SYNC_FLUSH)
    count, rest = divmod(size - len(header) - chunk, chunk)
    body = first + block * count + packer.compress(bytes(rest)) + packer.flush(zlib.Z_FINISH)
    crc = zlib.crc32(header)
    for _ in range(count + 1):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(bytes(rest), crc)
    entries = [(n, zlib.compress(c, 9)[2:-4], zlib.crc32(c), len(c))
               for n, c in members.items()] + [(name, body, crc, size)]
    local, central = bytearray(), bytearray()
    for entry_name, packed, entry_crc, entry_size in entries:
        encoded = entry_name.encode()
        offset = len(local)
        local += struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 8, 0, 0x21, entry_crc,
                             len(packed), entry_size, len(encoded), 0) + encoded + packed
        central += struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, entry_crc,
                               len(packed), entry_size, len(encoded), 0, 0, 0, 0, 0,
                               offset) + encoded
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, len(entries), len(entries),
                      len(central), len(local), 0)
    return bytes(local + central + end)


def npy_bomb_header(size: int) -> bytes:
    """The header of an honest float64 ``.npy`` of ``size`` bytes in all (header included)."""
    for data in range(size - 64, size - 200, -8):  # the header is 64 or 128 bytes long
        header = npy_claiming((data // 8,), data=b"")
        if len(header) + data == size and data % 8 == 0:
            return header
    raise ValueError(f"no .npy of exactly {size} bytes")


# --------------------------------------------------------------------------- models


def tiny_model(algorithm_id: str):
    """A :class:`~cx_app.estimate.model_file.TrainedModel` of ``algorithm_id`` trained on 90
    seeded respondents of :data:`SCHEMA` (two attributes on 1–5, NPS 0–10)."""
    import warnings

    from cx_app.estimate.model_file import TrainedModel
    from cx_app.estimate.model_metadata import HeldOutFigures, TrainingData
    from cx_app.models.crossval import build_model

    rng = np.random.default_rng(0)
    X = rng.integers(1, 6, size=(90, 2)).astype(float)
    y = np.clip(np.round(X.sum(axis=1) - 1 + rng.normal(0, 1, 90)), 0, 10).astype(int)
    classes = tuple(range(11))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator = build_model(algorithm_id, calibration="none").fit(X, y)
    return TrainedModel(
        estimator=estimator, classes=classes, attribute_names=("price", "speed"),
        schema_yaml=SCHEMA, algorithm_id=algorithm_id, settings={}, calibration="none",
        training=TrainingData(sha256="0" * 64, n=90, filename="crafted.csv"), cv=HeldOutFigures(),
        attribute_distributions={}, created=CREATED)


def tiny_model_bytes(algorithm_id: str) -> bytes:
    from cx_app.estimate.model_file import model_bytes

    return reproducible(model_bytes(tiny_model(algorithm_id)))


def reproducible(data: bytes) -> bytes:
    """A skops file with its ids (memory addresses) renumbered in order and fixed zip times."""
    members = zip_members(data)
    schema = json.loads(members.pop("schema.json"))
    ids: dict[int, int] = {}
    files: dict[str, str] = {}

    def renumber(node):
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "__id__":
                    value = ids.setdefault(value, len(ids) + 1)
                elif key == "file" and isinstance(value, str) and value in members:
                    suffix = value.rsplit(".", 1)[-1]
                    value = files.setdefault(value, f"{len(files) + 1}.{suffix}")
                out[key] = renumber(value)
            return out
        if isinstance(node, list):
            return [renumber(v) for v in node]
        return node

    schema = renumber(schema)
    renamed = {"schema.json": json.dumps(schema, indent=2).encode()}
    renamed.update({new: members[old] for old, new in files.items()})
    return zip_bytes(renamed)


def patch_array(data: bytes, holds: Callable[[np.ndarray], bool],
                edit: Callable[[np.ndarray], None]) -> bytes:
    """The skops file ``data`` with ``edit`` applied (in place) to every array that ``holds``
    accepts; ``ValueError`` if there is none."""
    members = zip_members(data)
    found = 0
    for name, content in members.items():
        if not name.endswith(".npy"):
            continue
        array = _zero_padded(np.load(io.BytesIO(content), allow_pickle=False))
        if holds(array):
            edit(array)
            members[name] = npy_bytes(array)
            found += 1
    if not found:
        raise ValueError("no array of the model matches")
    return zip_bytes(members)


def _zero_padded(array: np.ndarray) -> np.ndarray:
    """A copy whose padding bytes (between a structured dtype's fields) are zeros, not
    whatever memory held: the file is then reproducible."""
    out = np.zeros(array.shape, dtype=array.dtype)  # calloc: padding zeroed too
    for name in array.dtype.names or ():
        out[name] = array[name]
    if array.dtype.names is None:
        out[...] = array
    return out


def is_tree_nodes(array: np.ndarray) -> bool:
    return array.dtype.names is not None and "left_child" in array.dtype.names


def is_neighbour_index(array: np.ndarray) -> bool:
    """A KD-tree's ``idx_array``: a permutation of the training rows."""
    return (array.ndim == 1 and array.dtype.kind == "i" and len(array) > 1
            and np.array_equal(np.sort(array), np.arange(len(array))))


def set_node(field: str, value: int, node: int = 0) -> Callable[[np.ndarray], None]:
    def edit(nodes: np.ndarray) -> None:
        nodes[field][node] = value
    return edit


def set_first(value: int) -> Callable[[np.ndarray], None]:
    def edit(array: np.ndarray) -> None:
        array[0] = value
    return edit


def crafted_models(source: Callable[[str], bytes] = tiny_model_bytes) -> dict[str, bytes]:
    """The crafted model files, by corpus name: trusted types only, hostile contents."""
    dt, knn = source("dt"), source("knn")
    first_npy = next(n for n in zip_members(dt) if n.endswith(".npy"))
    return {
        "model_tree_child.skops": patch_array(dt, is_tree_nodes,
                                              set_node("left_child", 2_000_000_000)),
        "model_tree_right_child.skops": patch_array(dt, is_tree_nodes,
                                                    set_node("right_child", 2_000_000_000)),
        "model_tree_feature.skops": patch_array(dt, is_tree_nodes,
                                                set_node("feature", 1_000_000_000)),
        "model_tree_loop.skops": patch_array(dt, is_tree_nodes, set_node("left_child", 0)),
        "model_kdtree_index.skops": patch_array(knn, is_neighbour_index,
                                                set_first(2_000_000_000)),
        "model_npy_shape.skops": zip_bytes({**zip_members(dt),
                                            first_npy: npy_claiming(HUGE_SHAPE)}),
        "model_bomb_declared.skops": declare_size(dt, first_npy, 0xC0000000),
    }


# --------------------------------------------------------------------------- projects


def tiny_project_bytes() -> bytes:
    """A small, valid project of :data:`SCHEMA`: one cross-validated ``lr`` (22 respondents,
    out-of-fold arrays made up but consistent), no final model."""
    from cx_app.models.crossval import CrossValResult
    from cx_app.project import Project, ProjectModel, SurveyIdentity, project_bytes

    n = 22
    y = np.arange(n) % 11
    proba = np.full((n, 11), 1 / 11)
    cv = CrossValResult(y_true=y, y_pred=y[::-1].copy(), proba=proba, fold=np.arange(n) % 2,
                        classes=tuple(range(11)), algorithm_id="lr", settings={},
                        calibration="none", folds=2, seed=0, fit_seconds=0.1,
                        fold_fit_seconds=(0.05, 0.05), feature_names=("price", "speed"))
    model = ProjectModel(model_id="lr", algorithm_id="lr", settings={}, folds=2, seed=0,
                         key="k", cv=cv)
    plan = {"plan": []}
    project = Project(schema_yaml=SCHEMA, plan=plan,
                      survey=SurveyIdentity(sha256="0" * 64, filename="crafted.csv"),
                      models=(model,))
    return project_bytes(project, created=CREATED)


def replace_project_member(data: bytes, name: str, content: bytes) -> bytes:
    """The project ``data`` with member ``name`` replaced (or added) and its manifest entry
    (size, SHA-256) to match: only the nested checks can tell."""
    import hashlib

    members = zip_members(data)
    manifest = json.loads(members["manifest.json"])
    entry = {"name": name, "size": len(content), "sha256": hashlib.sha256(content).hexdigest()}
    manifest["members"] = [m for m in manifest["members"] if m["name"] != name] + [entry]
    members["manifest.json"] = json.dumps(manifest, indent=1, sort_keys=True).encode()
    members[name] = content
    return zip_bytes(members, stored=(".npz", ".skops"))


def crafted_projects(base: bytes | None = None) -> dict[str, bytes]:
    """The crafted project files, by corpus name: arrays that claim or unpack to more than
    the limit inside the ``.npz`` member of a valid-looking project."""
    base = tiny_project_bytes() if base is None else base
    npz = zip_members(base)["models/000.npz"]
    arrays = zip_members(npz)
    claiming = zip_bytes({**arrays, "proba.npy": npy_claiming(HUGE_SHAPE)})
    declared = declare_size(npz, "proba.npy", 0xC0000000)
    return {
        "project_npz_shape.cxproj": replace_project_member(base, "models/000.npz", claiming),
        "project_npz_declared.cxproj": replace_project_member(base, "models/000.npz",
                                                              declared),
    }


def corpus() -> dict[str, bytes]:
    return {**crafted_models(), **crafted_projects()}
