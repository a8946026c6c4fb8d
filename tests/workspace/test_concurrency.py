"""Two processes adding waves to one SQLite workspace at the same time lose nothing: every
wave of both is stored once, with its estimate (WAL, the write lock taken up front, retries)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select
from workspace_helpers import copy_of

from cx_app.survey.samples import simulate_telecom_waves
from cx_app.workspace.database import head_revision
from cx_app.workspace.programs import Workspace
from cx_app.workspace.tables import Estimate, Wave

pytestmark = pytest.mark.slow  # processes adding waves at once (~22 s)

WAVES = {"first": (3, 5, 7, 9), "second": (4, 6, 8, 10)}
ADDER = """
import os, pathlib, sys, time
from cx_app.workspace.programs import Workspace
go, url, *paths = sys.argv[1:]
workspace = Workspace.open(url)
workspace.program_model("telecom")  # the model file checked once, before the start
pathlib.Path(f"{go}.{os.getpid()}").touch()
while not os.path.exists(go):
    time.sleep(0.005)
for path in paths:  # one write transaction per wave
    print(workspace.add_waves("telecom", [path])[0].describe(), flush=True)
"""


def test_two_processes_adding_waves_at_once_lose_nothing(tmp_path, program_file):
    url = copy_of(program_file, tmp_path)
    files = {}
    for process, waves in WAVES.items():
        files[process] = []
        for wave in waves:  # file names carry the wave: 2021-03 ... 2021-10
            path = tmp_path / f"telecom_2021-{wave:02d}.csv"
            simulate_telecom_waves([wave], respondents_per_operator=30, seed=wave,
                                   include_target=False).to_csv(path, index=False)
            files[process].append(str(path))
    outputs = _start_together(tmp_path, ADDER, [[url, *paths] for paths in files.values()])
    for out, _err in outputs:
        assert out.count(", added") == 4
    with Workspace.open(url) as ws:
        view = ws.show("telecom")
        counts = ws.database.read(lambda s: (s.scalar(select(func.count(Wave.id))),
                                             s.scalar(select(func.count(Estimate.id)))))
    assert [w.label for w in view.waves] == [f"2021-{m:02d}" for m in range(3, 11)]
    assert counts == (8, 8)
    assert all(w.respondents == 90 for w in view.waves)


def _start_together(tmp_path, script: str, argument_lists) -> list[tuple[str, str]]:
    """Run ``script`` once per argument list in its own process; each imports what it needs,
    says it is ready and waits for the others, so that their work starts at the same moment.
    Their (stdout, stderr), each asserted to have succeeded."""
    go = tmp_path / "go"
    running = [subprocess.Popen([sys.executable, "-c", script, str(go), *arguments],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for arguments in argument_lists]
    deadline = time.monotonic() + 240
    while len(list(tmp_path.glob("go.*"))) < len(running):
        assert time.monotonic() < deadline and all(p.poll() is None for p in running)
        time.sleep(0.05)
    go.touch()
    outputs = [p.communicate(timeout=300) for p in running]
    for process, (_out, err) in zip(running, outputs, strict=True):
        assert process.returncode == 0, err
    return outputs


OPENER = """
import os, pathlib, sys, time
from cx_app.workspace.database import current_revision
from cx_app.workspace.programs import Workspace
go, url = sys.argv[1:]
pathlib.Path(f"{go}.{os.getpid()}").touch()
while not os.path.exists(go):
    time.sleep(0.005)
workspace = Workspace.open(url)
print(current_revision(workspace.database), len(workspace.list_programs()))
"""


def test_two_processes_opening_a_new_workspace_at_once_migrate_it_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'new.db'}"
    outputs = _start_together(tmp_path, OPENER, [[url], [url]])
    head = head_revision()
    assert [out.split() for out, _ in outputs] == [[head, "0"], [head, "0"]]
