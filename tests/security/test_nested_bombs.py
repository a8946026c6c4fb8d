"""Issue 24, cases 5 and 9: bombs hidden inside archives, and array headers that claim too much.

Before, the size limits counted the outer zip only: a 4 MB project hiding a 3 GB array in its
compressed ``.npz`` member was accepted at 2.3–3.3 GiB peak, a 3 MB ``.skops`` whose array
inflates to 3 GB reached 6.3 GiB over 117 s, and an ``.npz`` header claiming 745 GiB gave a
traceback. Now every member at every level counts against ``CX_APP_MAX_DECOMPRESSED_MB``
(:mod:`cx_app.archive_limits`): each is refused in one sentence, within 20 s and 1 GB of
peak memory of the ``cx-app`` process that read it (measured from outside: :mod:`tests.security.peak_memory`).
"""

from __future__ import annotations

import io
import sys
import time
import zipfile
from pathlib import Path

import pytest

from cx_app.archive_limits import InflationBudget, read_members
from cx_app.errors import ModelFileError
from cx_app.estimate.model_file import load_model
from cx_app.project import ProjectFileError, read_project
from tests.data.bad import crafted
from tests.security.peak_memory import run_measured

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
GIB = 1024**3
LIMIT = "the limit of 1,000 MB (CX_APP_MAX_DECOMPRESSED_MB)"


def _cx_app(*args: str) -> tuple[int, str, float, float]:
    """Run ``cx-app ARGS`` in its own process: exit code, stderr, seconds, peak RSS in MB
    (measured from outside, :mod:`tests.security.peak_memory`)."""
    done = run_measured([sys.executable, "-m", "cx_app", *args], cwd=ROOT)
    return done.returncode, done.stderr, done.seconds, done.peak_mb


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


# --------------------------------------------------------------------------- the corpus


