"""Issue 24, point 5 for model and project files: a run killed while it rewrites a model or a
project file leaves the old complete file, never a truncated one.

The kill is made to land in the middle of the write, every time: the child writes the old
version, then limits the size of any file it writes (``RLIMIT_FSIZE``) below the new version's
size and rewrites; the kernel kills it (SIGXFSZ, whose default action Python's start-up had
turned off) when the write reaches the limit. Written in
place, the file would be cut there; written through ``cx_app.atomic_files``, only the hidden
temporary file is, and the old version stays whole.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cx_app.estimate.model_file import open_checked_model
from cx_app.project import read_project

ROOT = Path(__file__).resolve().parents[2]

WRITER = """
import dataclasses, os, resource, signal, sys
from pathlib import Path
from tests.data.bad import crafted
from cx_app.estimate.model_file import save_model
from cx_app.project import read_project, write_project
kind, target = sys.argv[1], Path(sys.argv[2])
if kind == "model":
    old, new = crafted.tiny_model("dt"), crafted.tiny_model("rf")
    write = save_model
else:
    old = read_project(crafted.tiny_project_bytes(), name="p")
    new = dataclasses.replace(old, settings={"note": os.urandom(50_000).hex()})
    write = write_project
write(old, target)
size = target.stat().st_size
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it: be killed, as by kill
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 1000, size + 1000))
write(new, target)
"""


@pytest.mark.parametrize("kind, name", [("model", "model.skops"), ("project", "p.cxproj")])
def test_a_write_killed_midway_leaves_the_old_file_whole(tmp_path, kind, name):
    target = tmp_path / name
    child = subprocess.run([sys.executable, "-c", WRITER, kind, str(target)], cwd=ROOT,
                           capture_output=True, timeout=120, check=False)
    assert child.returncode == -signal.SIGXFSZ, child.stderr.decode()[-2000:]
    if kind == "model":
        assert open_checked_model(target.read_bytes(), name).algorithm_id == "dt"  # the old
    else:
        assert dict(read_project(target).settings) == {}  # the old
    leftovers = [p.name for p in tmp_path.iterdir() if p != target]
    assert len(leftovers) == 1 and leftovers[0].startswith(f".{name}.")  # the cut temporary
