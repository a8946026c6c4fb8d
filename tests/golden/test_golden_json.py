"""Golden files of the public JSON: ``results.json`` of ``cx-app evaluate``, ``cx-app estimate
--json`` on one wave and on two waves by a segment (the tracker), and ``cx-app program show
--json``, on a small fixed survey (2 fast algorithms, 3 folds, fixed seeds).

They prove the JSON keeps its shape while the result classes behind it change: keys and nesting
must be exactly the golden file's (the order of an object's keys is free, as in JSON); numbers
equal within a relative 1e-5 (the numbers of the same code on another BLAS or CPU may differ:
the ordinal fit's BFGS p-value 0.00033016380 on the machine that wrote the file, 0.00033016482
on another, 3e-6 apart); strings, booleans and nulls exactly. Volatile values are masked before the
comparison, by key, wherever they occur (:data:`VOLATILE`): they still must be present with the
same key.

``CX_GOLDEN_UPDATE=1 pytest tests/golden`` rewrites the golden files (after a deliberate change
of the public JSON: say so in the commit).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
from pathlib import Path

import pytest

from cx_app.cli import main
from cx_app.survey.samples import simulate_telecom_waves

GOLDEN = Path(__file__).parent
VOLATILE = frozenset({
    # durations of this run
    "fit_seconds", "fold_fit_seconds",
    # clocks
    "created",
    # the model file's bytes hold the time it was written
    "file_sha256", "model file",
    # versions of this environment (the provenance blocks)
    "versions", "cx_app", "python", "numpy", "pandas", "sklearn", "scipy", "statsmodels",
    "xgboost", "skops", "altair", "openpyxl", "fastexcel", "pyarrow", "vl_convert",
})
"""Keys whose values are masked: durations, clocks, the model file's hash, library versions.
The temporary folder of the input files is written ``<tmp>`` in every string."""
MASK = "<volatile>"
MAPPING = ["--target", "Likelihood to recommend (0-10)", "--scale", "0-10",
           "--attributes", "Tariff plan,Network - voice,Network - data,Shops,Call center",
           "--attribute-scale", "1-10", "--segments", "Operator", "--id", "Respondent ID",
           "--missing-codes", "99,Don't know"]


def _masked(value, folder: str, key: str | None = None):
    if key in VOLATILE:
        return MASK
    if isinstance(value, dict):
        return {k: _masked(v, folder, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, folder) for v in value]
    return value.replace(folder, "<tmp>") if isinstance(value, str) else value


def _differences(got, want, where: str = "$") -> list[str]:
    """Where ``got`` differs from ``want``: keys and nesting exactly, numbers within 1e-6."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{where}: {type(got).__name__} instead of an object"]
        out = [f"{where}: keys {sorted(set(got) ^ set(want))} differ"] if set(got) != set(
            want) else []
        for k in want:
            if k in got:
                out += _differences(got[k], want[k], f"{where}.{k}")
        return out
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{where}: {got!r:.80} instead of a list of {len(want)}"]
        return [d for i, (g, w) in enumerate(zip(got, want, strict=True))
                for d in _differences(g, w, f"{where}[{i}]")]
    if isinstance(want, bool) or want is None or isinstance(want, str):
        return [] if got == want and type(got) is type(want) else [
            f"{where}: {got!r:.80} instead of {want!r:.80}"]
    if isinstance(want, (int, float)):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return [f"{where}: {got!r:.80} instead of the number {want!r}"]
        if type(got) is not type(want):  # 240 and 240.0 are written differently
            return [f"{where}: {got!r} instead of {want!r} ({type(want).__name__})"]
        if math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-9):
            return []
        return [f"{where}: {got!r} instead of {want!r}"]
    return [f"{where}: unexpected golden value {want!r:.80}"]


def _check(name: str, document, folder: Path) -> None:
    path = GOLDEN / f"{name}.json"
    document = _masked(document, str(folder))
    if os.environ.get("CX_GOLDEN_UPDATE") == "1":
        path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    want = json.loads(path.read_text(encoding="utf-8"))
    differences = _differences(document, want)
    assert not differences, f"{name}: " + "\n".join(differences[:30])


def _cli(*args: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    assert code == 0, err.getvalue()
    return out.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A labelled reference survey (300 respondents) and two waves of 90 (the second
    labelled: realized values)."""
    folder = tmp_path_factory.mktemp("golden")
    made = {"reference": folder / "reference.csv", "W01": folder / "telecom_W01.csv",
            "W02": folder / "telecom_W02.csv"}
    simulate_telecom_waves([1], respondents_per_operator=100, seed=3).to_csv(
        made["reference"], index=False)
    simulate_telecom_waves([3], respondents_per_operator=30, seed=11,
                           include_target=False).to_csv(made["W01"], index=False)
    simulate_telecom_waves([4], respondents_per_operator=30, seed=12).to_csv(
        made["W02"], index=False)
    return made


@pytest.fixture(scope="module")
def model_file(files, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("model") / "model.skops"
    _cli("train", files["reference"], *MAPPING, "--algorithm", "lr", "--folds", "3",
         "--calibration", "none", "--seed", "0", "--out", out)
    return out


def test_results_json_of_evaluate_keeps_its_shape(files, tmp_path):
    _cli("evaluate", files["reference"], *MAPPING, "--algorithms", "lr,nb", "--folds", "3",
         "--seed", "1", "--permutation-repeats", "2", "--five-by-two", "lr,nb",
         "--out", tmp_path)
    _check("evaluate_results", json.loads((tmp_path / "results.json").read_text("utf-8")),
           files["reference"].parent)


def test_estimate_json_of_one_wave_keeps_its_shape(files, model_file):
    _check("estimate_wave", json.loads(_cli("estimate", "--model", model_file, files["W02"],
                                            "--json")),
           files["reference"].parent)


def test_estimate_json_of_waves_by_segment_keeps_its_shape(files, model_file):
    _check("estimate_tracker", json.loads(_cli("estimate", "--model", model_file, files["W01"],
                                               files["W02"], "--by", "Operator", "--json")),
           files["reference"].parent)


def test_program_show_json_keeps_its_shape(files, tmp_path):
    db = ["--db", f"sqlite:///{tmp_path / 'workspace.db'}"]
    _cli("program", "create", "golden", files["reference"], *MAPPING, "--algorithm", "lr",
         "--folds", "3", "--calibration", "none", "--seed", "0", *db)
    _cli("program", "add-wave", "golden", files["W01"], files["W02"], *db)
    _check("program_show", json.loads(_cli("program", "show", "golden", "--json", *db)),
           files["reference"].parent)