CORPUS = {
    "model_npy_shape.skops": (ModelFileError, load_model,
                              "model_npy_shape.skops: the array 1.npy claims 762,939 MB (shape "
                              f"(100000000000,) of float64), more than {LIMIT}; it was refused "
                              "before allocating it."),
    "model_bomb_declared.skops": (ModelFileError, load_model,
                                  "model_bomb_declared.skops would unpack to 3,072 MB, more than "
                                  f"{LIMIT}; it was refused before unpacking."),
    "project_npz_shape.cxproj": (ProjectFileError, read_project,
                                 "project_npz_shape.cxproj: models/000.npz: the array proba.npy "
                                 "claims 762,939 MB (shape (100000000000,) of float64), more than "
                                 f"{LIMIT}; it was refused before allocating it."),
    "project_npz_declared.cxproj": (ProjectFileError, read_project,
                                    "project_npz_declared.cxproj: models/000.npz would unpack to "
                                    f"3,072 MB, more than {LIMIT}; it was refused before "
                                    "unpacking."),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_corpus_bombs_and_lying_headers_are_one_sentence(name):
    error, reader, message = CORPUS[name]
    with pytest.raises(error) as info:
        reader(BAD / name)
    assert str(info.value) == message


def test_an_npz_header_claiming_745_gib_is_one_sentence_in_the_cli(tmp_path):
    """Case 9: ``cx-app report --project`` on it gave a traceback; now exit 2, one line."""
    code, stderr, _, _ = _cx_app("report", "--project", str(BAD / "project_npz_shape.cxproj"),
                                 "--out", str(tmp_path / "out"))
    assert code == 2
    assert _one_line(stderr) == f"error: {CORPUS['project_npz_shape.cxproj'][2]}"
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- real bombs


@pytest.fixture(scope="module")
def skops_bomb() -> bytes:
    """A real 3 MB model file: a sound ``dt`` model whose first array is replaced by an honest
    float64 ``.npy`` that inflates to 3 GiB."""
    members = crafted.zip_members(crafted.tiny_model_bytes("dt"))
    first = next(n for n in members if n.endswith(".npy"))
    members.pop(first)
    return crafted.zip_with_zeros(members, first, 3 * GIB, crafted.npy_bomb_header(3 * GIB))


@pytest.fixture(scope="module")
def project_bomb() -> bytes:
    """A real 4 MB project whose ``models/000.npz`` hides a ``proba.npy`` of 3 GiB; the
    manifest's size and SHA-256 of the member match, so only the nested check can tell."""
    base = crafted.tiny_project_bytes()
    arrays = crafted.zip_members(crafted.zip_members(base)["models/000.npz"])
    arrays.pop("proba.npy")
    npz = crafted.zip_with_zeros(arrays, "proba.npy", 3 * GIB, crafted.npy_bomb_header(3 * GIB))
    return crafted.replace_project_member(base, "models/000.npz", npz)


def test_the_bombs_are_real(skops_bomb, project_bomb):
    """What the files claim is what they hold: 3 GiB inflated from a few MB (CRC checked)."""
    assert len(skops_bomb) < 4 * 2**20 and len(project_bomb) < 5 * 2**20
    npz = crafted.zip_members(project_bomb)["models/000.npz"]
    with zipfile.ZipFile(io.BytesIO(npz)) as archive:
        assert archive.getinfo("proba.npy").file_size == 3 * GIB
        with archive.open("proba.npy") as member:  # the first 64 MiB inflate as claimed
            assert len(member.read(64 * 2**20)) == 64 * 2**20


def test_a_skops_bomb_is_refused_before_unpacking_in_the_cli(tmp_path, skops_bomb):
    model = tmp_path / "bomb.skops"
    model.write_bytes(skops_bomb)
    wave = tmp_path / "wave.csv"
    wave.write_text("Price,Speed\n1,2\n", encoding="utf-8")
    code, stderr, seconds, peak_mb = _cx_app("estimate", "--model", str(model), str(wave))
    assert code == 2
    assert _one_line(stderr) == (f"error: bomb.skops would unpack to 3,072 MB, more than {LIMIT}"
                                 "; it was refused before unpacking.")
    assert seconds < 20 and peak_mb < 1024, (seconds, peak_mb)


def test_a_project_bomb_is_refused_before_unpacking_in_the_cli(tmp_path, project_bomb):
    project = tmp_path / "bomb.cxproj"
    project.write_bytes(project_bomb)
    code, stderr, seconds, peak_mb = _cx_app("report", "--project", str(project), "--out",
                                             str(tmp_path / "out"))
    assert code == 2
    assert _one_line(stderr).startswith("error: bomb.cxproj: models/000.npz would unpack to "
                                        "3,072 MB (3,075 MB with the rest of the file), more "
                                        f"than {LIMIT}; it was refused before unpacking.")
    assert seconds < 20 and peak_mb < 1024, (seconds, peak_mb)


def test_a_member_that_lies_about_its_size_stops_at_what_it_declares(skops_bomb):
    """The 3 GiB member declared as 5,000 bytes: zipfile inflates those 5,000 bytes, no more,
    and their checksum is not the member's."""
    with zipfile.ZipFile(io.BytesIO(skops_bomb)) as archive:
        name = next(i.filename for i in archive.infolist() if i.file_size == 3 * GIB)
    lying = crafted.declare_size(skops_bomb, name, 5_000)
    started = time.perf_counter()
    with pytest.raises(ModelFileError) as info:
        load_model(lying, name="lying.skops")
    assert time.perf_counter() - started < 5
    assert str(info.value) == (f"lying.skops is damaged: its member {name} cannot be unpacked "
                               f"(Bad CRC-32 for file '{name}').")


def test_every_level_counts_against_one_limit(monkeypatch):
    """A project whose outer members fit the limit but whose arrays, unpacked, do not."""
    base = crafted.tiny_project_bytes()
    outer = sum(len(c) for c in crafted.zip_members(base).values())
    npz = crafted.zip_members(base)["models/000.npz"]
    inner = sum(len(c) for c in crafted.zip_members(npz).values())
    budget = InflationBudget(max_bytes=10**9, max_entries=100)
    read_members(base, label="p", error=ProjectFileError, budget=budget)
    assert budget.used == outer + inner  # the .npz once as a member, once unpacked
    monkeypatch.setenv("CX_APP_MAX_DECOMPRESSED_MB", str((outer + inner // 2) / 2**20))
    with pytest.raises(ProjectFileError, match=r"^p.cxproj: models/000.npz would unpack to "
                                               r"[\d.]+ KB \([\d.]+ KB with the rest of the "
                                               r"file\), more than the limit"):
        read_project(base, name="p.cxproj")
    monkeypatch.setenv("CX_APP_MAX_DECOMPRESSED_MB", str((outer + inner) / 2**20 + 0.001))
    assert read_project(base, name="p.cxproj").models[0].cv.proba.shape == (22, 11)


def test_an_array_header_must_match_its_member_and_hold_no_objects():
    members = crafted.zip_members(crafted.tiny_model_bytes("dt"))
    first = next(n for n in members if n.endswith(".npy"))
    members[first] = crafted.npy_claiming((2,), dtype="|O", data=b"\x80\x04N.")
    with pytest.raises(ModelFileError, match=f"^objects.skops: the array {first} holds Python "
                                             "objects, which cx-app never writes"):
        load_model(crafted.zip_bytes(members), name="objects.skops")
    members[first] = crafted.npy_claiming((10,), data=bytes(8))
    with pytest.raises(ModelFileError) as info:
        load_model(crafted.zip_bytes(members), name="short.skops")
    assert str(info.value) == (f"short.skops: the array {first} is damaged: its header claims "
                               "shape (10,) of float64 (80 bytes), but the member holds 8 bytes "
                               "of data.")
