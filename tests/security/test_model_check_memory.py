"""Issue 38, point 2 (with issue 33's capped prediction): the server's own model files skip the
model-check child in every process, and the check of another file is remembered by its content
hash across processes (each ``cx-app estimate`` is a process of its own)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import skops.io as sio

from cx_app.estimate.model_file import _payload, save_model
from tests.data.bad import crafted

ROOT = Path(__file__).resolve().parents[2]
COUNT_CHILDREN = """
import sys
from cx_app.estimate import model_sandbox
from cx_app.estimate.model_file import load_model
started = []
command = model_sandbox._child_command
model_sandbox._child_command = lambda: started.append(1) or command()
model = load_model(sys.argv[1])
print(len(started), model.algorithm_id)
"""
"""A process that loads a model file and says how many check children it started."""


def _children(path: Path, checks: Path) -> str:
    env = {**os.environ, "CX_APP_MODEL_CHECKS_DIR": str(checks)}
    done = subprocess.run([sys.executable, "-c", COUNT_CHILDREN, str(path)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow  # five processes that import scikit-learn and skops (~30 s on two cores)
def test_own_files_skip_the_child_and_foreign_ones_are_checked_once(tmp_path, monkeypatch):
    checks = tmp_path / "checks"
    monkeypatch.setenv("CX_APP_MODEL_CHECKS_DIR", str(checks))
    model = crafted.tiny_model("lr")
    own = save_model(model, tmp_path / "own.skops")  # written here: recorded as checked
    foreign = tmp_path / "foreign.skops"  # the same model as another machine wrote it
    foreign.write_bytes(sio.dumps(_payload(model), compression=zipfile.ZIP_STORED))
    assert foreign.read_bytes() != own.read_bytes()
    assert len(list(checks.iterdir())) == 1
    assert _children(own, checks) == "0 lr"
    assert _children(foreign, checks) == "1 lr"  # its first call pays the child
    assert _children(foreign, checks) == "0 lr"  # a later call: remembered by its hash
    assert len(list(checks.iterdir())) == 2
    assert _children(foreign, tmp_path / "empty") == "1 lr"  # no memory: checked again
